import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 50, item 3: the planted-schema attacks joined in one property test,
/// on both engines. Each trial copies an honest database, lets whoever
/// holds the database key (not the field keyring) make one to three random
/// edits (views, TEMP objects, moved, reordered and permuted key columns,
/// copied and swapped envelopes, joins with planted same-named columns,
/// virtual tables, `writable_schema` rows, a race-loaded schema on SQLite
/// 3.15), then runs the application's reads. After each: no declared
/// property holds a value that does not authenticate under its declaration
/// (every e-mail a read returns is that row's own), and no undeclared one
/// holds a sealed value's plaintext.
@Suite("Sealed columns: random adversary edits between the application's reads")
struct AdversaryEditPropertyTests {
    let f = PlantedSQLFixture()
    static let rows: Int64 = 4
    static func email(_ id: Int64) -> String { "person\(id)@example.com" }
    static let genuine = Dictionary(uniqueKeysWithValues: (1...rows).map { ($0, email($0)) })

    struct Person: Codable { var id: Int64; var name: String; var email: String; var country: String }

    /// The application's card: its e-mail is customer.email of its own row.
    struct Card: Codable, SealedRecord {
        var id: Int64
        var name: String?
        var email: String?
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// An audit line joined with its customer: the e-mail is the customer's,
    /// whose key is `customer_id`.
    struct AuditLine: Codable, SealedRecord {
        var customer_id: Int64
        var action: String
        var email: String?
        static let sealedProperties = [SealedProperty("email", of: "customer", rowKey: ["customer_id"])]
    }

    struct CustomerRecord: TableRecord {
        var id: Int64
        var email: String?
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "email"]
        static let databaseSealedColumns = ["email"]
        static let databaseRowKey = ["id"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
    }

    func configuration() -> Configuration {
        var config = Configuration(key: f.databaseKey)
        config.journalMode = .delete
        config.seal([.randomized("email", in: "customer"), .deterministic("country", in: "customer")], keyring: f.keyring, rowKeys: ["customer": ["id"]])
        return config
    }

    /// The honest database every trial starts from.
    func base() throws -> String {
        let path = f.dir.file("base.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, email BLOB, country BLOB);
                CREATE TABLE audit(id INTEGER PRIMARY KEY, customer_id INTEGER, action TEXT);
                CREATE VIEW customer_card AS SELECT id, name, email FROM customer;
                """)
            try SealedColumnRegistry.record([.randomized("email", in: "customer"), .deterministic("country", in: "customer")], keyring: f.keyring, in: db)
            for id in 1...Self.rows {
                try db.insert(Person(id: id, name: "Name \(id)", email: Self.email(id), country: id % 2 == 0 ? "FR" : "UK"), into: "customer")
                try db.execute(sql: "INSERT INTO audit(customer_id, action) VALUES (?, 'login')", arguments: [id])
            }
        }
        try queue.close()
        return path
    }

    enum Edit: CaseIterable {
        case swapEnvelopes, copyEnvelope, moveKey, swapIds, reorderColumns, swapViewColumns, plantedTextView, viewOverTable,
             tempViewOverTable, joinNamesake, virtualTable, writableSchemaView, raceLoadedView
    }

    /// The adversary's SQL for `edit`, given two distinct rows `a` and `b`.
    static func sql(_ edit: Edit, _ a: Int64, _ b: Int64) -> String {
        let rebuilt = "DROP VIEW IF EXISTS customer_card;"
        let card = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer;"
        switch edit {
        case .swapEnvelopes:
            return "UPDATE customer SET email = CASE id WHEN \(a) THEN (SELECT email FROM customer WHERE id = \(b)) ELSE (SELECT email FROM customer WHERE id = \(a)) END WHERE id IN (\(a), \(b));"
        case .copyEnvelope:
            return "UPDATE customer SET email = (SELECT email FROM customer WHERE id = \(a)) WHERE id = \(b);"
        case .moveKey:
            return """
                \(rebuilt) CREATE TABLE n(pk INTEGER PRIMARY KEY, id INTEGER, name TEXT, email BLOB, country BLOB);
                INSERT INTO n SELECT id, CASE id WHEN \(a) THEN \(b) WHEN \(b) THEN \(a) ELSE id END, name, email, country FROM customer;
                DROP TABLE customer; ALTER TABLE n RENAME TO customer; \(card)
                """
        case .swapIds:
            return "UPDATE customer SET id = 1000 WHERE id = \(a); UPDATE customer SET id = \(a) WHERE id = \(b); UPDATE customer SET id = \(b) WHERE id = 1000;"
        case .reorderColumns:
            return """
                \(rebuilt) CREATE TABLE n(email BLOB, country BLOB, name TEXT, id INTEGER PRIMARY KEY);
                INSERT INTO n SELECT email, country, name, id FROM customer; DROP TABLE customer; ALTER TABLE n RENAME TO customer; \(card)
                """
        case .swapViewColumns:
            return "DROP VIEW IF EXISTS customer_card; CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer;"
        case .plantedTextView:
            return "DROP VIEW IF EXISTS customer_card; CREATE VIEW customer_card AS SELECT id, name, 'PLANTED-' || id AS email FROM customer;"
        case .viewOverTable:
            return """
                \(rebuilt) ALTER TABLE customer RENAME TO customer_rows;
                CREATE VIEW customer AS SELECT id, email AS name, CASE id WHEN \(a) THEN (SELECT email FROM customer_rows WHERE id = \(b)) ELSE 'PLANTED@adversary.example' END AS email, country FROM customer_rows; \(card)
                """
        case .tempViewOverTable:
            return """
                PRAGMA writable_schema = ON;
                INSERT INTO sqlite_master VALUES ('view', 'customer', 'customer', 0, 'CREATE TEMP VIEW customer AS SELECT id, email AS name, name AS email, country FROM main.customer');
                PRAGMA writable_schema = OFF;
                """
        case .joinNamesake:
            return "ALTER TABLE audit ADD COLUMN email TEXT; UPDATE audit SET email = 'PLANTED@adversary.example';"
        case .virtualTable:
            return """
                \(rebuilt) ALTER TABLE customer RENAME TO customer_rows;
                CREATE VIRTUAL TABLE customer USING fts4(id, name, email, country);
                INSERT INTO customer(id, name, email, country) SELECT id, name, email, country FROM customer_rows;
                UPDATE customer SET email = (SELECT email FROM customer_rows WHERE id = \(a)) WHERE id = \(b); \(card)
                """
        case .writableSchemaView:
            return """
                PRAGMA writable_schema = ON;
                UPDATE sqlite_master SET sql = 'CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer' WHERE name = 'customer_card';
                PRAGMA writable_schema = OFF;
                """
        case .raceLoadedView:
            return "CREATE VIEW customer_card AS SELECT id, email AS name, name AS email FROM customer"
        }
    }

    /// The reads the application makes; each either fails, or returns
    /// (id, e-mail) pairs its declarations opened, and the undeclared text
    /// it got.
    func reads(_ app: DatabaseQueue) -> [(String, () throws -> (opened: [(Int64, String)], undeclared: [String]))] {
        [
            ("Card over customer", {
                let cards = try app.read { try $0.fetchAll(Card.self, sql: "SELECT * FROM customer ORDER BY id") }
                return (cards.compactMap { c in c.email.map { (c.id, $0) } }, cards.compactMap(\.name))
            }),
            ("Card over customer_card", {
                let cards = try app.read { try $0.fetchAll(Card.self, sql: "SELECT * FROM customer_card ORDER BY id") }
                return (cards.compactMap { c in c.email.map { (c.id, $0) } }, cards.compactMap(\.name))
            }),
            ("join", {
                let lines = try app.read { try $0.fetchAll(AuditLine.self, sql: "SELECT * FROM audit JOIN customer ON customer.id = audit.customer_id") }
                return (lines.compactMap { l in l.email.map { (l.customer_id, $0) } }, lines.map(\.action))
            }),
            ("rows opened", {
                let rows = try app.read { try $0.fetchAll(sql: "SELECT * FROM customer", opening: [SealedProperty("email", of: "customer")]) }
                return (try rows.compactMap { r in try r.decode(String?.self, column: "email").map { (try r.decode(Int64.self, column: "id"), $0) } },
                        // Every other column: undeclared.
                        rows.flatMap { r in zip(r.columnNames, r.values).filter { $0.0.lowercased() != "email" }.map(\.1) }
                            .compactMap { if case .text(let t) = $0 { t } else { nil } })
            }),
            ("single value", {
                let ids = try app.read { try $0.fetchAll(Int64.self, sql: "SELECT id FROM customer ORDER BY id") }
                return (try ids.compactMap { id in
                    try app.read { try $0.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = ?", arguments: [id], opening: SealedProperty("email", of: "customer")) }.map { (id, $0) }
                }, [])
            }),
            ("TableRecord", {
                let records = try app.read { try $0.fetchAll(CustomerRecord.self) }
                return (records.compactMap { r in r.email.map { (r.id, $0) } }, [])
            }),
            ("undeclared rows", {
                let values = try app.read { db in
                    try db.fetchAll(sql: "SELECT * FROM customer").flatMap(\.values) + db.fetchAll(sql: "SELECT * FROM customer_card").flatMap(\.values)
                        + db.fetchAll(sql: "SELECT * FROM audit JOIN customer ON customer.id = audit.customer_id").flatMap(\.values)
                }
                return ([], values.compactMap { if case .text(let t) = $0 { t } else { nil } })
            }),
        ]
    }

    @Test func noDeclaredPropertyTakesAForgedValueAndNoUndeclaredOneAPlaintext() throws {
        let base = try base()
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        var applied: [Edit: Int] = [:], opened = 0, refused = 0
        let trials = 40
        for trial in 0..<trials {
            let path = f.dir.file("trial-\(trial).db")
            try FileManager.default.copyItem(atPath: base, toPath: path)
            let edits = (0..<Int.random(in: 1...3, using: &random)).map { _ in Edit.allCases.randomElement(using: &random)! }
            let a = Int64.random(in: 1...Self.rows, using: &random)
            let b = a % Self.rows + 1
            var app: DatabaseQueue?
            for edit in edits {
                if edit == .raceLoadedView {
                    // SQLite 3.15: the application's connection loads the
                    // adversary's view, whose stored text is then put back.
                    // (SQLite 3.46 refuses to open a file an earlier edit
                    // planted a TEMP row in: the attack ends there.)
                    guard let queue = app ?? (try? DatabaseQueue(path: path, configuration: configuration())) else { continue }
                    app = queue
                    try? f.race(path, name: "customer_card", planted: Self.sql(edit, a, b), clean: "CREATE VIEW customer_card AS SELECT id, name, email FROM customer") {
                        _ = try queue.read { try $0.fetchAll(Int.self, sql: "SELECT count(*) FROM customer_card") }
                    }
                } else {
                    // A schema an earlier edit left unloadable ends the adversary's edits too.
                    guard let adversary = try? f.adversary(path) else { continue }
                    let version = (try? adversary.fetchOne(Int.self, sql: "PRAGMA schema_version")) ?? 0
                    guard (try? adversary.execute(sql: Self.sql(edit, a, b))) != nil else { adversary.close(); continue }
                    if edit == .writableSchemaView { try? adversary.execute(sql: "PRAGMA schema_version = \(version + 1)") }
                    adversary.close()
                }
                applied[edit, default: 0] += 1
            }
            // SQLite 3.46 refuses to open a file with a planted TEMP row: the attack ends there.
            guard let queue = app ?? (try? DatabaseQueue(path: path, configuration: configuration())) else { refused += 1; continue }
            for (name, read) in reads(queue) {
                guard let result = try? read() else { refused += 1; continue }
                opened += 1
                let (pairs, undeclared) = result
                for (id, email) in pairs {
                    #expect(Self.genuine[id] == email, "seed \(seed), trial \(trial), \(edits), \(name): row \(id) holds \(email)")
                }
                for text in undeclared {
                    #expect(!Self.genuine.values.contains { text.contains($0) }, "seed \(seed), trial \(trial), \(edits), \(name): plaintext \(text)")
                }
            }
            try queue.close()
        }
        // The trials did something: edits of most kinds applied, and reads both opened and refused.
        #expect(applied.count >= Edit.allCases.count / 2, "seed \(seed): applied \(applied)")
        #expect(opened > 0 && refused > 0, "seed \(seed): opened \(opened), refused \(refused)")
    }
}
