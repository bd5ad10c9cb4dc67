import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Review of 1143784 (issue 38, item 5).
///
/// Inside a transaction, once the active key is recorded, a sealed insert
/// runs without its savepoint and relies on SQLite's statement rollback.
/// That rollback does not undo everything a failed INSERT wrote:
///
/// - FAIL conflict resolution (`RAISE(FAIL, …)` in a trigger, or a
///   `UNIQUE … ON CONFLICT FAIL` constraint hit by a trigger's write) keeps
///   the statement's earlier changes: sqlite3VdbeHalt turns
///   `errorAction == OE_Fail` into SAVEPOINT_RELEASE of the statement
///   (src/vdbeaux.c, SQLite 3.15.2 and 3.46.1 alike);
/// - on SQLite 3.15.2 (SQLCipher 3.4.1) a statement that SQLite compiled
///   without a statement journal (usesStmtJournal = isMultiWrite &&
///   mayAbort; a function call sets mayAbort only from 3.31 on, in
///   sqlite3VdbeAddFunctionCall) keeps its partial writes after a runtime
///   error such as a function error in a trigger.
///
/// `inSavepoint` rolls all of it back. Each test below failed at 1143784
/// (the last one on SQLCipher 3.4.1 only); an insert now skips its
/// savepoint only when the schema holds no trigger.
@Suite("Review: a failed sealed insert inside a transaction leaves nothing behind")
struct SealedInsertFailureAtomicityTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()
    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("note", in: "customer")]
    static let table = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, note BLOB, email_index BLOB UNIQUE)"
    static let quota = "CREATE TRIGGER customer_quota AFTER INSERT ON customer WHEN (SELECT count(*) FROM customer) > 1 BEGIN SELECT RAISE(FAIL, 'one customer only'); END"

    struct Customer: Codable, SealedRecord {
        var id: Int64?; var email: String; var note: String?
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("note", of: "customer")]
    }

    /// A queue on a new database with `table`, its sealed columns and the
    /// active key recorded (so inserts inside a transaction take the path
    /// without a savepoint), then `schema` run.
    func queue(table: String = SealedInsertFailureAtomicityTests.table, schema: String) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: dir.file("customers.db"), configuration: config)
        try queue.write { db in
            try db.execute(sql: table)
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try FieldKeyCheck.recordActiveKey(of: keyring, in: db)
            try db.execute(sql: schema)
        }
        return queue
    }

    /// The insert throws, the application goes on and commits (as
    /// `aFailedInsertLeavesTheRestOfItsTransaction` does): the row of the
    /// insert that threw must not be committed.
    @Test(arguments: [
        // The application's own rule, enforced with RAISE(FAIL).
        SealedInsertFailureAtomicityTests.quota,
        // An audit table whose UNIQUE constraint resolves conflicts with FAIL.
        "CREATE TABLE welcome(kind TEXT UNIQUE ON CONFLICT FAIL); CREATE TRIGGER customer_welcome AFTER INSERT ON customer BEGIN INSERT INTO welcome VALUES ('first'); END",
    ])
    func theRowOfAFailedInsertIsNotCommitted(schema: String) throws {
        let queue = try queue(schema: schema)
        try queue.write { db in
            try db.insert(Customer(id: nil, email: "ada@example.com", note: "a"), into: "customer")
            #expect(throws: StrongroomError.self) { try db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer") }
        }
        let emails = try queue.read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email, note FROM customer ORDER BY id") }.map(\.email)
        #expect(emails == ["ada@example.com"], "the insert that threw left its row behind: \(emails)")
    }

    /// AUTOINCREMENT: SQLite updates sqlite_sequence at the end of the
    /// INSERT, which a FAIL in an AFTER trigger never reaches. The failed
    /// insert's row stays with id 2 while sqlite_sequence still says 1; once
    /// that row is deleted, the next insert is assigned id 2 again, and a
    /// randomized value sealed for the deleted row 2 opens in the new one.
    @Test func anIdIsNotAssignedTwiceInAnAutoincrementTable() throws {
        let queue = try queue(table: "CREATE TABLE customer(id INTEGER PRIMARY KEY AUTOINCREMENT, email BLOB NOT NULL, note BLOB, email_index BLOB UNIQUE)",
                              schema: SealedInsertFailureAtomicityTests.quota)
        try queue.write { db in
            try db.insert(Customer(id: nil, email: "ada@example.com", note: "a"), into: "customer")
            _ = try? db.insert(Customer(id: nil, email: "bo@example.com", note: "b"), into: "customer")
        }
        let used = try queue.read { db in try db.fetchAll(Int64.self, sql: "SELECT id FROM customer ORDER BY id") }
        try queue.write { db in
            try db.execute(sql: "DROP TRIGGER customer_quota")
            try db.execute(sql: "DELETE FROM customer WHERE id > 1")
            try db.insert(Customer(id: nil, email: "cy@example.com", note: "c"), into: "customer")
        }
        let cy = try #require(try queue.read { db in try db.fetchOne(Int64.self, sql: "SELECT id FROM customer WHERE id > 1") })
        #expect(!used.contains(cy), "id \(cy) was committed before (ids \(used)) and is assigned again")
    }

    /// SQLCipher 3.4.1 (SQLite 3.15.2) only: a table with no constraint
    /// (a deterministic column needs no primary key, so none is assigned),
    /// and a trigger whose function fails. No statement journal is kept
    /// (isMultiWrite without mayAbort), so neither the row nor the trigger's
    /// write is taken back. On SQLite ≥ 3.31 the function call sets mayAbort
    /// and this passes.
    @Test func aFunctionErrorInATriggerTakesTheRowBack() throws {
        let columns: [SealedColumn] = [.deterministic("code", in: "voucher")]
        var config = Configuration(key: databaseKey)
        config.seal(columns, keyring: keyring)
        let queue = try DatabaseQueue(path: dir.file("vouchers.db"), configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE voucher(code BLOB)")
            try db.execute(sql: "CREATE TABLE voucher_log(v)")
            try db.execute(sql: "CREATE TRIGGER voucher_audit AFTER INSERT ON voucher WHEN new.rowid > 1 BEGIN INSERT INTO voucher_log VALUES (new.rowid); SELECT abs(-9223372036854775808 + 0 * new.rowid); END")
            try SealedColumnRegistry.record(columns, keyring: keyring, in: db)
            try FieldKeyCheck.recordActiveKey(of: keyring, in: db)
        }
        struct Voucher: Codable { var code: String }
        try queue.write { db in
            try db.insert(Voucher(code: "A-1"), into: "voucher")
            #expect(throws: StrongroomError.self) { try db.insert(Voucher(code: "B-2"), into: "voucher") }
        }
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM voucher") } == 1)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM voucher_log") } == 0)
    }
}
