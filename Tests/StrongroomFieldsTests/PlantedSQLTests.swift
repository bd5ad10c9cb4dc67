import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 25, item 1: the adversary holds the database key (not the field
/// keyring) and plants SQL in the schema: a trigger, a view, a DEFAULT, a
/// CHECK, an index. When the application's connection, which holds the
/// keyring, next runs, none of it may open (or seal, or blind-index) a
/// value: the field functions run only where the application calls them.
///
/// Issue 50, item 2: an app connection carries no key-bearing function, so
/// there a planted call names no function at all (the last tests here).
/// The others run on a tool's connection (the CLI's, the migration
/// runner's), which does carry them: the operator's own SQL calls them.
@Suite("Sealed columns: SQL planted by a database-key holder")
struct PlantedSQLTests {
    let f = PlantedSQLFixture()

    /// The adversary rebuilds `customer` with `extra` (a column or a
    /// constraint) added, keeping its rows.
    func replaceCustomer(_ path: String, adding extra: String) throws {
        try f.adversary(path).execute(sql: """
            CREATE TABLE customer_new(id INTEGER PRIMARY KEY, email BLOB, country BLOB, \(extra));
            INSERT INTO customer_new(id, email, country) SELECT id, email, country FROM customer;
            DROP TABLE customer;
            ALTER TABLE customer_new RENAME TO customer;
            """)
    }

    /// The sealed e-mail of row 1, as the adversary reads it from the file.
    func envelopeOfRow1(_ path: String) throws -> [UInt8] {
        let db = try Connection(path: path, configuration: Configuration(key: f.databaseKey))
        return try #require(try db.fetchOne([UInt8].self, sql: "SELECT email FROM customer WHERE id = 1"))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// No value of any table holds a plaintext e-mail.
    func expectNoPlaintext(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let db = try Connection(path: path, configuration: Configuration(key: f.databaseKey))
        let tables = try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        for table in tables {
            for row in try db.fetchAll(sql: "SELECT * FROM \(SQLScript.quotedIdentifier(table))") {
                for index in 0..<row.count {
                    let value = try row.decode(DatabaseValue.self, at: index)
                    if case .text(let text) = value {
                        #expect(!text.contains("@example.com"), "\(table) holds a plaintext e-mail", sourceLocation: sourceLocation)
                    }
                }
            }
        }
    }

    /// The issue's reproduction: a trigger copies every e-mail, opened, into
    /// an audit table on the application's next insert.
    @Test func aTriggerCannotOpenSealedValues() throws {
        let path = try f.database("trigger.db")
        try f.adversary(path).execute(sql: """
            CREATE TABLE audit_log(id, v);
            CREATE TRIGGER customer_audit AFTER INSERT ON customer BEGIN
              INSERT INTO audit_log SELECT id, strongroom_open(email, 'customer', 'email', id) FROM customer;
            END;
            """)
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
        #expect(error?.message.contains("customer_audit") == true, "names the trigger: \(error?.message ?? "")")
        try expectNoPlaintext(path)
        // The application still reads its own values, with its own SQL.
        #expect(try queue.read { try $0.fetchAll(PlantedSQLFixture.Customer.self, sql: "SELECT id, email FROM customer ORDER BY id") }.map(\.email)
                == ["ada@example.com", "bob@example.com"])
    }

    /// The same through an UPDATE or DELETE trigger, and through a trigger
    /// that seals a guess or blind-indexes it (oracles for guessing values).
    @Test(arguments: [
        "AFTER UPDATE ON customer BEGIN INSERT INTO audit_log SELECT id, strongroom_open(email, 'customer', 'email', id) FROM customer; END",
        "BEFORE DELETE ON customer BEGIN INSERT INTO audit_log VALUES (OLD.id, strongroom_open(OLD.email, 'customer', 'email', OLD.id)); END",
        "AFTER UPDATE ON customer BEGIN INSERT INTO audit_log VALUES (0, strongroom_seal('UK', 'customer', 'country', 'deterministic')); END",
        "AFTER UPDATE ON customer BEGIN INSERT INTO audit_log VALUES (0, strongroom_blind_index('ada@example.com', 'customer', 'email')); END",
    ])
    func noTriggerRunsAFieldFunction(body: String) throws {
        let path = try f.database("triggers.db")
        try f.adversary(path).execute(sql: "CREATE TABLE audit_log(id, v); CREATE TRIGGER planted \(body);")
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in
                try db.execute(sql: "UPDATE customer SET country = NULL WHERE id = 1")
                try db.execute(sql: "DELETE FROM customer WHERE id = 2")
            }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
        #expect(try Connection(path: path, configuration: Configuration(key: f.databaseKey)).fetchOne(Int.self, sql: "SELECT count(*) FROM audit_log") == 0)
    }

    /// A view that opens values, read by the application (or by a trigger).
    @Test func aViewCannotOpenSealedValues() throws {
        let path = try f.database("view.db")
        try f.adversary(path).execute(sql: "CREATE VIEW customer_plain AS SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer")
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.read { db in try db.fetchAll(sql: "SELECT * FROM customer_plain") }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
        #expect(error?.message.contains("customer_plain") == true, "names the view: \(error?.message ?? "")")
    }

    /// A DEFAULT that opens row 1's envelope (copied into the schema as a
    /// literal) fills a new row of the application's with the plaintext.
    @Test func aDefaultCannotOpenSealedValues() throws {
        let path = try f.database("default.db")
        let envelope = Self.hex(try envelopeOfRow1(path))
        try replaceCustomer(path, adding: "leak DEFAULT (strongroom_open(x'\(envelope)', 'customer', 'email', 1))")
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
        try expectNoPlaintext(path)
    }

    /// The same DEFAULT while the application's own statement calls the
    /// function too: a DEFAULT that seals a guess deterministically is an
    /// oracle (its envelope equals the stored one when the guess is right).
    @Test func aDefaultCannotRideOnTheApplicationsOwnCall() throws {
        let path = try f.database("oracle.db")
        try replaceCustomer(path, adding: "guess DEFAULT (strongroom_seal('UK', 'customer', 'country', 'deterministic'))")
        let queue = try f.tool(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
            }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
        let guesses = try Connection(path: path, configuration: Configuration(key: f.databaseKey))
            .fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE guess IS NOT NULL")
        #expect(guesses == 0)
    }

    /// A CHECK constraint runs a function on every insert and update: one
    /// bit of the plaintext per statement, told by whether it fails.
    /// (The second CHECK cannot be folded away: SQLite 3.46 drops the call in
    /// the first, "x OR 1" being true whatever x is, so nothing runs there.)
    @Test(arguments: ["strongroom_open(email, 'customer', 'email', id) IS NULL OR 1",
                      "length(strongroom_open(email, 'customer', 'email', id)) >= 0 OR email IS NULL"])
    func aCheckConstraintCannotOpenSealedValues(_ check: String) throws {
        let path = try f.database("check.db")
        try replaceCustomer(path, adding: "CHECK (\(check))")
        let queue = try f.tool(path)
        if check.hasSuffix("OR 1") && SQLCipherLibrary.sqliteVersionNumber >= 3_046_000 {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
            return
        }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
        #expect(error?.code.rawValue == "untrusted_schema", "\(error?.message ?? "")")
    }

    /// An index on an expression computes it on every insert.
    @Test func anIndexExpressionCannotOpenSealedValues() throws {
        let path = try f.database("index.db")
        try f.adversary(path).execute(sql: "CREATE INDEX planted ON customer(strongroom_open(email, 'customer', 'email', id))")
        let queue = try f.tool(path)
        #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
    }

    /// The application's own SQL keeps working: its calls at top level,
    /// its lookups, and its statements while no planted SQL is there.
    @Test func theApplicationsOwnCallsStillWork() throws {
        let path = try f.database("own.db")
        let queue = try f.tool(path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer(id, country) VALUES (3, strongroom_seal('FR', 'customer', 'country', 'deterministic'))")
            try db.execute(sql: "UPDATE customer SET email = strongroom_seal('cy@example.com', 'customer', 'email', 'randomized', id) WHERE id = 3")
        }
        let read = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer ORDER BY id")
        }
        #expect(read == ["ada@example.com", "bob@example.com", "cy@example.com"])
        let country = try queue.read { db in
            try db.fetchOne(Int64.self, sql: "SELECT id FROM customer WHERE country = strongroom_seal('FR', 'customer', 'country', 'deterministic')")
        }
        #expect(country == 3)
        // A subquery and a CTE are the application's own SQL too.
        let nested = try queue.read { db in
            try db.fetchOne(String.self, sql: """
                WITH c AS (SELECT id, email FROM customer WHERE id = 2)
                SELECT (SELECT strongroom_open(email, 'customer', 'email', id) FROM c)
                """)
        }
        #expect(nested == "bob@example.com")
    }

    /// The application's cached statements meet another connection's schema
    /// changes: an innocent one changes nothing, a planted one is refused.
    @Test func schemaChangesUnderCachedStatementsAreChecked() throws {
        let path = try f.database("changes.db")
        let queue = try f.tool(path)
        let lookup = "SELECT id FROM customer WHERE country = strongroom_seal('FR', 'customer', 'country', 'deterministic')"
        #expect(try queue.read { db in try db.fetchAll(Int64.self, sql: lookup) }.isEmpty)
        try f.adversary(path).execute(sql: "CREATE TABLE unrelated(x)")
        try queue.write { db in
            try db.execute(sql: "UPDATE customer SET country = strongroom_seal('FR', 'customer', 'country', 'deterministic') WHERE id = 2")
        }
        #expect(try queue.read { db in try db.fetchAll(Int64.self, sql: lookup) } == [2])
        try f.adversary(path).execute(sql: "CREATE VIEW planted AS SELECT strongroom_open(email, 'customer', 'email', id) FROM customer")
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in try db.fetchAll(Int64.self, sql: lookup) } }
        #expect(error?.code.rawValue == "untrusted_schema" && error?.message.contains("planted") == true, "\(error?.message ?? "")")
    }

    /// On the application's connection every plant above names a function
    /// that is not there: the statement that would run it fails, and no
    /// table holds a plaintext e-mail.
    @Test(arguments: [
        "CREATE TABLE audit_log(id, v); CREATE TRIGGER planted AFTER INSERT ON customer BEGIN INSERT INTO audit_log SELECT id, strongroom_open(email, 'customer', 'email', id) FROM customer; END",
        "CREATE TABLE audit_log(id, v); CREATE TRIGGER planted AFTER INSERT ON customer BEGIN INSERT INTO audit_log VALUES (0, strongroom_blind_index('ada@example.com', 'customer', 'email')); END",
        "CREATE INDEX planted ON customer(strongroom_open(email, 'customer', 'email', id))",
    ])
    func onTheAppsConnectionAPlantedCallNamesNoFunction(plant: String) throws {
        let path = try f.database("app-plant.db")
        try f.adversary(path).execute(sql: plant)
        let queue = try f.app(path)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
        // SQLite's words for an index expression: "unknown function".
        #expect(error?.message.contains("no such function") == true || error?.message.contains("unknown function") == true, "\(error?.message ?? "")")
        try expectNoPlaintext(path)
    }

    /// A view and a DEFAULT the same way: the read, and the insert, fail.
    @Test func onTheAppsConnectionAPlantedViewOrDefaultNamesNoFunction() throws {
        let path = try f.database("app-view.db")
        try f.adversary(path).execute(sql: "CREATE VIEW customer_plain AS SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer")
        let view = #expect(throws: StrongroomError.self) { try f.app(path).read { db in try db.fetchAll(sql: "SELECT * FROM customer_plain") } }
        #expect(view?.message.contains("no such function") == true, "\(view?.message ?? "")")
        try expectNoPlaintext(path)
        // (Another file: SQLite 3.46 checks the view when the table is renamed.)
        let other = try f.database("app-default.db")
        let envelope = Self.hex(try envelopeOfRow1(other))
        try replaceCustomer(other, adding: "leak DEFAULT (strongroom_open(x'\(envelope)', 'customer', 'email', 1))")
        let insert = #expect(throws: StrongroomError.self) {
            try f.app(other).write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "cy@example.com"), into: "customer") }
        }
        #expect(insert?.message.contains("no such function") == true || insert?.message.contains("unknown function") == true, "\(insert?.message ?? "")")
        try expectNoPlaintext(other)
    }
}
