import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 36, item 3: the SQLite 3.15 race. The adversary plants an
/// expression with a schema version change, lets the live application's
/// connection load it, then puts the stored text back with no change: the
/// stored schema reads clean, while the connection runs what it loaded.
///
/// Issue 50, item 2: app connections carry no key-bearing function, so the
/// race has nothing left to reach there (`SealedWritePathTests`); these
/// tests now run on a tool's connection (the CLI's, the migration
/// runner's), which still calls the functions.
@Suite("Sealed columns: the schema a connection loaded, not the one stored")
struct SchemaRaceTests {
    let f = PlantedSQLFixture()

    static let clean = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB)"

    /// The forgery: the application's INSERT calls strongroom_seal for one
    /// column, and the planted DEFAULT of another seals the adversary's text
    /// for row 1 in the same statement. Moved into row 1, it would read as
    /// authentic.
    @Test func aPlantedDefaultSealsNothingInTheApplicationsInsert() throws {
        let path = try f.database("forge.db")
        let db = try f.toolConnection(path)
        let planted = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB DEFAULT (strongroom_seal('FORGED-by-adversary', 'customer', 'email', 'randomized', 1)), country BLOB)"
        try f.race(path, name: "customer", planted: planted, clean: Self.clean) {
            _ = try db.fetchAll(Int.self, sql: "SELECT count(*) FROM customer")
        }
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        }
        #expect(error?.code == .untrustedSchema, "\(String(describing: error))")
        #expect(error?.message.contains("strongroom_seal") == true, "\(error?.message ?? "")")
        // Whatever row 3 holds, the adversary moves into row 1.
        try f.bare(path).execute(sql: "UPDATE customer SET email = (SELECT email FROM customer WHERE id = 3) WHERE id = 1 AND EXISTS (SELECT 1 FROM customer WHERE id = 3)")
        #expect(try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE id = 3") == 0)
        #expect(try f.toolConnection(path).fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 1", opening: SealedProperty("email", of: "customer")) == "ada@example.com")
    }

    /// An ordinary DELETE, no field function in its text: a foreign key's
    /// ON DELETE SET DEFAULT is compiled as a trigger with no name, and its
    /// planted DEFAULT opened Ada's e-mail into the adversary's table (a
    /// NULL in the other key column lets the foreign key check pass).
    @Test func aForeignKeyActionOpensNothingInAnOrdinaryDelete() throws {
        let path = try f.database("fk.db")
        let envelope = try #require(try f.bare(path).fetchOne(String.self, sql: "SELECT hex(email) FROM customer WHERE id = 1"))
        let clean = "CREATE TABLE loot(id INTEGER PRIMARY KEY, a, b, FOREIGN KEY(a, b) REFERENCES customer(id, email) ON DELETE SET DEFAULT)"
        let planted = "CREATE TABLE loot(id INTEGER PRIMARY KEY, a DEFAULT (strongroom_open(X'\(envelope)', 'customer', 'email', 1)), b, FOREIGN KEY(a, b) REFERENCES customer(id, email) ON DELETE SET DEFAULT)"
        try f.bare(path).execute(sql: """
            CREATE UNIQUE INDEX customer_id_email ON customer(id, email);
            \(clean);
            INSERT INTO loot VALUES (1, 1, (SELECT email FROM customer WHERE id = 1));
            """)
        let db = try f.toolConnection(path)
        try f.race(path, name: "loot", planted: planted, clean: clean) {
            _ = try db.fetchAll(Int.self, sql: "SELECT count(*) FROM customer")
        }
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "DELETE FROM customer WHERE id = ?", arguments: [1])
        }
        #expect(error?.code == .untrustedSchema, "\(String(describing: error))")
        let loot = try f.bare(path).fetchAll(sql: "SELECT a FROM loot").map { "\($0)" }
        #expect(!loot.contains { $0.contains("ada@example.com") }, "\(loot)")
        #expect(try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE id = 1") == 1)
    }

    /// The same planted DEFAULT, with the application's INSERT prepared (and
    /// cached) before the race: SQLite prepares it again as it runs, against
    /// the schema the connection loaded.
    @Test func aCachedInsertPreparedAgainstThePlantedSchemaSealsNothing() throws {
        let path = try f.database("forge-cached.db")
        let db = try f.toolConnection(path)
        let insert = try db.cachedStatement(sql: "INSERT INTO customer(id, country) VALUES (?, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
        try insert.execute(3)
        let planted = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB DEFAULT (strongroom_seal('FORGED-by-adversary', 'customer', 'email', 'randomized', 1)), country BLOB)"
        try f.race(path, name: "customer", planted: planted, clean: Self.clean) {
            _ = try db.fetchAll(Int.self, sql: "SELECT count(*) FROM customer")
        }
        let error = #expect(throws: StrongroomError.self) { try insert.execute(4) }
        #expect(error?.code == .untrustedSchema, "\(String(describing: error))")
        #expect(try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE id = 4") == 0)
        // Inside a transaction too (no run again: refused before any row).
        try db.execute(sql: "BEGIN IMMEDIATE")
        #expect(throws: StrongroomError.self) { try insert.execute(5) }
        try db.execute(sql: "ROLLBACK")
        #expect(try f.bare(path).fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE id >= 4") == 0)
    }

    /// What the application wrote itself still runs: several calls in one
    /// statement, an UPDATE, and a DELETE with foreign keys whose actions
    /// call nothing.
    @Test func theApplicationsOwnCallsStillRun() throws {
        let path = try f.database("own.db")
        let db = try f.toolConnection(path)
        try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, customer_id REFERENCES customer(id) ON DELETE SET NULL)")
        try db.execute(sql: "INSERT INTO note VALUES (1, 2)")
        try db.execute(sql: """
            INSERT INTO customer(id, email, country) VALUES
              (3, strongroom_seal('c@example.com', 'customer', 'email', 'randomized', 3), strongroom_seal('FR', 'customer', 'country', 'deterministic')),
              (4, strongroom_seal('d@example.com', 'customer', 'email', 'randomized', 4), NULL)
            """)
        try db.execute(sql: "UPDATE customer SET email = strongroom_seal(?, 'customer', 'email', 'randomized', id) WHERE id = ?", arguments: ["e@example.com", 4])
        try db.execute(sql: "DELETE FROM customer WHERE id = ?", arguments: [2])
        #expect(try db.fetchAll(String?.self, sql: "SELECT email, id FROM customer ORDER BY id", opening: SealedProperty("email", of: "customer")) == ["ada@example.com", "c@example.com", "e@example.com"])
        #expect(try db.fetchOne(Int?.self, sql: "SELECT customer_id FROM note") == .some(nil))
    }
}
