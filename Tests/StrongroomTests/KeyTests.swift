import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Keys and key files")
struct KeyTests {
    let dir = TemporaryDirectory()

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
    }

    func write(_ text: String, to name: String, mode: mode_t = 0o600) -> String {
        let path = dir.file(name)
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, mode)
        return path
    }

    @Test func writtenKeyFileIsOwnerOnlyHexAndOpensTheDatabase() throws {
        let path = dir.file("app.key")
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: path)
        #expect(try mode(path) == 0o600)
        let text = String(decoding: Fixtures.bytes(of: path), as: UTF8.self)
        #expect(text.count == 65 && text.hasSuffix("\n"))
        #expect(text.dropLast().allSatisfy { "0123456789abcdef".contains($0) })
        let db = try Connection(path: dir.file("a.db"), configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(x)")
        db.close()
        _ = try Connection(path: dir.file("a.db"), configuration: Configuration(key: try KeyFile.read(at: path)))
        // No temporary file is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".strongroom-key") }
        #expect(leftovers.isEmpty)
    }

    /// Issue 9: the docs' key snippet (`KeyFile.write(key, to: "Keys/app.key")`)
    /// failed in a new app, where `Keys/` does not exist yet. The directory
    /// is made, owner-only, as ssh-keygen makes ~/.ssh.
    @Test func writingAKeyFileMakesItsMissingDirectoryOwnerOnly() throws {
        let path = dir.file("app/Keys/app.key")
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: path)
        #expect(try mode(dir.file("app/Keys")) == 0o700)
        #expect(try mode(path) == 0o600)
        let db = try Connection(path: dir.file("app/a.db"), configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(x)")
        db.close()
        _ = try Connection(path: dir.file("app/a.db"), configuration: Configuration(key: try DatabaseKey.load(keyFile: path)))
    }

    @Test func keyFileIsNeverOverwritten() throws {
        let path = dir.file("app.key")
        try KeyFile.write(.generate(), to: path)
        let before = Fixtures.bytes(of: path)
        let error = #expect(throws: StrongroomError.self) { try KeyFile.write(.generate(), to: path) }
        #expect(error?.code == .outputExists)
        #expect(Fixtures.bytes(of: path) == before)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o606])
    func groupOrWorldAccessIsRefusedWithTheFix(permissions: Int) throws {
        let path = write(String(repeating: "ab", count: 32) + "\n", to: "loose.key", mode: mode_t(permissions))
        let error = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path) }
        #expect(error?.code == .keyFilePermissions)
        #expect(error?.message.contains("chmod 600 \(path)") == true)
    }

    @Test(arguments: [
        ("short", String(repeating: "a", count: 63)),
        ("long", String(repeating: "a", count: 66)),
        ("uppercase", String(repeating: "AB", count: 32)),
        ("not hex", String(repeating: "g", count: 64)),
        ("two newlines", String(repeating: "a", count: 64) + "\n\n"),
        ("crlf", String(repeating: "a", count: 63) + "\r\n"),
        ("empty", ""),
        ("x-literal", "x'" + String(repeating: "a", count: 62)),
    ])
    func malformedKeyFilesAreRefusedWithoutQuotingThem(name: String, contents: String) throws {
        let path = write(contents, to: "bad.key")
        let error = #expect(throws: StrongroomError.self, "\(name)") { try KeyFile.read(at: path) }
        #expect(error?.code == .malformedKey, "\(name)")
        if contents.count > 8 {
            #expect(error?.message.contains(contents.prefix(8)) == false)
        }
    }

    @Test func validKeyFileWithAndWithoutNewline() throws {
        for (name, text) in [("a.key", String(repeating: "0f", count: 32)), ("b.key", String(repeating: "0f", count: 32) + "\n")] {
            let key = try KeyFile.read(at: write(text, to: name))
            #expect(!key.isPassphrase)
        }
    }

    @Test func missingKeyFileAndSymlinkAreRefused() throws {
        let missing = #expect(throws: StrongroomError.self) { try KeyFile.read(at: dir.file("none.key")) }
        #expect(missing?.code == .notFound)
        let target = write(String(repeating: "ab", count: 32), to: "real.key")
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.key"), withDestinationPath: target)
        #expect(throws: StrongroomError.self) { try KeyFile.read(at: dir.file("link.key")) }
    }

    @Test func keyFromEnvironment() throws {
        let hex = String(repeating: "5a", count: 32)
        setenv("STRONGROOM_TEST_KEY", hex, 1)
        defer { unsetenv("STRONGROOM_TEST_KEY") }
        let fromEnv = try DatabaseKey.fromEnvironment("STRONGROOM_TEST_KEY")
        let path = dir.file("e.db")
        try Connection(path: path, configuration: Configuration(key: fromEnv)).execute(sql: "CREATE TABLE t(x)")
        let keyFile = write(hex, to: "same.key")
        _ = try Connection(path: path, configuration: Configuration(key: try KeyFile.read(at: keyFile)))

        setenv("STRONGROOM_TEST_KEY", "not-a-key", 1)
        let bad = #expect(throws: StrongroomError.self) { try DatabaseKey.fromEnvironment("STRONGROOM_TEST_KEY") }
        #expect(bad?.code == .malformedKey)
        #expect(bad?.message.contains("not-a-key") == false)
        let unset = #expect(throws: StrongroomError.self) { try DatabaseKey.fromEnvironment("STRONGROOM_TEST_UNSET_VARIABLE") }
        #expect(unset?.code == .keyMissing)
    }

    @Test func rawKeysMustBe32BytesAndPassphrasesNonEmpty() {
        #expect(throws: StrongroomError.self) { try DatabaseKey.raw([UInt8](repeating: 1, count: 31)) }
        #expect(throws: StrongroomError.self) { try DatabaseKey.passphrase("") }
        #expect(throws: StrongroomError.self) { try KeyFile.write(try .passphrase("pw"), to: dir.file("pw.key")) }
    }

    @Test func descriptionsRevealNothing() throws {
        let raw = try DatabaseKey.raw([UInt8](repeating: 0xAB, count: 32))
        let passphrase = try DatabaseKey.passphrase("hunter2-secret")
        for text in ["\(raw)", String(reflecting: raw), "\(passphrase)", String(reflecting: passphrase)] {
            #expect(!text.lowercased().contains("abab"))
            #expect(!text.contains("hunter2"))
            #expect(text.contains("redacted"))
        }
    }

    /// Issue 25, item 7: a key file (or its directory) that belongs to
    /// another user is refused, as ssh refuses such keys: that user could
    /// read it, or swap it for a key of their own.
    @Test func aKeyFileOrDirectoryOfAnotherUserIsRefused() throws {
        let key = DatabaseKey.generate()
        let path = dir.file("other.key")
        try KeyFile.write(key, to: path)
        if getuid() == 0 {
            #expect(chown(path, 65534, 65534) == 0)
            let error = #expect(throws: StrongroomError.self) { try KeyFile.read(at: path) }
            #expect(error?.code == .keyFilePermissions, "\(error?.message ?? "")")
            #expect(error?.message.contains("65534") == true && error?.message.contains("chown") == true, "\(error?.message ?? "")")
            // Its directory belongs to another user: the file is the caller's.
            let other = dir.file("nobodys")
            try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
            try KeyFile.write(key, to: other + "/db.key")
            chmod(other, 0o700)
            #expect(chown(other, 65534, 65534) == 0)
            let directoryError = #expect(throws: StrongroomError.self) { try KeyFile.read(at: other + "/db.key") }
            #expect(directoryError?.code == .keyFilePermissions, "\(directoryError?.message ?? "")")
            #expect(directoryError?.message.contains(other) == true, "names the directory: \(directoryError?.message ?? "")")
        } else {
            // Another user's file cannot be made without root: the check on
            // the owner is shown by its message where the mode passes.
            #expect(throws: Never.self) { _ = try KeyFile.read(at: path) }
        }
        // The caller's own file in the caller's own directory still reads.
        let own = dir.file("own.key")
        try KeyFile.write(key, to: own)
        #expect(throws: Never.self) { _ = try KeyFile.read(at: own) }
    }

    /// A directory others may write to lets them replace the key file.
    @Test func aKeyFileInADirectoryOthersMayWriteIsRefused() throws {
        let key = DatabaseKey.generate()
        let shared = dir.file("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        try KeyFile.write(key, to: shared + "/db.key")
        chmod(shared, 0o777)
        let error = #expect(throws: StrongroomError.self) { try KeyFile.read(at: shared + "/db.key") }
        #expect(error?.code == .keyFilePermissions, "\(error?.message ?? "")")
        #expect(error?.message.contains("chmod") == true, "\(error?.message ?? "")")
        chmod(shared, 0o700)
        #expect(throws: Never.self) { _ = try KeyFile.read(at: shared + "/db.key") }
    }
}
