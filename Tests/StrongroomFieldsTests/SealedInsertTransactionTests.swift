import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Synchronization
import Testing

/// Issue 38, item 5 (the customer service's creates): inside a savepoint,
/// SQLite copies every page an INSERT changes to a statement journal, and
/// SQLCipher encrypts each copy. A sealed insert inside a transaction runs
/// without one once the database records the active key (its INSERT is then
/// the only write, undone alone when it fails), and still in one when the
/// insert records the key (a failed insert takes the record back).
@Suite("Sealed columns: an insert inside a transaction")
struct SealedInsertTransactionTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()
    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("note", in: "customer")]

    struct Customer: Codable, SealedRecord {
        var id: Int64?; var email: String; var note: String?
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("note", of: "customer")]
    }

    /// A queue on a new database with the `customer` table and its sealed
    /// columns recorded; `recordKey`: the active key recorded too.
    func queue(recordKey: Bool) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: dir.file("customers.db"), configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, note BLOB, email_index BLOB UNIQUE)")
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            if recordKey { try FieldKeyCheck.recordActiveKey(of: keyring, in: db) }
        }
        return queue
    }

    /// The statements `body` starts on `db`, in order.
    static func statements(on db: Connection, _ body: () throws -> Void) rethrows -> [String] {
        let seen = Mutex<[String]>([])
        db.traceStatements { text in seen.withLock { $0.append(text) } }
        defer { db.traceStatements(nil) }
        try body()
        return seen.withLock { $0 }
    }

    @Test func runsNoSavepointOnceTheKeyIsRecorded() throws {
        let queue = try queue(recordKey: true)
        let run = try queue.write { db in
            try Self.statements(on: db) { try db.insert(Customer(id: nil, email: "ada@example.com", note: "first"), into: "customer") }
        }
        #expect(!run.contains { $0.uppercased().hasPrefix("SAVEPOINT") }, "\(run.count) statements, one a SAVEPOINT")
        #expect(run.contains { $0.hasPrefix("INSERT INTO \"customer\"") })
        #expect(try queue.read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email, note FROM customer") }.map(\.email) == ["ada@example.com"])
    }

    @Test func runsInASavepointWhenItRecordsTheKey() throws {
        let queue = try queue(recordKey: false)
        let run = try queue.write { db in
            try Self.statements(on: db) { try db.insert(Customer(id: nil, email: "ada@example.com", note: nil), into: "customer") }
        }
        #expect(run.contains { $0.uppercased().hasPrefix("SAVEPOINT") })
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM strongroom_field_keys") } == 1)
    }

    /// The insert that would record the key fails (a duplicate e-mail): the
    /// transaction goes on and commits, without the record.
    @Test func aFailedInsertTakesTheKeyItRecordedBack() throws {
        let queue = try queue(recordKey: false)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer(id, email, email_index) VALUES (7, x'00', ?)",
                           arguments: [try FieldCipher(keyring: keyring).blindIndex(.text("ada@example.com"), table: "customer", column: "email")])
            #expect(throws: StrongroomError.self) { try db.insert(Customer(id: nil, email: "ada@example.com", note: nil), into: "customer") }
        }
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") } == 1)
        #expect(try queue.read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'strongroom_field_keys'")
        } == 0)
    }

    /// Without a savepoint, SQLite's own statement rollback undoes the
    /// failed INSERT alone: the rows before and after it are committed,
    /// each with its blind index, and the duplicate's row is not there.
    @Test func aFailedInsertLeavesTheRestOfItsTransaction() throws {
        let queue = try queue(recordKey: true)
        try queue.write { db in
            try db.insert(Customer(id: nil, email: "ada@example.com", note: "a"), into: "customer")
            #expect(throws: StrongroomError.self) { try db.insert(Customer(id: nil, email: "ada@example.com", note: "again"), into: "customer") }
            try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer")
        }
        let rows = try queue.read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email, note FROM customer ORDER BY id") }
        #expect(rows.map(\.email) == ["ada@example.com", "bo@example.com"])
        #expect(rows.map(\.note) == ["a", "b"])
        #expect(rows.map(\.id) == [1, 2])
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE email_index IS NOT NULL") } == 2)
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "PRAGMA integrity_check") } == "ok")
    }

    /// Outside a transaction the insert opens its own (a savepoint), so
    /// the id it assigns and the row are written together.
    @Test func outsideATransactionTheInsertIsItsOwnTransaction() throws {
        let queue = try queue(recordKey: true)
        let run = try queue.inDatabase { db in
            try Self.statements(on: db) { try db.insert(Customer(id: nil, email: "ada@example.com", note: "x"), into: "customer") }
        }
        #expect(run.contains { $0.uppercased().hasPrefix("SAVEPOINT") })
        #expect(try queue.read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email, note FROM customer") }.map(\.id) == [1])
    }
}
