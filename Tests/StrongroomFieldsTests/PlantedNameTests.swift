import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 39, second review (D1–D4): names and stand-ins through which
/// whoever holds the database key, not the field keyring, could hand the
/// application text of theirs as a sealed value, or open a value in
/// another row. Each attack is the reviewer's, reproduced.
@Suite("Sealed columns: planted stand-ins and names")
struct PlantedNameTests {
    let f = PlantedSQLFixture()

    /// An account whose API key is sealed, read by position; it declares
    /// no row key.
    typealias Account = SealedColumnTests.Account

    static let expected = [Account(id: 1, apiKey: "alpha"), Account(id: 2, apiKey: "beta")]

    func configuration(blindIndex: Bool = true, views: [String] = [], rowKeys: [String: [String]] = [:]) -> Configuration {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account")], indexes: blindIndex ? [BlindIndex("key32", on: "apiKey", in: "account", bits: 32)] : [], keyring: f.keyring,
                    views: views, rowKeys: rowKeys)
        return config
    }

    /// Accounts 1 (alpha) and 2 (beta), their keys sealed; returns the path.
    func accounts(_ name: String) throws -> String {
        let path = f.dir.file(name)
        try DatabaseQueue(path: path, configuration: configuration()).write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB); CREATE INDEX account_key32 ON account(key32)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Account(id: 2, apiKey: "beta"))
        }
        return path
    }

    /// The read fails with `code`, its message saying `mention`, and the
    /// application gets no record (nor any planted text).
    func expectRefused<T>(_ code: StrongroomError.Code, _ mention: String, sourceLocation: SourceLocation = #_sourceLocation, _ read: () throws -> T) {
        var got: T?
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) { got = try read() }
        #expect(got == nil, "the application got \(String(describing: got))", sourceLocation: sourceLocation)
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(mention) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        #expect(error.map { !"\($0)".contains("PLANTED") } ?? true, sourceLocation: sourceLocation)
    }

    // MARK: D1: a view in place of the sealed table

    /// The table is renamed and a view of its name hands out text of the
    /// adversary's as `apiKey`: nothing is opened, so no rule about opening
    /// applied, and the record took the text for its sealed property. A
    /// record that declares the column sealed is read only from the column
    /// opened.
    @Test func aViewInPlaceOfTheSealedTableHandsARecordNothing() throws {
        let path = try accounts("view-in-place.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(Account.self) }.sorted { $0.id < $1.id } == Self.expected)
        try f.bare(path).execute(sql: """
            ALTER TABLE account RENAME TO account_data;
            CREATE VIEW account AS SELECT id, 'PLANTED-' || id AS apiKey, key32 FROM account_data
            """)
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } }
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchAll(Account.self) } }
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchOne(Account.self, sql: "SELECT * FROM account WHERE id = ?", arguments: [1]) } }
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "alpha")) } }
    }

    /// The application's own query that selects an expression as the
    /// sealed property is refused too, as a misuse, and says which column.
    @Test func aRecordRefusesAnExpressionAsItsSealedProperty() throws {
        let path = try accounts("expression.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        expectRefused(.misuse, "apiKey") { try app.read { try $0.fetchAll(Account.self, sql: "SELECT id, 'typed by the app' AS apiKey FROM account") } }
        // The column itself, under an alias of the query's own, still opens.
        #expect(try app.read { try $0.fetchAll(Account.self, sql: "SELECT id, apiKey AS apiKey FROM account ORDER BY id") } == Self.expected)
    }

    /// A connection without the field keyring opens nothing: a record with
    /// sealed columns is refused there, as its insert is, rather than
    /// handed an envelope or planted text.
    @Test func aRecordWithSealedColumnsIsRefusedWithoutTheKeyring() throws {
        let path = try accounts("no-keyring.db")
        let bare = try DatabaseQueue(path: path, configuration: Configuration(key: f.databaseKey))
        try bare.write { try $0.execute(sql: "UPDATE account SET apiKey = 'PLANTED' WHERE id = 1") }
        expectRefused(.misuse, "seal") { try bare.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account WHERE id = 1") } }
    }

    // MARK: D3: a join where two columns answer to the sealed property's name

    /// The adversary spells the sealed column `APIKEY` (SQLite's same name)
    /// and adds a plain `apiKey` to the table the application joins: the
    /// exact spelling, from the other table, was taken for the property.
    /// SQLite calls the name ambiguous; so does the record read.
    @Test func aJoinWithAPlantedNamesakeOfTheSealedColumnIsRefused() throws {
        let path = try accounts("join.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try app.write { try $0.execute(sql: "CREATE TABLE audit(id INTEGER PRIMARY KEY, seen INTEGER); INSERT INTO audit VALUES (1, 10), (2, 20)") }
        let join = "SELECT * FROM account JOIN audit USING(id) ORDER BY id"
        #expect(try app.read { try $0.fetchAll(Account.self, sql: join) } == Self.expected)
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(id INTEGER PRIMARY KEY, APIKEY BLOB NOT NULL, key32 BLOB);
            INSERT INTO account_new SELECT * FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32);
            ALTER TABLE audit ADD COLUMN apiKey TEXT; UPDATE audit SET apiKey = 'PLANTED-' || id
            """)
        expectRefused(.misuse, "apiKey") { try app.read { try $0.fetchAll(Account.self, sql: join) } }
        // Read from the table alone, the sealed column opens.
        #expect(try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } == Self.expected)
    }

    // MARK: D2: a row key column whose name is not valid UTF-8

    static let validReplacement = "'\"id' || char(65533) || '\"'"
    static let invalidByte = "'\"id' || CAST(X'FF' AS TEXT) || '\"'"

    /// The primary key column and a decoy before it get two names Swift
    /// repairs to one: `id\xFF` (invalid UTF-8) and `id\u{FFFD}`. When the
    /// decoy is the invalid one, the row key's name read from the schema is
    /// valid, and the result column that Swift repaired to it first was the
    /// decoy: row 1, holding row 2's sealed key and a decoy saying 2, opened
    /// as "beta". The other way round, the row key's name does not read as
    /// text. Either way, nothing opens. (A blind index over the column reads
    /// every column's name when the connection first uses it, and refused
    /// the invalid one as a conversion error: this attack is on a sealed
    /// column without one.)
    @Test(arguments: [(decoy: invalidByte, key: validReplacement), (decoy: validReplacement, key: invalidByte)])
    func aDecoyRowKeyColumnOpensNoValueInAnotherRow(decoy: String, key: String) throws {
        let path = try accounts("decoy-key-\(decoy == Self.invalidByte ? "a" : "b").db")
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(decoy INTEGER, id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO account_new SELECT CASE id WHEN 1 THEN 2 ELSE id END, id,
                CASE id WHEN 1 THEN (SELECT apiKey FROM account WHERE id = 2) ELSE apiKey END, key32 FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = replace(replace(sql, 'decoy', \(decoy)), ' id INTEGER', ' ' || \(key) || ' INTEGER') WHERE name = 'account';
            PRAGMA writable_schema = OFF;
            """)
        expectRefused(.untrustedSchema, "UTF-8") {
            try DatabaseQueue(path: path, configuration: configuration(blindIndex: false)).read { db in
                try db.fetchAll(sql: "SELECT * FROM account ORDER BY rowid").map { try $0.decode(String.self, column: "apiKey") }
            }
        }
        expectRefused(.untrustedSchema, "UTF-8") {
            try DatabaseQueue(path: path, configuration: configuration(blindIndex: false)).read { db in
                try db.fetchOne(String.self, sql: "SELECT apiKey, * FROM account WHERE rowid = 1")
            }
        }
    }

    // MARK: D4: a declared view stored with another spelling of a literal

    /// The declared view leaves Zoë out by her name (NFC). The adversary
    /// stores it with the name in NFD: Swift's `==` took the two texts for
    /// one, while to SQLite they are other strings, so the view handed out
    /// Zoë's opened e-mail.
    @Test func aDeclaredViewRespelledInAnotherNormalizationOpensNothing() throws {
        let declared = "CREATE VIEW others AS SELECT id, name, email FROM customer WHERE name <> 'Zo\u{EB}'"
        let path = try f.namedDatabase("nfd-view.db", views: [declared])
        try f.app(path, views: [declared]).write { db in
            try db.insert(PlantedSQLFixture.NamedCustomer(id: 2, name: "Zo\u{EB}", email: "zoe@example.com"), into: "customer")
        }
        let app = try f.app(path, views: [declared])
        let emails = "SELECT email, id FROM others"
        #expect(try app.read { try $0.fetchAll(String.self, sql: emails) } == [PlantedSQLFixture.secret])
        try f.bare(path).execute(sql: "DROP VIEW others; CREATE VIEW others AS SELECT id, name, email FROM customer WHERE name <> 'Zoe\u{308}'")
        var got: [String]?
        let error = #expect(throws: StrongroomError.self) { got = try app.read { try $0.fetchAll(String.self, sql: emails) } }
        #expect(got == nil, "the application got \(String(describing: got))")
        #expect(error?.code == .untrustedSchema && error?.message.contains("\"others\"") == true, "\(String(describing: error))")
    }
}

/// The review of the fix above (D1–D4): the same guarantee on the paths
/// it missed, and the row key a record holds.
extension PlantedNameTests {
    struct CodableAccount: TableRecord, Decodable, Equatable {
        var id: Int64
        var apiKey: String
        static let databaseTableName = "account"
        static let databaseColumnNames = ["id", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    /// Through a cursor, in generic code that knows `T` only as `Decodable`.
    static func firstDecoded<T: Decodable>(_: T.Type, _ db: Connection, sql: String) throws -> T? { try db.makeCursor(sql: sql).next(T.self) }

    static func decodeAll<T: Decodable>(_: T.Type, _ db: Connection, sql: String) throws -> [T] { try db.fetchAll(T.self, sql: sql) }

    /// A record that is also `Decodable`, read through the `Decodable`
    /// paths (a row, generic code, a cursor), took the view's planted text.
    @Test func aDecodableRecordTakesNoPlantedTextThroughDecodablePaths() throws {
        let path = try accounts("decodable.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let sql = "SELECT * FROM account ORDER BY id"
        #expect(try app.read { try Self.decodeAll(CodableAccount.self, $0, sql: sql) } == [CodableAccount(id: 1, apiKey: "alpha"), CodableAccount(id: 2, apiKey: "beta")])
        try f.bare(path).execute(sql: "ALTER TABLE account RENAME TO account_data; CREATE VIEW account AS SELECT id, 'PLANTED-' || id AS apiKey, key32 FROM account_data")
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(CodableAccount.self) } } }
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try Self.decodeAll(CodableAccount.self, $0, sql: sql) } }
        expectRefused(.untrustedSchema, "\"account\"") {
            try app.read { try Self.firstDecoded(CodableAccount.self, $0, sql: sql) }
        }
    }

    /// The adversary spells the row key `ID` and adds a plain `id` to the
    /// joined table, each row's holding the other account's number: the
    /// record took that `id` (the exact spelling) while `apiKey` opened
    /// with the real one, so account 2's record held account 1's key.
    @Test func aJoinWithAPlantedNamesakeOfTheRowKeyIsRefused() throws {
        let path = try accounts("join-row-key.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try app.write { try $0.execute(sql: "CREATE TABLE visit(at INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO visit VALUES (10, 1), (20, 2)") }
        let joins = ["SELECT * FROM account JOIN visit ON visit.accountId = account.id ORDER BY at",
                     "SELECT * FROM visit JOIN account ON visit.accountId = account.id ORDER BY at"]
        for join in joins { #expect(try app.read { try $0.fetchAll(Account.self, sql: join) } == Self.expected, "\(join)") }
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(ID INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO account_new SELECT * FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32);
            ALTER TABLE visit ADD COLUMN id INTEGER; UPDATE visit SET id = 3 - accountId
            """)
        for join in joins { expectRefused(.misuse, "id") { try app.read { try $0.fetchAll(Account.self, sql: join) } } }
        // Read alone, the table still gives each account its own key.
        #expect(try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } == Self.expected)
    }

    struct Contact: TableRecord, Equatable {
        var id: Int64
        var email: String
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "email"]
        static let databaseSealedColumns = ["email"]
        init(id: Int64, email: String) { self.id = id; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
    }

    struct FullCustomer: Codable {
        var id: Int64
        var email: String
        var country: String
    }

    /// Another sealed column of the record's own table, under the sealed
    /// property's name, is not that property's column.
    @Test func anotherSealedColumnUnderTheSealedNameIsRefused() throws {
        let path = try f.database("other-sealed.db")
        let app = try f.app(path)
        try app.write { try $0.insert(FullCustomer(id: 3, email: "cy@example.com", country: "UK"), into: "customer") }
        expectRefused(.misuse, "email") { try app.read { try $0.fetchAll(Contact.self, sql: "SELECT id, country AS email FROM customer WHERE id = 3") } }
        #expect(try app.read { try $0.fetchAll(Contact.self, sql: "SELECT id, email FROM customer WHERE id = 3") } == [Contact(id: 3, email: "cy@example.com")])
    }

    struct Card: TableRecord, Equatable {
        var id: Int64
        var name: String?
        var email: String
        static let databaseTableName = "customer_card"
        static let databaseColumnNames = ["id", "name", "email"]
        static let databaseSealedColumns = ["email"]
        init(id: Int64, name: String?, email: String) { self.id = id; self.name = name; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); name = try row.decode(at: 1); email = try row.decode(at: 2) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(name, at: 1); try binder.bind(email, at: 2) }
    }

    /// A record over a view the application declared reads its sealed
    /// property opened through the view (the first fix took the view's name
    /// for a table the connection does not seal, and refused it), once the
    /// table's row key is pinned (issue 39's last reviews: without a pin,
    /// the adversary can move the key under a record of another table).
    @Test func aRecordOverADeclaredViewReadsItsSealedProperty() throws {
        let card = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer"
        let path = try f.namedDatabase("declared-view-record.db", views: [card])
        let app = try f.app(path, views: [card], rowKeys: ["customer": ["id"]])
        #expect(try app.read { try $0.fetchAll(Card.self) } == [Card(id: 1, name: "Ada Lovelace", email: PlantedSQLFixture.secret)])
        expectRefused(.misuse, "rowKeys") { try f.app(path, views: [card]).read { try $0.fetchAll(Card.self) } }
    }
}

/// The second review of the record checks: a primary key the adversary
/// moved, two sealed tables in one record, a self-join, a sealed column
/// missing from a `Decodable` read.
extension PlantedNameTests {
    /// The read fails, and the application gets nothing.
    func expectNothingRead<T>(sourceLocation: SourceLocation = #_sourceLocation, _ read: () throws -> T) -> StrongroomError? {
        var got: T?
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) { got = try read() }
        #expect(got == nil, "the application got \(String(describing: got))", sourceLocation: sourceLocation)
        return error
    }

    /// Account, its row key declared (as `@Table` declares its primary key).
    struct KeyedAccount: TableRecord, Equatable {
        var id: Int64
        var apiKey: String
        var visits: Int64?
        static let databaseTableName = "account"
        static let databaseColumnNames = ["id", "apiKey", "visits"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        init(id: Int64, apiKey: String, visits: Int64? = nil) { self.id = id; self.apiKey = apiKey; self.visits = visits }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1); visits = try row.decode(at: 2) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(visits, at: 2) }
    }

    /// The adversary rebuilds the table with the primary key renamed `pk`
    /// (the values each envelope is bound to) and a plain `id` holding the
    /// other account's number: the value opened with `pk`, the record took
    /// `id`, and account 2's record held account 1's key. A record that
    /// declares its row key is refused (the live key is not it); one that
    /// does not is refused when the live key is not among its properties.
    @Test func anAdversarysPrimaryKeyHandsTheRecordAnotherRowsValue() throws {
        let path = try accounts("moved-key.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER, visits INTEGER);
            INSERT INTO account_new SELECT id, apiKey, key32, 3 - id, NULL FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let declared = expectNothingRead { try app.read { try $0.fetchAll(KeyedAccount.self, sql: "SELECT * FROM account") } }
        #expect(declared?.code == .untrustedSchema && declared?.message.contains("pk") == true, "\(String(describing: declared))")
        _ = expectNothingRead { try app.read { try $0.fetchOne(KeyedAccount.self, where: .index("key32", equals: "alpha")) } }
        _ = expectNothingRead { try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account") } }
        _ = expectNothingRead { try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "alpha")) } }
    }

    /// The same with another plain property made the key: `visits` holds
    /// the numbers each envelope is bound to. Only a declared row key
    /// tells it from the real one.
    @Test func aPlainPropertyMadeThePrimaryKeyIsRefusedForADeclaredRowKey() throws {
        let path = try accounts("phone-key.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO account_new SELECT 3 - id, apiKey, key32, id FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let error = expectNothingRead { try app.read { try $0.fetchAll(KeyedAccount.self, sql: "SELECT * FROM account") } }
        #expect(error?.code == .untrustedSchema, "\(String(describing: error))")
    }

    struct AccountProfile: TableRecord, Equatable {
        var id: Int64
        var apiKey: String
        var profileId: Int64
        var email: String
        static let databaseTableName = "account"
        static let databaseColumnNames = ["id", "apiKey", "profileId", "email"]
        static let databaseSealedColumns = ["apiKey", "email"]
        init(id: Int64, apiKey: String, profileId: Int64, email: String) { self.id = id; self.apiKey = apiKey; self.profileId = profileId; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1); profileId = try row.decode(at: 2); email = try row.decode(at: 3) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(profileId, at: 2); try binder.bind(email, at: 3) }
    }

    struct Profile: Codable {
        var id: Int64
        var accountId: Int64
        var email: String
    }

    /// A record of two sealed tables reads (the first record check took
    /// the profile's row key for the account's `id`, and refused it).
    @Test func aRecordOfTwoSealedTablesReads() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account"), .randomized("email", in: "profile")], keyring: f.keyring, rowKeys: ["profile": ["id"]])
        let app = try DatabaseQueue(path: f.dir.file("two.db"), configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL); CREATE TABLE profile(id INTEGER PRIMARY KEY, accountId INTEGER, email BLOB)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Profile(id: 10, accountId: 1, email: "ada@example.com"), into: "profile")
        }
        let sql = "SELECT account.id, account.apiKey, profile.id AS profileId, profile.email FROM account JOIN profile ON profile.accountId = account.id"
        #expect(try app.read { try $0.fetchAll(AccountProfile.self, sql: sql) } == [AccountProfile(id: 1, apiKey: "alpha", profileId: 10, email: "ada@example.com")])
        // The profile's key not pinned: the record holds a value of another table.
        var unpinned = Configuration(key: f.databaseKey)
        unpinned.seal([.randomized("apiKey", in: "account"), .randomized("email", in: "profile")], keyring: f.keyring)
        expectRefused(.misuse, "rowKeys") { try DatabaseQueue(path: f.dir.file("two.db"), configuration: unpinned).read { try $0.fetchAll(AccountProfile.self, sql: sql) } }
    }

    /// A self-join has two columns from the row key's origin: the second
    /// side's value was opened with the first side's key, so after the
    /// adversary copied account 1's envelope into account 2, account 2's
    /// row handed out "alpha". Refused: neither side's key can be told.
    @Test func aSelfJoinNeverOpensUnderTheOtherSidesKey() throws {
        let path = try accounts("self-join.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        let error = expectNothingRead {
            try app.read { try $0.fetchAll(sql: "SELECT a.id, a.apiKey, b.id AS nextId, b.apiKey AS nextKey FROM account a JOIN account b ON b.id = a.id + 1").map { try $0.decode(String.self, column: "nextKey") } }
        }
        #expect(error?.code == .misuse && error?.message.contains("account.id") == true, "\(String(describing: error))")
    }

    /// The row key selected twice (`rowid, *`, `id, *`) opens as before
    /// (the first self-join check refused any query with two columns from
    /// the key's origin): both hold the same value in every row.
    @Test func aRowKeySelectedTwiceStillOpens() throws {
        let path = try accounts("key-twice.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        for sql in ["SELECT rowid, * FROM account ORDER BY id", "SELECT id, * FROM account ORDER BY id", "SELECT id AS n, id, apiKey FROM account ORDER BY id"] {
            #expect(try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "apiKey") } } == ["alpha", "beta"], "\(sql)")
        }
    }

    struct Vault: TableRecord, Decodable, Equatable {
        var id: Int64
        var apiKey: String
        static let databaseTableName = "vault"
        static let databaseColumnNames = ["id", "api_key"]
        static let databaseSealedColumns = ["api_key"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    /// A `Decodable` read of a record whose query has no column of a
    /// sealed property's name cannot tell what its keys decode: a view
    /// `vault AS SELECT id, 'PLANTED' AS api_key` read as `api_key AS
    /// apiKey` handed the planted text over. Refused.
    @Test func aDecodableReadWithoutTheSealedColumnIsRefused() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("api_key", in: "vault")], keyring: f.keyring)
        let path = f.dir.file("vault.db")
        let app = try DatabaseQueue(path: path, configuration: config)
        try app.write { try $0.execute(sql: "CREATE TABLE vault_data(id INTEGER PRIMARY KEY, api_key BLOB); CREATE VIEW vault AS SELECT id, 'PLANTED' AS api_key FROM vault_data; INSERT INTO vault_data(id) VALUES (1)") }
        let sql = "SELECT id, api_key AS apiKey FROM vault"
        // The view in the table's place is refused first (review round 3).
        let error = expectNothingRead { try app.read { try Self.decodeAll(Vault.self, $0, sql: sql) } }
        #expect(error?.code == .untrustedSchema && error?.message.contains("\"vault\"") == true, "\(String(describing: error))")
        _ = expectNothingRead { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(Vault.self) } } }
        // On the table itself, the Decodable read without the column is the
        // application's mistake.
        try app.write { try $0.execute(sql: "DROP VIEW vault; ALTER TABLE vault_data RENAME TO vault") }
        let misuse = expectNothingRead { try app.read { try Self.decodeAll(Vault.self, $0, sql: sql) } }
        #expect(misuse?.code == .misuse && misuse?.message.contains("api_key") == true, "\(String(describing: misuse))")
        _ = expectNothingRead { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(Vault.self) } } }
    }

    struct Holder: Decodable {
        var account: CodableAccount
        init(from decoder: any Decoder) throws { account = try CodableAccount(from: decoder) }
    }

    /// A record decoded inside another `Decodable` (whose `init(from:)`
    /// decodes it from the same decoder) is never seen by the record
    /// check: with a view in place of `account`, it took the planted text.
    /// While a view (or a TEMP object) stands under a sealed table's name,
    /// a connection holding the keyring reads nothing through it.
    @Test func aRecordInsideAnotherDecodableTakesNoPlantedText() throws {
        let path = try accounts("holder.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try f.bare(path).execute(sql: "ALTER TABLE account RENAME TO account_data; CREATE VIEW account AS SELECT id, 'PLANTED-' || id AS apiKey, key32 FROM account_data")
        let sql = "SELECT * FROM account ORDER BY id"
        for error in [expectNothingRead { try app.read { try $0.fetchAll(Holder.self, sql: sql) } },
                      expectNothingRead { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(Holder.self) } } },
                      expectNothingRead { try app.read { db in try db.fetchAll(String.self, sql: "SELECT apiKey FROM account") } }] {
            #expect(error?.code == .untrustedSchema && error?.message.contains("\"account\"") == true, "\(String(describing: error))")
        }
    }
}

/// Review round 3: the row key, pinned by the application in the seal
/// configuration, for every read path (a record inside another
/// `Decodable`, plain rows) and for inserts.
extension PlantedNameTests {
    /// The account's row key pinned (`id`).
    func pinnedConfiguration(views: [String] = []) -> Configuration {
        configuration(views: views, rowKeys: ["account": ["id"]])
    }

    /// The moved-key attack (`pk` the key, a plain `id` holding the other
    /// account's number): with the row key pinned, no read path opens a
    /// value under `pk`, and no insert binds one to it.
    @Test func aPinnedRowKeyOpensNothingUnderAMovedKey() throws {
        let path = try accounts("pinned-moved.db")
        let app = try DatabaseQueue(path: path, configuration: pinnedConfiguration())
        #expect(try app.read { try $0.fetchAll(Holder.self, sql: "SELECT * FROM account ORDER BY id") }.map(\.account.apiKey) == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            CREATE TABLE n(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER, visits INTEGER);
            INSERT INTO n SELECT id, apiKey, key32, 3 - id, NULL FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let moved = try DatabaseQueue(path: path, configuration: pinnedConfiguration())
        _ = expectNothingRead { try moved.read { try $0.fetchAll(Holder.self, sql: "SELECT * FROM account ORDER BY pk") } }
        _ = expectNothingRead { try moved.read { try $0.fetchAll(sql: "SELECT * FROM account ORDER BY pk").map { try $0.decode(String.self, column: "apiKey") } } }
        _ = expectNothingRead { try moved.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY pk") } }
        let insert = #expect(throws: StrongroomError.self) { try moved.write { try $0.insert(Account(id: 7, apiKey: "gamma")) } }
        #expect(insert?.code == .untrustedSchema && insert?.message.contains("pk") == true, "\(String(describing: insert))")
    }

    /// Another plain property made the key (`visits`): a record that
    /// declares no row key passed; the pinned key refuses it.
    @Test func aPinnedRowKeyRefusesAnotherPropertyMadeTheKey() throws {
        let path = try accounts("pinned-visits.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let app = try DatabaseQueue(path: path, configuration: pinnedConfiguration())
        struct Undeclared: TableRecord {
            var id: Int64, apiKey: String, visits: Int64?
            static let databaseTableName = "account"
            static let databaseColumnNames = ["id", "apiKey", "visits"]
            static let databaseSealedColumns = ["apiKey"]
            init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1); visits = try row.decode(at: 2) }
            func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(visits, at: 2) }
        }
        _ = expectNothingRead { try app.read { try $0.fetchAll(Undeclared.self, sql: "SELECT * FROM account").map(\.apiKey) } }
    }
}

/// Review round 3, the stand-ins and self-joins it found: a stand-in read
/// under a name that is no sealed column's, a view SQLite loaded under a
/// sealed table's name from a schema row of another name, a view in an
/// attached database, and a self-join that opens one side's value with
/// the other side's key.
extension PlantedNameTests {
    /// `Vault` decoded inside another `Decodable`: never checked as a record.
    struct HeldVault: Decodable {
        var vault: Vault
        init(from decoder: any Decoder) throws { vault = try Vault(from: decoder) }
    }

    /// A view in `vault`'s place read under an alias (`api_key AS apiKey`,
    /// `api_key AS token`): the check by column name let the planted text
    /// out. A statement that reads a sealed table's name, whatever it
    /// selects, reads the table or nothing.
    @Test func aStandInReadUnderAnyNameHandsOutNothing() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("api_key", in: "vault")], keyring: f.keyring)
        let app = try DatabaseQueue(path: f.dir.file("alias.db"), configuration: config)
        try app.write { try $0.execute(sql: "CREATE TABLE d(id INTEGER PRIMARY KEY); CREATE VIEW vault AS SELECT id, 'PLANTED' AS api_key FROM d; INSERT INTO d VALUES (1)") }
        expectRefused(.untrustedSchema, "\"vault\"") { try app.read { try $0.fetchAll(HeldVault.self, sql: "SELECT id, api_key AS apiKey FROM vault") } }
        expectRefused(.untrustedSchema, "\"vault\"") { try app.read { try $0.fetchAll(String.self, sql: "SELECT api_key AS token FROM vault") } }
        expectRefused(.untrustedSchema, "\"vault\"") { try app.read { try $0.fetchAll(sql: "SELECT api_key AS token FROM vault").map { try $0.decode(String.self, column: "token") } } }
        // The same query on the real table opens.
        try app.write { try $0.execute(sql: "DROP VIEW vault; CREATE TABLE vault(id INTEGER PRIMARY KEY, api_key BLOB)"); try $0.insert(Vault(id: 1, apiKey: "real")) }
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT api_key AS token, id FROM vault") } == ["real"])
    }

    /// On SQLite 3.15 a `writable_schema` row named `decoy` whose text is
    /// `CREATE VIEW account …` loads as `account`: a catalogue query by
    /// name found nothing there. (SQLite 3.46 refuses to load such a row.)
    @Test func aViewLoadedFromARowOfAnotherNameIsAStandIn() throws {
        let path = try accounts("decoy.db")
        try f.adversary(path).execute(sql: """
            ALTER TABLE account RENAME TO account_data; PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('view', 'decoy', 'decoy', 0, 'CREATE VIEW account AS SELECT id, ''PLANTED'' AS apiKey, key32 FROM account_data');
            PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows {
            f.expectTheAppCannotOpen(path)
            return
        }
        let app = try DatabaseQueue(path: path, configuration: configuration())
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchAll(Holder.self, sql: "SELECT * FROM account") }.map(\.account.apiKey) }
        expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey AS k FROM account") } }
    }

    /// A view named like the sealed table in an attached database: not the
    /// table either.
    @Test func aViewInAnAttachedDatabaseIsAStandIn() throws {
        let path = try accounts("attaching.db")
        let db = try Connection(path: path, configuration: configuration())
        try db.execute(sql: "ATTACH DATABASE '\(f.dir.file("archive.db"))' AS archive KEY ''")
        try db.execute(sql: "CREATE VIEW archive.account AS SELECT 1 AS id, 'PLANTED' AS apiKey")
        expectRefused(.untrustedSchema, "\"account\"") { try db.fetchAll(Holder.self, sql: "SELECT * FROM archive.account").map(\.account.apiKey) }
        expectRefused(.untrustedSchema, "\"account\"") { try db.fetchAll(String.self, sql: "SELECT apiKey AS k FROM archive.account") }
        // main's table still opens.
        #expect(try db.fetchAll(String.self, sql: "SELECT apiKey, id FROM main.account ORDER BY id") == ["alpha", "beta"])
    }

    /// A self-join that selects one side's key and the other side's value
    /// (or a correlated subquery on the same table): the value opened with
    /// the only key in the row, another row's. After the adversary copied
    /// account 1's envelope into account 2, account 2's value came out as
    /// "alpha". A statement that opens a sealed column reads its table once.
    @Test func aOneSidedSelfJoinOpensNothing() throws {
        let path = try accounts("one-side.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        for sql in ["SELECT a.id, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1",
                    "SELECT a.id, b.apiKey AS k FROM account a NOT INDEXED JOIN account b ON b.id = a.id + 1",
                    "SELECT id, (SELECT b.apiKey FROM account b WHERE b.id = account.id + 1) AS k FROM account WHERE id = 1",
                    "SELECT id, apiKey AS k FROM account WHERE id IN (SELECT id FROM account WHERE key32 IS NOT NULL)"] {
            expectRefused(.misuse, "more than once") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// What reads the sealed table once still opens: a lookup through its
    /// index, an OR of index terms, and a join with another table read
    /// through a covering index of its own.
    @Test func aTableReadOnceStillOpens() throws {
        let path = try accounts("once.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try app.write { try $0.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, account_id INTEGER, text TEXT); CREATE INDEX note_account ON note(account_id, text); INSERT INTO note VALUES (1, 2, 'two'), (2, 1, 'one')") }
        #expect(try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "beta")) } == Account(id: 2, apiKey: "beta"))
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account WHERE key32 = x'00' OR key32 IS NOT NULL OR id = 5 ORDER BY id") } == ["alpha", "beta"])
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT a.apiKey, a.id FROM note n JOIN account a ON a.id = n.account_id ORDER BY n.text") } == ["alpha", "beta"])
    }
}

extension PlantedNameTests.Vault {
    init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
}

/// The review of the round-3 fixes (f04b706): a declared view replaced by
/// a table, a self-join through a common table expression SQLite fills
/// once, an index loaded under another name, a key from an attached table
/// of the same name, and a lookup the count refused.
extension PlantedNameTests {
    /// A declared view dropped and a table of its name created, holding
    /// plain text: its origin is a table that seals nothing, so nothing was
    /// opened and no rule ran. A declared view's name reads a view.
    @Test func aDeclaredViewReplacedByATableHandsOutNothing() throws {
        let views = [OpeningRouteTests.card, OpeningRouteTests.cardList]
        let path = try f.namedDatabase("view-to-table.db", views: views)
        try f.bare(path).execute(sql: "DROP VIEW customer_card; CREATE TABLE customer_card(id INTEGER PRIMARY KEY, name TEXT, email TEXT); INSERT INTO customer_card VALUES (1, 'Ada Lovelace', 'PLANTED@example.com')")
        let app = try f.app(path, views: views)
        for sql in ["SELECT * FROM customer_card", "SELECT id, name, email FROM card_list"] {
            expectRefused(.untrustedSchema, "customer_card") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "email") } } }
        }
    }

    /// A common table expression read twice, which SQLite (3.46) fills once
    /// and reads through a second cursor (`OpenDup`): one cursor on the
    /// table, two reads of its rows.
    @Test func aSelfJoinThroughACommonTableExpressionOpensNothing() throws {
        let path = try accounts("cte-self-join.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        for sql in ["WITH x AS (SELECT id, apiKey FROM account ORDER BY id LIMIT -1) SELECT a.id, b.apiKey AS k FROM x a JOIN x b ON b.id = a.id + 1",
                    "WITH x AS (SELECT DISTINCT id, apiKey FROM account) SELECT a.id, (SELECT apiKey FROM x b WHERE b.id = a.id + 1) AS k FROM x a"] {
            expectRefused(.misuse, "more than once") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// On SQLite 3.15 an index row renamed with `writable_schema` still
    /// loads under the name its text gives: found by the stored name, its
    /// B-tree was no index of the table, and a covering read through it went
    /// uncounted.
    @Test func anIndexLoadedUnderAnotherNameStillCountsAsARead() throws {
        let path = try accounts("renamed-index.db")
        try f.adversary(path).execute(sql: """
            UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2;
            CREATE INDEX realname ON account(key32) WHERE key32 IS NOT NULL;
            PRAGMA writable_schema = ON; UPDATE sqlite_master SET name = 'decoy' WHERE name = 'realname'; PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows { f.expectTheAppCannotOpen(path); return }
        let app = try DatabaseQueue(path: path, configuration: configuration())
        for sql in ["SELECT a.id, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1 WHERE a.key32 IS NOT NULL",
                    "SELECT id, apiKey AS k FROM account WHERE id IN (SELECT id FROM account WHERE key32 IS NOT NULL)"] {
            expectRefused(.misuse, "more than once") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// The row key taken from an attached table of the same name: matched
    /// by table name alone, it stood for main's key.
    @Test func aKeyFromAnAttachedTableOfTheSameNameOpensNothing() throws {
        let path = try accounts("attached-key.db")
        let db = try Connection(path: path, configuration: configuration())
        try db.execute(sql: "ATTACH DATABASE '\(f.dir.file("archive-key.db"))' AS archive KEY ''")
        try db.execute(sql: "CREATE TABLE archive.account(id INTEGER PRIMARY KEY, apiKey BLOB, key32 BLOB); INSERT INTO archive.account(id) VALUES (1)")
        try db.execute(sql: "UPDATE main.account SET apiKey = (SELECT apiKey FROM main.account WHERE id = 1) WHERE id = 2")
        expectRefused(.misuse, "account.id") {
            try db.fetchAll(sql: "SELECT o.id, m.apiKey AS k FROM archive.account o JOIN main.account m ON m.id = o.id + 1").map { try $0.decode(String.self, column: "k") }
        }
    }

    /// A WITHOUT ROWID table read through a secondary index: the index
    /// cursor positions the table's by its primary key columns (no `Seek`),
    /// one read of the table, which opens.
    @Test func aWithoutRowidLookupThroughAnIndexOpens() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account")], keyring: f.keyring)
        let app = try DatabaseQueue(path: f.dir.file("without-rowid.db"), configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, owner TEXT) WITHOUT ROWID; CREATE INDEX account_owner ON account(owner); CREATE INDEX account_id_owner ON account(id, owner)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Account(id: 2, apiKey: "beta"))
            try db.execute(sql: "UPDATE account SET owner = 'ann' WHERE id = 2")
        }
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account WHERE owner = 'ann'") } == ["beta"])
        // A self-join through the index by another column than the key is still two reads.
        try app.write { try $0.execute(sql: "UPDATE account SET owner = '1' WHERE id = 2") }
        expectRefused(.misuse, "more than once") {
            try app.read { try $0.fetchAll(sql: "SELECT a.id, b.apiKey AS k FROM account a INDEXED BY account_id_owner JOIN account b ON b.id = a.owner").map { try $0.decode(String.self, column: "k") } }
        }
    }
}

/// Review round 3, medium: a record over a declared `SELECT *` view of the
/// sealed table is not the table's record, so the row-key tie (which
/// applied to a record's own table) did not run for it. After the
/// moved-key attack (`pk` made the key, a plain `id` holding the other
/// account's number), the pinned row key refuses it, and without a pin the
/// record is refused (it holds another table's value).
extension PlantedNameTests {
    struct ViewedAccount: TableRecord, Equatable {
        var id: Int64
        var apiKey: String
        static let databaseTableName = "account_view"
        static let databaseColumnNames = ["id", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    static let accountView = "CREATE VIEW account_view AS SELECT * FROM account"

    @Test func aRecordOverADeclaredViewTakesNoValueUnderAMovedKey() throws {
        let path = try accounts("view-moved.db")
        try f.bare(path).execute(sql: Self.accountView)
        let pinned = pinnedConfiguration(views: [Self.accountView])
        #expect(try DatabaseQueue(path: path, configuration: pinned).read { try $0.fetchAll(ViewedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") }
                == [ViewedAccount(id: 1, apiKey: "alpha"), ViewedAccount(id: 2, apiKey: "beta")])
        try f.bare(path).execute(sql: """
            DROP VIEW account_view;
            CREATE TABLE n(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER);
            INSERT INTO n SELECT id, apiKey, key32, 3 - id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.accountView)
            """)
        let app = try DatabaseQueue(path: path, configuration: pinned)
        _ = expectNothingRead { try app.read { try $0.fetchAll(ViewedAccount.self, sql: "SELECT * FROM account_view ORDER BY pk") } }
        // Without the pin, refused as well: a record over a view needs the
        // table's key pinned (it handed account 2's record account 1's value).
        let unpinned = configuration(views: [Self.accountView])
        let error = expectNothingRead { try DatabaseQueue(path: path, configuration: unpinned).read { try $0.fetchAll(ViewedAccount.self, sql: "SELECT * FROM account_view ORDER BY pk") } }
        #expect(error?.code == .misuse && error?.message.contains("rowKeys") == true, "\(String(describing: error))")
    }
}

extension PlantedNameTests.ViewedAccount {
    init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
}

/// The second review of the fixes (67df7ff): a virtual table in the sealed
/// table's place, and an index this connection cannot compile.
extension PlantedNameTests {
    /// An FTS4 table in the sealed table's place: it is a table to SQLite's
    /// column metadata, and its reads open no B-tree, so a self-join was
    /// counted as no read at all.
    @Test func aVirtualTableInPlaceOfTheSealedTableOpensNothing() throws {
        let path = try accounts("fts-in-place.db")
        let cached = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try cached.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account ORDER BY id") } == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            ALTER TABLE account RENAME TO account_data;
            CREATE VIRTUAL TABLE account USING fts4(id, apiKey, key32);
            INSERT INTO account(id, apiKey, key32) SELECT id, apiKey, key32 FROM account_data;
            UPDATE account SET apiKey = (SELECT apiKey FROM account_data WHERE id = 1) WHERE id = 2
            """)
        let sql = "SELECT a.id, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1"
        let pinned = try DatabaseQueue(path: path, configuration: pinnedConfiguration())
        for app in [pinned, cached] {
            expectRefused(.untrustedSchema, "\"account\"") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// An index on a function this connection does not have: the count
    /// compiles a REINDEX of the table, which failed, and every read that
    /// opened a value with it.
    @Test func anIndexOnAFunctionThisConnectionLacksRefusesNoRead() throws {
        let path = try accounts("expression-index.db")
        let writer = try f.bare(path)
        try writer.add(function: DatabaseFunction("norm", pure: true) { args in args[0] })
        try writer.execute(sql: "CREATE INDEX account_norm ON account(norm(key32))")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account ORDER BY id") } == ["alpha", "beta"])
        // A self-join is still two reads.
        expectRefused(.misuse, "more than once") {
            try app.read { try $0.fetchAll(sql: "SELECT a.id, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1").map { try $0.decode(String.self, column: "k") } }
        }
    }
}

/// The final review: a record over a declared view, its row key declared,
/// after the key was moved to another of its own properties.
extension PlantedNameTests {
    struct ViewedKeyedAccount: TableRecord, Equatable {
        var id: Int64
        var apiKey: String
        var visits: Int64?
        static let databaseTableName = "account_view"
        static let databaseColumnNames = ["id", "apiKey", "visits"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(column: "id"); apiKey = try row.decode(column: "apiKey"); visits = try row.decode(column: "visits")
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(visits, at: 2) }
    }

    /// The key moved to `visits`, which the record reads: the check that the
    /// record reads the key passed, and account 2's record took "alpha". The
    /// declared row key's column, when it comes from the value's table, is
    /// the key the value was opened with.
    @Test func aRecordOverADeclaredViewTakesNoValueUnderAKeyMovedToItsOwnProperty() throws {
        let path = try accounts("view-moved-visits.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.accountView)
            """)
        let config = configuration(views: [Self.accountView])
        let app = try DatabaseQueue(path: path, configuration: config)
        let error = expectNothingRead { try app.read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
        #expect(error?.code == .misuse && error?.message.contains("rowKeys") == true, "\(String(describing: error))")
        // Pinned: the value opens only with `id`, whose values the adversary swapped.
        let pinned = pinnedConfiguration(views: [Self.accountView])
        _ = expectNothingRead { try DatabaseQueue(path: path, configuration: pinned).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
    }
}

/// The review of 3be0c6b: a declared view whose `NATURAL JOIN` the
/// adversary steers onto another table's key, and a record over a join
/// with a composite row key.
extension PlantedNameTests {
    static let ownedView = "CREATE VIEW account_view AS SELECT * FROM account NATURAL JOIN owner"

    /// `account.id` dropped and `visits` made the key: the view's `id` now
    /// comes from `owner`, which the rule for a declared key read from the
    /// value's table skipped, and the join pairs rows on the adversary's
    /// `visits`. Account 2's record took "alpha".
    @Test func aNaturalJoinViewTakesNoValueUnderAnotherTablesKey() throws {
        let path = try accounts("view-natural.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE owner(id INTEGER PRIMARY KEY, visits INTEGER); INSERT INTO owner VALUES (1, 2), (2, 1);
            CREATE TABLE n(visits INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO n SELECT id, apiKey, key32 FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.ownedView)
            """)
        let config = configuration(views: [Self.ownedView])
        let app = try DatabaseQueue(path: path, configuration: config)
        let error = expectNothingRead { try app.read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
        #expect(error?.code == .misuse && error?.message.contains("rowKeys") == true, "\(String(describing: error))")
        // Pinned: `account.id` is gone, and the query has no account.id to open with.
        let pinned = pinnedConfiguration(views: [Self.ownedView])
        _ = expectNothingRead { try DatabaseQueue(path: path, configuration: pinned).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
    }

    struct Membership: TableRecord, Equatable {
        var orgId: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "membership_view"
        static let databaseColumnNames = ["orgId", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["orgId", "accountId"]
        init(orgId: Int64, accountId: Int64, apiKey: String) { self.orgId = orgId; self.accountId = accountId; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { orgId = try row.decode(column: "orgId"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(orgId, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    static let membershipView = "CREATE VIEW membership_view AS SELECT m.orgId, a.id AS accountId, a.apiKey FROM membership m JOIN account a ON a.id = m.accountId"

    /// A composite row key whose second column is the account's key: the
    /// rule compared it by position with the account's one-column key, and
    /// refused a record the application wrote as untrusted.
    @Test func aCompositeKeyedViewOfAJoinReads() throws {
        let path = try accounts("membership.db")
        try f.bare(path).execute(sql: "CREATE TABLE membership(orgId INTEGER, accountId INTEGER, PRIMARY KEY(orgId, accountId)); INSERT INTO membership VALUES (7, 1); \(Self.membershipView)")
        let config = pinnedConfiguration(views: [Self.membershipView])
        #expect(try DatabaseQueue(path: path, configuration: config).read { try $0.fetchAll(Membership.self, sql: "SELECT * FROM membership_view") }
                == [Membership(orgId: 7, accountId: 1, apiKey: "alpha")])
    }
}

/// The review of 9b8b8bf: a composite key rebuilt in another order, and a
/// join record of a table that seals nothing.
extension PlantedNameTests {
    struct Grant: TableRecord, Equatable {
        var orgId: Int64
        var accountId: Int64
        var token: String
        static let databaseTableName = "grant_view"
        static let databaseColumnNames = ["orgId", "accountId", "token"]
        static let databaseSealedColumns = ["token"]
        static let databaseRowKey = ["orgId", "accountId"]
        init(row: borrowing RowView) throws(StrongroomError) { orgId = try row.decode(column: "orgId"); accountId = try row.decode(column: "accountId"); token = try row.decode(column: "token") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(orgId, at: 0); try binder.bind(accountId, at: 1); try binder.bind(token, at: 2) }
    }
    struct GrantRow: Codable { var orgId: Int64; var accountId: Int64; var token: String }
    static let grantView = "CREATE VIEW grant_view AS SELECT * FROM grants"

    /// The key (orgId, accountId) rebuilt as (accountId, orgId), the two
    /// columns' values swapped: the envelope's key values are the same
    /// list, so it opens, in the row that now reads orgId 2, accountId 1.
    @Test func aCompositeKeyInAnotherOrderHandsNoValueToTheSwappedRow() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("token", in: "grants")], keyring: f.keyring, views: [Self.grantView], rowKeys: ["grants": ["orgId", "accountId"]])
        let path = f.dir.file("grants.db")
        try DatabaseQueue(path: path, configuration: config).write { db in
            try db.execute(sql: "CREATE TABLE grants(orgId INTEGER, accountId INTEGER, token BLOB, PRIMARY KEY(orgId, accountId)); \(Self.grantView)")
            try db.insert(GrantRow(orgId: 1, accountId: 2, token: "alpha"), into: "grants")
        }
        #expect(try DatabaseQueue(path: path, configuration: config).read { try $0.fetchAll(Grant.self, sql: "SELECT * FROM grant_view").map(\.token) } == ["alpha"])
        try f.bare(path).execute(sql: """
            DROP VIEW grant_view;
            CREATE TABLE n(orgId INTEGER, accountId INTEGER, token BLOB, PRIMARY KEY(accountId, orgId));
            INSERT INTO n SELECT accountId, orgId, token FROM grants; DROP TABLE grants; ALTER TABLE n RENAME TO grants;
            \(Self.grantView)
            """)
        // Pinned, the values open with (orgId, accountId), which the swap changed.
        let app = try DatabaseQueue(path: path, configuration: config)
        _ = expectNothingRead { try app.read { try $0.fetchAll(Grant.self, sql: "SELECT * FROM grant_view") } }
        // Not pinned: a record over a view needs the pin.
        var unpinned = Configuration(key: f.databaseKey)
        unpinned.seal([.randomized("token", in: "grants")], keyring: f.keyring, views: [Self.grantView])
        let error = expectNothingRead { try DatabaseQueue(path: path, configuration: unpinned).read { try $0.fetchAll(Grant.self, sql: "SELECT * FROM grant_view") } }
        #expect(error?.code == .misuse && error?.message.contains("rowKeys") == true, "\(String(describing: error))")
    }

    struct Order: TableRecord, Equatable {
        var id: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        init(id: Int64, accountId: Int64, apiKey: String) { self.id = id; self.accountId = accountId; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    /// A record of a table that seals nothing, reading the joined account's
    /// sealed value with its key: its declared key is its own table's, and
    /// 9b8b8bf asked it to hold the account's too.
    @Test func aJoinRecordOverAnUnsealedTableReads() throws {
        let path = try accounts("orders.db")
        try f.bare(path).execute(sql: "CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        #expect(try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(Order.self, sql: sql) }
                == [Order(id: 10, accountId: 1, apiKey: "alpha")])
    }
}

/// The review of aa470cc: rules that told which row a joined table's value
/// is of from the record's own declarations could be steered (a key moved
/// to a joined column the record reads; a table created under a query
/// record's name). A record that holds another table's sealed value now
/// needs that table's row key pinned.
extension PlantedNameTests {
    struct VisitedOrder: TableRecord, Equatable {
        var id: Int64
        var accountId: Int64
        var visits: Int64?
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "visits", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); visits = try row.decode(column: "visits"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(visits, at: 2); try binder.bind(apiKey, at: 3) }
    }

    /// The account's key moved to `visits`, a joined column the record
    /// reads: order 10 (account 1) took account 2's "beta".
    @Test func aJoinRecordOfATableTakesNoValueUnderAKeyMovedToAJoinedColumn() throws {
        let path = try accounts("orders-visits.db")
        try f.bare(path).execute(sql: "ALTER TABLE account ADD COLUMN visits INTEGER; CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.visits, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        #expect(try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(VisitedOrder.self, sql: sql).map(\.apiKey) } == ["alpha"])
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let unpinned = expectNothingRead { try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(VisitedOrder.self, sql: sql) } }
        #expect(unpinned?.code == .misuse && unpinned?.message.contains("rowKeys") == true, "\(String(describing: unpinned))")
        // The message suggests no key columns: the live ones are the adversary's.
        #expect(unpinned?.message.contains("visits") == false, "\(String(describing: unpinned))")
        _ = expectNothingRead { try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(VisitedOrder.self, sql: sql) } }
    }

    /// A table created under a query record's name turned the rule for
    /// records over views off, and the NATURAL JOIN attack worked again.
    @Test func aTableNamedAfterAQueryRecordLiftsNoKeyRule() throws {
        let path = try accounts("natural-planted.db")
        try f.bare(path).execute(sql: "CREATE TABLE owner(id INTEGER PRIMARY KEY, visits INTEGER); INSERT INTO owner VALUES (1, 0), (2, 0)")
        let sql = "SELECT * FROM account NATURAL JOIN owner ORDER BY id"
        #expect(try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: sql).map(\.apiKey) } == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            DELETE FROM owner; INSERT INTO owner VALUES (1, 2), (2, 1);
            CREATE TABLE n(visits INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO n SELECT id, apiKey, key32 FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            CREATE TABLE account_view(x)
            """)
        let unpinned = expectNothingRead { try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: sql) } }
        #expect(unpinned?.code == .misuse && unpinned?.message.contains("rowKeys") == true, "\(String(describing: unpinned))")
        _ = expectNothingRead { try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: sql) } }
    }

    struct CodableOrder: TableRecord, Decodable, Equatable {
        var id: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    /// The same join record decoded from a `Row` (its statement gone, no
    /// table lookup) reads as it does from the statement.
    @Test func aJoinRecordDecodedFromARowReads() throws {
        let path = try accounts("orders-row.db")
        try f.bare(path).execute(sql: "CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        #expect(try DatabaseQueue(path: path, configuration: pinnedConfiguration()).read { try $0.fetchAll(sql: sql).map { try $0.decode(CodableOrder.self).apiKey } } == ["alpha"])
    }
}
