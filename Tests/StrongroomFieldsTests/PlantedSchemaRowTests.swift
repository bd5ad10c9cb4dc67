import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 25, third review: a retry that wrote rows twice, tables retire did
/// not search (a schema row that lies about its type or name, values moved
/// into the registry), a prefilter that followed the app's
/// case_sensitive_like; and the CREATE TEMP spellings SQLite still loads.
@Suite("Sealed columns: planted schema rows, retries")
struct PlantedSchemaRowTests {
    let f = PlantedSQLFixture()

    static let clean = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB, guess)"

    /// Statement.step's retry after a re-prepare assumes the first run had no
    /// effect. In an explicit transaction, a multi-row UPDATE with no
    /// constraint has no statement journal: rows written before the first
    /// (withdrawn) direct-only call stay written, and the retry writes them again.
    @Test func retryAfterReprepareAppliesEarlierRowsTwice() throws {
        let path = try f.database("retry.db")
        let db = try f.toolConnection(path)
        try db.execute(sql: "ALTER TABLE customer ADD COLUMN visits INTEGER DEFAULT 0")
        try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        let update = try db.prepare(sql: "UPDATE customer SET visits = visits + 1, country = CASE WHEN id = 3 THEN strongroom_seal('DE', 'customer', 'country', 'deterministic') ELSE country END")
        do {
            let other = try f.bare(path)
            try other.execute(sql: "CREATE TABLE unrelated(x)")
            other.close()
        }
        try db.execute(sql: "BEGIN")
        try update.execute()
        try db.execute(sql: "COMMIT")
        let visits = try db.fetchAll(Int.self, sql: "SELECT visits FROM customer ORDER BY id")
        #expect(visits == [1, 1, 1], "visits after one UPDATE: \(visits)")
        // Outside one, it runs again once the schema is checked, and applies once.
        try f.bare(path).execute(sql: "CREATE TABLE unrelated2(x)")
        try update.execute()
        #expect(try db.fetchAll(Int.self, sql: "SELECT visits FROM customer ORDER BY id") == [2, 2, 2])
    }

    /// SQLite loads a schema row by its sql text alone: a table whose row
    /// says type 'index', or whose name column differs from the name in its
    /// sql, is still a table every statement reads (SealedValueSearch once
    /// listed tables by type and name, and retire missed its values).
    @Test func retireMissesATableWhoseMasterRowLies() throws {
        let path = try f.database("retire-type.db")
        try f.bare(path).execute(sql: """
            ALTER TABLE customer RENAME TO hidden_customer;
            CREATE VIEW customer AS SELECT * FROM hidden_customer;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET type = 'index' WHERE name = 'hidden_customer';
            PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try f.app(path)
        f.expectTheAppsReadsThroughTheStandInForgeNothing(queue)
        let findings = try queue.read { db in try SealedValueSearch.findings(in: db) }
        #expect(findings.contains { $0.table == "hidden_customer" && $0.column == "email" }, "\(findings)")
        f.expectRetireRefused(queue)
    }

    @Test func retireMissesATableWhoseMasterNameDiffers() throws {
        let path = try f.database("retire-name.db")
        try f.bare(path).execute(sql: """
            ALTER TABLE customer RENAME TO hidden_customer;
            CREATE VIEW customer AS SELECT * FROM hidden_customer;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET name = 'decoy', tbl_name = 'decoy' WHERE name = 'hidden_customer';
            PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try f.app(path)
        f.expectTheAppsReadsThroughTheStandInForgeNothing(queue)
        let findings = try queue.read { db in try SealedValueSearch.findings(in: db) }
        #expect(findings.contains { $0.column == "email" && $0.table.lowercased().contains("customer") }, "\(findings)")
    }
    /// Values moved into extra columns of the registry table (SealedValueSearch
    /// once skipped it by name); rows with mode 'context' and names other
    /// than '' are neither sealed columns nor the context row.
    @Test func retireMissesValuesMovedIntoTheRegistryTable() throws {
        let path = try f.database("retire-registry.db")
        try f.bare(path).execute(sql: """
            ALTER TABLE strongroom_sealed_columns ADD COLUMN c_id;
            ALTER TABLE strongroom_sealed_columns ADD COLUMN c_email;
            ALTER TABLE strongroom_sealed_columns ADD COLUMN c_country;
            INSERT INTO strongroom_sealed_columns(table_name, column_name, mode, c_id, c_email, c_country)
              SELECT 'row' || id, 'x', 'context', id, email, country FROM customer;
            DROP TABLE customer;
            CREATE VIEW customer AS SELECT c_id AS id, c_email AS email, c_country AS country FROM strongroom_sealed_columns WHERE c_id IS NOT NULL;
            """)
        let queue = try f.app(path)
        f.expectTheAppsReadsThroughTheStandInForgeNothing(queue)
        f.expectRetireRefused(queue)
    }
    /// Odd spellings of CREATE TEMP that SQLite's loader still takes are
    /// refused by the scan (these passed when written).
    @Test(arguments: ["CREATE /*x*/ TEMP VIEW", "create --x\ntemporary view", "CREATE \t\u{0C}\r\nTeMp/**/VIEW", "CREATE TEMP\nVIEW"])
    func oddCreateTempSpellingsAreRefused(_ prefix: String) throws {
        let path = try f.database("odd\(abs(prefix.hashValue)).db")
        let body = "\(prefix) sqlite_master AS SELECT 'table' AS type, 'customer' AS name, 'customer' AS tbl_name, 'CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB)' AS sql"
        let adversary = try f.bare(path)
        try adversary.execute(sql: "PRAGMA writable_schema = ON")
        try adversary.execute(sql: "INSERT INTO sqlite_master VALUES ('view', 'sqlite_master', 'sqlite_master', 0, ?)", arguments: [body])
        try adversary.execute(sql: "PRAGMA writable_schema = OFF")
        adversary.close()
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        // SQLite loads it into temp:
        let loaded = try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master")
        #expect(loaded == 1, "not loaded as a temp view: \(String(describing: loaded))")
        let db = try f.toolConnection(path)
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
    }
    /// In a UTF-16 database, a schema row whose sql is a BLOB is loaded as
    /// text in that encoding (SQLite reads it with sqlite3_column_text): a
    /// DEFAULT calling strongroom_seal stored so seals nothing. The schema
    /// scan reads the row as that text (`CAST(sql AS TEXT)`) and names the
    /// table; before it did (issue 51), it decoded the BLOB's bytes as
    /// UTF-8 and saw no call, and only the count of the statement's calls
    /// refused the INSERT.
    @Test func aSchemaRowStoredAsAUTF16BlobIsReadAsSQLiteReadsIt() throws {
        let path = try f.database("utf16.db", encoding: "UTF-16le")
        let db = try f.toolConnection(path)
        try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        do {
            let adversary = try f.bare(path)
            #expect(try adversary.fetchOne(String.self, sql: "PRAGMA encoding") == "UTF-16le")
            let version = try adversary.fetchOne(Int.self, sql: "PRAGMA schema_version")!
            try adversary.execute(sql: "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = CAST('CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB, guess DEFAULT (strongroom_seal(''UK'', ''customer'', ''country'', ''deterministic'')))' AS BLOB) WHERE name = 'customer'; PRAGMA writable_schema = OFF; PRAGMA schema_version = \(version + 1);")
            #expect(try adversary.fetchOne(String.self, sql: "SELECT typeof(sql) FROM sqlite_master WHERE name = 'customer'") == "blob")
            adversary.close()
        }
        let (thrown, guesses) = try insertAfterThePlant(db, path)
        #expect(guesses == 0, "guesses=\(guesses ?? -1) thrown=\(String(describing: thrown))")
        if SQLCipherLibrary.sqliteVersionNumber < 3_030_000 {
            // Without SQLITE_DIRECTONLY: the scan itself names the table.
            let message = (thrown as? StrongroomError)?.message ?? ""
            #expect(message.contains("The table \"customer\" in the schema of main calls strongroom_seal()"), "\(message)")
        }
    }

    /// The tool's INSERT once the adversary planted a DEFAULT on `guess`:
    /// what it threw, and (the clean schema put back) how many rows got a guess.
    func insertAfterThePlant(_ db: Connection, _ path: String) throws -> (thrown: (any Error)?, guesses: Int?) {
        var thrown: (any Error)?
        do {
            try db.execute(sql: "INSERT INTO customer(id, country) VALUES (4, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        } catch { thrown = error }
        let adversary = try f.bare(path)
        try adversary.execute(sql: "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = '\(Self.clean)' WHERE name = 'customer'; PRAGMA writable_schema = OFF;")
        adversary.close()
        return (thrown, try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE guess IS NOT NULL"))
    }

    /// The application turns on PRAGMA case_sensitive_like (an ordinary
    /// setting, used to let LIKE use indexes): an upper-case mention must
    /// still be found (a LIKE prefilter once let it pass unseen).
    @Test func caseSensitiveLikeBlindsThePrefilter() throws {
        let path = try f.database("csl.db")
        let db = try f.toolConnection(path)
        try db.execute(sql: "PRAGMA case_sensitive_like = ON")
        try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        do {
            let adversary = try f.bare(path)
            let version = try adversary.fetchOne(Int.self, sql: "PRAGMA schema_version")!
            try adversary.execute(sql: "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB, guess DEFAULT (STRONGROOM_SEAL(''UK'', ''customer'', ''country'', ''deterministic'')))' WHERE name = 'customer'; PRAGMA writable_schema = OFF; PRAGMA schema_version = \(version + 1);")
            adversary.close()
        }
        let (thrown, guesses) = try insertAfterThePlant(db, path)
        #expect(guesses == 0, "guesses=\(guesses ?? -1) thrown=\(String(describing: thrown)) guesses=\(guesses ?? -1)")
    }
}
