import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// The worked examples of "The sealed value format" (SealedValueFormat.md,
/// issue 36): a Python script recomputes every byte of them from the inputs
/// the page states, and Strongroom itself opens the page's envelopes with the
/// page's demo keyring, seals the deterministic one again to the same bytes
/// and computes the same blind indexes.
@Suite("The format page's worked examples")
struct FormatPageTests {
    let dir = TemporaryDirectory()

    static func scriptPath() -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Decoder/format_page_examples.py").path
    }

    /// Lowercase or uppercase hex to bytes; nil for anything else.
    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    /// A value as the script writes it: {"type": the plaintext type byte, "payload": hex}.
    static func value(_ json: Any?) -> DatabaseValue? {
        guard let part = json as? [String: Any], let type = part["type"] as? Int,
              let hex = part["payload"] as? String, let payload = bytes(hex) else { return nil }
        let bits = payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch type {
        case 1: return payload.count == 8 ? .integer(Int64(bitPattern: bits)) : nil
        case 2: return payload.count == 8 ? .real(Double(bitPattern: bits)) : nil
        case 3: return .text(String(decoding: payload, as: UTF8.self))
        case 4: return .blob(payload)
        default: return nil
        }
    }

    @Test func thePythonScriptRecomputesEveryExampleFromThePage() throws {
        let python = try #require(ProcessRunner.which("python3"))
        let result = try ProcessRunner.run(python, [Self.scriptPath()])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("examples checked"), "\(result.stdout)")
    }

    @Test func strongroomOpensThePagesEnvelopesWithThePagesKey() throws {
        let python = try #require(ProcessRunner.which("python3"))
        // The examples as the script read them from the page (after checking them).
        let result = try ProcessRunner.run(python, [Self.scriptPath(), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let keyringText = try #require(page["keyring"] as? String)
        let examples = try #require(page["examples"] as? [[String: Any]])

        // The page's demo keyring, as a keyring file.
        let path = dir.file("demo.keyring")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(keyringText.utf8), attributes: [.posixPermissions: 0o600]))
        let keyring = try FieldKeyring.load(from: path)
        #expect(keyring.keyIDs == [1] && keyring.activeKeyID == 1)

        var modes: Set<SealingMode> = []
        for example in examples {
            let name = example["name"] as? String ?? "an example"
            let mode = try #require(SealingMode(rawValue: example["mode"] as? String ?? ""), "\(name)")
            let table = try #require(example["table"] as? String, "\(name)")
            let column = try #require(example["column"] as? String, "\(name)")
            let context = try (example["context"] as? String).map { try FieldContext($0) }
            let parts = try #require(example["row_key"] as? [Any], "\(name)")
            let rowKey = parts.compactMap { Self.value($0) }
            #expect(rowKey.count == parts.count, "\(name)")
            let value = try #require(Self.value(example["value"]), "\(name)")
            let envelope = try #require(Self.bytes(example["envelope"] as? String ?? "x"), "\(name)")
            let cipher = FieldCipher(keyring: keyring, context: context)

            // Opened bound as the page says, under the key id it carries.
            #expect(try cipher.open(.blob(envelope), table: table, column: column, rowKey: rowKey, mode: mode) == value, "\(name)")
            #expect(FieldCipher.keyID(of: .blob(envelope)) == UInt32(example["key_id"] as? Int ?? 0), "\(name)")
            // Refused as the other mode's envelope, and with the row key in another order.
            let other: SealingMode = mode == .deterministic ? .randomized : .deterministic
            #expect(throws: FieldError.self, "\(name)") {
                try cipher.open(.blob(envelope), table: table, column: column, rowKey: rowKey, mode: other)
            }
            if rowKey.count > 1 {
                #expect(throws: FieldError.self, "\(name)") {
                    try cipher.open(.blob(envelope), table: table, column: column, rowKey: Array(rowKey.reversed()), mode: mode)
                }
            }
            // AES-SIV is deterministic: the page's value seals to the page's bytes.
            if mode == .deterministic {
                #expect(try cipher.seal(value, table: table, column: column, rowKey: [], mode: .deterministic) == .blob(envelope), "\(name)")
            }
            if let blindIndex = example["blind_index"] as? String {
                let expected = try #require(Self.bytes(blindIndex), "\(name)")
                #expect(try cipher.blindIndex(value, table: table, column: column) == .blob(expected), "\(name)")
            }
            modes.insert(mode)
        }
        #expect(modes == Set(SealingMode.allCases), "one example per mode")
    }
}
