import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 50, item 1: a value's binding (table, column, row key) and the
/// property it lands in come from the application's declarations only.
/// The two read attacks of the review come first, as the reviewer
/// ran them (the application's code as its quick start wrote it), then the
/// same code declaring its sealed properties.
@Suite("Sealed columns on declared bindings")
struct DeclaredBindingTests {
    let f = PlantedSQLFixture()

    static let columns: [SealedColumn] = [.randomized("email", in: "customer")]
    static let emails: [Int64: String] = [1: "ada@example.com", 2: "bob@example.com"]

    func configuration() -> Configuration {
        var config = Configuration(key: f.databaseKey)
        config.seal(Self.columns, keyring: f.keyring, rowKeys: ["customer": ["id"]])
        return config
    }

    /// Ada (1) and Bob (2), their e-mails sealed, and an audit line for each.
    func database(_ name: String) throws -> (path: String, queue: DatabaseQueue) {
        let path = f.dir.file(name)
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, email BLOB);
                CREATE TABLE audit(id INTEGER PRIMARY KEY, customer_id INTEGER, action TEXT);
                INSERT INTO audit VALUES (10, 1, 'login'), (20, 2, 'login');
                """)
            try db.insert(Named(id: 1, name: "Ada", email: "ada@example.com"), into: "customer")
            try db.insert(Named(id: 2, name: "Bob", email: "bob@example.com"), into: "customer")
        }
        return (path, queue)
    }

    struct Named: Codable { var id: Int64; var name: String; var email: String }

    /// The quick start's plain `Codable`: it declares nothing.
    struct AuditLine: Codable, Equatable {
        var id: Int64
        var action: String
        var name: String
        var email: String
    }

    /// The same, declaring its e-mail: customer.email of the customer whose
    /// key is in `customer_id`.
    struct DeclaredAuditLine: Codable, Equatable, SealedRecord {
        var id: Int64
        var customer_id: Int64
        var action: String
        var name: String
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer", rowKey: ["customer_id"])]
    }

    static let join = "SELECT * FROM audit JOIN customer ON customer.id = audit.customer_id ORDER BY audit.id"

    /// Attack 3: the app's own `SELECT * FROM audit JOIN customer` read into
    /// a plain `Codable` (or a `Row` by name); the adversary adds a plain
    /// `email` to `audit`, and the app decoded the leftmost `email`, theirs,
    /// as the customer's. Now a type that declares nothing never reads a
    /// customer's e-mail at all (it gets envelopes, and fails on the honest
    /// rows, so no app ships it); a declared read refuses the name held
    /// twice; no declared property takes the forged one.
    @Test func aForgedEmailThroughAJoinIsNeverTaken() throws {
        let (path, app) = try database("join-forged.db")
        #expect(try app.read { try $0.fetchAll(DeclaredAuditLine.self, sql: Self.join) }.map(\.email) == ["ada@example.com", "bob@example.com"])
        let undeclared = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(AuditLine.self, sql: Self.join) } }
        #expect(undeclared?.code == .conversion && undeclared?.message.contains("sealed value") == true, "\(String(describing: undeclared))")
        try f.bare(path).execute(sql: "ALTER TABLE audit ADD COLUMN email TEXT; UPDATE audit SET email = 'forged@adversary.example'")
        var taken: [String] = []
        let reads: [() throws -> [String]] = [{ try app.read { try $0.fetchAll(DeclaredAuditLine.self, sql: Self.join) }.map(\.email) },
                     { try app.read { try $0.fetchAll(sql: Self.join, opening: DeclaredAuditLine.sealedProperties) }.map { try $0.decode(String.self, column: "email") } },
                     { try app.read { try $0.fetchAll(String.self, sql: Self.join, opening: SealedProperty("email", of: "customer", rowKey: ["customer_id"])) } }]
        for read in reads {
            do { taken += try read() } catch {}
        }
        #expect(!taken.contains("forged@adversary.example"), "\(taken)")
        // The declared reads say why.
        let refused = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(DeclaredAuditLine.self, sql: Self.join) } }
        #expect(refused?.code == .misuse && refused?.message.contains("2 columns named email") == true, "\(String(describing: refused))")
        // Selected once, by name, the e-mails read.
        let named = "SELECT audit.id, customer_id, action, name, customer.email FROM audit JOIN customer ON customer.id = audit.customer_id ORDER BY audit.id"
        #expect(try app.read { try $0.fetchAll(DeclaredAuditLine.self, sql: named) }.map(\.email) == ["ada@example.com", "bob@example.com"])
    }

    struct Customer: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
    }

    struct DeclaredCustomer: Codable, Equatable, SealedRecord {
        var id: Int64
        var name: String
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// Attack 4: the documented quick start (a plain `Codable` over
    /// `SELECT * FROM customer`, no row key pinned); the adversary rebuilds
    /// the table so the PRIMARY KEY is a new column holding the original
    /// ids and `id` a plain column holding them permuted: customer 2's record
    /// carried customer 1's e-mail. Now each value opens with the `id` the
    /// record holds, which is not the one it was sealed with.
    @Test func aRebuiltPrimaryKeyPairsNoRecordWithAnotherRowsEmail() throws {
        let (path, app) = try database("moved-key.db")
        #expect(try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT id, name, email FROM customer ORDER BY id") }
                == [DeclaredCustomer(id: 1, name: "Ada", email: "ada@example.com"), DeclaredCustomer(id: 2, name: "Bob", email: "bob@example.com")])
        try f.bare(path).execute(sql: """
            CREATE TABLE customer_new(pk INTEGER PRIMARY KEY, id INTEGER, name TEXT, email BLOB);
            INSERT INTO customer_new SELECT id, 3 - id, name, email FROM customer;
            DROP TABLE customer; ALTER TABLE customer_new RENAME TO customer;
            """)
        var pairs: [(Int64, String)] = []
        let reads: [() throws -> [(Int64, String)]] = [{ try app.read { try $0.fetchAll(Customer.self, sql: "SELECT * FROM customer ORDER BY id") }.map { ($0.id, $0.email) } },
                     { try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT * FROM customer ORDER BY id") }.map { ($0.id, $0.email) } },
                     { try app.read { try $0.fetchAll(sql: "SELECT * FROM customer ORDER BY id", opening: DeclaredCustomer.sealedProperties) }
                         .map { (try $0.decode(Int64.self, column: "id"), try $0.decode(String.self, column: "email")) } }]
        for read in reads {
            do { pairs += try read() } catch {}
        }
        #expect(pairs.allSatisfy { Self.emails[$0.0] == $0.1 }, "a record holds another row's e-mail: \(pairs)")
        let refused = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT * FROM customer ORDER BY id") } }
        #expect(refused?.code == .sealedValue, "\(String(describing: refused))")
        #expect(refused.map { !$0.message.contains("@example.com") } ?? true)
    }

    /// A declared sealed name the result holds twice is refused on every
    /// read path: a `Decodable`, a `TableRecord`, a cursor, rows and a
    /// single value opened by name, a lookup by blind index.
    @Test func aDeclaredNameHeldTwiceIsRefusedOnEveryPath() throws {
        let (_, app) = try database("twice.db")
        let twice = "SELECT customer.*, customer.email FROM customer ORDER BY id"
        struct Record: TableRecord {
            var id: Int64
            var email: String
            static let databaseTableName = "customer"
            static let databaseColumnNames = ["id", "email"]
            static let databaseSealedColumns = ["email"]
            init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
            func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
        }
        let reads: [(String, () throws -> Void)] = [
            ("Decodable", { _ = try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: twice) } }),
            ("TableRecord", { _ = try app.read { try $0.fetchAll(Record.self, sql: twice) } }),
            ("cursor", { _ = try app.read { db in try db.makeCursor(sql: twice).next(DeclaredCustomer.self) } }),
            ("rows", { _ = try app.read { try $0.fetchAll(sql: twice, opening: DeclaredCustomer.sealedProperties) } }),
            ("value", { _ = try app.read { try $0.fetchOne(String.self, sql: twice, opening: SealedProperty("email", of: "customer")) } }),
        ]
        for (path, read) in reads {
            let error = #expect(throws: StrongroomError.self, "\(path)") { try read() }
            #expect(error?.code == .misuse && error?.message.contains("columns named email") == true, "\(path): \(String(describing: error))")
        }
    }

    /// What declares nothing gets the envelope's bytes, and a `String` read
    /// of them fails closed with a typed error that says why; a `Data` read
    /// gets the envelope as stored.
    @Test func anUndeclaredReadGetsTheEnvelopeNotText() throws {
        let (_, app) = try database("undeclared.db")
        let error = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(Customer.self, sql: "SELECT * FROM customer") } }
        #expect(error?.code == .conversion && error?.message.contains("sealed value") == true, "\(String(describing: error))")
        #expect(throws: StrongroomError.self) { try app.read { try $0.fetchOne(String.self, sql: "SELECT email FROM customer") } }
        let stored = try app.read { try $0.fetchAll(Data.self, sql: "SELECT email FROM customer ORDER BY id") }
        #expect(stored.count == 2 && stored.allSatisfy { DatabaseValue.blob(Array($0)).looksLikeEnvelope })
        // Lossless conversion takes no envelope for text either.
        var lossless = configuration()
        lossless.valueConversion = .lossless
        let lenient = try DatabaseQueue(path: f.dir.file("undeclared.db"), configuration: lossless)
        #expect(throws: StrongroomError.self) { try lenient.read { try $0.fetchOne(String.self, sql: "SELECT email FROM customer") } }
    }

    /// A wrong declaration fails on the first honest row: the wrong table,
    /// the wrong key property, a column the connection does not seal, a row
    /// key the query does not select, a connection without the keyring.
    @Test func aWrongDeclarationFailsOnHonestRows() throws {
        let (path, app) = try database("wrong.db")
        let sql = "SELECT audit.id, customer_id, action, name, customer.email FROM audit JOIN customer ON customer.id = audit.customer_id ORDER BY audit.id"
        struct WrongKey: Codable, SealedRecord {
            var id: Int64; var email: String
            static let sealedProperties = [SealedProperty("email", of: "customer")]   // audit's id, not the customer's
        }
        struct WrongTable: Codable, SealedRecord {
            var id: Int64; var email: String
            static let sealedProperties = [SealedProperty("email", of: "audit", rowKey: ["customer_id"])]
        }
        let wrongKey = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(WrongKey.self, sql: sql) } }
        #expect(wrongKey?.code == .sealedValue, "\(String(describing: wrongKey))")
        let wrongTable = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(WrongTable.self, sql: sql) } }
        #expect(wrongTable?.code == .misuse && wrongTable?.message.contains("does not seal") == true, "\(String(describing: wrongTable))")
        let noKey = #expect(throws: StrongroomError.self) { try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT name, email FROM customer") } }
        #expect(noKey?.code == .misuse && noKey?.message.contains("without id") == true, "\(String(describing: noKey))")
        let bare = try DatabaseQueue(path: path, configuration: Configuration(key: f.databaseKey))
        let noKeyring = #expect(throws: StrongroomError.self) { try bare.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT * FROM customer") } }
        #expect(noKeyring?.code == .misuse && noKeyring?.message.contains("configuration.seal") == true, "\(String(describing: noKeyring))")
        // A connection declaring no row key for a row-bound column does not open.
        var keyless = Configuration(key: f.databaseKey)
        keyless.seal(Self.columns, keyring: f.keyring)
        let error = #expect(throws: StrongroomError.self) { try DatabaseQueue(path: path, configuration: keyless) }
        #expect(error?.code == .misuse && error?.message.contains("rowKeys") == true, "\(String(describing: error))")
    }

    /// A `Row` decodes a record with sealed properties only when it was
    /// fetched opening exactly those; opened, it reads them.
    @Test func aRowDecodesARecordOnlyAsItWasOpened() throws {
        let (_, app) = try database("row.db")
        let sql = "SELECT * FROM customer ORDER BY id"
        let opened = try app.read { try $0.fetchAll(sql: sql, opening: DeclaredCustomer.sealedProperties) }
        #expect(try opened.map { try $0.decode(DeclaredCustomer.self).email } == ["ada@example.com", "bob@example.com"])
        let stored = try app.read { try $0.fetchAll(sql: sql) }
        let error = #expect(throws: StrongroomError.self) { try stored.map { try $0.decode(DeclaredCustomer.self) } }
        #expect(error?.code == .misuse && error?.message.contains("DeclaredCustomer") == true, "\(String(describing: error))")
    }
}

/// The review of item 1 (helper-3): each finding reproduced, then fixed.
extension DeclaredBindingTests {
    /// A row key declared in another ASCII case than the property that
    /// holds it: honest reads find one column both ways; the adversary adds
    /// a column of the declared spelling to the joined table, and the value
    /// opened under its planted key while the record held another.
    @Test func aRowKeyNameHeldTwiceIsRefused() throws {
        let (path, app) = try database("key-twice.db")
        struct Line: Codable, SealedRecord {
            var customer_id: Int64
            var action: String
            var email: String
            static let sealedProperties = [SealedProperty("email", of: "customer", rowKey: ["Customer_ID"])]
        }
        let sql = "SELECT * FROM audit JOIN customer ON customer.id = audit.customer_id ORDER BY audit.id"
        #expect(try app.read { try $0.fetchAll(Line.self, sql: sql) }.map(\.email) == ["ada@example.com", "bob@example.com"])
        try f.bare(path).execute(sql: """
            ALTER TABLE customer ADD COLUMN Customer_ID INTEGER; UPDATE customer SET Customer_ID = id;
            UPDATE customer SET id = -id; UPDATE customer SET id = 3 + id;
            """)
        var lines: [Line] = []
        let error = #expect(throws: StrongroomError.self) { lines = try app.read { try $0.fetchAll(Line.self, sql: sql) } }
        #expect(lines.allSatisfy { Self.emails[$0.customer_id] == $0.email }, "\(lines)")
        #expect(error?.code == .misuse && error?.message.contains("two values") == true, "\(String(describing: error))")
    }

    /// A `TableRecord` that is also `Decodable`, whose coding key (`apiKey`)
    /// is not its sealed column's name (`api_key`): read as a `Decodable`
    /// (generic code, a cursor), it decoded `apiKey` from whatever column of
    /// that name the result held, never opened: the adversary's.
    struct Vault: TableRecord, Decodable, Equatable {
        var id: Int64
        var apiKey: String?
        static let databaseTableName = "vault"
        static let databaseColumnNames = ["id", "api_key"]
        static let databaseSealedColumns = ["api_key"]
        static let databaseRowKey = ["id"]
        init(id: Int64, apiKey: String?) { self.id = id; self.apiKey = apiKey }
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
    }

    static func decodeAll<T: Decodable>(_: T.Type, _ db: Connection, sql: String) throws -> [T] { try db.fetchAll(T.self, sql: sql) }
    static func firstDecoded<T: Decodable>(_: T.Type, _ db: Connection, sql: String) throws -> T? { try db.makeCursor(sql: sql).next(T.self) }

    @Test func aTableRecordReadAsDecodableTakesNoValueUnderItsCodingKey() throws {
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("api_key", in: "vault")], keyring: f.keyring, rowKeys: ["vault": ["id"]])
        let path = f.dir.file("vault-coding-key.db")
        let app = try DatabaseQueue(path: path, configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE vault(id INTEGER PRIMARY KEY, api_key BLOB)")
            try db.insert(Vault(id: 1, apiKey: "real"))
        }
        try f.bare(path).execute(sql: "ALTER TABLE vault ADD COLUMN apiKey TEXT; UPDATE vault SET apiKey = 'PLANTED'")
        let sql = "SELECT * FROM vault"
        #expect(try app.read { try Self.decodeAll(Vault.self, $0, sql: sql) } == [Vault(id: 1, apiKey: "real")])
        #expect(try app.read { try Self.firstDecoded(Vault.self, $0, sql: sql) } == Vault(id: 1, apiKey: "real"))
        // A Row decodes by coding key: refused for such a record.
        let error = #expect(throws: StrongroomError.self) {
            try app.read { try $0.fetchAll(sql: sql, opening: [SealedProperty("api_key", of: "vault", rowKey: ["id"])]).map { try $0.decode(Vault.self) } }
        }
        #expect(error?.code == .misuse && error?.message.contains("Vault") == true, "\(String(describing: error))")
    }

    /// Two coding keys that differ only in Unicode normalization are two
    /// columns to SQLite: the statement's key cache took them for one, and
    /// a record declaring the NFD column sealed was handed the plain NFC
    /// column the first type had read.
    @Test func aCodingKeyInAnotherNormalizationFindsItsOwnColumn() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized(nfd, in: "t")], keyring: f.keyring, rowKeys: ["t": ["id"]])
        let db = try Connection(path: f.dir.file("nfd-keys.db"), configuration: config)
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, \"\(nfc)\" TEXT, \"\(nfd)\" BLOB)")
        struct Secret: Encodable {
            var id: Int64; var note: String
            enum CodingKeys: String, CodingKey { case id; case note = "cafe\u{301}" }
        }
        try db.insert(Secret(id: 1, note: "top secret"), into: "t")
        try db.execute(sql: "UPDATE t SET \"\(nfc)\" = 'PLANTED'")
        struct PlainNFC: Decodable {
            var id: Int64; var note: String?
            enum CodingKeys: String, CodingKey { case id; case note = "caf\u{E9}" }
        }
        struct SealedNFD: Decodable, SealedRecord {
            var id: Int64; var note: String?
            enum CodingKeys: String, CodingKey { case id; case note = "cafe\u{301}" }
            static let sealedProperties = [SealedProperty("cafe\u{301}", of: "t")]
        }
        let select = try db.cachedStatement(sql: "SELECT * FROM t")
        #expect(try select.fetchAll(PlainNFC.self).map(\.note) == ["PLANTED"])
        #expect(try select.fetchAll(SealedNFD.self).map(\.note) == ["top secret"])
    }
}

extension DeclaredBindingTests {
    /// Two declarations whose names differ only in Unicode normalization
    /// name two columns: a statement's plan for one is not the other's, and
    /// a row opened under one does not decode a record declaring the other.
    @Test func declarationsInTwoNormalizationsAreTwoBindings() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        #expect(SealedProperty(nfc, of: "t") != SealedProperty(nfd, of: "t"))
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized(nfd, in: "t")], keyring: f.keyring, rowKeys: ["t": ["id"]])
        let db = try Connection(path: f.dir.file("nfd-declarations.db"), configuration: config)
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, \"\(nfc)\" TEXT, \"\(nfd)\" BLOB)")
        struct Secret: Encodable {
            var id: Int64; var note: String
            enum CodingKeys: String, CodingKey { case id; case note = "cafe\u{301}" }
        }
        try db.insert(Secret(id: 1, note: "top secret"), into: "t")
        try db.execute(sql: "UPDATE t SET \"\(nfc)\" = 'PLANTED'")
        let sql = "SELECT * FROM t"
        #expect(try db.fetchAll(sql: sql, opening: [SealedProperty(nfd, of: "t")]).map { try $0.decode(String.self, column: nfd) } == ["top secret"])
        // Declared NFC (a column the connection does not seal): refused, not the NFD plan.
        #expect(throws: StrongroomError.self) { try db.fetchAll(sql: sql, opening: [SealedProperty(nfc, of: "t")]) }
        struct NFCRecord: Decodable, SealedRecord {
            var id: Int64; var note: String?
            enum CodingKeys: String, CodingKey { case id; case note = "caf\u{E9}" }
            static let sealedProperties = [SealedProperty("caf\u{E9}", of: "t", column: "cafe\u{301}")]
        }
        let opened = try db.fetchAll(sql: sql, opening: [SealedProperty(nfd, of: "t")])
        let error = #expect(throws: StrongroomError.self) { try opened.map { try $0.decode(NFCRecord.self) } }
        #expect(error?.code == .misuse, "\(String(describing: error))")
    }
}

/// The second review of item 1 (helper-4): the fixes above reproduced
/// further, then fixed.
extension DeclaredBindingTests {
    /// Copies of a row key name compared as Swift strings: an NFC and an
    /// NFD key value (two keys to SQLite, and to the envelope) passed as one.
    @Test func rowKeyCopiesAreComparedByteForByte() throws {
        let nfc = "\u{E9}", nfd = "e\u{301}"
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("email", in: "customer")], keyring: f.keyring, rowKeys: ["customer": ["id"]])
        let path = f.dir.file("key-values.db")
        let app = try DatabaseQueue(path: path, configuration: config)
        struct Text: Codable { var id: String; var email: String }
        try app.write { db in
            try db.execute(sql: "CREATE TABLE customer(id TEXT PRIMARY KEY, email BLOB); CREATE TABLE audit(id INTEGER PRIMARY KEY, customer_id TEXT, action TEXT)")
            try db.insert(Text(id: nfc, email: "ada@example.com"), into: "customer")
            try db.insert(Text(id: nfd, email: "bob@example.com"), into: "customer")
            try db.execute(sql: "INSERT INTO audit(customer_id, action) VALUES (?, 'a'), (?, 'b')", arguments: [nfc, nfd])
        }
        struct Line: Codable, SealedRecord {
            var customer_id: String; var action: String; var email: String
            static let sealedProperties = [SealedProperty("email", of: "customer", rowKey: ["Customer_ID"])]
        }
        let sql = "SELECT * FROM audit JOIN customer ON customer.id = audit.customer_id ORDER BY audit.id"
        // Not a Dictionary: Swift takes the two spellings for one key.
        let owners: [(key: String, value: String)] = [(nfc, "ada@example.com"), (nfd, "bob@example.com")]
        #expect(try app.read { try $0.fetchAll(Line.self, sql: sql) }.map(\.email) == ["ada@example.com", "bob@example.com"])
        try f.bare(path).execute(sql: """
            ALTER TABLE customer ADD COLUMN Customer_ID TEXT; UPDATE customer SET Customer_ID = id;
            UPDATE customer SET id = 'tmp' WHERE id = '\(nfc)'; UPDATE customer SET id = '\(nfc)' WHERE id = '\(nfd)'; UPDATE customer SET id = '\(nfd)' WHERE id = 'tmp';
            """)
        var lines: [Line] = []
        let error = #expect(throws: StrongroomError.self) { lines = try app.read { try $0.fetchAll(Line.self, sql: sql) } }
        #expect(lines.allSatisfy { line in owners.first { $0.key.utf8.elementsEqual(line.customer_id.utf8) }?.value == line.email }, "\(lines)")
        #expect(error?.code == .misuse && error?.message.contains("two values") == true, "\(String(describing: error))")
    }

    /// A `TableRecord` that is also a `SealedRecord` names columns in its
    /// declaration (its `init(row:)` reads by column), while a `Row`
    /// decodes it by coding key: refused there too.
    @Test func aRowRefusesEveryTableRecordWithSealedColumns() throws {
        struct Vault2: TableRecord, SealedRecord, Decodable {
            var id: Int64
            var apiKey: String?
            static let databaseTableName = "vault"
            static let databaseColumnNames = ["id", "api_key"]
            static let databaseSealedColumns = ["api_key"]
            static let sealedProperties = [SealedProperty("api_key", of: "vault", rowKey: ["id"])]
            init(id: Int64, apiKey: String?) { self.id = id; self.apiKey = apiKey }
            init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); apiKey = try row.decode(at: 1) }
            func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(apiKey, at: 1) }
        }
        var config = Configuration(key: f.databaseKey)
        config.seal([.randomized("api_key", in: "vault")], keyring: f.keyring, rowKeys: ["vault": ["id"]])
        let path = f.dir.file("vault2.db")
        let app = try DatabaseQueue(path: path, configuration: config)
        try app.write { db in
            try db.execute(sql: "CREATE TABLE vault(id INTEGER PRIMARY KEY, api_key BLOB)")
            try db.insert(Vault2(id: 1, apiKey: "real"))
        }
        try f.bare(path).execute(sql: "ALTER TABLE vault ADD COLUMN apiKey TEXT; UPDATE vault SET apiKey = 'PLANTED'")
        var got: [String?] = []
        let error = #expect(throws: StrongroomError.self) {
            got = try app.read { try $0.fetchAll(sql: "SELECT * FROM vault", opening: Vault2.sealedProperties).map { try $0.decode(Vault2.self).apiKey } }
        }
        #expect(!got.contains("PLANTED"))
        #expect(error?.code == .misuse, "\(String(describing: error))")
        #expect(try app.read { try $0.fetchAll(Vault2.self, sql: "SELECT * FROM vault") }.map(\.apiKey) == ["real"])
    }

    /// An honest join whose two tables each have an `id` (byte for byte
    /// the declared key's name): the record and the plan find the same
    /// column, and the rows read whatever the other table's ids hold.
    @Test func anHonestJoinWithTwoIdsReads() throws {
        let (_, app) = try database("two-ids.db")
        struct Card: TableRecord {
            var id: Int64
            var email: String
            static let databaseTableName = "customer"
            static let databaseColumnNames = ["id", "email"]
            static let databaseSealedColumns = ["email"]
            static let databaseRowKey = ["id"]
            init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
            func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
        }
        let sql = "SELECT * FROM customer JOIN audit ON audit.customer_id = customer.id ORDER BY customer.id"
        #expect(try app.read { try $0.fetchAll(Card.self, sql: sql) }.map(\.email) == ["ada@example.com", "bob@example.com"])
        #expect(try app.read { try $0.fetchAll(DeclaredCustomer.self, sql: "SELECT customer.*, audit.* FROM customer JOIN audit ON audit.customer_id = customer.id ORDER BY customer.id") }.map(\.email)
                == ["ada@example.com", "bob@example.com"])
    }
}
