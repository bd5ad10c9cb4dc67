import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

@Suite("Field keyring files")
struct KeyringTests {
    let dir = TemporaryDirectory()

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
