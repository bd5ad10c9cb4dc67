import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomTestSupport
import Testing

/// Issue 27, item 3: key files wrapped under a passphrase (scrypt, AES-256-GCM
/// with the header as associated data), read by every key reader, refused
/// whole when the passphrase is wrong or a byte changed, and readable by a
/// second implementation written from Keys/README.md.
@Suite("Wrapped key files")
struct WrappedKeyFileTests {
    let dir = TemporaryDirectory()
    /// Cheap parameters for tests; the CLI writes N = 2^17.
    static let cheap = try! Scrypt.Parameters(log2N: 10, r: 8, p: 1)
    static let passphrase = "a wrapping passphrase ⚷"

    static func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    /// A source that must never be asked (for plain files, and for refusals that come first).
    static let neverAsked = PassphraseSource { () throws(StrongroomError) in
        Issue.record("the passphrase was asked for")
        throw StrongroomError(.misuse, "asked")
    }

    /// A database under a new key, and that key wrapped at `name`.
    func wrappedDatabase(_ name: String = "app.key") throws -> (database: String, key: String) {
        let key = DatabaseKey.generate()
        let db = try Connection(path: dir.file("app.db"), configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES ('wrapped-marker')")
        db.close()
        try KeyFile.write(key, to: dir.file(name), wrappingWith: Self.secret(Self.passphrase), parameters: Self.cheap)
        return (dir.file("app.db"), dir.file(name))
    }

    func opens(_ database: String, with key: DatabaseKey) -> Bool {
        guard let db = try? Connection(path: database, configuration: Configuration(key: key)) else { return false }
        defer { db.close() }
        return (try? db.fetchOne(String.self, sql: "SELECT x FROM t")) == "wrapped-marker"
    }

    @Test func aWrappedKeyFileOpensTheDatabaseWithItsPassphraseOnly() throws {
        let (database, path) = try wrappedDatabase()
        let file = Fixtures.bytes(of: path)
        #expect(file.starts(with: Array("strongroom wrapped key 1\n".utf8)) && file.count == 58 + 65 + 16)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(WrappedKeyFile.isWrapped(at: path))

        let key = try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret(Self.passphrase)))
        #expect(key.source == .wrappedKeyFile && opens(database, with: key))
        #expect(try DatabaseKey.load(keyFile: path, unwrappingWith: .bytes(Self.secret(Self.passphrase))).source == .wrappedKeyFile)

        let wrong = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret("not it"))) }
        #expect(wrong?.code == .wrongPassphrase && wrong?.message.contains("restore") == true && wrong?.message.contains("not it") == false)
        let none = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path) }
        #expect(none?.code == .keyMissing && none?.message.contains("wrapped under a passphrase") == true)
        let empty = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret(""))) }
        #expect(empty?.code == .keyMissing)
    }

    @Test func aPlainKeyFileNeverAsksForAPassphrase() throws {
        try KeyFile.write(DatabaseKey.generate(), to: dir.file("plain.key"))
        let key = try KeyFile.read(at: dir.file("plain.key"), unwrappingWith: Self.neverAsked)
        #expect(key.source == .keyFile && !WrappedKeyFile.isWrapped(at: dir.file("plain.key")))
    }

    @Test func aWrappedFileOpenToOthersIsRefusedBeforeThePassphraseIsAsked() throws {
        let (_, path) = try wrappedDatabase()
        chmod(path, 0o644)
        let error = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path, unwrappingWith: Self.neverAsked) }
        #expect(error?.code == .keyFilePermissions && error?.message.contains("chmod 600") == true)
    }

    @Test func everyChangedByteAndEveryTruncationIsRefused() throws {
        let (database, path) = try wrappedDatabase()
        let original = Fixtures.bytes(of: path)
        var codes: [StrongroomError.Code: Int] = [:]
        func attempt(_ bytes: [UInt8], _ what: String) {
            unlink(dir.file("bad.key"))
            FileManager.default.createFile(atPath: dir.file("bad.key"), contents: Data(bytes), attributes: [.posixPermissions: 0o600])
            do {
                let key = try KeyFile.read(at: dir.file("bad.key"), unwrappingWith: .bytes(Self.secret(Self.passphrase)))
                Issue.record("\(what) was read as a key (opens the database: \(opens(database, with: key)))")
            } catch {
                codes[error.code, default: 0] += 1
                #expect(!error.message.contains(Self.passphrase), "\(what)")
            }
        }
        for index in original.indices {
            var changed = original
            changed[index] ^= 0x01
            attempt(changed, "byte \(index) changed")
        }
        for length in 0..<original.count { attempt(Array(original[0..<length]), "the first \(length) bytes") }
        attempt(original + [0x0A], "a byte added")
        // Review: a file whose header is short or out of range is refused before the passphrase is asked.
        for bad in [Array(original[0..<40]), Array(original[0..<73]), { var b = original; b[27] = 40; return b }(), { var b = original; b[25] = 2; return b }()] {
            unlink(dir.file("bad.key"))
            FileManager.default.createFile(atPath: dir.file("bad.key"), contents: Data(bad), attributes: [.posixPermissions: 0o600])
            let error = #expect(throws: StrongroomError.self) { try KeyFile.read(at: dir.file("bad.key"), unwrappingWith: Self.neverAsked) }
            #expect(error?.code == .malformedKey, "\(String(describing: error))")
        }
        // A changed byte in the header or the ciphertext fails the tag; one in the magic, a short file, is not a wrapped file.
        #expect(Set(codes.keys).isSubset(of: [.wrongPassphrase, .malformedKey]), "\(codes)")
        #expect(codes.values.reduce(0, +) == original.count * 2 + 1)
        #expect(codes[.wrongPassphrase, default: 0] > original.count - 30)
    }

    @Test func aWrappedKeyringIsNotTakenForAKeyFileNorTheOtherWayRound() throws {
        let (_, path) = try wrappedDatabase()
        // The contents byte is authenticated: set to "field keyring", the file says what it is.
        var asKeyring = Fixtures.bytes(of: path)
        asKeyring[25] = 2
        FileManager.default.createFile(atPath: dir.file("keyring.wrapped"), contents: Data(asKeyring), attributes: [.posixPermissions: 0o600])
        let error = #expect(throws: StrongroomError.self) {
            try KeyFile.read(at: dir.file("keyring.wrapped"), unwrappingWith: .bytes(Self.secret(Self.passphrase)))
        }
        #expect(error?.code == .malformedKey && error?.message.contains("a wrapped field keyring, not a wrapped key file") == true)
    }

    @Test func rewrappingChangesThePassphraseAndNothingElse() throws {
        let (database, path) = try wrappedDatabase()
        let databaseBefore = Fixtures.bytes(of: database), fileBefore = Fixtures.bytes(of: path)
        let contents = try WrappedKeyFile.rewrap(at: path, from: .bytes(Self.secret(Self.passphrase)), to: Self.secret("the new one"), parameters: Self.cheap)
        #expect(contents == .databaseKey)
        #expect(Fixtures.bytes(of: database) == databaseBefore, "the database was touched")
        #expect(Fixtures.bytes(of: path) != fileBefore && Fixtures.bytes(of: path).count == fileBefore.count)
        #expect(opens(database, with: try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret("the new one")))))
        #expect(throws: StrongroomError.self) { try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret(Self.passphrase))) }
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        // A wrong old passphrase changes nothing.
        let now = Fixtures.bytes(of: path)
        let error = #expect(throws: StrongroomError.self) {
            try WrappedKeyFile.rewrap(at: path, from: .bytes(Self.secret("wrong")), to: Self.secret("other"), parameters: Self.cheap)
        }
        #expect(error?.code == .wrongPassphrase && Fixtures.bytes(of: path) == now)
        // A plain file is not rewrapped; wrapping one writes a new file beside it.
        try KeyFile.write(DatabaseKey.generate(), to: dir.file("plain.key"))
        #expect(throws: StrongroomError.self) {
            try WrappedKeyFile.rewrap(at: dir.file("plain.key"), from: Self.neverAsked, to: Self.secret("x"), parameters: Self.cheap)
        }
        try KeyFile.write(try KeyFile.read(at: dir.file("plain.key")), to: dir.file("plain.wrapped"), wrappingWith: Self.secret("x"), parameters: Self.cheap)
        #expect(try KeyFile.read(at: dir.file("plain.wrapped"), unwrappingWith: .bytes(Self.secret("x"))).source == .wrappedKeyFile)
        // (Wrapping a wrapped file again is refused by `strongroom key wrap`: KeyCustodyTests, "wrap twice".)
    }

    @Test func anEmptyWrappingPassphraseWritesNothing() throws {
        let error = #expect(throws: StrongroomError.self) {
            try KeyFile.write(DatabaseKey.generate(), to: dir.file("new.key"), wrappingWith: Self.secret(""), parameters: Self.cheap)
        }
        #expect(error?.code == .keyMissing && !FileManager.default.fileExists(atPath: dir.file("new.key")))
    }

    /// The format in Keys/README.md is enough to read and write the files:
    /// a Python reader and writer made from it alone agree with this one.
    @Test func aSecondImplementationFromTheFormatDocumentReadsAndWritesThem() async throws {
        let script = Fixtures.repositoryRoot + "/Tests/StrongroomTests/Decoder/wrapped_key_file.py"
        let (database, path) = try wrappedDatabase()
        let plainKey = try KeyFile.read(at: path, unwrappingWith: .bytes(Self.secret(Self.passphrase)))
        try KeyFile.write(plainKey, to: dir.file("plain.key"))
        let plainDigest = Hex.encode(SHA256.hash(Fixtures.bytes(of: dir.file("plain.key"))))

        let opened = try await ProcessRunner.run("/usr/bin/python3", [script, "open", path], input: Self.passphrase + "\n")
        #expect(opened.status == 0 && opened.stdout == "1 \(plainDigest)\n", "\(opened.stderr)")
        let refused = try await ProcessRunner.run("/usr/bin/python3", [script, "open", path], input: "wrong\n")
        #expect(refused.status != 0 && refused.stderr.contains("InvalidTag"))

        let written = try await ProcessRunner.run("/usr/bin/python3", [script, "wrap", "1", dir.file("plain.key"), dir.file("python.wrapped")],
                                                  input: "python's passphrase\n")
        #expect(written.status == 0, "\(written.stderr)")
        let key = try KeyFile.read(at: dir.file("python.wrapped"), unwrappingWith: .bytes(Self.secret("python's passphrase")))
        #expect(opens(database, with: key))
    }
}
