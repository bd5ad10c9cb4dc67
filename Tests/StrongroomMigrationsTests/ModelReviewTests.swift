import Foundation
import Strongroom
import StrongroomFields
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Defects a review of the model and diff found (issue 10), each reproduced.
@Suite("Model and diff review findings")
struct ModelReviewTests {
    let f = MigrationFixture()
    let keyring = FieldKeyring.generate()

    func open() throws -> Connection {
        var configuration = Configuration(key: f.key)
        configuration.addFieldFunctionsForTools(keyring: keyring)
        return try Connection(path: f.databasePath, configuration: configuration)
    }

    /// Migrations up to `sql`, applied to a database with two customers.
    func start(_ sql: String, rows: String) throws -> Connection {
        f.write("0001_initial.sql", sql)
        let db = try open()
        try f.migrator().migrate(db)
        try db.execute(sql: rows)
        return db
    }

    func apply(_ plan: SchemaDiff, version: Int = 2, to db: Connection) throws {
        f.write(String(format: "%04d_model.sql", version), plan.sql)
        try f.migrator().migrate(db)
    }

    @Test func aSealedColumnAddedWithADefaultIsSealedNotStoredPlain() throws {
        let db = try start("CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
                           rows: "INSERT INTO customer VALUES (1, 'Ada'), (2, 'Bob');")
        let current = try f.migrator().replayedSchema()
        var tables = current.tables
        tables[0].columns.append(ColumnDefinition("ssn", type: "TEXT", notNull: true, defaultSQL: "'unknown'", sealing: .randomized))
        let model = DatabaseSchema(tables: tables)
        try apply(SchemaDiff.plan(from: current, to: model), to: db)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE typeof(ssn) <> 'blob'") == 0)
        try model.validate(db)
    }

    @Test func aPrimaryKeyChangeUnderSealedValuesIsRefused() throws {
        let current = try DatabaseSchema.read(sql: "CREATE TABLE customer(id INTEGER NOT NULL, region TEXT NOT NULL, email TEXT, PRIMARY KEY (id));")
        var sealed = current
        sealed = DatabaseSchema(tables: [{ var t = current.tables[0]; t.columns[2].sealing = .randomized; return t }()])
        var model = sealed
        model = DatabaseSchema(tables: [{ var t = sealed.tables[0]; t.primaryKey = ["id", "region"]; return t }()])
        let plan = SchemaDiff.plan(from: sealed, to: model)
        #expect(plan.refusals.contains { $0.contains("primary key") && $0.contains("customer.email") }, "\(plan.refusals)")
    }

    @Test func renamingASealedColumnOrItsTableIsRefused() throws {
        let plain = try DatabaseSchema.read(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT);")
        let sealed = DatabaseSchema(tables: [{ var t = plain.tables[0]; t.columns[1].sealing = .randomized; return t }()])
        var renamed = sealed.tables[0]
        renamed.columns[1].name = "contact"
        let column = SchemaDiff.plan(from: sealed, to: DatabaseSchema(tables: [renamed]), renames: [.column(table: "customer", from: "email", to: "contact")])
        #expect(column.refusals.contains { $0.contains("customer.email") && $0.contains("sealed") }, "\(column.refusals)")
        var moved = sealed.tables[0]
        moved.name = "client"
        let table = SchemaDiff.plan(from: sealed, to: DatabaseSchema(tables: [moved]), renames: [.table(from: "customer", to: "client")])
        #expect(table.refusals.contains { $0.contains("customer") && $0.contains("sealed") }, "\(table.refusals)")
    }

    @Test func aRebuildThatWouldDropWhatTheModelCannotSayIsRefused() throws {
        f.write("0001_initial.sql", """
            CREATE TABLE account(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL COLLATE NOCASE UNIQUE,
                                 qty INTEGER NOT NULL CHECK (qty > 0));
            """)
        let current = try f.migrator().replayedSchema()
        var account = current.tables[0]
        account.columns.append(ColumnDefinition("created", type: "TEXT", defaultSQL: "CURRENT_TIMESTAMP"))
        let plan = SchemaDiff.plan(from: current, to: DatabaseSchema(tables: [account]))
        let refusal = try #require(plan.refusals.first, "the rebuild would drop AUTOINCREMENT, COLLATE and CHECK")
        #expect(refusal.contains("AUTOINCREMENT") && refusal.contains("COLLATE") && refusal.contains("CHECK"), "\(refusal)")
    }

    @Test func aRowidPrimaryKeyAndAnImplicitForeignKeyTargetAreNotDifferences() throws {
        let found = try DatabaseSchema.read(sql: """
            CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE album(id INTEGER PRIMARY KEY, artist_id INTEGER REFERENCES artist);
            """)
        let model = DatabaseSchema(tables: [
            TableDefinition("artist", columns: [ColumnDefinition("id", type: "INTEGER", notNull: true), ColumnDefinition("name", type: "TEXT")], primaryKey: ["id"]),
            TableDefinition("album", columns: [ColumnDefinition("id", type: "INTEGER", notNull: true), ColumnDefinition("artist_id", type: "INTEGER")],
                            primaryKey: ["id"], foreignKeys: [ForeignKeyDefinition(["artist_id"], references: "artist", columns: ["id"])]),
        ])
        #expect(model.differences(from: found) == [])
        #expect(SchemaDiff.plan(from: found, to: model).steps == [])
    }

    @Test func defaultsThatAreExpressionsOrKeywordsRenderAsSQLiteReadsThem() throws {
        let table = TableDefinition("t", columns: [
            ColumnDefinition("id", type: "INTEGER", notNull: true),
            ColumnDefinition("joined", type: "TEXT", defaultSQL: "'a' || 'b'"),
            ColumnDefinition("sum", type: "INTEGER", defaultSQL: "(1)+(2)"),
            ColumnDefinition("flag", type: "INTEGER", defaultSQL: "TRUE"),
            ColumnDefinition("neg", type: "INTEGER", defaultSQL: "-5"),
        ], primaryKey: ["id"])
        let db = try Connection.inMemory()
        try db.execute(sql: DatabaseSchema(tables: [table]).sql)
        try db.execute(sql: "INSERT INTO t(id) VALUES (1)")
        let row = try #require(try db.fetchOne(sql: "SELECT joined, sum, flag, typeof(flag), neg FROM t"))
        #expect(try row.decode(String.self, at: 0) == "ab")
        #expect(try row.decode(Int.self, at: 1) == 3)
        #expect(try row.decode(String.self, at: 3) == "integer", "TRUE is an identifier before SQLite 3.23")
        #expect(try row.decode(Int.self, at: 4) == -5)
        // Read back and rendered again (as a rebuild does), it still runs.
        let read = try DatabaseSchema.read(from: db)
        #expect(DatabaseSchema(tables: [table]).differences(from: read) == [])
        let again = try Connection.inMemory()
        try again.execute(sql: read.sql)
    }

    @Test func plaintextBlobsAndAnotherBlindIndexColumnAreFound() throws {
        let table = TableDefinition("doc", columns: [
            ColumnDefinition("id", type: "INTEGER", notNull: true),
            ColumnDefinition("scan", type: "BLOB", sealing: .randomized),
            ColumnDefinition("email", type: "TEXT", sealing: .indexed, sealedIndexColumn: "email_index"),
            ColumnDefinition("email_index", type: "BLOB"),
            ColumnDefinition("email_bidx", type: "BLOB"),
        ], primaryKey: ["id"])
        let model = DatabaseSchema(tables: [table])
        let db = try Connection.inMemory()
        try db.execute(sql: model.sql)
        try db.execute(sql: "UPDATE strongroom_sealed_columns SET index_column = 'email_bidx' WHERE column_name = 'email'")
        try db.execute(sql: "INSERT INTO doc(id, scan) VALUES (1, x'255044462d312e340a')")   // a plaintext PDF header, as a BLOB
        let mismatch = #expect(throws: SchemaMismatch.self) { try model.validate(db) }
        #expect(mismatch?.differences.contains(.columnNotSealed(table: "doc", column: "scan", mode: .randomized, plaintextValues: 1)) == true, "\(mismatch?.differences ?? [])")
        #expect(mismatch?.differences.contains { $0.description.contains("email_index") } == true, "\(mismatch?.differences ?? [])")
    }

    @Test func aSealingModeChangeNeverWritesThePlaintext() throws {
        let plain = try DatabaseSchema.read(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT);")
        let randomized = DatabaseSchema(tables: [{ var t = plain.tables[0]; t.columns[1].sealing = .randomized; return t }()])
        let deterministic = DatabaseSchema(tables: [{ var t = plain.tables[0]; t.columns[1].sealing = .deterministic; return t }()])
        let plan = SchemaDiff.plan(from: randomized, to: deterministic)
        let updates = plan.steps.filter { $0.sql.hasPrefix("UPDATE") }
        #expect(updates.count == 1 && updates[0].sql.contains("strongroom_seal(strongroom_open("), "\(updates.map(\.sql))")
    }

    @Test func anUpgradeThatDropsATableLosesItsRowsUnlessExpected() throws {
        let v1 = Migration(version: 1, description: "initial", sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY); CREATE TABLE scratch(x);")
        let v2 = Migration(version: 2, description: "drop scratch", sql: "DROP TABLE scratch;")
        let model = try DatabaseSchema.read(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY);")
        let fill: (Connection) throws -> Void = { db in try db.execute(sql: "INSERT INTO customer VALUES (1); INSERT INTO scratch VALUES (1), (2);") }
        var test = UpgradeTest(migrator: try Migrator(migrations: [v1, v2]), model: model)
        let failure = #expect(throws: UpgradeTest.Failure.self) { try test.run(from: 1, fill: fill) }
        #expect(failure?.code == "lost_rows" && failure?.description.contains("scratch had 2, has 0") == true, "\(String(describing: failure))")
        test.tablesThatMayLoseRows = ["scratch"]
        try test.run(from: 1, fill: fill)
    }
}
