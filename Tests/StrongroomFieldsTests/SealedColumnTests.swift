import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Sealed columns from Swift (issue 8, item 4): declared once on the
/// configuration, then plain values in and out, through records too.
@Suite("Sealed columns from Swift")
struct SealedColumnTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int64?
        var email: String
        var phone: String?
        var country: String
        var score: Double
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer"),
                                       SealedProperty("country", of: "customer")]
    }

    static let schema = """
        CREATE TABLE customer(id INTEGER PRIMARY KEY AUTOINCREMENT, email BLOB NOT NULL, email_index BLOB, phone BLOB,
                              country BLOB, score REAL);
        CREATE INDEX customer_email_index ON customer(email_index);
        """

    static let columns: [SealedColumn] = [
        .indexed("email", in: "customer", indexColumn: "email_index"),
        .randomized("phone", in: "customer"),
        .deterministic("country", in: "customer"),
    ]

    func configuration(_ encryption: Configuration.Encryption? = nil) -> Configuration {
        var config = Configuration(encryption: encryption ?? .encrypted(databaseKey))
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        return config
    }

    static let people = [
        Customer(id: nil, email: "ada@example.com", phone: "+44 20 7946 0000", country: "UK", score: 9.5),
        Customer(id: nil, email: "bob@example.com", phone: nil, country: "FR", score: 7),
        Customer(id: 10, email: "zoë@example.com", phone: "", country: "FR", score: 8.25),
        Customer(id: nil, email: "", phone: "+33 1", country: "DE", score: 0),
    ]

    @Test func recordsGoInPlainAndComeOutPlain() throws {
        let path = dir.file("app.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            for person in Self.people { try db.insert(person, into: "customer") }
        }
        let read = try queue.read { try $0.fetchAll(Customer.self, sql: "SELECT * FROM customer ORDER BY id") }
        #expect(read.map(\.id) == [1, 2, 10, 11], "ids SQLite would have assigned, AUTOINCREMENT included")
        #expect(read.map { Customer(id: nil, email: $0.email, phone: $0.phone, country: $0.country, score: $0.score) }
                == Self.people.map { Customer(id: nil, email: $0.email, phone: $0.phone, country: $0.country, score: $0.score) })
        // Rows and single values open when the read names the binding.
        let row = try #require(try queue.read { try $0.fetchOne(sql: "SELECT id, phone FROM customer WHERE id = 1", opening: [SealedProperty("phone", of: "customer")]) })
        #expect(try row.decode(String.self, column: "phone") == "+44 20 7946 0000")
        #expect(try queue.read { try $0.fetchOne(String.self, sql: "SELECT country FROM customer WHERE id = 2", opening: SealedProperty("country", of: "customer")) } == "FR")
        // Without a declaration, they hold the envelope, and reading it as
        // text fails, saying why.
        let stored = try #require(try queue.read { try $0.fetchOne(sql: "SELECT id, phone FROM customer WHERE id = 1") })
        #expect(stored["phone"]?.looksLikeEnvelope == true)
        let undeclared = #expect(throws: StrongroomError.self) { try stored.decode(String.self, column: "phone") }
        #expect(undeclared?.code == .conversion && undeclared?.message.contains("sealed value") == true, "\(String(describing: undeclared))")
        struct Undeclared: Decodable { var id: Int64; var phone: String? }
        #expect(throws: StrongroomError.self) { try queue.read { try $0.fetchAll(Undeclared.self, sql: "SELECT id, phone FROM customer") } }

        // The same file with the database key but without the keyring: only envelopes.
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        #expect(try bare.fetchAll(String.self, sql: "SELECT DISTINCT typeof(email) || typeof(country) FROM customer") == ["blobblob"])
        #expect(try bare.fetchAll(String.self, sql: "SELECT DISTINCT typeof(phone) FROM customer ORDER BY 1") == ["blob", "null"])
        let texts = try bare.fetchAll(sql: "SELECT * FROM customer").flatMap(\.values).map(\.description).joined()
        #expect(!texts.contains("example.com") && !texts.contains("7946"))
    }

    /// A sealed insert without an id gets the rowid SQLite would assign
    /// (issue 51 reads whether the table is AUTOINCREMENT from the loaded
    /// schema, then asks one statement): past the largest rowid, and with
    /// AUTOINCREMENT past every one ever used, as a plain twin table shows.
    @Test(arguments: ["", " AUTOINCREMENT"])
    func rowidsAreTheOnesSQLiteWouldAssign(_ autoincrement: String) throws {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("body", in: "Note Book")], keyring: keyring, rowKeys: ["note book": ["ID"]])
        let queue = try DatabaseQueue(path: dir.file("rowid\(autoincrement.count).db"), configuration: config)
        struct Note: Codable { var body: String }
        let (sealed, plain) = try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE "Note Book"(id INTEGER PRIMARY KEY\(autoincrement), body BLOB);
                CREATE TABLE twin(id INTEGER PRIMARY KEY\(autoincrement), body TEXT);
                """)
            for step in ["insert", "insert", "insert", "delete", "insert", "delete", "delete", "insert", "insert"] {
                if step == "insert" {
                    try db.insert(Note(body: "n"), into: "note book")
                    try db.execute(sql: "INSERT INTO twin(body) VALUES ('n')")
                } else {
                    try db.execute(sql: "DELETE FROM \"Note Book\" WHERE id = (SELECT max(id) FROM \"Note Book\")")
                    try db.execute(sql: "DELETE FROM twin WHERE id = (SELECT max(id) FROM twin)")
                }
            }
            return (try db.fetchAll(Int64.self, sql: "SELECT id FROM \"Note Book\" ORDER BY id"),
                    try db.fetchAll(Int64.self, sql: "SELECT id FROM twin ORDER BY id"))
        }
        #expect(sealed == plain)
        // Three in, the last out, one in, two out, two in.
        #expect(plain == (autoincrement.isEmpty ? [1, 2, 3] : [1, 5, 6]))
        let rows = try queue.read { try $0.fetchAll(sql: "SELECT id, body FROM \"Note Book\"", opening: [SealedProperty("body", of: "Note Book")]) }
        #expect(try rows.map { try $0.decode(String.self, column: "body") } == ["n", "n", "n"])
    }

    @Test func lookupsByBlindIndexAndDeterministicValueWithoutOpeningTheTable() throws {
        let queue = try DatabaseQueue(path: dir.file("lookup.db"), configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            for person in Self.people { try db.insert(person, into: "customer") }
        }
        let bob = try queue.read { db in try db.fetchOne(Customer.self, where: .index("email_index", equals: "bob@example.com")) }
        #expect(bob?.id == 2 && bob?.phone == nil)
        let french = try queue.read { db in try db.fetchAll(Customer.self, where: .column("country", equals: "FR").ordered(by: "id")).map(\.id) }
        #expect(french == [2, 10])
        // The lookup uses the index on the blind index column.
        let plan = try queue.read { try $0.fetchAll(sql: "EXPLAIN QUERY PLAN SELECT id FROM customer WHERE email_index = x'00'") }
        #expect(plan.flatMap(\.values).map(\.description).joined().contains("customer_email_index"))
    }

    @Test func aQueryWithoutThePrimaryKeyIsToldToSelectIt() throws {
        let queue = try DatabaseQueue(path: dir.file("nokey.db"), configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            try db.insert(Self.people[0], into: "customer")
        }
        let error = #expect(throws: StrongroomError.self) {
            try queue.read { try $0.fetchAll(String.self, sql: "SELECT phone FROM customer", opening: SealedProperty("phone", of: "customer")) }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("without id") == true, "\(String(describing: error))")
        // Deterministic columns are bound to no row: they read alone.
        #expect(try queue.read { try $0.fetchAll(String.self, sql: "SELECT country FROM customer", opening: SealedProperty("country", of: "customer")) } == ["UK"])
    }

    @Test func aTamperedValueIsATypedErrorNamingTheRow() throws {
        let path = dir.file("tampered.db")
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            for person in Self.people { try db.insert(person, into: "customer") }
            // Someone with the database key swaps two sealed phones.
            try db.execute(sql: "UPDATE customer SET phone = (SELECT phone FROM customer WHERE id = 11) WHERE id = 1")
        }
        let error = #expect(throws: StrongroomError.self) { try queue.read { try $0.fetchAll(Customer.self, sql: "SELECT * FROM customer ORDER BY id") } }
        #expect(error?.code == .sealedValue)
        #expect(error?.message.contains("customer.phone, row 1") == true)
        #expect(error?.message.contains("+33") == false)
    }

    @Test func poolReadersOpenSealedValuesOnTheirOwnThreads() async throws {
        let pool = try DatabasePool(path: dir.file("pool.db"), configuration: configuration())
        try await pool.asyncWrite { db in
            try db.execute(sql: Self.schema)
            for person in Self.people { try db.insert(person, into: "customer") }
        }
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { try await pool.asyncRead { try $0.fetchAll(Customer.self, sql: "SELECT * FROM customer ORDER BY id").map(\.email) } }
            }
            for try await emails in group { #expect(emails == Self.people.map(\.email)) }
        }
    }

    /// In a plaintext database (where the raw bytes are readable), sealed
    /// markers never appear in the file, its -wal or its journal; an
    /// unsealed control marker does, which shows the scan works.
    @Test(arguments: [Configuration.JournalMode.wal, .persist])
    func sealedMarkersNeverReachTheFiles(journal: Configuration.JournalMode) throws {
        let path = dir.file("plain-\(journal.rawValue).db")
        var config = configuration(.plaintext)
        config.journalMode = journal
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: Self.schema + "CREATE TABLE note(body TEXT);")
        try db.inTransaction { db in
            try db.insert(Customer(id: nil, email: "sealed-marker-e1@example.com", phone: "sealed-marker-p1", country: "sealed-marker-c1", score: 1), into: "customer")
            try db.execute(sql: "INSERT INTO note(body) VALUES ('control-marker-n1')")
        }
        // A second transaction, so the journal holds pages from the first.
        try db.execute(sql: "UPDATE customer SET score = 2; INSERT INTO note(body) VALUES ('x')")
        var bytes = Data()
        for suffix in ["", "-wal", "-journal"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("control-marker-n1"))
        #expect(!text.contains("sealed-marker"))
        db.close()
    }
}

extension SealedColumnTests {
    /// A record whose hand-written `encode(to:)` skips a nil phone.
    struct SparseCustomer: Encodable {
        var id: Int64
        var email: String
        var phone: String?
        var country: String
        enum CodingKeys: String, CodingKey { case id, email, phone, country }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(email, forKey: .email)
            if let phone { try container.encode(phone, forKey: .phone) }
            try container.encode(country, forKey: .country)
        }
    }

    /// Issue 25, item 6, on the sealed path: records of one type that encode
    /// different keys each insert their own columns, sealed, and read back.
    @Test func sealedRecordsThatEncodeOtherKeysKeepEveryValue() throws {
        let db = try Connection(path: dir.file("sparse.db"), configuration: configuration())
        try db.execute(sql: Self.schema)
        let records = [
            SparseCustomer(id: 1, email: "ada@example.com", phone: nil, country: "UK"),
            SparseCustomer(id: 2, email: "bob@example.com", phone: "+33 1", country: "FR"),
            SparseCustomer(id: 3, email: "cy@example.com", phone: nil, country: "DE"),
            SparseCustomer(id: 4, email: "di@example.com", phone: "+49 2", country: "DE"),
        ]
        for record in records { try db.insert(record, into: "customer") }
        let read = try db.fetchAll(Customer.self, sql: "SELECT id, email, phone, country, 0.0 AS score FROM customer ORDER BY id")
        #expect(read.map(\.phone) == [nil, "+33 1", nil, "+49 2"])
        #expect(read.map(\.email) == records.map(\.email))
        #expect(read.map(\.country) == records.map(\.country))
    }

    /// A record that reads by position through the row view's typed decoders.
    struct PositionalCustomer: TableRecord, Equatable {
        var id: Int64
        var email: String
        var phone: String?
        var country: String
        var score: Double
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "email", "phone", "country", "score"]
        static let databaseSealedColumns = ["email", "phone", "country"]
        init(id: Int64, email: String, phone: String?, country: String, score: Double) {
            self.id = id; self.email = email; self.phone = phone; self.country = country; self.score = score
        }
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0)
            email = try row.decode(at: 1)
            phone = try row.decode(at: 2)
            country = try row.decode(at: 3)
            score = try row.decode(at: 4)
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0); try binder.bind(email, at: 1); try binder.bind(phone, at: 2)
            try binder.bind(country, at: 3); try binder.bind(score, at: 4)
        }
    }

    /// A statement that opens some columns reads the others straight from
    /// SQLite, and each typed read takes the right one, whatever the order of
    /// the selected columns: the opened value of a sealed column (never its
    /// envelope), the stored one of a plain column, converted when stored in
    /// another class (an INTEGER read as a Double).
    @Test func aRecordReadsItsPlainColumnsInPlaceAndItsSealedOnesOpened() throws {
        let db = try Connection(path: dir.file("positional.db"), configuration: configuration())
        // score without a declared type: it keeps an INTEGER as one.
        try db.execute(sql: Self.schema.replacingOccurrences(of: "score REAL", with: "score"))
        let records = [
            PositionalCustomer(id: 1, email: "ada@example.com", phone: "+44 20", country: "UK", score: 9.5),
            PositionalCustomer(id: 2, email: "a longer address, past fifteen bytes@example.com", phone: nil, country: "FR", score: 7),
        ]
        for record in records { try db.insert(record) }
        // An INTEGER where the record reads a Double: read through the conversion, not in place.
        try db.execute(sql: "UPDATE customer SET score = 7 WHERE id = 2")
        #expect(try db.fetchOne(String.self, sql: "SELECT typeof(score) FROM customer WHERE id = 2") == "integer")
        for sql in ["SELECT * FROM customer ORDER BY id",
                    "SELECT score, country, phone, email, id FROM customer ORDER BY id",
                    "SELECT email_index, phone, id, score, email, country FROM customer ORDER BY id"] {
            #expect(try db.fetchAll(PositionalCustomer.self, sql: sql) == records, "\(sql)")
            var seen: [PositionalCustomer] = []
            try db.cachedStatement(sql: sql).forEach(PositionalCustomer.self, filter: { _ in true }) { seen.append($0); return true }
            #expect(seen == records, "\(sql), filtered")
        }
    }

    struct Document: TableRecord, Equatable {
        var id: Int64
        var body: Data
        var note: Data?
        static let databaseTableName = "document"
        static let databaseColumnNames = ["id", "body", "note"]
        static let databaseSealedColumns = ["body"]
        init(id: Int64, body: Data, note: Data?) { self.id = id; self.body = body; self.note = note }
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0)
            body = try row.decode(at: 1)
            note = try row.decode(at: 2)
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0); try binder.bind(body, at: 1); try binder.bind(note, at: 2)
        }
    }

    /// A sealed BLOB is stored as a BLOB too (its envelope): a typed read
    /// of Data takes the opened bytes, never the envelope SQLite holds in
    /// that column, while a plain BLOB beside it is read in place.
    @Test func aSealedBlobReadsAsItsOpenedBytesNeverTheEnvelope() throws {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("body", in: "document")], keyring: keyring, rowKeys: ["document": ["id"]])
        let db = try Connection(path: dir.file("documents.db"), configuration: config)
        try db.execute(sql: "CREATE TABLE document(id INTEGER PRIMARY KEY, body BLOB NOT NULL, note BLOB)")
        let documents = [Document(id: 1, body: Data("contract".utf8), note: Data([0, 1, 2])), Document(id: 2, body: Data(), note: nil)]
        for document in documents { try db.insert(document) }
        for sql in ["SELECT * FROM document ORDER BY id", "SELECT note, body, id FROM document ORDER BY id"] {
            #expect(try db.fetchAll(Document.self, sql: sql) == documents, "\(sql)")
        }
        let stored = try Connection(path: dir.file("documents.db"), configuration: Configuration(key: databaseKey))
        #expect(try stored.fetchAll(Data.self, sql: "SELECT body FROM document ORDER BY id").allSatisfy { $0.count > 16 }, "the file holds envelopes")
    }
    // Two names that differ only in Unicode normalization are two columns
    // (or tables) to SQLite, which compares names byte by byte, and one
    // string to Swift's ==: the inserts' caches must tell them apart.
    static let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
    struct PlainNote: Encodable {
        var id: Int64
        var note: String
        enum CodingKeys: String, CodingKey { case id; case note = "caf\u{E9}" }
    }
    struct SecretNote: Encodable {
        var id: Int64
        var note: String
        enum CodingKeys: String, CodingKey { case id; case note = "cafe\u{301}" }
    }

    /// Table t with both columns (and `extra`), the NFD one sealed as
    /// `sealed`, then `inserts` in order; the file opened without the keyring.
    func normalizationDatabase(_ file: String, sealed: SealedColumn, extra: String = "",
                               inserts: [any Encodable]) throws -> (DatabaseQueue, Connection) {
        var config = Configuration(encryption: .encrypted(databaseKey))
        config.seal([sealed], keyring: keyring, rowKeys: ["t": ["id"]])
        let path = dir.file(file)
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, \"\(Self.nfc)\" TEXT, \"\(Self.nfd)\" BLOB\(extra))")
            for record in inserts { try db.insert(record, into: "t") }
        }
        return (queue, try Connection(path: path, configuration: Configuration(key: databaseKey)))
    }

    @Test func anInsertIsSealedByItsOwnColumnsNotThoseOfAnotherNormalization() throws {
        let (queue, bare) = try normalizationDatabase("nfd.db", sealed: .randomized(Self.nfd, in: "t"),
                                                      inserts: [PlainNote(id: 1, note: "public"), SecretNote(id: 2, note: "top secret")])
        #expect(try bare.fetchOne(String.self, sql: "SELECT typeof(\"\(Self.nfd)\") FROM t WHERE id = 2") == "blob", "sealed")
        #expect(try bare.fetchOne(String.self, sql: "SELECT \"\(Self.nfc)\" FROM t WHERE id = 1") == "public", "plain")
        // And the other way round.
        try queue.write { db in
            try db.insert(SecretNote(id: 3, note: "top secret"), into: "t")
            try db.insert(PlainNote(id: 4, note: "public"), into: "t")
        }
        #expect(try bare.fetchOne(String.self, sql: "SELECT typeof(\"\(Self.nfd)\") FROM t WHERE id = 3") == "blob", "sealed")
        #expect(try bare.fetchOne(String.self, sql: "SELECT \"\(Self.nfc)\" FROM t WHERE id = 4") == "public", "plain")
    }

    @Test func aBlindIndexIsComputedFromItsOwnColumnNotOneOfAnotherNormalization() throws {
        let (_, bare) = try normalizationDatabase("nfd-index.db", sealed: .indexed(Self.nfd, in: "t", indexColumn: "idx"), extra: ", idx BLOB",
                                                  inserts: [SecretNote(id: 1, note: "top secret"), PlainNote(id: 2, note: "public"),
                                                            SecretNote(id: 3, note: "top secret")])
        // Row 2 leaves the indexed column out: no index value, not one of its plain column.
        #expect(try bare.fetchAll(Bool.self, sql: "SELECT idx IS NULL FROM t ORDER BY id") == [false, true, false])
        #expect(try bare.fetchOne(Int.self, sql: "SELECT count(DISTINCT idx) FROM t") == 1, "both secrets share one index value")
    }
    /// An account whose API key is sealed, with a 32-bit blind index on it.
    struct Account: TableRecord, Equatable {
        var id: Int64
        var apiKey: String
        static let databaseTableName = "account"
        static let databaseColumnNames = ["id", "apiKey"]
        static let databaseSealedColumns = ["apiKey"]
        init(id: Int64, apiKey: String) { self.id = id; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    /// Accounts 1 (alpha) and 2 (beta); then whoever holds the database key
    /// rebuilds the table with a plain column before the sealed one, named
    /// `api\u{212A}ey` (KELVIN SIGN): another column to SQLite, which
    /// compares names byte for byte outside ASCII, and `apiKey` to Swift's
    /// `==` (U+212A decomposes to K). It holds text of the adversary's.
    func accountsWithAPlantedLookalikeColumn(_ file: String) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("apiKey", in: "account")], indexes: [BlindIndex("key32", on: "apiKey", in: "account", bits: 32)], keyring: keyring, rowKeys: ["account": ["id"]])
        let path = dir.file(file)
        let app = try DatabaseQueue(path: path, configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, apiKey BLOB NOT NULL, key32 BLOB); CREATE INDEX account_key32 ON account(key32)")
            try db.insert(Account(id: 1, apiKey: "alpha"))
            try db.insert(Account(id: 2, apiKey: "beta"))
        }
        let adversary = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        try adversary.write { db in
            try db.execute(sql: """
                CREATE TABLE account_new(id INTEGER PRIMARY KEY, "api\u{212A}ey" TEXT, apiKey BLOB NOT NULL, key32 BLOB);
                INSERT INTO account_new SELECT id, 'PLANTED-' || id, apiKey, key32 FROM account;
                DROP TABLE account; ALTER TABLE account_new RENAME TO account; CREATE INDEX account_key32 ON account(key32)
                """)
        }
        try adversary.close()
        return app
    }

    /// A record's sealed property reads the column SQLite names as it does,
    /// opened, never a plain column whose name only Swift takes for it.
    @Test func aRecordReadsItsSealedColumnNotAPlantedLookalike() throws {
        let app = try accountsWithAPlantedLookalikeColumn("lookalike-read.db")
        let expected = [Account(id: 1, apiKey: "alpha"), Account(id: 2, apiKey: "beta")]
        #expect(try app.read { try $0.fetchAll(Account.self, sql: "SELECT * FROM account ORDER BY id") } == expected)
        #expect(try app.read { try $0.fetchAll(Account.self) }.sorted { $0.id < $1.id } == expected)
        let row = try app.read { try $0.fetchOne(sql: "SELECT * FROM account WHERE id = 1", opening: [SealedProperty("apiKey", of: "account")]) }
        #expect(try row?.decode(String.self, column: "apiKey") == "alpha")
        // A Decodable finds its keys' columns the same way.
        struct Decoded: Decodable, Equatable, SealedRecord {
            var id: Int64; var apiKey: String
            static let sealedProperties = [SealedProperty("apiKey", of: "account")]
        }
        #expect(try app.read { try $0.fetchAll(Decoded.self, sql: "SELECT * FROM account ORDER BY id") } == [Decoded(id: 1, apiKey: "alpha"), Decoded(id: 2, apiKey: "beta")])
    }

    /// A lookup hands out the value its filter checked: the sealed column,
    /// opened, not a planted one beside it (review of the faster lookup,
    /// whose filter found columns by SQLite's rules and the record by Swift's).
    @Test func aLookupReturnsTheColumnItCheckedNotAPlantedLookalike() throws {
        let app = try accountsWithAPlantedLookalikeColumn("lookalike-lookup.db")
        #expect(try app.read { try $0.fetchOne(Account.self, where: .index("key32", equals: "alpha")) } == Account(id: 1, apiKey: "alpha"))
        #expect(try app.read { try $0.fetchAll(Account.self, where: .index("key32", equals: "beta")) } == [Account(id: 2, apiKey: "beta")])
    }

    struct Voucher: Encodable {
        var code: String
        var holder: String
    }

    /// A sealed column of the row key is refused: with the row key declared
    /// on the configuration, before any insert (every connection's opening
    /// fails), and nothing is written.
    @Test func aSealedKeyColumnIsRefusedOnEveryInsert() throws {
        var config = Configuration(encryption: .encrypted(databaseKey))
        config.seal([.randomized("code", in: "voucher"), .randomized("holder", in: "voucher")], keyring: keyring, rowKeys: ["voucher": ["code"]])
        for attempt in 1...3 {
            let error = #expect(throws: StrongroomError.self, "attempt \(attempt)") { try Connection(path: dir.file("voucher.db"), configuration: config) }
            #expect(error?.code == .misuse)
            #expect(error?.message.contains("row key") == true)
        }
        let db = try Connection(path: dir.file("voucher.db"), configuration: Configuration(encryption: .encrypted(databaseKey)))
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master") == 0)
    }
}
