import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// The values a sealed insert reads before it writes (the rowid it
/// assigns, the active key's check value) are read as stored, without a
/// decoder (issue 51); what is not the type expected still goes through
/// the decoder, and is refused as before.
@Suite("A sealed insert's lookups read values as stored")
struct SealedInsertLookupTests {
    let dir = TemporaryDirectory()
    let keyring = FieldKeyring.generate()
    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("note", in: "customer")]

    struct Customer: Codable, SealedRecord {
        var id: Int64?; var email: String; var note: String?
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("note", of: "customer")]
    }

    func queue(_ name: String, autoincrement: Bool) throws -> DatabaseQueue {
        var config = Configuration(key: .generate())
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: dir.file(name), configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY\(autoincrement ? " AUTOINCREMENT" : ""), email BLOB NOT NULL, note BLOB, email_index BLOB UNIQUE)")
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try FieldKeyCheck.recordActiveKey(of: keyring, in: db)
        }
        return queue
    }

    func ids(_ queue: DatabaseQueue) throws -> [Int64] {
        try queue.read { db in try db.fetchAll(Int64.self, sql: "SELECT id FROM customer ORDER BY id") }
    }

    @Test func theRowidAssignedIsPastTheLargestAndTheSequence() throws {
        let plain = try queue("plain.db", autoincrement: false)
        try plain.write { db in
            try db.insert(Customer(id: 41, email: "ada@example.com", note: nil), into: "customer")
            try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer")
        }
        #expect(try ids(plain) == [41, 42])
        let counted = try queue("counted.db", autoincrement: true)
        try counted.write { db in
            try db.insert(Customer(id: nil, email: "ada@example.com", note: nil), into: "customer")
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 99 WHERE name = 'customer'")
            try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer")
        }
        #expect(try ids(counted) == [1, 100])
        // The value sealed for the assigned id opens in its row.
        let bo = try counted.read { db in try db.fetchOne(Customer.self, sql: "SELECT id, email, note FROM customer WHERE id = 100") }
        #expect(bo?.email == "bo@example.com" && bo?.note == "b")
    }

    /// `sqlite_sequence` edited to hold text: SQLite's max() ranks TEXT above
    /// every integer, so the query answers the text; it is refused, and
    /// nothing is written.
    @Test func aSequenceEditedToTextIsRefusedAndNothingIsWritten() throws {
        let queue = try queue("edited.db", autoincrement: true)
        try queue.write { db in
            try db.insert(Customer(id: nil, email: "ada@example.com", note: nil), into: "customer")
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 'x' WHERE name = 'customer'")
        }
        #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer") }
        }
        #expect(try ids(queue) == [1])
    }

    /// The active key's check value edited to TEXT (the column's type is not
    /// enforced): not the check value of this keyring, refused.
    @Test func aCheckValueEditedToTextIsAWrongKeyring() throws {
        let queue = try queue("check.db", autoincrement: false)
        try queue.write { db in try db.execute(sql: "UPDATE strongroom_field_keys SET check_value = 'not a check value'") }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer") }
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        #expect(try ids(queue).isEmpty)
    }
}
