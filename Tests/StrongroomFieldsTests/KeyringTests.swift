import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields
import StrongroomTestSupport
import Testing

@Suite("Field keyring files")
struct KeyringTests {
    let dir = TemporaryDirectory()

    /// Issue 36, item 9: changing a keyring that is not there (a typo in
    /// `fields add-key --field-keys`) says so, and leaves no `.lock` behind.
    @Test func updatingAMissingKeyringLeavesNoLockBehind() throws {
        let path = dir.file("nosuch.keyring")
        let error = #expect(throws: StrongroomError.self) { try FieldKeyring.update(at: path) { $0.addingKey().keyring } }
        #expect(error?.code == .notFound || error?.code == .keyMissing, "\(String(describing: error))")
        #expect(error?.message.contains(path) == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func writtenOwnerOnlyReadBackAndNeverOverwritten() throws {
        let path = dir.file("fields.keyring")
        let keyring = FieldKeyring.generate()
        try keyring.write(to: path)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let loaded = try FieldKeyring.load(from: path)
        #expect(loaded.keyIDs == [1] && loaded.activeKeyID == 1)
        // The same keys: what one seals the other opens.
        let sealed = try FieldCipher(keyring: keyring).seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)
        #expect(try FieldCipher(keyring: loaded).open(sealed, table: "t", column: "c", rowKey: [.integer(1)]) == .text("x"))
        #expect((#expect(throws: StrongroomError.self) { try FieldKeyring.generate().write(to: path) })?.code == .outputExists)
        // Adding and activating a key replaces the file atomically, keeping the old keys.
        let (more, id) = loaded.addingKey()
        try more.activating(id).write(to: path, replacing: true)
        let rotated = try FieldKeyring.load(from: path)
        #expect(rotated.keyIDs == [1, 2] && rotated.activeKeyID == 2)
        #expect(try FieldCipher(keyring: rotated).open(sealed, table: "t", column: "c", rowKey: [.integer(1)]) == .text("x"))
        #expect(throws: FieldError.self) { try rotated.removingKey(2) }
        #expect(try rotated.removingKey(1).keyIDs == [2])
    }

    /// Issue 27: a keyring wrapped under a passphrase, read with it, changed
    /// under the lock and still wrapped under the same passphrase; or printed by a command.
    @Test func aWrappedKeyringOpensWithItsPassphraseAndStaysWrappedWhenChanged() throws {
        let path = dir.file("fields.wrapped")
        let cheap = try Scrypt.Parameters(log2N: 10, r: 8, p: 1)
        let passphrase = SecureBytes(copying: Array("keyring passphrase".utf8))
        let keyring = FieldKeyring.generate()
        try keyring.write(to: path, wrappingWith: passphrase, parameters: cheap)
        #expect(WrappedKeyFile.isWrapped(at: path))
        let sealed = try FieldCipher(keyring: keyring).seal(.text("x"), table: "t", column: "c", rowKey: [.integer(1)], mode: .randomized)

        let missing = #expect(throws: StrongroomError.self) { try FieldKeyring.load(from: path) }
        #expect(missing?.code == .keyMissing)
        let wrong = #expect(throws: StrongroomError.self) {
            try FieldKeyring.load(from: path, unwrappingWith: .bytes(SecureBytes(copying: Array("other".utf8))))
        }
        #expect(wrong?.code == .wrongPassphrase)
        let loaded = try FieldKeyring.load(from: path, unwrappingWith: .bytes(passphrase))
        #expect(try FieldCipher(keyring: loaded).open(sealed, table: "t", column: "c", rowKey: [.integer(1)]) == .text("x"))

        try FieldKeyring.update(at: path, unwrappingWith: .bytes(passphrase)) { $0.addingKey().keyring }
        #expect(WrappedKeyFile.isWrapped(at: path))
        #expect(Fixtures.bytes(of: path)[27] == 10, "the file's own scrypt cost is kept")
        #expect(try FieldKeyring.load(from: path, unwrappingWith: .bytes(passphrase)).keyIDs == [1, 2])
        // A wrapped key file is not a keyring.
        try KeyFile.write(DatabaseKey.generate(), to: dir.file("db.wrapped"), wrappingWith: passphrase, parameters: cheap)
        let kind = #expect(throws: StrongroomError.self) { try FieldKeyring.load(from: dir.file("db.wrapped"), unwrappingWith: .bytes(passphrase)) }
        #expect(kind?.code == .malformedKey && kind?.message.contains("a wrapped key file, not a wrapped field keyring") == true)

        // The keyring's text from a command (a vault's CLI), and a command's malformed output named without quoting it.
        try keyring.write(to: dir.file("plain.keyring"))
        let printed = try FieldKeyring.load(fromCommand: KeyCommand("cat '\(dir.file("plain.keyring"))'"))
        #expect(try FieldCipher(keyring: printed).open(sealed, table: "t", column: "c", rowKey: [.integer(1)]) == .text("x"))
        let bad = #expect(throws: StrongroomError.self) { try FieldKeyring.load(fromCommand: KeyCommand("echo not-a-keyring-line")) }
        #expect(bad?.code == .malformedKey && bad?.message.contains("printed by the command") == true && bad?.message.contains("not-a-keyring") == false)
    }

    @Test func groupReadableSymlinkedAndMalformedKeyringsAreRefused() throws {
        let path = dir.file("open.keyring")
        try FieldKeyring.generate().write(to: path)
        chmod(path, 0o644)
        let loose = #expect(throws: StrongroomError.self) { try FieldKeyring.load(from: path) }
        #expect(loose?.code == .keyFilePermissions)
        #expect(loose?.message.contains("chmod 600") == true)
        chmod(path, 0o600)
        symlink(path, dir.file("link.keyring"))
        #expect((#expect(throws: StrongroomError.self) { try FieldKeyring.load(from: dir.file("link.keyring")) })?.code == .keyFilePermissions)
        let hex = String(repeating: "ab", count: 32)
        for (name, text) in [
            ("empty", ""),
            ("header", "strongroom field keyring 2\nactive 1\nkey 1 \(hex)\n"),
            ("no-active", "strongroom field keyring 1\nkey 1 \(hex)\n"),
            ("active-missing", "strongroom field keyring 1\nactive 2\nkey 1 \(hex)\n"),
            ("short-key", "strongroom field keyring 1\nactive 1\nkey 1 \(hex.dropLast(2))\n"),
            ("upper-hex", "strongroom field keyring 1\nactive 1\nkey 1 \(hex.uppercased())\n"),
            ("duplicate", "strongroom field keyring 1\nactive 1\nkey 1 \(hex)\nkey 1 \(hex)\n"),
            ("zero-id", "strongroom field keyring 1\nactive 0\nkey 0 \(hex)\n"),
            ("junk", "strongroom field keyring 1\nactive 1\nkey 1 \(hex)\nsomething else\n"),
        ] {
            let file = dir.file("\(name).keyring")
            _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            let error = #expect(throws: StrongroomError.self, "\(name)") { try FieldKeyring.load(from: file) }
            #expect(error?.code == .malformedKey, "\(name)")
            #expect(error?.message.contains("abab") == false, "errors never quote key material")
        }
    }
}
