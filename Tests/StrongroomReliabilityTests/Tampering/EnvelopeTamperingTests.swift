import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 12's tampering with sealed values, done the way someone holding
/// the database key (not the field keys) would: through the stock
/// `sqlcipher` shell, key on standard input. Envelopes flipped, truncated,
/// swapped between rows and between columns, and a plaintext put where an
/// envelope was: each read of such a value fails with `sealed_value`
/// naming the table, column and row, and never returns a value; the rows
/// left alone still open.
@Suite("Tampering: sealed values changed through the sqlcipher shell")
struct EnvelopeTamperingTests {
    let dir = TemporaryDirectory()
    static let rows = 40

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int
        var email: String
        var phone: String
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer")]
    }

    static func expected(_ id: Int) -> Customer {
        Customer(id: id, email: "person\(id)@example.com", phone: "+44 \(1000 + id)")
    }

    @Test func everyTamperedEnvelopeIsRefusedNamingItsRow() async throws {
        let key = DatabaseKey.generate(), keyring = FieldKeyring.generate()
        try KeyFile.write(key, to: dir.file("db.key"))
        let path = dir.file("sealed.db")
        var configuration = Configuration(key: key)
        configuration.seal([.randomized("email", in: "customer"), .randomized("phone", in: "customer")], keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, phone BLOB NOT NULL)")
            for id in 1...Self.rows { try db.insert(Self.expected(id), into: "customer") }
        }
        try queue.close()

        // What the holder of the database key sees: envelopes, as hex.
        let raw = try Connection(path: path, configuration: Configuration(key: key))
        let envelopes = try raw.fetchAll(String.self, sql: "SELECT hex(email) FROM customer ORDER BY id")
        raw.close()
        func flipped(_ id: Int, at position: Int) -> String {
            var bytes = Array(envelopes[id - 1].utf8)
            let index = min(position, bytes.count / 2 - 1) * 2
            bytes[index] = bytes[index] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            return String(decoding: bytes, as: UTF8.self)
        }
        // Each kind of change, on rows of its own: (what, rows, SQL for the shell).
        let changes: [(String, [Int], String)] = [
            ("an envelope byte flipped (header, nonce, ciphertext, tag)", [1, 2, 3, 4],
             [1: 0, 2: 14, 3: 30, 4: 1000].map { id, at in "UPDATE customer SET email = X'\(flipped(id, at: at))' WHERE id = \(id);" }.joined(separator: "\n")),
            ("an envelope truncated", [5, 6, 7],
             "UPDATE customer SET email = substr(email, 1, 3) WHERE id = 5;\nUPDATE customer SET email = substr(email, 1, 20) WHERE id = 6;\nUPDATE customer SET email = substr(email, 1, length(email) - 1) WHERE id = 7;"),
            ("an envelope moved to another row", [8, 9],
             "UPDATE customer SET email = (SELECT email FROM customer WHERE id = 30) WHERE id = 8;\nUPDATE customer SET phone = (SELECT phone FROM customer WHERE id = 31) WHERE id = 9;"),
            ("an envelope moved to another column", [10, 11],
             "UPDATE customer SET phone = email WHERE id = 10;\nUPDATE customer SET email = phone WHERE id = 11;"),
            ("a plaintext put where an envelope was", [12],
             "UPDATE customer SET email = 'planted@example.com' WHERE id = 12;"),
            ("an empty value put where an envelope was", [13],
             "UPDATE customer SET email = X'' WHERE id = 13;"),
        ]
        let hex = String(decoding: Fixtures.bytes(of: dir.file("db.key")), as: UTF8.self).trimmingCharacters(in: .newlines)
        let shell = try #require(ProcessRunner.which("sqlcipher"), "the sqlcipher shell is installed by `make setup`")
        let script = "PRAGMA key = \"x'\(hex)'\";\n" + changes.map(\.2).joined(separator: "\n") + "\n"
        let edited = try await ProcessRunner.run(shell, [path], input: script)
        #expect(edited.status == 0 && edited.stderr.isEmpty, "\(edited.stderr)")
        #expect(!edited.stdout.contains(hex) && !edited.stderr.contains(hex))

        let reader = try DatabaseQueue(path: path, configuration: configuration)
        let tampered = Set(changes.flatMap(\.1))
        for (what, ids, _) in changes {
            var reported: [String: Int] = [:]
            var undetected = 0
            for id in ids {
                do {
                    let read = try reader.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [id]) }
                    undetected += 1
                    Issue.record("\(what), row \(id): read back as \(String(describing: read))")
                } catch let error as StrongroomError {
                    reported[error.code.rawValue, default: 0] += 1
                    #expect(error.code == .sealedValue && error.message.contains("row \(id)"), "\(what), row \(id): \(error.code): \(error.message)")
                    #expect(!error.message.contains("@example.com") && !error.message.contains("+44"), "no plaintext in the error")
                }
            }
            try ReliabilityResults.write("tampering", name: "envelope " + what, [
                "target": what + " (sqlcipher shell)", "trials": ids.count, "reported": reported, "undetected": undetected,
            ])
        }
        // The rows left alone still open, to what was written.
        let untouched = try reader.read { db in
            try db.fetchAll(Customer.self, sql: "SELECT * FROM customer WHERE id NOT IN (\(tampered.map(String.init).joined(separator: ","))) ORDER BY id")
        }
        #expect(untouched == (1...Self.rows).filter { !tampered.contains($0) }.map(Self.expected))
        try reader.close()
    }
}
