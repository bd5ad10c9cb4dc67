import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 25, second review: planted SQL that evaded the schema scan, a key
/// retired while values hid in a table named like SQLite's own, values that
/// look like envelopes by chance. Each reproduced before its fix.
@Suite("Sealed columns: planted SQL that hides")
struct PlantedSQLEvasionTests {
    let f = PlantedSQLFixture()

    static let shadow = """
        PRAGMA writable_schema = ON;
        INSERT INTO sqlite_master VALUES ('view', 'sqlite_master', 'sqlite_master', 0,
          'CREATE TEMP VIEW sqlite_master AS SELECT ''table'' AS type, ''customer'' AS name, ''customer'' AS tbl_name, ''CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB)'' AS sql');
        PRAGMA writable_schema = OFF;
        """

    /// The same DEFAULT oracle as PlantedSQLTests.aDefaultCannotRideOnTheApplicationsOwnCall,
    /// plus one row in sqlite_master: a TEMP view named sqlite_master, which
    /// SQLite 3.15 loads into the temp schema, shadowing the unqualified name
    /// the scan reads.
    @Test func shadowedSqliteMasterHidesADefaultOracle() throws {
        let path = try f.database("shadow.db")
        try f.adversary(path).execute(sql: """
            CREATE TABLE customer_new(id INTEGER PRIMARY KEY, email BLOB, country BLOB,
                                      guess DEFAULT (strongroom_seal('UK', 'customer', 'country', 'deterministic')));
            INSERT INTO customer_new(id, email, country) SELECT id, email, country FROM customer;
            DROP TABLE customer;
            ALTER TABLE customer_new RENAME TO customer;
            """)
        try f.adversary(path).execute(sql: Self.shadow)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try f.tool(path)
        var thrown: (any Error)?
        do {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
            }
        } catch { thrown = error }
        let guesses = try Connection(path: path, configuration: Configuration(key: f.databaseKey))
            .fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE guess IS NOT NULL")
        #expect(thrown != nil && guesses == 0, "the planted DEFAULT ran strongroom_seal for the adversary")
    }

    /// A CHECK that opens the application's new value on each insert (an
    /// error oracle), hidden the same way.
    @Test func shadowedSqliteMasterHidesACheck() throws {
        let path = try f.database("shadowcheck.db")
        try f.adversary(path).execute(sql: """
            CREATE TABLE opened(v);
            CREATE TABLE customer_new(id INTEGER PRIMARY KEY, email BLOB, country BLOB,
                                      CHECK (strongroom_seal('UK', 'customer', 'country', 'deterministic') <> country));
            INSERT INTO customer_new SELECT * FROM customer;
            DROP TABLE customer;
            ALTER TABLE customer_new RENAME TO customer;
            """)
        try f.adversary(path).execute(sql: Self.shadow)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
            }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
    }

    /// An attached database's schema is not scanned.
    @Test func attachedSchemaIsNotScanned() throws {
        let path = try f.database("main.db")
        let other = f.dir.file("other.db")
        try f.adversary(other).execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB,
                                  guess DEFAULT (strongroom_seal('UK', 'customer', 'country', 'deterministic')));
            """)
        var config = Configuration(key: f.databaseKey)
        config.seal(PlantedSQLFixture.columns, keyring: f.keyring, rowKeys: ["customer": ["id"]])
        let db = try Connection(path: path, configuration: config)
        var thrown: (any Error)?
        do {
            try db.attach(other, as: "archive", key: f.databaseKey)
            try db.execute(sql: "INSERT INTO archive.customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
            try db.detach("archive")
        } catch { thrown = error }
        let guesses = try Connection(path: other, configuration: Configuration(key: f.databaseKey))
            .fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE guess IS NOT NULL")
        #expect(thrown != nil && guesses == 0)
    }

    /// The sealed table renamed to a reserved name (writable_schema), a view
    /// and a forwarding trigger in its place: the application kept reading
    /// through SQL (now refused), SealedValueSearch saw nothing, retire
    /// deleted the key.
    @Test func retireMissesValuesInATableNamedSqlite() throws {
        let path = try f.database("retire.db")
        try f.adversary(path).execute(sql: """
            PRAGMA writable_schema = ON;
            ALTER TABLE customer RENAME TO sqlite_customer;
            PRAGMA writable_schema = OFF;
            CREATE VIEW customer AS SELECT * FROM sqlite_customer;
            CREATE TRIGGER customer_insert INSTEAD OF INSERT ON customer BEGIN
              INSERT INTO sqlite_customer VALUES (NEW.id, NEW.email, NEW.country);
            END;
            """)
        let queue = try f.app(path)
        f.expectTheAppsReadsThroughTheStandInForgeNothing(queue)
        let findings = try queue.read { db in try SealedValueSearch.findings(in: db) }
        #expect(findings.contains { $0.table == "sqlite_customer" && $0.column == "email" }, "\(findings)")
        let error = f.expectRetireRefused(queue)
        #expect(error?.message.contains("sqlite_customer.email") == true, "\(error?.message ?? "")")
    }

    /// The scan is cached by schema_version; writable_schema changes the
    /// schema without changing it. The application's connection reloads the
    /// schema after it rolls back a schema change of its own (a failed
    /// migration, a temp table in a rolled-back transaction), and the scan
    /// is skipped.
    @Test func schemaVersionCacheSkipsAScanAfterARollback() throws {
        let path = try f.database("cache.db")
        let db = try f.toolConnection(path)
        try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        try f.adversary(path).execute(sql: """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB, guess DEFAULT (strongroom_seal(''UK'', ''customer'', ''country'', ''deterministic'')))' WHERE name = 'customer';
            PRAGMA writable_schema = OFF;
            """)
        try db.execute(sql: "BEGIN; CREATE TEMP TABLE scratch(x); ROLLBACK;")
        var thrown: (any Error)?
        do {
            try db.execute(sql: "INSERT INTO customer(id, country) VALUES (4, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        } catch { thrown = error }
        let guesses = try Connection(path: path, configuration: Configuration(key: f.databaseKey))
            .fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE guess IS NOT NULL")
        #expect(thrown != nil && guesses == 0)
    }

    /// A plain BLOB column (16-byte UUIDs) one of whose values happens to
    /// start 01 01: SealedValueSearch calls the column sealed, and rotate
    /// (the CLI passes it SealedValueSearch.sealedColumns) fails on it.
    @Test func anOrdinaryBlobLooksLikeAnEnvelope() throws {
        let path = try f.database("uuid.db")
        let queue = try f.app(path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE file(id INTEGER PRIMARY KEY, uuid BLOB)")
            try db.execute(sql: "INSERT INTO file VALUES (1, x'0101a5b6c7d84e0f9a1b2c3d4e5f6071'), (2, x'7f3e2d1c0b0a49f8a7b6c5d4e3f2a1b0')")
        }
        let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db) }
        #expect(!columns.contains { $0.table == "file" }, "\(columns)")
        let added = f.keyring.addingKey()
        let ring = try added.keyring.activating(added.keyID)
        #expect(try FieldRotation.rotate(queue, columns: columns, keyring: ring).resealed.values.reduce(0, +) == 2)
    }
}
