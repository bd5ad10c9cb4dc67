import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 39's reviews (D1–D4 and the rounds after): names and stand-ins
/// through which whoever holds the database key, not the field keyring,
/// handed the application text of theirs as a sealed value, or a value
/// opened in another row. Each attack is the reviewer's, reproduced.
///
/// Since issue 50 a value opens only into a property the application
/// declares (``SealedProperty``: table, column, and the properties that
/// hold the row key), with the row key the record itself holds; nothing
/// read from the database decides it. These tests stay as regressions:
/// each attack must still hand the application no planted text and no
/// value of another row. Where the new design refuses for a reason the
/// application can act on (a name the result holds twice, a row key not
/// selected, no keyring), the refusal is checked too.
@Suite("Sealed columns: planted stand-ins and names")
struct PlantedNameTests {
    let f = PlantedSQLFixture()

    /// An account whose API key is sealed, read by position; its row key is
    /// the configuration's (`id`).
    typealias Account = SealedColumnTests.Account

    static let expected = [Account(id: 1, apiKey: "alpha"), Account(id: 2, apiKey: "beta")]
    static let genuineKeys: [Int64: String] = [1: "alpha", 2: "beta"]

    /// Every account read holds its own key.
    static func genuine(_ accounts: [Account]) -> Bool { accounts.allSatisfy { genuineKeys[$0.id] == $0.apiKey } }
    /// Every key read is one of the accounts' own (a read without ids).
    static func genuine(_ keys: [String]) -> Bool { keys.allSatisfy { genuineKeys.values.contains($0) } }

    func configuration(blindIndex: Bool = true, rowKeys: [String: [String]] = ["account": ["id"]]) -> Configuration {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account")], indexes: blindIndex ? [BlindIndex("key32", on: "apiKey", in: "account", bits: 32)] : [], keyring: f.keyring,
                    rowKeys: rowKeys)
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

    /// ``PlantedSQLFixture/expectNothingForged(sourceLocation:genuine:_:)``.
    func expectNothingForged<T>(sourceLocation: SourceLocation = #_sourceLocation, genuine: (T) -> Bool = { _ in true }, _ read: () throws -> T) {
        PlantedSQLFixture.expectNothingForged(sourceLocation: sourceLocation, genuine: genuine, read)
    }

    /// The account's key, opened from the result column `key` with the row
    /// key in `rowKey`.
    static func apiKey(as key: String = "apiKey", rowKey: String = "id") -> SealedProperty {
        SealedProperty(key, of: "account", column: "apiKey", rowKey: [rowKey])
    }

    // MARK: D1: a view in place of the sealed table

    /// The table is renamed and a view of its name hands out text of the
    /// adversary's as `apiKey`: the record took the text for its sealed
    /// property. Declared, the property takes only a value that opens as
    /// account.apiKey of its own row: plain text is no envelope.
    @Test func aViewInPlaceOfTheSealedTableHandsARecordNothing() throws {
        let path = try accounts("view-in-place.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(Account.self) }.sorted { $0.id < $1.id } == Self.expected)
        try f.bare(path).execute(sql: """
            ALTER TABLE account RENAME TO account_data;
            CREATE VIEW account AS SELECT id, 'PLANTED-' || id AS apiKey, key32 FROM account_data
            """)
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } }
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(Account.self) } }
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchOne(Account.self, sql: "SELECT * FROM account WHERE id = ?", arguments: [1]) } }
        expectNothingForged { try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "alpha")) } }
    }

    /// The application's own query that selects an expression as the
    /// sealed property: the expression is no envelope, and is refused as
    /// one.
    @Test func aRecordRefusesAnExpressionAsItsSealedProperty() throws {
        let path = try accounts("expression.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        expectRefused(.sealedValue, "apiKey") { try app.read { try $0.fetchAll(Account.self, sql: "SELECT id, 'typed by the app' AS apiKey FROM account") } }
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
    /// A declared sealed name the result holds twice is refused.
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
        expectRefused(.misuse, "apiKey") { try app.read { try $0.fetchAll(sql: join, opening: [Self.apiKey()]) } }
        // Read from the table alone, the sealed column opens.
        #expect(try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } == Self.expected)
    }

    // MARK: D2: a row key column whose name is not valid UTF-8

    static let validReplacement = "'\"id' || char(65533) || '\"'"
    static let invalidByte = "'\"id' || CAST(X'FF' AS TEXT) || '\"'"

    /// The primary key column and a decoy before it get two names Swift
    /// repairs to one: `id\xFF` (invalid UTF-8) and `id\u{FFFD}`. Row 1
    /// holds row 2's sealed key and a decoy saying 2: taken for the key, it
    /// opened "beta" in row 1. The declaration names `id`, which neither
    /// column is: the read is told to select it, and opens nothing.
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
        let app = try DatabaseQueue(path: path, configuration: configuration(blindIndex: false))
        expectRefused(.misuse, "without id") {
            try app.read { db in try db.fetchAll(sql: "SELECT * FROM account ORDER BY rowid", opening: [Self.apiKey()]).map { try $0.decode(String.self, column: "apiKey") } }
        }
        expectRefused(.misuse, "without id") {
            try app.read { db in try db.fetchOne(String.self, sql: "SELECT apiKey AS k, * FROM account WHERE rowid = 1", opening: Self.apiKey(as: "k")) }
        }
        // Undeclared, the row holds envelopes: no text.
        expectRefused(.conversion, "sealed value") {
            try app.read { db in try db.fetchAll(sql: "SELECT * FROM account ORDER BY rowid").map { try $0.decode(String.self, column: "apiKey") } }
        }
    }

    // MARK: D4: a declared view stored with another spelling of a literal

    struct Email: Decodable, SealedRecord, Equatable {
        var id: Int64
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// The application's view leaves Zoë out by her name (NFC). The
    /// adversary stores it with the name in NFD, so that it hands out Zoë's
    /// e-mail too. Views were once declared and compared; now the e-mail
    /// that comes out is Zoë's own, opened only as customer.email of her
    /// row: the adversary chose which rows the application sees (as any
    /// rewritten WHERE does), never what a value says or whose it is.
    @Test func aDeclaredViewRespelledInAnotherNormalizationOpensNothing() throws {
        let declared = "CREATE VIEW others AS SELECT id, name, email FROM customer WHERE name <> 'Zo\u{EB}'"
        let path = try f.namedDatabase("nfd-view.db", views: [declared])
        try f.app(path, views: [declared]).write { db in
            try db.insert(PlantedSQLFixture.NamedCustomer(id: 2, name: "Zo\u{EB}", email: "zoe@example.com"), into: "customer")
        }
        let app = try f.app(path, views: [declared])
        let emails = "SELECT id, email FROM others ORDER BY id"
        #expect(try app.read { try $0.fetchAll(Email.self, sql: emails) } == [Email(id: 1, email: PlantedSQLFixture.secret)])
        try f.bare(path).execute(sql: "DROP VIEW others; CREATE VIEW others AS SELECT id, name, email FROM customer WHERE name <> 'Zoe\u{308}'")
        let genuine: [Int64: String] = [1: PlantedSQLFixture.secret, 2: "zoe@example.com"]
        expectNothingForged(genuine: { $0.allSatisfy { genuine[$0.id] == $0.email } }) { try app.read { try $0.fetchAll(Email.self, sql: emails) } }
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
        // A Row holds what was stored; decoding the record from it needs it opened.
        expectRefused(.misuse, "CodableAccount") { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(CodableAccount.self) } } }
        expectRefused(.sealedValue, "plain value") { try app.read { db in try db.fetchAll(sql: sql, opening: [Self.apiKey()]).map { try $0.decode(CodableAccount.self) } } }
        expectRefused(.sealedValue, "plain value") { try app.read { try Self.decodeAll(CodableAccount.self, $0, sql: sql) } }
        expectRefused(.sealedValue, "plain value") { try app.read { try Self.firstDecoded(CodableAccount.self, $0, sql: sql) } }
    }

    /// The adversary spells the row key `ID` and adds a plain `id` to the
    /// joined table, each row's holding the other account's number: the
    /// record took that `id` (the exact spelling) while `apiKey` opened
    /// with the real one, so account 2's record held account 1's key. Now
    /// the value opens with the `id` the record holds, whichever column
    /// that is: the other account's number does not authenticate.
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
        for join in joins { expectNothingForged(genuine: Self.genuine) { try app.read { try $0.fetchAll(Account.self, sql: join) } } }
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
    /// property's name, is not that property's column: it does not open as
    /// customer.email.
    @Test func anotherSealedColumnUnderTheSealedNameIsRefused() throws {
        let path = try f.database("other-sealed.db")
        let app = try f.app(path)
        try app.write { try $0.insert(FullCustomer(id: 3, email: "cy@example.com", country: "UK"), into: "customer") }
        expectRefused(.sealedValue, "email") { try app.read { try $0.fetchAll(Contact.self, sql: "SELECT id, country AS email FROM customer WHERE id = 3") } }
        #expect(try app.read { try $0.fetchAll(Contact.self, sql: "SELECT id, email FROM customer WHERE id = 3") } == [Contact(id: 3, email: "cy@example.com")])
    }

    /// A record over the application's view: it names the table its value
    /// was sealed in.
    struct Card: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var name: String?
        var email: String
        static let databaseTableName = "customer_card"
        static let databaseColumnNames = ["id", "name", "email"]
        static let databaseSealedColumns = ["email"]
        static let sealedProperties = [SealedProperty("email", of: "customer")]
        init(id: Int64, name: String?, email: String) { self.id = id; self.name = name; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); name = try row.decode(at: 1); email = try row.decode(at: 2) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(name, at: 1); try binder.bind(email, at: 2) }
    }

    /// A record over a view reads its sealed property opened through the
    /// view; declared against a table the connection does not seal (the
    /// view's own name), it is refused, saying so.
    @Test func aRecordOverADeclaredViewReadsItsSealedProperty() throws {
        let card = "CREATE VIEW customer_card AS SELECT id, name, email FROM customer"
        let path = try f.namedDatabase("declared-view-record.db", views: [card])
        let app = try f.app(path, views: [card])
        #expect(try app.read { try $0.fetchAll(Card.self) } == [Card(id: 1, name: "Ada Lovelace", email: PlantedSQLFixture.secret)])
        struct ViewNamed: Decodable, SealedRecord { var id: Int64; var email: String; static let sealedProperties = [SealedProperty("email", of: "customer_card")] }
        expectRefused(.misuse, "does not seal") { try app.read { try $0.fetchAll(ViewNamed.self, sql: "SELECT id, email FROM customer_card") } }
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
    /// `id`, and account 2's record held account 1's key. Now each value
    /// opens with the `id` its record holds, which the adversary swapped:
    /// nothing opens.
    @Test func anAdversarysPrimaryKeyHandsTheRecordAnotherRowsValue() throws {
        let path = try accounts("moved-key.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER, visits INTEGER);
            INSERT INTO account_new SELECT id, apiKey, key32, 3 - id, NULL FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let declared = expectNothingRead { try app.read { try $0.fetchAll(KeyedAccount.self, sql: "SELECT * FROM account") } }
        #expect(declared?.code == .sealedValue, "\(String(describing: declared))")
        _ = expectNothingRead { try app.read { try $0.fetchOne(KeyedAccount.self, where: .index("key32", equals: "alpha")) } }
        _ = expectNothingRead { try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account") } }
        _ = expectNothingRead { try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "alpha")) } }
    }

    /// The same with another plain property made the key: `visits` holds
    /// the numbers each envelope is bound to, `id` the swapped ones.
    @Test func aPlainPropertyMadeThePrimaryKeyIsRefusedForADeclaredRowKey() throws {
        let path = try accounts("phone-key.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE account_new(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO account_new SELECT 3 - id, apiKey, key32, id FROM account;
            DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let error = expectNothingRead { try app.read { try $0.fetchAll(KeyedAccount.self, sql: "SELECT * FROM account") } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }

    /// A record of two sealed tables: each value names its table and the
    /// property that holds that table's key.
    struct AccountProfile: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var apiKey: String
        var profileId: Int64
        var email: String
        static let databaseTableName = "account"
        static let databaseColumnNames = ["id", "apiKey", "profileId", "email"]
        static let databaseSealedColumns = ["apiKey", "email"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account"), SealedProperty("email", of: "profile", rowKey: ["profileId"])]
        init(id: Int64, apiKey: String, profileId: Int64, email: String) { self.id = id; self.apiKey = apiKey; self.profileId = profileId; self.email = email }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1); profileId = try row.decode(at: 2); email = try row.decode(at: 3) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(profileId, at: 2); try binder.bind(email, at: 3) }
    }

    struct Profile: Codable {
        var id: Int64
        var accountId: Int64
        var email: String
    }

    /// A record of two sealed tables reads; declared with the account's key
    /// for the profile's value, it fails on the first honest row.
    @Test func aRecordOfTwoSealedTablesReads() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account"), .randomized("email", in: "profile")], keyring: f.keyring, rowKeys: ["account": ["id"], "profile": ["id"]])
        let app = try DatabaseQueue(path: f.dir.file("two.db"), configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL); CREATE TABLE profile(id INTEGER PRIMARY KEY, accountId INTEGER, email BLOB)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Profile(id: 10, accountId: 1, email: "ada@example.com"), into: "profile")
        }
        let sql = "SELECT account.id, account.apiKey, profile.id AS profileId, profile.email FROM account JOIN profile ON profile.accountId = account.id"
        #expect(try app.read { try $0.fetchAll(AccountProfile.self, sql: sql) } == [AccountProfile(id: 1, apiKey: "alpha", profileId: 10, email: "ada@example.com")])
        // The profile's value declared with the account's key: wrong at once.
        let wrong = [SealedProperty("apiKey", of: "account"), SealedProperty("email", of: "profile", rowKey: ["id"])]
        expectRefused(.sealedValue, "profile.email") { try app.read { try $0.fetchAll(sql: sql, opening: wrong) } }
    }

    /// A self-join: after the adversary copied account 1's envelope into
    /// account 2, the second side's value opened with the first side's key
    /// handed out "alpha" as account 2's. Each side's value now opens with
    /// the key its declaration names: account 2's copied envelope does not
    /// authenticate under id 2.
    @Test func aSelfJoinNeverOpensUnderTheOtherSidesKey() throws {
        let path = try accounts("self-join.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let sql = "SELECT a.id, a.apiKey, b.id AS nextId, b.apiKey AS nextKey FROM account a JOIN account b ON b.id = a.id + 1"
        let opening = [Self.apiKey(), Self.apiKey(as: "nextKey", rowKey: "nextId")]
        #expect(try app.read { try $0.fetchAll(sql: sql, opening: opening).map { try $0.decode(String.self, column: "nextKey") } } == ["beta"])
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        let error = expectNothingRead { try app.read { try $0.fetchAll(sql: sql, opening: opening).map { try $0.decode(String.self, column: "nextKey") } } }
        #expect(error?.code == .sealedValue && error?.message.contains("row 2") == true, "\(String(describing: error))")
        // Declared with the other side's key, "alpha" is account 1's own: no forgery.
        expectNothingForged(genuine: { (rows: [Row]) in rows.allSatisfy { (try? $0.decode(String.self, column: "nextKey")) == "alpha" } }) {
            try app.read { try $0.fetchAll(sql: sql, opening: [Self.apiKey(as: "nextKey")]) }
        }
    }

    /// The row key selected twice (`rowid, *`, `id, *`) opens as before:
    /// the value opens with the column its declaration names.
    @Test func aRowKeySelectedTwiceStillOpens() throws {
        let path = try accounts("key-twice.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        for sql in ["SELECT rowid, * FROM account ORDER BY id", "SELECT id, * FROM account ORDER BY id", "SELECT id AS n, id, apiKey FROM account ORDER BY id"] {
            #expect(try app.read { try $0.fetchAll(sql: sql, opening: [Self.apiKey()]).map { try $0.decode(String.self, column: "apiKey") } } == ["alpha", "beta"], "\(sql)")
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

    func vaultConfiguration() -> Configuration {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("api_key", in: "vault")], keyring: f.keyring, rowKeys: ["vault": ["id"]])
        return config
    }

    /// A `Decodable` read of a record whose query renames its sealed column
    /// (`api_key AS apiKey`) decodes `apiKey` from a column no declaration
    /// names: the view's planted text was handed over. A TableRecord
    /// declares its sealed properties by column, and its coding keys may
    /// name others: read as a `Decodable`, each declared column must be
    /// selected, or the read is refused.
    @Test func aDecodableReadWithoutTheSealedColumnIsRefused() throws {
        let path = f.dir.file("vault.db")
        let app = try DatabaseQueue(path: path, configuration: vaultConfiguration())
        try app.write { try $0.execute(sql: "CREATE TABLE vault_data(id INTEGER PRIMARY KEY, api_key BLOB); CREATE VIEW vault AS SELECT id, 'PLANTED' AS api_key FROM vault_data; INSERT INTO vault_data(id) VALUES (1)") }
        let sql = "SELECT id, api_key AS apiKey FROM vault"
        expectRefused(.misuse, "api_key") { try app.read { try Self.decodeAll(Vault.self, $0, sql: sql) }.map(\.apiKey) }
        expectRefused(.misuse, "Vault") { try app.read { db in try db.fetchAll(sql: sql).map { try $0.decode(Vault.self) } }.map(\.apiKey) }
        // On the table itself too: the Decodable read without the declared
        // column is the application's mistake.
        try app.write { try $0.execute(sql: "DROP VIEW vault; DROP TABLE vault_data; CREATE TABLE vault(id INTEGER PRIMARY KEY, api_key BLOB)"); try $0.insert(Vault(id: 1, apiKey: "real")) }
        expectRefused(.misuse, "api_key") { try app.read { try Self.decodeAll(Vault.self, $0, sql: sql) } }
        #expect(try app.read { try $0.fetchAll(Vault.self, sql: "SELECT id, api_key FROM vault") }.map(\.apiKey) == ["real"])
    }

    struct Holder: Decodable {
        var account: CodableAccount
        init(from decoder: any Decoder) throws { account = try CodableAccount(from: decoder) }
    }

    /// A record decoded inside another `Decodable` (whose `init(from:)`
    /// decodes it from the same decoder) took the view's planted text. What
    /// opens is what the decoded type declares: an outer type that declares
    /// nothing opens nothing (its inner record finds envelopes, which no
    /// String takes), and one that declares the property takes only a value
    /// that opens as account.apiKey of its row.
    @Test func aRecordInsideAnotherDecodableTakesNoPlantedText() throws {
        let path = try accounts("holder.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        // Honest: the outer type declares nothing, so the inner record finds envelopes.
        expectRefused(.conversion, "sealed value") { try app.read { try $0.fetchAll(Holder.self, sql: "SELECT * FROM account ORDER BY id") } }
        try f.bare(path).execute(sql: "ALTER TABLE account RENAME TO account_data; CREATE VIEW account AS SELECT id, 'PLANTED-' || id AS apiKey, key32 FROM account_data")
        // Declared on the outer type, the planted text does not open.
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(SealedHolder.self, sql: "SELECT * FROM account ORDER BY id") } }
        expectRefused(.sealedValue, "plain value") { try app.read { db in try db.fetchAll(String.self, sql: "SELECT apiKey, id FROM account", opening: Self.apiKey()) } }
    }
}

/// Review round 3: the row key, declared by the application, for every
/// read path (a record inside another `Decodable`, plain rows) and for
/// inserts.
extension PlantedNameTests {
    struct SealedHolder: Decodable, SealedRecord {
        var account: CodableAccount
        static let sealedProperties = [SealedProperty("apiKey", of: "account")]
        init(from decoder: any Decoder) throws { account = try CodableAccount(from: decoder) }
    }

    /// The moved-key attack (`pk` the key, a plain `id` holding the other
    /// account's number): no read path opens a value under `pk`, and no
    /// insert binds one to it.
    @Test func aPinnedRowKeyOpensNothingUnderAMovedKey() throws {
        let path = try accounts("pinned-moved.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(SealedHolder.self, sql: "SELECT * FROM account ORDER BY id") }.map(\.account.apiKey) == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            CREATE TABLE n(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER, visits INTEGER);
            INSERT INTO n SELECT id, apiKey, key32, 3 - id, NULL FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let moved = try DatabaseQueue(path: path, configuration: configuration())
        _ = expectNothingRead { try moved.read { try $0.fetchAll(SealedHolder.self, sql: "SELECT * FROM account ORDER BY pk") } }
        _ = expectNothingRead { try moved.read { try $0.fetchAll(sql: "SELECT * FROM account ORDER BY pk", opening: [Self.apiKey()]).map { try $0.decode(String.self, column: "apiKey") } } }
        _ = expectNothingRead { try moved.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY pk") } }
        // An insert binds its value to the declared `id`, and reads back by it.
        try moved.write { try $0.insert(Account(id: 7, apiKey: "gamma")) }
        #expect(try moved.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account WHERE id = 7") } == [Account(id: 7, apiKey: "gamma")])
    }

    /// Another plain property made the key (`visits`): the value opens only
    /// with the declared `id`, whose values the adversary swapped.
    @Test func aPinnedRowKeyRefusesAnotherPropertyMadeTheKey() throws {
        let path = try accounts("pinned-visits.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
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
    /// `Vault` decoded inside another `Decodable` that declares it.
    struct HeldVault: Decodable, SealedRecord {
        var vault: Vault
        static let sealedProperties = [SealedProperty("apiKey", of: "vault", column: "api_key")]
        init(from decoder: any Decoder) throws { vault = try Vault(from: decoder) }
    }

    /// A view in `vault`'s place read under an alias (`api_key AS apiKey`,
    /// `api_key AS token`): the check by column name let the planted text
    /// out. Declared under either name, the text is no envelope.
    @Test func aStandInReadUnderAnyNameHandsOutNothing() throws {
        let app = try DatabaseQueue(path: f.dir.file("alias.db"), configuration: vaultConfiguration())
        try app.write { try $0.execute(sql: "CREATE TABLE d(id INTEGER PRIMARY KEY); CREATE VIEW vault AS SELECT id, 'PLANTED' AS api_key FROM d; INSERT INTO d VALUES (1)") }
        let token = SealedProperty("token", of: "vault", column: "api_key")
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(HeldVault.self, sql: "SELECT id, api_key AS apiKey FROM vault") } }
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(String.self, sql: "SELECT api_key AS token, id FROM vault", opening: token) } }
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(sql: "SELECT api_key AS token, id FROM vault", opening: [token]).map { try $0.decode(String.self, column: "token") } } }
        // The same query on the real table opens.
        try app.write { try $0.execute(sql: "DROP VIEW vault; CREATE TABLE vault(id INTEGER PRIMARY KEY, api_key BLOB)"); try $0.insert(Vault(id: 1, apiKey: "real")) }
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT api_key AS token, id FROM vault", opening: token) } == ["real"])
    }

    /// On SQLite 3.15 a `writable_schema` row named `decoy` whose text is
    /// `CREATE VIEW account …` loads as `account`. (SQLite 3.46 refuses to
    /// load such a row.)
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
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(SealedHolder.self, sql: "SELECT * FROM account") }.map(\.account.apiKey) }
        expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey AS k, id FROM account", opening: Self.apiKey(as: "k")) } }
    }

    /// A view named like the sealed table in an attached database: its text
    /// opens as nothing.
    @Test func aViewInAnAttachedDatabaseIsAStandIn() throws {
        let path = try accounts("attaching.db")
        let db = try Connection(path: path, configuration: configuration())
        try db.execute(sql: "ATTACH DATABASE '\(f.dir.file("archive.db"))' AS archive KEY ''")
        try db.execute(sql: "CREATE VIEW archive.account AS SELECT 1 AS id, 'PLANTED' AS apiKey")
        expectRefused(.sealedValue, "plain value") { try db.fetchAll(SealedHolder.self, sql: "SELECT * FROM archive.account").map(\.account.apiKey) }
        expectRefused(.sealedValue, "plain value") { try db.fetchAll(String.self, sql: "SELECT apiKey AS k, id FROM archive.account", opening: Self.apiKey(as: "k")) }
        // main's table still opens.
        #expect(try db.fetchAll(String.self, sql: "SELECT apiKey, id FROM main.account ORDER BY id", opening: Self.apiKey()) == ["alpha", "beta"])
    }

    /// A self-join that selects one side's key and the other side's value
    /// (or a correlated subquery on the same table): the value opened with
    /// the only key in the row, another row's. Now the application's
    /// declaration names the key column: with the key of the row the value
    /// came from (`b.id`), account 2's copied envelope does not open; with
    /// the other side's, honest rows fail at once.
    @Test func aOneSidedSelfJoinOpensNothing() throws {
        let path = try accounts("one-side.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let k = Self.apiKey(as: "k", rowKey: "kid")
        #expect(try app.read { try $0.fetchAll(sql: "SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1", opening: [k]).map { try $0.decode(String.self, column: "k") } } == ["beta"])
        expectRefused(.sealedValue, "row 1") {
            try app.read { try $0.fetchAll(sql: "SELECT a.id, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1", opening: [Self.apiKey(as: "k")]).map { try $0.decode(String.self, column: "k") } }
        }
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        for sql in ["SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1",
                    "SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a NOT INDEXED JOIN account b ON b.id = a.id + 1",
                    "SELECT id, id + 1 AS kid, (SELECT b.apiKey FROM account b WHERE b.id = account.id + 1) AS k FROM account WHERE id = 1"] {
            expectRefused(.sealedValue, "row 2") { try app.read { try $0.fetchAll(sql: sql, opening: [k]).map { try $0.decode(String.self, column: "k") } } }
        }
        expectNothingForged(genuine: { (pairs: [(Int64, String)]) in pairs.allSatisfy { Self.genuineKeys[$0.0] == $0.1 } }) {
            try app.read { try $0.fetchAll(sql: "SELECT id, apiKey AS k FROM account WHERE id IN (SELECT id FROM account WHERE key32 IS NOT NULL)", opening: [Self.apiKey(as: "k")])
                .map { (try $0.decode(Int64.self, column: "id"), try $0.decode(String.self, column: "k")) } }
        }
    }

    /// What reads the sealed table still opens: a lookup through its index,
    /// an OR of index terms, and a join with another table read through a
    /// covering index of its own.
    @Test func aTableReadOnceStillOpens() throws {
        let path = try accounts("once.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try app.write { try $0.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, account_id INTEGER, text TEXT); CREATE INDEX note_account ON note(account_id, text); INSERT INTO note VALUES (1, 2, 'two'), (2, 1, 'one')") }
        #expect(try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "beta")) } == Account(id: 2, apiKey: "beta"))
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account WHERE key32 = x'00' OR key32 IS NOT NULL OR id = 5 ORDER BY id", opening: Self.apiKey()) } == ["alpha", "beta"])
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT a.apiKey, a.id FROM note n JOIN account a ON a.id = n.account_id ORDER BY n.text", opening: Self.apiKey()) } == ["alpha", "beta"])
    }
}

extension PlantedNameTests.Vault {
    init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
}

/// The review of the round-3 fixes (f04b706): a view replaced by a table,
/// a self-join through a common table expression SQLite fills once, an
/// index loaded under another name, a key from an attached table of the
/// same name, and a lookup the count refused.
extension PlantedNameTests {
    /// The application's view dropped and a table of its name created,
    /// holding plain text: no envelope, nothing opened.
    @Test func aDeclaredViewReplacedByATableHandsOutNothing() throws {
        let views = [OpeningRouteTests.card, OpeningRouteTests.cardList]
        let path = try f.namedDatabase("view-to-table.db", views: views)
        try f.bare(path).execute(sql: "DROP VIEW customer_card; CREATE TABLE customer_card(id INTEGER PRIMARY KEY, name TEXT, email TEXT); INSERT INTO customer_card VALUES (1, 'Ada Lovelace', 'PLANTED@example.com')")
        let app = try f.app(path, views: views)
        for sql in ["SELECT * FROM customer_card", "SELECT id, name, email FROM card_list"] {
            expectRefused(.sealedValue, "plain value") { try app.read { try $0.fetchAll(PlantedSQLFixture.NamedCustomer.self, sql: sql) } }
        }
    }

    /// A common table expression read twice, which SQLite (3.46) fills once
    /// and reads through a second cursor: the copied envelope does not open
    /// under its own row's key.
    @Test func aSelfJoinThroughACommonTableExpressionOpensNothing() throws {
        let path = try accounts("cte-self-join.db")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        try f.bare(path).execute(sql: "UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2")
        let k = Self.apiKey(as: "k", rowKey: "kid")
        for sql in ["WITH x AS (SELECT id, apiKey FROM account ORDER BY id LIMIT -1) SELECT a.id, b.id AS kid, b.apiKey AS k FROM x a JOIN x b ON b.id = a.id + 1",
                    "WITH x AS (SELECT DISTINCT id, apiKey FROM account) SELECT a.id, a.id + 1 AS kid, (SELECT apiKey FROM x b WHERE b.id = a.id + 1) AS k FROM x a WHERE a.id = 1"] {
            expectRefused(.sealedValue, "row 2") { try app.read { try $0.fetchAll(sql: sql, opening: [k]).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// On SQLite 3.15 an index row renamed with `writable_schema` still
    /// loads under the name its text gives: which index a read goes through
    /// no longer matters.
    @Test func anIndexLoadedUnderAnotherNameStillCountsAsARead() throws {
        let path = try accounts("renamed-index.db")
        try f.adversary(path).execute(sql: """
            UPDATE account SET apiKey = (SELECT apiKey FROM account WHERE id = 1) WHERE id = 2;
            CREATE INDEX realname ON account(key32) WHERE key32 IS NOT NULL;
            PRAGMA writable_schema = ON; UPDATE sqlite_master SET name = 'decoy' WHERE name = 'realname'; PRAGMA writable_schema = OFF;
            """)
        if PlantedSQLFixture.sqliteRefusesPlantedSchemaRows { f.expectTheAppCannotOpen(path); return }
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let k = Self.apiKey(as: "k", rowKey: "kid")
        for sql in ["SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1 WHERE a.key32 IS NOT NULL",
                    "SELECT id AS kid, apiKey AS k FROM account WHERE id IN (SELECT id FROM account WHERE key32 IS NOT NULL) ORDER BY id"] {
            expectRefused(.sealedValue, "row 2") { try app.read { try $0.fetchAll(sql: sql, opening: [k]).map { try $0.decode(String.self, column: "k") } } }
        }
    }

    /// The row key taken from an attached table of the same name: the
    /// declaration names the column, and the attached row's id is the one
    /// the value must have been sealed with.
    @Test func aKeyFromAnAttachedTableOfTheSameNameOpensNothing() throws {
        let path = try accounts("attached-key.db")
        let db = try Connection(path: path, configuration: configuration())
        try db.execute(sql: "ATTACH DATABASE '\(f.dir.file("archive-key.db"))' AS archive KEY ''")
        try db.execute(sql: "CREATE TABLE archive.account(id INTEGER PRIMARY KEY, apiKey BLOB, key32 BLOB); INSERT INTO archive.account(id) VALUES (1)")
        try db.execute(sql: "UPDATE main.account SET apiKey = (SELECT apiKey FROM main.account WHERE id = 1) WHERE id = 2")
        expectNothingForged(genuine: { (pairs: [(Int64, String)]) in pairs.allSatisfy { Self.genuineKeys[$0.0] == $0.1 } }) {
            try db.fetchAll(sql: "SELECT o.id, m.apiKey AS k FROM archive.account o JOIN main.account m ON m.id = o.id + 1", opening: [Self.apiKey(as: "k")])
                .map { (try $0.decode(Int64.self, column: "id"), try $0.decode(String.self, column: "k")) }
        }
    }

    /// A WITHOUT ROWID table read through a secondary index opens.
    @Test func aWithoutRowidLookupThroughAnIndexOpens() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("apiKey", in: "account")], keyring: f.keyring, rowKeys: ["account": ["id"]])
        let app = try DatabaseQueue(path: f.dir.file("without-rowid.db"), configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, owner TEXT) WITHOUT ROWID; CREATE INDEX account_owner ON account(owner); CREATE INDEX account_id_owner ON account(id, owner)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Account(id: 2, apiKey: "beta"))
            try db.execute(sql: "UPDATE account SET owner = 'ann' WHERE id = 2")
        }
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account WHERE owner = 'ann'", opening: Self.apiKey()) } == ["beta"])
        // A self-join through the index, declared with the value's own row.
        try app.write { try $0.execute(sql: "UPDATE account SET owner = '1' WHERE id = 2") }
        #expect(try app.read { try $0.fetchAll(sql: "SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a INDEXED BY account_id_owner JOIN account b ON b.id = a.owner", opening: [Self.apiKey(as: "k", rowKey: "kid")]).map { try $0.decode(String.self, column: "k") } } == ["alpha"])
    }
}

/// Review round 3, medium: a record over a `SELECT *` view of the sealed
/// table, after the moved-key attack (`pk` made the key, a plain `id`
/// holding the other account's number).
extension PlantedNameTests {
    struct ViewedAccount: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var apiKey: String
        static let databaseTableName = "account_view"
        static let databaseColumnNames = ["id", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account")]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    static let accountView = "CREATE VIEW account_view AS SELECT * FROM account"

    @Test func aRecordOverADeclaredViewTakesNoValueUnderAMovedKey() throws {
        let path = try accounts("view-moved.db")
        try f.bare(path).execute(sql: Self.accountView)
        #expect(try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(ViewedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") }
                == [ViewedAccount(id: 1, apiKey: "alpha"), ViewedAccount(id: 2, apiKey: "beta")])
        try f.bare(path).execute(sql: """
            DROP VIEW account_view;
            CREATE TABLE n(pk INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB, id INTEGER);
            INSERT INTO n SELECT id, apiKey, key32, 3 - id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.accountView)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        _ = expectNothingRead { try app.read { try $0.fetchAll(ViewedAccount.self, sql: "SELECT * FROM account_view ORDER BY pk") } }
    }
}

extension PlantedNameTests.ViewedAccount {
    init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
}

/// The second review of the fixes (67df7ff): a virtual table in the sealed
/// table's place, and an index this connection cannot compile.
extension PlantedNameTests {
    /// An FTS4 table in the sealed table's place, account 1's envelope
    /// copied into account 2: the copy does not open as account 2's.
    @Test func aVirtualTableInPlaceOfTheSealedTableOpensNothing() throws {
        let path = try accounts("fts-in-place.db")
        let cached = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try cached.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account ORDER BY id", opening: Self.apiKey()) } == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            ALTER TABLE account RENAME TO account_data;
            CREATE VIRTUAL TABLE account USING fts4(id, apiKey, key32);
            INSERT INTO account(id, apiKey, key32) SELECT id, apiKey, key32 FROM account_data;
            UPDATE account SET apiKey = (SELECT apiKey FROM account_data WHERE id = 1) WHERE id = 2
            """)
        let sql = "SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1"
        let fresh = try DatabaseQueue(path: path, configuration: configuration())
        for app in [fresh, cached] {
            expectNothingForged(genuine: { (keys: [String]) in keys.isEmpty }) {
                try app.read { try $0.fetchAll(sql: sql, opening: [Self.apiKey(as: "k", rowKey: "kid")]).map { try $0.decode(String.self, column: "k") } }
            }
        }
    }

    /// An index on a function this connection does not have: reads open as
    /// before (nothing compiles the table's indexes any more).
    @Test func anIndexOnAFunctionThisConnectionLacksRefusesNoRead() throws {
        let path = try accounts("expression-index.db")
        let writer = try f.bare(path)
        try writer.add(function: DatabaseFunction("norm", pure: true) { args in args[0] })
        try writer.execute(sql: "CREATE INDEX account_norm ON account(norm(key32))")
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(String.self, sql: "SELECT apiKey, id FROM account ORDER BY id", opening: Self.apiKey()) } == ["alpha", "beta"])
        #expect(try app.read { try $0.fetchAll(sql: "SELECT a.id, b.id AS kid, b.apiKey AS k FROM account a JOIN account b ON b.id = a.id + 1", opening: [Self.apiKey(as: "k", rowKey: "kid")]).map { try $0.decode(String.self, column: "k") } } == ["beta"])
    }
}

/// The final review: a record over a view, its row key declared, after the
/// key was moved to another of its own properties.
extension PlantedNameTests {
    struct ViewedKeyedAccount: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var apiKey: String
        var visits: Int64?
        static let databaseTableName = "account_view"
        static let databaseColumnNames = ["id", "apiKey", "visits"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account", rowKey: ["id"])]
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(column: "id"); apiKey = try row.decode(column: "apiKey"); visits = try row.decode(column: "visits")
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1); try binder.bind(visits, at: 2) }
    }

    /// The key moved to `visits`, which the record reads: account 2's
    /// record took "alpha". The value opens only with `id`, whose values
    /// the adversary swapped.
    @Test func aRecordOverADeclaredViewTakesNoValueUnderAKeyMovedToItsOwnProperty() throws {
        let path = try accounts("view-moved-visits.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.accountView)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let error = expectNothingRead { try app.read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }
}

/// The review of 3be0c6b: a view whose `NATURAL JOIN` the adversary steers
/// onto another table's key, and a record over a join with a composite
/// row key.
extension PlantedNameTests {
    static let ownedView = "CREATE VIEW account_view AS SELECT * FROM account NATURAL JOIN owner"

    /// `account.id` dropped and `visits` made the key: the view's `id` now
    /// comes from `owner`, and the join pairs rows on the adversary's
    /// `visits`. Account 2's record took "alpha"; now the value opens with
    /// the `id` the record holds, and does not.
    @Test func aNaturalJoinViewTakesNoValueUnderAnotherTablesKey() throws {
        let path = try accounts("view-natural.db")
        try f.bare(path).execute(sql: """
            CREATE TABLE owner(id INTEGER PRIMARY KEY, visits INTEGER); INSERT INTO owner VALUES (1, 2), (2, 1);
            CREATE TABLE n(visits INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO n SELECT id, apiKey, key32 FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            \(Self.ownedView)
            """)
        let app = try DatabaseQueue(path: path, configuration: configuration())
        let error = expectNothingRead { try app.read { try $0.fetchAll(ViewedKeyedAccount.self, sql: "SELECT * FROM account_view ORDER BY id") } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }

    struct Membership: TableRecord, SealedRecord, Equatable {
        var orgId: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "membership_view"
        static let databaseColumnNames = ["orgId", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["orgId", "accountId"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account", rowKey: ["accountId"])]
        init(orgId: Int64, accountId: Int64, apiKey: String) { self.orgId = orgId; self.accountId = accountId; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { orgId = try row.decode(column: "orgId"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(orgId, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    static let membershipView = "CREATE VIEW membership_view AS SELECT m.orgId, a.id AS accountId, a.apiKey FROM membership m JOIN account a ON a.id = m.accountId"

    /// A record over a join whose own key is composite, holding the
    /// account's value with the account's key.
    @Test func aCompositeKeyedViewOfAJoinReads() throws {
        let path = try accounts("membership.db")
        try f.bare(path).execute(sql: "CREATE TABLE membership(orgId INTEGER, accountId INTEGER, PRIMARY KEY(orgId, accountId)); INSERT INTO membership VALUES (7, 1); \(Self.membershipView)")
        #expect(try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(Membership.self, sql: "SELECT * FROM membership_view") }
                == [Membership(orgId: 7, accountId: 1, apiKey: "alpha")])
    }
}

/// The review of 9b8b8bf: a composite key rebuilt in another order, and a
/// join record of a table that seals nothing.
extension PlantedNameTests {
    struct Grant: TableRecord, SealedRecord, Equatable {
        var orgId: Int64
        var accountId: Int64
        var token: String
        static let databaseTableName = "grant_view"
        static let databaseColumnNames = ["orgId", "accountId", "token"]
        static let databaseSealedColumns = ["token"]
        static let databaseRowKey = ["orgId", "accountId"]
        static let sealedProperties = [SealedProperty("token", of: "grants")]
        init(row: borrowing RowView) throws(StrongroomError) { orgId = try row.decode(column: "orgId"); accountId = try row.decode(column: "accountId"); token = try row.decode(column: "token") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(orgId, at: 0); try binder.bind(accountId, at: 1); try binder.bind(token, at: 2) }
    }
    struct GrantRow: Codable { var orgId: Int64; var accountId: Int64; var token: String }
    static let grantView = "CREATE VIEW grant_view AS SELECT * FROM grants"

    /// The key (orgId, accountId) rebuilt as (accountId, orgId), the two
    /// columns' values swapped: the envelope's key values were the same
    /// list, so it opened in the row that now reads orgId 2, accountId 1.
    /// The declared key's order is the application's: (2, 1) is not (1, 2).
    @Test func aCompositeKeyInAnotherOrderHandsNoValueToTheSwappedRow() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("token", in: "grants")], keyring: f.keyring, rowKeys: ["grants": ["orgId", "accountId"]])
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
        let app = try DatabaseQueue(path: path, configuration: config)
        let error = expectNothingRead { try app.read { try $0.fetchAll(Grant.self, sql: "SELECT * FROM grant_view") } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }

    struct Order: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account", rowKey: ["accountId"])]
        init(id: Int64, accountId: Int64, apiKey: String) { self.id = id; self.accountId = accountId; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    /// A record of a table that seals nothing, reading the joined account's
    /// sealed value with the account's key.
    @Test func aJoinRecordOverAnUnsealedTableReads() throws {
        let path = try accounts("orders.db")
        try f.bare(path).execute(sql: "CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        #expect(try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(Order.self, sql: sql) }
                == [Order(id: 10, accountId: 1, apiKey: "alpha")])
    }
}

/// The review of aa470cc: a key moved to a joined column the record reads,
/// and a table created under a query record's name.
extension PlantedNameTests {
    struct VisitedOrder: TableRecord, SealedRecord, Equatable {
        var id: Int64
        var accountId: Int64
        var visits: Int64?
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "visits", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account", rowKey: ["accountId"])]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); visits = try row.decode(column: "visits"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(visits, at: 2); try binder.bind(apiKey, at: 3) }
    }

    /// The account's key moved to `visits`, a joined column the record
    /// reads: order 10 (account 1) took account 2's "beta". The value opens
    /// with `accountId`, the record's own.
    @Test func aJoinRecordOfATableTakesNoValueUnderAKeyMovedToAJoinedColumn() throws {
        let path = try accounts("orders-visits.db")
        try f.bare(path).execute(sql: "ALTER TABLE account ADD COLUMN visits INTEGER; CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.visits, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        #expect(try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(VisitedOrder.self, sql: sql).map(\.apiKey) } == ["alpha"])
        try f.bare(path).execute(sql: """
            CREATE TABLE n(id INTEGER, apiKey BLOB NOT NULL, key32 BLOB, visits INTEGER PRIMARY KEY);
            INSERT INTO n SELECT 3 - id, apiKey, key32, id FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account
            """)
        let error = expectNothingRead { try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(VisitedOrder.self, sql: sql) } }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
    }

    /// A table created under a query record's name, and the NATURAL JOIN
    /// attack: nothing a table's name says changes what opens.
    @Test func aTableNamedAfterAQueryRecordLiftsNoKeyRule() throws {
        let path = try accounts("natural-planted.db")
        try f.bare(path).execute(sql: "CREATE TABLE owner(id INTEGER PRIMARY KEY, visits INTEGER); INSERT INTO owner VALUES (1, 0), (2, 0)")
        let sql = "SELECT * FROM account NATURAL JOIN owner ORDER BY id"
        #expect(try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: sql).map(\.apiKey) } == ["alpha", "beta"])
        try f.bare(path).execute(sql: """
            DELETE FROM owner; INSERT INTO owner VALUES (1, 2), (2, 1);
            CREATE TABLE n(visits INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB);
            INSERT INTO n SELECT id, apiKey, key32 FROM account; DROP TABLE account; ALTER TABLE n RENAME TO account;
            CREATE TABLE account_view(x)
            """)
        _ = expectNothingRead { try DatabaseQueue(path: path, configuration: configuration()).read { try $0.fetchAll(ViewedKeyedAccount.self, sql: sql) } }
    }

    struct CodableOrder: TableRecord, Decodable, SealedRecord, Equatable {
        var id: Int64
        var accountId: Int64
        var apiKey: String
        static let databaseTableName = "orders"
        static let databaseColumnNames = ["id", "accountId", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        static let databaseRowKey = ["id"]
        static let sealedProperties = [SealedProperty("apiKey", of: "account", rowKey: ["accountId"])]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(column: "id"); accountId = try row.decode(column: "accountId"); apiKey = try row.decode(column: "apiKey") }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(accountId, at: 1); try binder.bind(apiKey, at: 2) }
    }

    /// The same join record: from its query it reads; a `Row` refuses to
    /// decode it (a TableRecord's declaration names columns, which its
    /// coding keys may not: second review of issue 50, item 1).
    @Test func aJoinRecordDecodedFromARowReads() throws {
        let path = try accounts("orders-row.db")
        try f.bare(path).execute(sql: "CREATE TABLE orders(id INTEGER PRIMARY KEY, accountId INTEGER); INSERT INTO orders VALUES (10, 1)")
        let sql = "SELECT o.id, a.id AS accountId, a.apiKey FROM orders o JOIN account a ON a.id = o.accountId"
        let app = try DatabaseQueue(path: path, configuration: configuration())
        #expect(try app.read { try $0.fetchAll(CodableOrder.self, sql: sql) }.map(\.apiKey) == ["alpha"])
        expectRefused(.misuse, "CodableOrder") { try app.read { try $0.fetchAll(sql: sql, opening: CodableOrder.sealedProperties).map { try $0.decode(CodableOrder.self) } } }
        expectRefused(.misuse, "CodableOrder") { try app.read { try $0.fetchAll(sql: sql).map { try $0.decode(CodableOrder.self) } } }
    }
}
