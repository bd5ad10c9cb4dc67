import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// A decoder written in Python (the `cryptography` package) from the format
/// document alone opens what Strongroom sealed, and refuses what was damaged.
@Suite("Sealed values opened in another language")
struct ForeignDecoderTests {
    let dir = TemporaryDirectory()

    /// The documented plaintext encoding, written here independently of the library.
    static func encoding(_ value: DatabaseValue) -> (type: Int, bytes: [UInt8]) {
        switch value {
        case .integer(let n): return (1, withUnsafeBytes(of: n.bigEndian, Array.init))
        case .real(let d): return (2, withUnsafeBytes(of: d.bitPattern.bigEndian, Array.init))
        case .text(let s): return (3, Array(s.utf8))
        case .blob(let b): return (4, b)
        case .null: return (0, [])
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Without a context, and with one (issue 25, item 10).
    @Test(arguments: [nil, "tenant-4711"])
    func pythonOpensWhatStrongroomSealed(context: String?) async throws {
        let python = try #require(ProcessRunner.which("python3"))
        let keyringPath = dir.file("fields.keyring")
        let (twoKeys, second) = FieldKeyring.generate().addingKey()
        try twoKeys.write(to: keyringPath)
        let values: [DatabaseValue] = [.integer(42), .integer(.min), .real(-2.5), .text(""), .text("Ωmega 東京 🙂"),
                                       .blob([]), .blob((0..<4096).map { UInt8(truncatingIfNeeded: $0) })]
        let rowKeys: [[DatabaseValue]] = [[.integer(7)], [.integer(-3), .text("FR")], [.text("k-1")], [.real(1.5), .integer(0)], [.blob([1, 2])]]
        var cases: [[String: Any]] = []
        var expected: [(Int, [UInt8])?] = []
        for keyring in [twoKeys, try twoKeys.activating(second)] {
            let cipher = FieldCipher(keyring: keyring, context: try context.map { try FieldContext($0) })
            for (index, value) in values.enumerated() {
                for mode in [SealingMode.randomized, .deterministic] {
                    let rowKey = rowKeys[index % rowKeys.count]
                    guard case .blob(let envelope) = try cipher.seal(value, table: "Customer", column: "eMail", rowKey: rowKey, mode: mode) else { continue }
                    let encodedKey = rowKey.map { part -> [String: Any] in
                        let (type, bytes) = Self.encoding(part)
                        return ["type": type, "payload": Self.hex(bytes)]
                    }
                    cases.append(["table": "customer", "column": "EMAIL", "row_key": encodedKey, "envelope": Self.hex(envelope), "context": context ?? NSNull()])
                    expected.append(Self.encoding(value))
                    // The same envelope, one bit flipped in its last byte: refused.
                    var damaged = envelope
                    damaged[damaged.count - 1] ^= 0x80
                    cases.append(["table": "customer", "column": "email", "row_key": encodedKey, "envelope": Self.hex(damaged), "context": context ?? NSNull()])
                    expected.append(nil)
                }
            }
        }
        let input = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Decoder/open_envelopes.py").path
        let result = try await ProcessRunner.run(python, [script, keyringPath], input: input)
        #expect(result.status == 0, "\(result.stderr)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(answers.count == expected.count)
        for (answer, want) in zip(answers, expected) {
            if let want {
                #expect(answer["type"] as? Int == want.0)
                #expect(answer["value"] as? String == Self.hex(want.1))
            } else {
                #expect(answer["error"] != nil, "a damaged envelope must not open")
            }
        }
    }
}
