import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 25, item 10: a fleet of databases shares one field keyring. By
/// default a value is bound to its table, column and row only, so a value
/// copied from tenant A's row 7 opens in tenant B's row 7; with a
/// ``FieldContext`` (a tenant or database identifier) it does not.
@Suite("Sealed columns: values bound to one database")
struct FieldContextTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    struct Customer: Codable, TableRecord {
        var id: Int64
        var email: String
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "email"]
        static let databaseSealedColumns = ["email"]
        static let databaseRowKey = ["id"]
        init(id: Int64, email: String) { self.id = id; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
    }

    /// A tenant's database, customer 7's e-mail sealed; `context` recorded
    /// in it and configured on the queue when given.
    func tenant(_ name: String, email: String, context: FieldContext?) throws -> DatabaseQueue {
        let path = dir.file(name + ".db")
        if let context {
            let setup = try Connection(path: path, configuration: Configuration(key: databaseKey))
            try SealedColumnRegistry.record(context: context, keyring: keyring, in: setup)
        }
        var config = Configuration(key: databaseKey)
        config.seal([.indexed("email", in: "customer", indexColumn: "email_index")], keyring: keyring, context: context, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB)")
            try db.insert(Customer(id: 7, email: email), into: "customer")
            try SealedColumnRegistry.record([.indexed("email", in: "customer", indexColumn: "email_index")], keyring: keyring, in: db)
        }
        return queue
    }

    /// Copies tenant A's row 7 (envelope and blind index) over tenant B's, with the database key alone.
    func copyRow7(from a: String, to b: String) throws {
        let source = try Connection(path: dir.file(a + ".db"), configuration: Configuration(key: databaseKey))
        let row = try #require(try source.fetchOne(sql: "SELECT email, email_index FROM customer WHERE id = 7"))
        let target = try Connection(path: dir.file(b + ".db"), configuration: Configuration(key: databaseKey))
        try target.execute(sql: "UPDATE customer SET email = ?, email_index = ? WHERE id = 7", arguments: [row[0], row[1]])
    }

    func email(_ queue: DatabaseQueue) throws -> String? {
        try queue.read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 7", opening: SealedProperty("email", of: "customer")) }
    }

    @Test func withoutAContextAValueCopiedToAnotherTenantsRowOpensThere() throws {
        _ = try tenant("a", email: "ada@a.example", context: nil)
        let b = try tenant("b", email: "bob@b.example", context: nil)
        try copyRow7(from: "a", to: "b")
        #expect(try email(b) == "ada@a.example", "the documented default: bound to table, column and row only")
    }

    @Test func withAContextAValueCopiedToAnotherTenantDoesNotOpen() throws {
        let a = try tenant("a", email: "same@example.com", context: try FieldContext("tenant-a"))
        let b = try tenant("b", email: "same@example.com", context: try FieldContext("tenant-b"))
        #expect(try email(a) == "same@example.com" && email(b) == "same@example.com")
        // Equal values give other blind indexes in each tenant, and each finds its own.
        let indexes = try [a, b].map { queue in try queue.read { db in try db.fetchOne([UInt8].self, sql: "SELECT email_index FROM customer WHERE id = 7") } }
        #expect(indexes[0] != indexes[1])
        for queue in [a, b] {
            #expect(try queue.read { db in try db.fetchOne(Customer.self, where: .index("email_index", equals: "same@example.com")) }?.id == 7)
        }
        try copyRow7(from: "a", to: "b")
        let error = #expect(throws: StrongroomError.self) { _ = try email(b) }
        #expect(error?.message.contains("does not authenticate") == true, "\(error?.message ?? "")")
    }

    @Test func aConnectionWithAnotherContextThanTheRecordedOneIsRefused() throws {
        _ = try tenant("a", email: "ada@a.example", context: try FieldContext("tenant-a"))
        var config = Configuration(key: databaseKey)
        config.addFieldFunctionsForTools(keyring: keyring, context: try FieldContext("tenant-b"))
        let error = #expect(throws: StrongroomError.self) { _ = try Connection(path: dir.file("a.db"), configuration: config) }
        #expect(error?.message.contains("tenant-a") == true && error?.message.contains("tenant-b") == true, "\(error?.message ?? "")")
        // Recording another context over the first is refused too.
        let setup = try Connection(path: dir.file("a.db"), configuration: Configuration(key: databaseKey))
        #expect(throws: StrongroomError.self) { try SealedColumnRegistry.record(context: try FieldContext("tenant-b"), keyring: keyring, in: setup) }
        #expect(throws: FieldError.self) { _ = try FieldContext("") }
    }

    /// Tools that are given no context (verify, rotate, export) use the
    /// recorded one; the registry's context row is no sealed column.
    @Test func toolsUseTheRecordedContext() throws {
        let a = try tenant("a", email: "ada@a.example", context: try FieldContext("tenant-a"))
        #expect(try a.read { db in try SealedColumnRegistry.columns(in: db) }.map(\.column) == ["email"])
        #expect(try a.read { db in try ColumnSealing.failures(keyring: keyring, in: db) }.isEmpty)
        let (grown, id) = keyring.addingKey()
        let rotated = try grown.activating(id)
        let plain = try DatabaseQueue(path: dir.file("a.db"), configuration: Configuration(key: databaseKey))
        #expect(try FieldRotation.rotate(plain, columns: [.indexed("email", in: "customer", indexColumn: "email_index")], keyring: rotated).resealed.values.reduce(0, +) == 1)
        #expect(try plain.read { db in try ColumnSealing.failures(keyring: rotated, in: db) }.isEmpty)
        var config = Configuration(key: databaseKey)
        config.addFieldFunctionsForTools(keyring: rotated)
        let tool = try Connection(path: dir.file("a.db"), configuration: config)
        #expect(try tool.fetchOne(Int.self, sql: "SELECT id FROM customer WHERE email_index = strongroom_blind_index('ada@a.example', 'customer', 'email')") == 7)
    }
}
