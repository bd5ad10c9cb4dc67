import Foundation
import Strongroom
import StrongroomCrypto
@testable import StrongroomFields
import StrongroomTestSupport
import Testing

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found, each kept as the
/// test of its fix.
@Suite("Fuzz regressions: field encryption")
struct FuzzRegressionTests {
    let dir = TemporaryDirectory()

    /// FuzzEnvelope, plaintext choice: a TEXT plaintext whose bytes are not
    /// UTF-8 decoded to repaired text (U+FFFD in place of 0xA2), which seals
    /// again to other bytes: "a value opens to exactly what was stored" broke.
    @Test func aTextPlaintextThatIsNotUTF8DecodesToNoValue() {
        let plaintext: [UInt8] = [0x03, 0x61, 0x64, 0x61, 0x69, 0x76, 0x6C, 0x65, 0xA2, 0x61, 0x33,
                                  0x6C, 0x54, 0x3F, 0x20, 0x4A, 0x2D, 0x14, 0x24, 0x00, 0x6E]
        #expect(plaintext.withUnsafeBytes { FieldEnvelope.decodePlaintext($0) } == nil)
        // Valid UTF-8 (a NUL included) still decodes, exactly.
        let valid: [UInt8] = [0x03] + Array("Zoë\u{0}🙂".utf8)
        #expect(valid.withUnsafeBytes { FieldEnvelope.decodePlaintext($0) } == .text("Zoë\u{0}🙂"))
    }

    /// FuzzEnvelope, the same through the public API: an envelope another
    /// implementation sealed (built here from the format document) that
    /// authenticates but holds such text is refused as malformed, never
    /// opened to repaired text.
    @Test func anAuthenticEnvelopeOfTextThatIsNotUTF8IsMalformed() throws {
        let master = [UInt8](repeating: 0x5A, count: 32)
        let path = dir.file("fields.keyring")
        let hex = master.map { String(format: "%02x", $0) }.joined()
        FileManager.default.createFile(atPath: path, contents: Data("strongroom field keyring 1\nactive 1\nkey 1 \(hex)\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        let cipher = FieldCipher(keyring: try FieldKeyring.load(from: path))
        let label = Array("strongroom.field.v1".utf8)
        let subkey = try HKDF.deriveKey(from: SecureBytes(copying: master), salt: label,
                                        info: Array("aes-256-siv".utf8) + [0] + Array("t".utf8) + [0] + Array("c".utf8), byteCount: AESSIV.keyByteCount)
        let header: [UInt8] = [1, 2, 0, 0, 0, 1]
        let associatedData = header + label + [0, 0, 0, 1] + Array("t".utf8) + [0, 0, 0, 1] + Array("c".utf8)
        let envelope = header + (try AESSIV(key: subkey).seal([0x03, 0x61, 0xA2, 0x62], authenticating: associatedData))
        let error = #expect(throws: FieldError.self) {
            try cipher.open(.blob(envelope), table: "t", column: "c", rowKey: [])
        }
        #expect(error?.code == .malformedEnvelope)
        // Built the same way with valid text, it opens: the envelope is right.
        let valid = header + (try AESSIV(key: subkey).seal([0x03] + Array("ab".utf8), authenticating: associatedData))
        #expect(try cipher.open(.blob(valid), table: "t", column: "c", rowKey: []) == .text("ab"))
    }

    /// FuzzKeyring: a keyring whose largest key id is 4294967295, which the
    /// file format allows, trapped on an arithmetic overflow in addingKey()
    /// (`strongroom fields rotate`, `keygen --field --add`).
    @Test func addingAKeyAfterTheLargestIDTakesAFreeID() throws {
        let path = dir.file("largest.keyring")
        let contents = "strongroom field keyring 1\nactive 4294967295\nkey 4294967295 " + String(repeating: "0f", count: 32) + "\n"
        FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600])
        let keyring = try FieldKeyring.load(from: path)
        #expect(keyring.keyIDs == [4_294_967_295])
        let (more, id) = keyring.addingKey()
        #expect(id == 1)
        #expect(more.keyIDs == [1, 4_294_967_295] && more.activeKeyID == 4_294_967_295)
        let (three, next) = more.addingKey()
        #expect(next == 2 && three.keyIDs == [1, 2, 4_294_967_295])
        // The new keys are written and read back like any other.
        try three.activating(next).write(to: path, replacing: true)
        let reread = try FieldKeyring.load(from: path)
        #expect(reread.keyIDs == [1, 2, 4_294_967_295] && reread.activeKeyID == 2)
    }
}
