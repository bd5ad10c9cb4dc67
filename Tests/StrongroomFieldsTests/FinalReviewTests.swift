import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 36, the final review of the day's changes (a security and a SQLite
/// engineer's): each test failed on 9f105ff.
@Suite("Final review")
struct FinalReviewTests {
    let f = PlantedSQLFixture()
    static let secret = PlantedSQLFixture.secret

    struct Card: Codable, Equatable {
        var id: Int64
        var name: String?
    }

    func app(_ path: String, views: [String] = []) throws -> DatabaseQueue { try f.app(path, views: views) }

    func database(_ name: String, views: [String]) throws -> String { try f.namedDatabase(name, views: views) }

    /// The adversary (database key only) rebuilds `customer` with `email`
    /// and `name` swapped in position. Every column keeps its name and its
    /// values, so every envelope still opens where it is.
    func swapColumnPositions(_ path: String, recreating views: [String]) throws {
        let db = try f.bare(path)
        try db.execute(sql: """
            DROP VIEW IF EXISTS customer_card;
            CREATE TABLE customer_new(id INTEGER PRIMARY KEY, email BLOB, name TEXT, country BLOB);
            INSERT INTO customer_new(id, email, name, country) SELECT id, email, name, country FROM customer;
            DROP TABLE customer;
            ALTER TABLE customer_new RENAME TO customer;
            """)
        for view in views { try db.execute(sql: view) }
        db.close()
    }

    // MARK: Opening rules

    /// A declared view whose column list names the columns of `SELECT *` by
    /// position: stored as declared, and its declaration compiles to the same
    /// columns as the live view, because both are compiled against the table
    /// the adversary reordered. Ada's e-mail comes out opened as `name`.
    @Test func aDeclaredViewWithAColumnListOverStarOpensNothingOnceTheTableIsReordered() throws {
        let declared = "CREATE VIEW customer_card(id, name, email, country) AS SELECT * FROM customer"
        let path = try database("positional-view.db", views: [declared])
        #expect(try app(path, views: [declared]).read { db in try db.fetchAll(Card.self, sql: "SELECT id, name FROM customer_card") }
                == [Card(id: 1, name: "Ada Lovelace")])
        try swapColumnPositions(path, recreating: [declared])
        var got: [Card] = []
        let error = #expect(throws: StrongroomError.self) {
            got = try app(path, views: [declared]).read { db in try db.fetchAll(Card.self, sql: "SELECT id, name FROM customer_card") }
        }
        #expect(!got.contains { $0.name == Self.secret }, "the opened e-mail was handed out as name: \(got)")
        // Card declares nothing sealed: the e-mail under `name` is its envelope, which no String takes.
        #expect(error?.code == .conversion, "\(String(describing: error))")
    }

    /// The same through the application's own common table expression: the
    /// column list is the statement's own text, but which column each name
    /// takes is the table's order, which the adversary chose.
    @Test func aColumnListOverStarInTheApplicationsOwnTextOpensNothingOnceTheTableIsReordered() throws {
        let path = try database("positional-cte.db", views: [])
        let sql = "WITH c(id, name, email, country) AS (SELECT * FROM customer) SELECT id, name FROM c"
        #expect(try app(path).read { db in try db.fetchAll(Card.self, sql: sql) } == [Card(id: 1, name: "Ada Lovelace")])
        try swapColumnPositions(path, recreating: [])
        var got: [Card] = []
        _ = #expect(throws: StrongroomError.self) { got = try app(path).read { db in try db.fetchAll(Card.self, sql: sql) } }
        #expect(!got.contains { $0.name == Self.secret }, "the opened e-mail was handed out as name: \(got)")
    }

    /// SQLite 3.15 lets a view's body read a common table expression of the
    /// statement that reads the view. The adversary rewrites the declared
    /// view to relabel the e-mail and to read the statement's CTE: compiled
    /// alone (`SELECT * FROM main.customer_card`), it fails ("no such table:
    /// wanted"), and the worklist skips it as if it were a subquery's name,
    /// before comparing its stored text with the declaration.
    @Test func aDeclaredViewThatReadsTheStatementsOwnCTEIsChecked() throws {
        let declared = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer"
        let path = try database("cte-view.db", views: [declared])
        let sql = "WITH wanted(id) AS (SELECT 1) SELECT card.id AS id, card.name AS name FROM customer_card AS card JOIN wanted USING (id)"
        #expect(try app(path, views: [declared]).read { db in try db.fetchAll(Card.self, sql: sql) } == [Card(id: 1, name: "Ada Lovelace")])
        let adversary = try f.bare(path)
        try adversary.execute(sql: """
            DROP VIEW customer_card;
            CREATE VIEW customer_card AS SELECT customer.id AS id, customer.email AS name, customer.name AS email FROM customer JOIN wanted USING (id);
            """)
        adversary.close()
        var got: [Card] = []
        _ = #expect(throws: StrongroomError.self) { got = try app(path, views: [declared]).read { db in try db.fetchAll(Card.self, sql: sql) } }
        #expect(!got.contains { $0.name == Self.secret }, "the opened e-mail was handed out as name: \(got)")
    }

    // MARK: Key checks

    func queue(_ path: String, _ keyring: FieldKeyring) throws -> DatabaseQueue {
        var config = Configuration(key: f.databaseKey)
        config.seal(PlantedSQLFixture.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        return try DatabaseQueue(path: path, configuration: config)
    }

    func recordedKeyIDs(_ path: String) throws -> [Int] {
        try f.bare(path).fetchAll(Int.self, sql: "SELECT key_id FROM strongroom_field_keys ORDER BY 1")
    }

    /// A keyring that shares no key id with the database's record (its only
    /// key is a random key 2) opens, and its first insert records its key 2
    /// beside the other keyring's key 1. Afterwards the right keyring,
    /// rotated to its own key 2, is refused.
    @Test func aKeyringSharingNoKeyWithTheRecordIsNotLearntByAnInsert() throws {
        let path = try f.database("disjoint.db")
        #expect(try recordedKeyIDs(path) == [1])
        let (grown, two) = FieldKeyring.generate().addingKey()
        let wrong = try grown.activating(two).removingKey(1)
        let error = #expect(throws: StrongroomError.self) {
            try queue(path, wrong).write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "eve@example.com"), into: "customer") }
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        #expect(try recordedKeyIDs(path) == [1])
        let (rightGrown, rightTwo) = f.keyring.addingKey()
        let rotated = try rightGrown.activating(rightTwo)
        #expect(throws: Never.self) { _ = try queue(path, rotated) }
    }

    /// Rotate to key 2, rotate back to key 1, retire key 2, add a key: the
    /// new key is id 2 again. The database still records the retired key 2's
    /// check, and refuses the right keyring at open.
    @Test func aRetiredKeyIdGivenAgainDoesNotLockTheRightKeyringOut() throws {
        let path = try f.database("reuse.db")
        let (grown, two) = f.keyring.addingKey()
        let rotated = try grown.activating(two)
        _ = try FieldRotation.rotate(try queue(path, rotated), columns: PlantedSQLFixture.columns, keyring: rotated)
        let back = try rotated.activating(1)
        _ = try FieldRotation.rotate(try queue(path, back), columns: PlantedSQLFixture.columns, keyring: back)
        let retired = try queue(path, back).write { db in try FieldRotation.retire(two, from: back, in: db) }
        let (again, id) = retired.addingKey()
        #expect(id == two)
        let next = try again.activating(id)
        #expect(throws: Never.self) { _ = try queue(path, next) }
    }

    /// The first insert under a new active key fails (the id is taken): its
    /// transaction takes the new check row with it, but the connection
    /// remembers the key as recorded, and its next insert seals under key 2
    /// with the database never recording it.
    @Test func aFailedFirstInsertLeavesNoSealedValueUnderAnUnrecordedKey() throws {
        let path = try f.database("failed-insert.db")
        let (grown, two) = f.keyring.addingKey()
        let rotated = try grown.activating(two)
        let q = try queue(path, rotated)
        #expect(throws: StrongroomError.self) {
            try q.write { db in try db.insert(PlantedSQLFixture.Customer(id: 1, email: "dup@example.com"), into: "customer") }
        }
        try q.write { db in try db.insert(PlantedSQLFixture.Customer(id: 3, email: "carol@example.com"), into: "customer") }
        let hex = try f.bare(path).fetchOne(String.self, sql: "SELECT hex(substr(email, 3, 4)) FROM customer WHERE id = 3")
        #expect(hex == String(format: "%08X", two))
        #expect(try recordedKeyIDs(path) == [1, Int(two)])
    }
}
