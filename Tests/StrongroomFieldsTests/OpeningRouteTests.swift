import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 36, items 1 and 2: an opened value reaches the application only
/// under the name, and from the place, its own SQL asked for. Since issue
/// 50 that is by construction (a value opens only into a property the
/// application declares, bound to its row); these attacks stay as
/// regressions. The adversary
/// holds the database key, not the field keyring, and rewrites views (or
/// plants a TEMP view in main's schema) so that a sealed e-mail would come
/// out labelled `name`, where the application writes it into an ordinary
/// audit line.
@Suite("Sealed columns: opened only under the application's own names")
struct OpeningRouteTests {
    let f = PlantedSQLFixture()

    static let card = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer"
    static let cardList = "CREATE VIEW card_list AS SELECT id, name, email FROM customer_card"
    static let secret = PlantedSQLFixture.secret

    /// The application's card: its e-mail is customer.email, opened with
    /// the row key in its `id`.
    struct Card: Codable, Equatable, SealedRecord {
        var id: Int64
        var name: String?
        var email: String?
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    func app(_ path: String, views: [String] = []) throws -> DatabaseQueue { try f.app(path, views: views) }

    /// The application's database: Ada, her e-mail sealed, and its own views.
    func database(_ name: String, views: [String] = [card, cardList]) throws -> String { try f.namedDatabase(name, views: views) }

    /// The adversary's edit, with the database key alone.
    func adversary(_ path: String, _ sql: String) throws {
        let db = try f.bare(path)
        try db.execute(sql: sql)
        db.close()
    }

    /// Whatever the read gives the application holds no planted text and
    /// Ada's e-mail nowhere but in a declared `email` of her own row: the
    /// read fails, or what it returns passes `genuine` (Ada's row, as
    /// stored, or opened only where declared).
    func expectNothingForged<T>(sourceLocation: SourceLocation = #_sourceLocation, declaresNothing: Bool = false, genuine: (T) -> Bool, _ read: () throws -> T) {
        PlantedSQLFixture.expectNothingForged(sourceLocation: sourceLocation, declaresNothing: declaresNothing, genuine: genuine, read)
    }

    /// Each way the application reads a row (a record that declares the
    /// e-mail, rows, a row view, one value): the e-mail never leaves under
    /// another name, no planted text arrives as an e-mail, and the
    /// application's reads that declare nothing get no plaintext at all.
    /// Under declared bindings the rewritten views below pass by
    /// construction: a value opens only as customer.email of the row its
    /// record names.
    func everyRead(_ queue: DatabaseQueue, _ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectNothingForged(sourceLocation: sourceLocation, genuine: { (cards: [Card]) in
            cards.allSatisfy { $0.name != Self.secret && ($0.email == nil || ($0.id == 1 && $0.email == Self.secret)) }
        }) { try queue.read { db in try db.fetchAll(Card.self, sql: sql) } }
        expectNothingForged(sourceLocation: sourceLocation, declaresNothing: true, genuine: { (rows: [String]) in !rows.joined().contains(Self.secret) }) {
            try queue.read { db in try db.fetchAll(sql: sql).map { "\($0)" } }
        }
        expectNothingForged(sourceLocation: sourceLocation, declaresNothing: true, genuine: { (seen: [String]) in !seen.contains(Self.secret) }) {
            try queue.read { db in
                var seen: [String] = []
                try db.prepare(sql: sql).forEachRow { row in seen.append(try row.decode(String?.self, at: 1) ?? "") }
                return seen
            }
        }
        expectNothingForged(sourceLocation: sourceLocation, declaresNothing: true, genuine: { (name: String?) in name != Self.secret }) {
            try queue.read { db in try db.fetchOne(String.self, sql: "SELECT name FROM (\(sql))") }
        }
    }

    // MARK: Item 1: views rewritten with plain SQL

    /// The attack: the view the application reads its cards through
    /// is recreated with the two columns swapped.
    @Test func aViewRewrittenToSwapColumnsOpensNothing() throws {
        let path = try database("swap.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer")
        everyRead(try app(path), "SELECT * FROM customer_card")
    }

    /// Relabelled only: the e-mail comes out as `name`, `email` is gone.
    @Test func aViewThatRelabelsTheSealedColumnOpensNothing() throws {
        let path = try database("relabel.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, email AS name, NULL AS email FROM customer")
        everyRead(try app(path), "SELECT * FROM customer_card")
    }

    /// Aliased inside a subquery of the view, under the right outer names.
    @Test func aViewThatAliasesThroughASubqueryOpensNothing() throws {
        let path = try database("aliased.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, name AS name, email AS email FROM (SELECT id, email AS name, name AS email FROM customer)")
        everyRead(try app(path), "SELECT * FROM customer_card")
    }

    /// The application reads the outer view; the inner one was rewritten.
    @Test func aRewrittenInnerViewOpensNothingThroughTheOuterOne() throws {
        let path = try database("nested.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer")
        everyRead(try app(path), "SELECT * FROM card_list")
    }

    /// A compound SELECT whose second arm feeds the e-mail into `name`.
    @Test func aCompoundViewOpensNothing() throws {
        let path = try database("compound.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, name, email FROM customer WHERE 0 UNION ALL SELECT id, email, name FROM customer")
        everyRead(try app(path), "SELECT * FROM customer_card")
    }

    /// Rewritten to hand out text of the adversary's as `email`, so that
    /// nothing is opened and no opening rule ran (review round 3 of issue
    /// 39): a declared view is checked whenever a statement reads it.
    @Test func aViewRewrittenToHandOutPlantedTextReadsNothing() throws {
        let path = try database("planted-text.db")
        try adversary(path, "DROP VIEW customer_card; CREATE VIEW customer_card AS SELECT id, name, 'PLANTED@example.com' AS email FROM customer")
        let queue = try app(path)
        everyRead(queue, "SELECT * FROM customer_card")
        everyRead(queue, "SELECT id, name, email AS contact FROM card_list")
    }

    /// A view the application never declared: nothing is opened through it,
    /// even when it only passes the column on under its own name.
    @Test func anUndeclaredViewOpensNothing() throws {
        let path = try database("undeclared.db")
        try adversary(path, "CREATE VIEW everything AS SELECT id, name, email FROM customer")
        everyRead(try app(path), "SELECT * FROM everything")
        // A declared view, with no declaration: the same.
        everyRead(try app(path), "SELECT * FROM customer_card")
    }

    // MARK: Item 1: what the application asked for still opens

    /// The application's own names: the table read directly, its own alias,
    /// a subquery and a common table expression of its own, and its declared
    /// views, plain and nested.
    @Test func theApplicationsOwnNamesOpen() throws {
        let path = try database("own.db")
        let db = try Connection(path: path, configuration: { var config = Configuration(key: f.databaseKey); config.seal(PlantedSQLFixture.columns, keyring: f.keyring, rowKeys: ["customer": ["id"]]); return config }())
        let ada = Card(id: 1, name: "Ada Lovelace", email: Self.secret)
        let contact = SealedProperty("contact", of: "customer", column: "email")
        do {
            #expect(try db.fetchAll(Card.self, sql: "SELECT id, name, email FROM customer") == [ada])
            #expect(try db.fetchOne(String.self, sql: "SELECT email AS contact, id FROM customer", opening: contact) == Self.secret)
            #expect(try db.fetchAll(sql: "SELECT id, email AS contact FROM customer", opening: [contact]).first?["contact"] == .text(Self.secret))
            #expect(try db.fetchAll(Card.self, sql: "SELECT * FROM (SELECT id, name, email FROM customer)") == [ada])
            #expect(try db.fetchAll(Card.self, sql: "WITH c AS (SELECT id, name, email FROM customer) SELECT * FROM c") == [ada])
            #expect(try db.fetchAll(Card.self, sql: "WITH customer_card AS (SELECT id, name, email FROM customer) SELECT * FROM customer_card") == [ada])
            #expect(try db.fetchAll(Card.self, sql: "SELECT * FROM customer_card") == [ada])
            #expect(try db.fetchAll(Card.self, sql: "SELECT c.id AS id, c.name AS name, c.email AS email FROM card_list AS c") == [ada])
        }
    }

    /// A view of the application's with any spacing, comments and keyword
    /// case reads (views are no longer declared: the record is).
    @Test func aDeclaredViewMatchesWhateverItsSpacing() throws {
        let path = try database("spacing.db", views: ["create view CUSTOMER_CARD as\n  select id, name, email -- the card\n  from customer;", Self.cardList])
        let queue = try app(path)
        #expect(try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM customer_card") }.first?.email == Self.secret)
    }

    /// The SQLite 3.15 race, on a view: the view is rewritten with a schema
    /// version change, the application's connection loads it, and its text
    /// is put back without one. The stored text is the declared one; the
    /// view the connection runs is the adversary's.
    @Test func aViewRewrittenBehindTheStoredTextOpensNothing() throws {
        let path = try database("race.db")
        let queue = try app(path)
        #expect(try queue.read { db in try db.fetchAll(Card.self, sql: "SELECT * FROM customer_card") }.first?.email == Self.secret)
        let swapped = "CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer"
        let version = try f.bare(path).fetchOne(Int.self, sql: "PRAGMA schema_version")!
        try adversary(path, "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = '\(swapped)' WHERE name = 'customer_card'; PRAGMA writable_schema = OFF; PRAGMA schema_version = \(version + 1);")
        // The application's connection loads the rewritten view...
        _ = try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT count(*) FROM customer") }
        // ...and the stored text is put back, with no version change.
        try adversary(path, "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = '\(Self.card)' WHERE name = 'customer_card'; PRAGMA writable_schema = OFF;")
        #expect(try f.bare(path).fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'customer_card'") == Self.card)
        everyRead(queue, "SELECT * FROM customer_card")
    }

    // MARK: Item 2: a TEMP view planted in main's sqlite_master

    /// SQLite 3.15 loads the row into `temp`, where it answers the
    /// application's plain `SELECT * FROM customer`; SQLite 3.46 refuses to
    /// open the file at all.
    @Test func aPlantedTempViewOverTheTableOpensNothing() throws {
        let path = try database("temp-view.db")
        try adversary(path, """
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('view', 'customer', 'customer', 0, 'CREATE TEMP VIEW customer AS SELECT id, email AS name, name AS email, country FROM main.customer');
            PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try app(path)
        everyRead(queue, "SELECT * FROM customer")
        everyRead(queue, "SELECT id, name, email FROM customer")
    }

    /// The catalogue lookups name `main`: the row key is read from the table,
    /// not from the TEMP view over it (which declares no primary key), so
    /// the application's reads through `main.` still open, and `verify`
    /// (``ColumnSealing/failures(keyring:in:limit:)``) checks the stored
    /// values, not what the view hands out in their place.
    @Test func catalogueLookupsReadMainNotThePlantedTempView() throws {
        let path = try database("temp-lookups.db")
        try adversary(path, """
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('view', 'customer', 'customer', 0, 'CREATE TEMP VIEW customer AS SELECT id, email AS name, name AS email, country FROM main.customer');
            PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let queue = try app(path)
        #expect(try queue.read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM main.customer", opening: SealedProperty("email", of: "customer")) } == Self.secret)
        let failures = try queue.read { db in try ColumnSealing.failures(keyring: f.keyring, in: db) }
        #expect(failures.isEmpty, "\(failures)")
    }
}
