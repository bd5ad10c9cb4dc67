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

    @Test func thePythonScriptRecomputesEveryExampleFromThePage() async throws {
        let python = try #require(ProcessRunner.which("python3"))
        let result = try await ProcessRunner.run(python, [Self.scriptPath()])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("examples checked"), "\(result.stdout)")
    }

    @Test func strongroomOpensThePagesEnvelopesWithThePagesKey() async throws {
        let python = try #require(ProcessRunner.which("python3"))
        // The examples as the script read them from the page (after checking them).
        let result = try await ProcessRunner.run(python, [Self.scriptPath(), "--json"])
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

    /// The page's examples as the script read them (after checking them),
    /// and its demo keyring, loaded from a keyring file.
    func pageAndKeyring() async throws -> (page: [String: Any], keyring: FieldKeyring) {
        let python = try #require(ProcessRunner.which("python3"))
        let result = try await ProcessRunner.run(python, [Self.scriptPath(), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let keyringPath = dir.file("demo.keyring")
        #expect(FileManager.default.createFile(atPath: keyringPath, contents: Data(try #require(page["keyring"] as? String).utf8),
                                               attributes: [.posixPermissions: 0o600]))
        return (page, try FieldKeyring.load(from: keyringPath))
    }

    /// Example 7: Strongroom reads the page's signed row with the page's
    /// keyring, signs it again to the page's bytes, and refuses it changed.
    @Test func strongroomVerifiesAndMakesThePagesRowSignature() async throws {
        let (page, keyring) = try await pageAndKeyring()
        let example = try #require((page["signatures"] as? [[String: Any]])?.first)
        let signature = try #require(Self.bytes(example["signature"] as? String ?? "x"))
        let covered = try #require(example["covered"] as? [[String: Any]])
        var values: [String: DatabaseValue] = [:]
        for column in covered {
            // Required as a value: assigned straight into the dictionary, #require would take nil.
            let value: DatabaseValue = try #require(Self.value(column))
            values[try #require(column["name"] as? String)] = value
        }
        let rowKey = try #require((example["rowKey"] as? [Any])?.compactMap { Self.value($0) })
        #expect(example["table"] as? String == "customer" && example["signatureColumn"] as? String == "row_signature" && rowKey == [.integer(42)])

        let databaseKey = DatabaseKey.generate()
        let path = dir.file("signed.db")
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        try plain.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT, email BLOB, email_index BLOB, row_signature BLOB)")
            try db.execute(sql: "INSERT INTO customer(id, name, country, email, row_signature) VALUES (42, ?, ?, ?, ?)",
                           arguments: [values["name"], values["country"], values["email"], DatabaseValue.blob(signature)])
        }
        var config = Configuration(key: databaseKey)
        config.seal([.indexed("email", in: "customer", indexColumn: "email_index")], keyring: keyring, rowKeys: ["customer": ["id"]],
                    signedRows: [SignedRow("customer", columns: ["name", "country"], signatureColumn: "row_signature")])
        let app = try DatabaseQueue(path: path, configuration: config)
        struct Customer: Codable, SealedRecord { var id: Int64; var name: String; var country: String; var email: String
            static let sealedProperties = [SealedProperty("email", of: "customer")] }
        let read = try app.read { db in try db.fetchAll(Customer.self, sql: "SELECT * FROM customer") }
        #expect(read.map(\.email) == ["ada@example.com"] && read.map(\.country) == ["FR"])
        // Signed again by Strongroom: the page's bytes (HMAC is deterministic).
        try plain.write { db in try db.execute(sql: "UPDATE customer SET row_signature = NULL") }
        #expect(try app.write { db in try db.signUnsignedRows(of: "customer") } == 1)
        #expect(try plain.read { db in try db.fetchOne([UInt8].self, sql: "SELECT row_signature FROM customer") } == signature)
        // One covered value changed: refused.
        try plain.write { db in try db.execute(sql: "UPDATE customer SET country = 'DE'") }
        let error = #expect(throws: StrongroomError.self) { try app.read { db in _ = try db.fetchAll(Customer.self, sql: "SELECT * FROM customer") } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }

    /// "The keys the database knows" and example 5's definition check:
    /// Strongroom records the page's bytes for the page's keyring.
    @Test func strongroomRecordsThePagesCheckValues() async throws {
        let (page, keyring) = try await pageAndKeyring()
        let keyCheck = try #require((page["keyChecks"] as? [[String: Any]])?.first)
        let definitionCheck = try #require((page["definitionChecks"] as? [[String: Any]])?.first)
        #expect(definitionCheck["name"] as? String == "email_folded" && definitionCheck["bits"] as? Int == 12)

        let databaseKey = DatabaseKey.generate()
        let path = dir.file("checks.db")
        var config = Configuration(key: databaseKey)
        config.seal([.indexed("email", in: "customer", indexColumn: "email_index")],
                    indexes: [BlindIndex("email_folded", on: "email", in: "customer", bits: 12, transformations: [.trimmed, .normalizedCaseFolded])],
                    keyring: keyring, rowKeys: ["customer": ["id"]])
        let app = try DatabaseQueue(path: path, configuration: config)
        struct Customer: Codable { var id: Int64; var email: String }
        try app.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB, email_folded BLOB)")
            try db.insert(Customer(id: 1, email: " Ada@Example.COM"), into: "customer")
        }
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let recordedCheck = try plain.read { db in try db.fetchOne([UInt8].self, sql: "SELECT check_value FROM strongroom_field_keys WHERE key_id = 1") }
        #expect(recordedCheck == Self.bytes(keyCheck["check"] as? String ?? "x"))
        let recordedDefinition = try plain.read { db in try db.fetchOne([UInt8].self, sql: "SELECT \"check\" FROM strongroom_blind_indexes WHERE name = 'email_folded'") }
        #expect(recordedDefinition == Self.bytes(definitionCheck["check"] as? String ?? "x"))
        // Example 5's index value, as the insert computed it.
        #expect(try plain.read { db in try db.fetchOne([UInt8].self, sql: "SELECT email_folded FROM customer") } == [0, 0, 0, 1, 0x05, 0x90])
    }
}
