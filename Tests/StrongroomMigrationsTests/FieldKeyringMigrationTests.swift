import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Issue 50, item 2: the sealed-column SQL functions stay on the tools'
/// connections. The migration runner, given the field keyring, lends them
/// to the connection it migrates for its run only.
@Suite("Migrations with the field keyring")
struct FieldKeyringMigrationTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    func configuration() -> Configuration {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("phone", in: "customer")], keyring: keyring, rowKeys: ["customer": ["id"]])
        return config
    }

    /// The migration runner with the field keyring adds the functions to
    /// the connection it migrates for the run only: a SQL migration seals a
    /// plaintext column, and afterwards the app's connection has none.
    @Test func theMigratorLendsTheFunctionsForItsRunOnly() throws {
        let path = dir.file("migrate.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, phone BLOB, note TEXT); INSERT INTO customer(id, name, note) VALUES (7, 'Di', 'secret note')")
        }
        var migrator = try Migrator(migrations: [
            Migration(version: 1, description: "seal notes",
                      sql: "UPDATE customer SET note = strongroom_seal(note, 'customer', 'note', 'randomized', id)"),
        ])
        migrator.fieldKeyring = keyring
        try migrator.migrate(queue)
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in _ = try db.fetchAll(sql: "SELECT strongroom_open(note, 'customer', 'note', id) FROM customer") } }
        #expect(error?.message.contains("no such function") == true, "\(String(describing: error))")
        let note = try queue.read { db in try db.fetchOne(sql: "SELECT note FROM customer WHERE id = 7") }?[0]
        guard case .blob(let bytes)? = note else { Issue.record("note is \(String(describing: note))"); return }
        let opened = try FieldCipher(keyring: keyring).open(.blob(bytes), table: "customer", column: "note", rowKey: [.integer(7)])
        #expect(opened == .text("secret note"))
    }

    /// The functions a migration runs under carry the application's field
    /// context: the one its connection seals with, or the migrator's own
    /// (`fieldContext`); never only what the file records, which whoever
    /// holds the database key writes.
    @Test func theLentFunctionsCarryTheAppsContext() throws {
        let path = dir.file("context.db")
        let tenant = try FieldContext("tenant-4711")
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("phone", in: "customer")], keyring: keyring, context: tenant, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, phone BLOB, note TEXT); INSERT INTO customer(id, note) VALUES (7, 'secret note')") }
        var migrator = try Migrator(migrations: [
            Migration(version: 1, description: "seal notes", sql: "UPDATE customer SET note = strongroom_seal(note, 'customer', 'note', 'randomized', id)"),
        ])
        migrator.fieldKeyring = keyring
        try migrator.migrate(queue)
        let note = try #require(try queue.read { db in try db.fetchOne(sql: "SELECT note FROM customer WHERE id = 7") }?[0])
        #expect(try FieldCipher(keyring: keyring, context: tenant).open(note, table: "customer", column: "note", rowKey: [.integer(7)]) == .text("secret note"))
        // A migrator told another context than the connection's is refused.
        var other = try Migrator(migrations: [
            Migration(version: 1, description: "seal notes", sql: "UPDATE customer SET note = strongroom_seal(note, 'customer', 'note', 'randomized', id)"),
            Migration(version: 2, description: "nothing", sql: "SELECT 1"),
        ])
        other.fieldKeyring = keyring
        other.fieldContext = try FieldContext("tenant-0815")
        #expect(throws: MigrationError.self) { try other.migrate(queue) }
    }

    /// The runner checks the schema against the migrations before it lends
    /// the functions: a trigger or view no migration creates that calls one
    /// (planted by whoever holds the database key, to run inside the next
    /// migration) is refused, naming it, and nothing is migrated. Without
    /// the field keyring nothing is lent, and the migration runs.
    @Test func aPlantedTriggerStopsTheRunBeforeTheFunctionsAreLent() throws {
        let path = dir.file("planted.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        let create = Migration(version: 1, description: "customers", sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, phone BLOB)")
        var first = try Migrator(migrations: [create])
        first.fieldKeyring = keyring
        try first.migrate(queue)
        try queue.write { db in
            struct Customer: Encodable { var id: Int64; var name: String; var phone: String }
            try db.insert(Customer(id: 1, name: "Ada", phone: "+44 1"), into: "customer")
        }
        let adversary = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try adversary.add(function: DatabaseFunction("strongroom_open", pure: true) { _ in .null })
        try adversary.execute(sql: """
            CREATE TABLE leak(v); CREATE TRIGGER planted AFTER UPDATE ON customer BEGIN
              INSERT INTO leak SELECT strongroom_open(phone, 'customer', 'phone', id) FROM customer; END;
            """)
        adversary.close()
        let rename = Migration(version: 2, description: "names", sql: "UPDATE customer SET name = upper(name)")
        var second = try Migrator(migrations: [create, rename])
        second.fieldKeyring = keyring
        let error = #expect(throws: MigrationError.self) { try second.migrate(queue) }
        #expect(error?.code == .untrustedSchema && error?.message.contains("planted") == true, "\(String(describing: error))")
        #expect(try second.currentVersion(try Connection(path: path, configuration: Configuration(key: databaseKey))) == 1)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM leak") } == 0)
        // The operator removes it; the run goes on.
        try Connection(path: path, configuration: Configuration(key: databaseKey)).execute(sql: "DROP TRIGGER planted")
        try second.migrate(queue)
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT name FROM customer") } == "ADA")
    }

    /// A trigger the migrations created, replaced by one of the same name
    /// that calls a function (or a twin whose name only Unicode folding
    /// takes for the same): the check compares the SQL, not the name.
    @Test(arguments: ["track", "trac\u{212A}"])
    func aTriggerReplacedUnderAMigrationsNameIsRefused(name: String) throws {
        let path = dir.file("replaced.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        let create = Migration(version: 1, description: "customers", sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, phone BLOB);
            CREATE TABLE audit(at);
            CREATE TRIGGER track AFTER UPDATE ON customer BEGIN INSERT INTO audit VALUES (1); END;
            """)
        var first = try Migrator(migrations: [create])
        first.fieldKeyring = keyring
        try first.migrate(queue)
        let adversary = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try adversary.add(function: DatabaseFunction("strongroom_open", pure: true) { _ in .null })
        let replace = name == "track" ? "DROP TRIGGER track;" : ""
        try adversary.execute(sql: """
            \(replace) CREATE TRIGGER "\(name)" AFTER UPDATE ON customer BEGIN
              INSERT INTO audit SELECT strongroom_open(phone, 'customer', 'phone', id) FROM customer; END;
            """)
        adversary.close()
        var second = try Migrator(migrations: [create, Migration(version: 2, description: "names", sql: "UPDATE customer SET name = upper(name)")])
        second.fieldKeyring = keyring
        let error = #expect(throws: MigrationError.self) { try second.migrate(queue) }
        #expect(error?.code == .untrustedSchema, "\(String(describing: error))")
    }

    /// An app connection bound to no context, on a database that recorded
    /// none when it opened: a context recorded since (by whoever holds the
    /// database key) is not taken for the run; the run is refused.
    @Test func aContextRecordedAfterTheAppOpenedIsNotTaken() throws {
        let path = dir.file("late-context.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, phone BLOB, note TEXT); INSERT INTO customer(id, note) VALUES (7, 'secret note')") }
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try SealedColumnRegistry.record(context: try FieldContext("tenant-x"), keyring: FieldKeyring.generate(), in: bare)
        bare.close()
        var migrator = try Migrator(migrations: [
            Migration(version: 1, description: "seal notes", sql: "UPDATE customer SET note = strongroom_seal(note, 'customer', 'note', 'randomized', id)"),
        ])
        migrator.fieldKeyring = keyring
        #expect(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT note FROM customer WHERE id = 7") } == "secret note")
    }
}
