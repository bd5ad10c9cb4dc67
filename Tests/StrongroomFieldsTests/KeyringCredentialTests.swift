import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 38, item 2: the field keyring, the more sensitive of the two keys, as
/// a systemd credential (`$CREDENTIALS_DIRECTORY/NAME`, plain or wrapped), held
/// to exactly the checks of `DatabaseKey.fromCredential`. The variable is this
/// process's, so the tests run one at a time (no other suite reads it).
@Suite("Field keyring from a systemd credential", .serialized)
struct KeyringCredentialTests {
    let dir = TemporaryDirectory()
    static let variable = "CREDENTIALS_DIRECTORY"

    /// `body` with `$CREDENTIALS_DIRECTORY` set to `directory`, or unset; put back as it was afterwards.
    func with<T>(credentials directory: String?, _ body: () throws -> T) rethrows -> T {
        let saved = getenv(Self.variable).map { String(cString: $0) }
        if let directory { setenv(Self.variable, directory, 1) } else { unsetenv(Self.variable) }
        defer { if let saved { setenv(Self.variable, saved, 1) } else { unsetenv(Self.variable) } }
        return try body()
    }

    /// A credentials directory holding `contents` as `name`, mode 0400 in a 0700 directory, as systemd makes it.
    func credentialsDirectory(_ name: String, _ contents: [UInt8], directoryMode: mode_t = 0o700, fileMode: mode_t = 0o400) throws -> String {
        let credentials = dir.file("credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: credentials + "/" + name, contents: Data(contents))
        chmod(credentials + "/" + name, fileMode)
        chmod(credentials, directoryMode)
        return credentials
    }

    /// A keyring of two keys (key 2 active), written to a file, plain or wrapped; the file's bytes and the keys' hex.
    func writtenKeyring(wrappingWith passphrase: SecureBytes? = nil) throws -> (keyring: FieldKeyring, file: [UInt8], hex: [String]) {
        let (two, id) = FieldKeyring.generate().addingKey()
        let keyring = try two.activating(id)
        let plain = dir.file("plain-\(UUID().uuidString).keyring")
        try keyring.write(to: plain)
        let hex = String(decoding: Fixtures.bytes(of: plain), as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("key ") }.map { String($0.split(separator: " ").last!) }
        #expect(hex.count == 2 && hex.allSatisfy { $0.count == 64 })
        guard let passphrase else { return (keyring, Fixtures.bytes(of: plain), hex) }
        let wrapped = dir.file("wrapped-\(UUID().uuidString).keyring")
        try keyring.write(to: wrapped, wrappingWith: passphrase, parameters: try Scrypt.Parameters(log2N: 10, r: 8, p: 1))
        #expect(WrappedKeyFile.isWrapped(at: wrapped))
        return (keyring, Fixtures.bytes(of: wrapped), hex)
    }

    /// `loaded` holds the keys of `written`, under the same ids, the same one active:
    /// deterministic sealing under each key gives the same envelope.
    func expectSameKeys(_ loaded: FieldKeyring, _ written: FieldKeyring, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(loaded.keyIDs == written.keyIDs && loaded.activeKeyID == written.activeKeyID, sourceLocation: sourceLocation)
        for id in written.keyIDs {
            let seal = { (keyring: FieldKeyring) in
                try FieldCipher(keyring: keyring.activating(id)).seal(.text("x@example.com"), table: "t", column: "c", rowKey: [.integer(1)], mode: .deterministic)
            }
            #expect(try seal(loaded) == seal(written), "key \(id)", sourceLocation: sourceLocation)
        }
    }

    @Test func aPlainKeyringCredentialLoadsAsWritten() throws {
        let (keyring, file, _) = try writtenKeyring()
        let credentials = try credentialsDirectory("app-fields", file)
        let loaded = try with(credentials: credentials) { try FieldKeyring.fromCredential("app-fields") }
        try expectSameKeys(loaded, keyring)
        // A passphrase source for a plain credential is never asked.
        let unasked = try with(credentials: credentials) {
            try FieldKeyring.fromCredential("app-fields", unwrappingWith: PassphraseSource { () throws(StrongroomError) in
                throw StrongroomError(.misuse, "asked for a passphrase")
            })
        }
        try expectSameKeys(unasked, keyring)
    }

    @Test func aWrappedKeyringCredentialLoadsWithItsPassphraseOnly() throws {
        let passphrase = SecureBytes(copying: Array("keyring credential passphrase".utf8))
        let (keyring, file, hex) = try writtenKeyring(wrappingWith: passphrase)
        let credentials = try credentialsDirectory("app-fields", file)
        let loaded = try with(credentials: credentials) { try FieldKeyring.fromCredential("app-fields", unwrappingWith: .bytes(passphrase)) }
        try expectSameKeys(loaded, keyring)

        let missing = with(credentials: credentials) { #expect(throws: StrongroomError.self) { try FieldKeyring.fromCredential("app-fields") } }
        #expect(missing?.code == .keyMissing, "\(String(describing: missing))")
        let wrong = with(credentials: credentials) {
            #expect(throws: StrongroomError.self) {
                try FieldKeyring.fromCredential("app-fields", unwrappingWith: .bytes(SecureBytes(copying: Array("other".utf8))))
            }
        }
        #expect(wrong?.code == .wrongPassphrase, "\(String(describing: wrong))")
        for error in [missing, wrong].compactMap({ $0 }) {
            #expect(!hex.contains { error.message.contains($0) || error.message.contains($0.uppercased()) })
        }
    }

    /// Every way a credential can be unusable: the same error code as the
    /// database key's credential gets, a message that says what to do, and
    /// nothing of the key in it.
    @Test func anUnusableCredentialIsTheSameTypedErrorAsForTheDatabaseKey() throws {
        let (_, file, hex) = try writtenKeyring()
        var cases: [(what: String, credentials: String?, name: String, code: StrongroomError.Code, saying: [String])] = []
        cases.append(("not a service", nil, "app-fields", .keyMissing, ["$CREDENTIALS_DIRECTORY is not set", "LoadCredentialEncrypted=app-fields:PATH"]))
        cases.append(("no directory", dir.file("nowhere"), "app-fields", .notFound, ["does not exist"]))
        let notDirectory = dir.file("a-file")
        FileManager.default.createFile(atPath: notDirectory, contents: Data())
        cases.append(("not a directory", notDirectory, "app-fields", .notFound, ["not a directory"]))
        cases.append(("world-readable directory", try credentialsDirectory("app-fields", file, directoryMode: 0o755), "app-fields",
                      .keyFilePermissions, ["chmod 700", "mode 755"]))
        cases.append(("world-readable credential", try credentialsDirectory("app-fields", file, fileMode: 0o644), "app-fields",
                      .keyFilePermissions, ["chmod 600"]))
        cases.append(("group-readable credential", try credentialsDirectory("app-fields", file, fileMode: 0o440), "app-fields",
                      .keyFilePermissions, ["chmod 600"]))
        cases.append(("no such credential", try credentialsDirectory("other", file), "app-fields", .notFound,
                      ["LoadCredentialEncrypted=app-fields:PATH", "systemd-creds encrypt --name=app-fields"]))
        let linked = dir.file("linked")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        symlink(dir.file("nowhere.keyring"), linked + "/app-fields")
        chmod(linked, 0o700)
        cases.append(("a dangling symbolic link", linked, "app-fields", .keyFilePermissions, ["symbolic link"]))
        let good = try credentialsDirectory("app-fields", file)
        for name in ["", ".", "..", "../app-fields", "a/b", "x\nstrongroom: forged", "tab\there"] {
            cases.append(("the name \(name.debugDescription)", good, name, .misuse, ["file name", "LoadCredential"]))
        }

        for (what, credentials, name, code, saying) in cases {
            let error = with(credentials: credentials) { #expect(throws: StrongroomError.self, "\(what)") { try FieldKeyring.fromCredential(name) } }
            #expect(error?.code == code, "\(what): \(String(describing: error))")
            for words in saying {
                #expect(error?.message.contains(words) == true, "\(what): \(error?.message ?? "") does not say \(words)")
            }
            #expect(error?.message.contains("\n") == false, "\(what): \(error?.message ?? "")")
            #expect(!hex.contains { error?.message.contains($0) == true }, "\(what): the key was quoted")
            // The database key's credential: the same checks, the same code.
            let keyError = with(credentials: credentials) { #expect(throws: StrongroomError.self, "\(what)") { try DatabaseKey.fromCredential(name) } }
            #expect(keyError?.code == error?.code, "\(what): \(String(describing: keyError)) for the database key")
        }
    }

    @Test func aCredentialThatIsNotAKeyringIsMalformedAndNotQuoted() throws {
        let (_, file, hex) = try writtenKeyring()
        let text = String(decoding: file, as: UTF8.self)
        let keyHex = hex[0]
        let notKeyrings: [(String, String)] = [
            ("a database key file", keyHex + "\n"),
            ("a short key", text.replacingOccurrences(of: hex[1], with: String(hex[1].dropLast(2)))),
            ("upper-case hex", text.replacingOccurrences(of: hex[1], with: hex[1].uppercased())),
            ("no active key", text.replacingOccurrences(of: "active 2\n", with: "active 9\n")),
            ("a passphrase", "a passphrase, not a keyring\n"),
            ("empty", ""),
        ]
        for (what, contents) in notKeyrings {
            let credentials = try credentialsDirectory("app-fields", Array(contents.utf8))
            let error = with(credentials: credentials) { #expect(throws: StrongroomError.self, "\(what)") { try FieldKeyring.fromCredential("app-fields") } }
            #expect(error?.code == .malformedKey, "\(what): \(String(describing: error))")
            #expect(error?.message.contains("app-fields") == true, "\(what): \(error?.message ?? "") does not name the credential")
            for secret in hex + hex.map({ $0.uppercased() }) + [String(hex[1].dropLast(2))] {
                #expect(error?.message.contains(secret) == false, "\(what): the key was quoted")
            }
        }
    }
}
