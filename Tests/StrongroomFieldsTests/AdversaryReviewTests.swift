import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 36, the independent adversary review of commit a9b849a (opening
/// rules, EXPLAIN call count). Each test failed on that code, on the
/// engine(s) its comment names.
///
/// SQLite 3.15 only (SQLite 3.46 refuses the planted DEFAULT itself,
/// SQLITE_DIRECTONLY): the EXPLAIN check counts call sites in the program
/// against calls in the text, and SQLite codes fewer sites than the text
/// writes for some ordinary SQL.
@Suite("Adversary review: opening rules and the EXPLAIN call count")
struct AdversaryReviewTests {
    let f = PlantedSQLFixture()

    /// The application rebuilds a lookup table of blind indexes, in index
    /// order, repeating the expression in ORDER BY (as SQL often does).
    /// SQLite computes a repeated ORDER BY term once (it reuses the result
    /// column), so the program calls strongroom_open and
    /// strongroom_blind_index once each while the text calls them twice:
    /// the EXPLAIN count leaves one spare call of each. A DEFAULT raced in on
    /// SQLite 3.15 takes the spare strongroom_open and writes Bob's e-mail,
    /// opened, into the lookup table.
    @Test func aRepeatedOrderByTermLeavesASpareCallForARacedDefault() throws {
        let path = try f.database("dedup.db")
        let bob = try #require(try f.bare(path).fetchOne(String.self, sql: "SELECT hex(email) FROM customer WHERE id = 2"))
        let clean = "CREATE TABLE lookup(customer_id INTEGER, email_index BLOB, note)"
        try f.bare(path).execute(sql: clean)
        let db = try f.toolConnection(path)
        let rebuild = """
            INSERT INTO lookup(customer_id, email_index)
            SELECT id, strongroom_blind_index(strongroom_open(email, 'customer', 'email', id), 'customer', 'email') FROM customer
            ORDER BY strongroom_blind_index(strongroom_open(email, 'customer', 'email', id), 'customer', 'email')
            """
        // The application's statement runs on its own schema.
        try db.execute(sql: rebuild)
        try db.execute(sql: "DELETE FROM lookup")
        let planted = "CREATE TABLE lookup(customer_id INTEGER, email_index BLOB, note DEFAULT (strongroom_open(X'\(bob)', 'customer', 'email', 2)))"
        try f.race(path, name: "lookup", planted: planted, clean: clean) {
            _ = try db.fetchAll(Int.self, sql: "SELECT count(*) FROM lookup")
        }
        var refusal: (any Error)?
        do { try db.execute(sql: rebuild) } catch { refusal = error }
        let notes = try f.bare(path).fetchAll(String?.self, sql: "SELECT CAST(note AS TEXT) FROM lookup")
        #expect(!notes.contains("bob@example.com"), "the raced DEFAULT opened Bob's e-mail into lookup.note: \(notes)")
        #expect(refusal != nil, "the application's rebuild ran the adversary's DEFAULT")
    }
}

/// Both engines (the TEMP variant: SQLite 3.15 only).
/// The declared view's expected columns were found by compiling the
/// declaration on the application's connection, against the schema it
/// loaded: whatever the declaration names (an inner view, or on SQLite 3.15
/// a TEMP object over a table's name) was the adversary's too. Since issue
/// 50 views are not declared, the record is: these stay as regressions.
@Suite("Adversary review: declared views compared with what they were compiled against")
struct AdversaryDeclaredViewTests {
    let f = PlantedSQLFixture()

    static let card = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer"
    static let cardList = "CREATE VIEW card_list AS SELECT id, name, email FROM customer_card"
    static let swapped = "SELECT id, email AS name, name AS email FROM customer"
    static let secret = PlantedSQLFixture.secret

    struct Card: Codable, Equatable, SealedRecord {
        var id: Int64
        var name: String?
        var email: String?
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    func app(_ path: String) throws -> DatabaseQueue { try f.app(path, views: [Self.card, Self.cardList]) }

    func database(_ name: String) throws -> String { try f.namedDatabase(name, views: [Self.card, Self.cardList]) }

    /// Runs `plant` with a schema version change, lets `queue` load the
    /// schema, then runs `restore` with none.
    func race(_ path: String, _ queue: DatabaseQueue, plant: String, restore: String) throws {
        let version = try #require(try f.bare(path).fetchOne(Int.self, sql: "PRAGMA schema_version"))
        let adversary = try f.bare(path)
        try adversary.execute(sql: "PRAGMA writable_schema = ON; \(plant) PRAGMA writable_schema = OFF; PRAGMA schema_version = \(version + 1);")
        adversary.close()
        _ = try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT count(*) FROM main.customer") }
        let restorer = try f.bare(path)
        try restorer.execute(sql: "PRAGMA writable_schema = ON; \(restore) PRAGMA writable_schema = OFF;")
        restorer.close()
    }

    /// The application reads its outer declared view, card_list. Both views
    /// are raced: card_list is loaded as the swap straight from customer (so
    /// the statement no longer reads customer_card, which is then never
    /// checked), customer_card as the same swap. The declaration of
    /// card_list, compiled through the loaded customer_card, hands out the
    /// very columns the loaded card_list does: the check passes, and Ada's
    /// e-mail is opened and handed out as `name`. Both stored texts read as
    /// declared.
    @Test func racedInnerViewMakesTheOuterDeclarationMatchItsRacedSelf() throws {
        let path = try database("nested-race.db")
        let queue = try app(path)
        #expect(try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM card_list") }.first?.email == Self.secret)
        try race(path, queue, plant: """
            UPDATE sqlite_master SET sql = 'CREATE VIEW customer_card AS \(Self.swapped)' WHERE name = 'customer_card';
            UPDATE sqlite_master SET sql = 'CREATE VIEW card_list AS \(Self.swapped)' WHERE name = 'card_list';
            """, restore: """
            UPDATE sqlite_master SET sql = '\(Self.card)' WHERE name = 'customer_card';
            UPDATE sqlite_master SET sql = '\(Self.cardList)' WHERE name = 'card_list';
            """)
        let stored = try f.bare(path).fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'view' ORDER BY name")
        #expect(stored == [Self.cardList, Self.card])
        var cards: [Card] = []
        var refusal: (any Error)?
        do { cards = try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM card_list") } } catch { refusal = error }
        #expect(!cards.contains { $0.name == Self.secret }, "the opened e-mail left as name: \(cards)")
        // Under declared bindings: the envelope under `name` is no text, and
        // the name under `email` no envelope (refused, whichever comes first).
        #expect([.conversion, .sealedValue].contains((refusal as? StrongroomError)?.code), "\(String(describing: refusal))")
    }

    /// SQLite 3.15: the same with one view. customer_card is raced to the
    /// swap, and a TEMP view named customer (planted in main's sqlite_master)
    /// is loaded with it. A view of main reads main.customer, so the
    /// application's statement never reads the TEMP view; the declaration,
    /// compiled as a top-level query, reads it and comes out swapped too.
    @Test func aTempViewMakesTheDeclarationMatchTheRacedView() throws {
        let path = try database("temp-race.db")
        let queue = try app(path)
        #expect(try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM customer_card") }.first?.email == Self.secret)
        guard !PlantedSQLFixture.sqliteRefusesPlantedSchemaRows else { return }
        try race(path, queue, plant: """
            UPDATE sqlite_master SET sql = 'CREATE VIEW customer_card AS \(Self.swapped)' WHERE name = 'customer_card';
            INSERT INTO sqlite_master VALUES ('view', 'customer', 'customer', 0, 'CREATE TEMP VIEW customer AS SELECT id, email AS name, name AS email, country FROM main.customer');
            """, restore: """
            UPDATE sqlite_master SET sql = '\(Self.card)' WHERE name = 'customer_card';
            DELETE FROM sqlite_master WHERE type = 'view' AND name = 'customer';
            """)
        let stored = try f.bare(path).fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'view' ORDER BY name")
        #expect(stored == [Self.cardList, Self.card])
        var cards: [Card] = []
        var refusal: (any Error)?
        do { cards = try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM customer_card") } } catch { refusal = error }
        #expect(!cards.contains { $0.name == Self.secret }, "the opened e-mail left as name: \(cards)")
        // Under declared bindings: the envelope under `name` is no text, and
        // the name under `email` no envelope (refused, whichever comes first).
        #expect([.conversion, .sealedValue].contains((refusal as? StrongroomError)?.code), "\(String(describing: refusal))")
    }
}

/// Both engines. Application SQL that the checks refused, on a schema
/// nobody planted anything in.
@Suite("Adversary review: ordinary statements refused")
struct AdversaryFalseRefusalTests {
    let f = PlantedSQLFixture()

    struct Person: Codable {
        var id: Int64?
        var name: String
        var email: String
    }

    /// Ada and Bob, with a blind index of each e-mail, and an index on name.
    func people(_ name: String) throws -> Connection {
        let path = f.dir.file(name)
        let db = try f.toolConnection(path)
        try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, email BLOB, country BLOB, email_index BLOB)")
        try db.execute(sql: "CREATE INDEX customer_name ON customer(name)")
        try db.insert(Person(id: 1, name: "Ada", email: "ada@example.com"), into: "customer")
        try db.insert(Person(id: 2, name: "Bob", email: "bob@example.com"), into: "customer")
        try db.execute(sql: "UPDATE customer SET email_index = strongroom_blind_index(strongroom_open(email, 'customer', 'email', id), 'customer', 'email')")
        return db
    }

    /// EXPLAIN QUERY PLAN of the documented UPDATE: the check runs EXPLAIN on
    /// "EXPLAIN QUERY PLAN UPDATE …" (SQLite counts an EXPLAIN of a write as
    /// a write) and fails with a syntax error.
    @Test func explainQueryPlanOfTheDocumentedUpdateRuns() throws {
        let db = try people("eqp.db")
        let plan = try db.fetchAll(sql: "EXPLAIN QUERY PLAN UPDATE customer SET email = strongroom_seal(?, 'customer', 'email', 'randomized', id) WHERE id = ?",
                                   arguments: ["ada@example.org", 1])
        #expect(!plan.isEmpty)
    }
}
