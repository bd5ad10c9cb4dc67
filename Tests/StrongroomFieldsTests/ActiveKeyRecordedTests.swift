import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Review of issue 38 (H2, found through the customer service): a connection
/// opened while the database did not know the keyring's active key refused
/// `strongroom_seal` for as long as it stayed open, even after an insert or
/// `FieldKeyCheck.recordActiveKey` on that very connection recorded the key.
/// A pool's writer lives as long as the service, so an `UPDATE … SET email =
/// strongroom_seal(…)` failed (500) until a restart. The key counts as known
/// once the database records it (in the same transaction too: a rollback
/// takes the record and the values sealed under it back together).
@Suite("Sealed columns: a key recorded while the connection is open")
struct ActiveKeyRecordedTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()
    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index")]

    struct Customer: Codable, SealedRecord {
        var id: Int64?; var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// A tool's queue: the updates below are SQL calling strongroom_seal,
    /// which only the tools' connections carry (an app updates with
    /// `Connection.update`, `SealedWritePathTests`).
    func queue(_ path: String, keyring: FieldKeyring) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        config.addFieldFunctionsForTools(keyring: keyring, columns: Self.columns)
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// A database sealed under key 1, and the keyring with key 2 active.
    func databaseAndNewKey() throws -> (String, FieldKeyring) {
        let path = dir.file("customers.db")
        try queue(path, keyring: keyring).write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB)")
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try db.insert(Customer(id: 1, email: "ada@example.com"), into: "customer")
        }
        let (grown, id) = keyring.addingKey()
        return (path, try grown.activating(id))
    }

    static let update = "UPDATE customer SET email = strongroom_seal('ada.l@example.com', 'customer', 'email', 'indexed', id) WHERE id = 1"

    @Test func anUpdateSealsOnceAnInsertRecordedTheKey() throws {
        let (path, rotated) = try databaseAndNewKey()
        let queue = try queue(path, keyring: rotated)
        try queue.write { db in try db.insert(Customer(id: 2, email: "bo@example.com"), into: "customer") }
        try queue.write { db in try db.execute(sql: Self.update) }
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 1", opening: SealedProperty("email", of: "customer")) } == "ada.l@example.com")
    }

    @Test func anUpdateSealsOnceTheKeyIsRecordedOnTheConnection() throws {
        let (path, rotated) = try databaseAndNewKey()
        let queue = try queue(path, keyring: rotated)
        try queue.write { db in
            try FieldKeyCheck.recordActiveKey(of: rotated, in: db)
            try db.execute(sql: Self.update)
        }
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 1", opening: SealedProperty("email", of: "customer")) } == "ada.l@example.com")
    }

    @Test func aRolledBackRecordSealsNothingAfterwards() throws {
        let (path, rotated) = try databaseAndNewKey()
        let queue = try queue(path, keyring: rotated)
        struct Undo: Error {}
        _ = try? queue.write { db in
            try FieldKeyCheck.recordActiveKey(of: rotated, in: db)
            throw Undo()
        }
        #expect(throws: (any Error).self) { try queue.write { db in try db.execute(sql: Self.update) } }
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 1", opening: SealedProperty("email", of: "customer")) } == "ada@example.com")
    }
}
