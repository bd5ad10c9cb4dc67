import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 50, item 2: app connections carry no key-bearing SQL function.
/// Sealing, blind-index probes and deterministic lookups are computed in
/// Swift and bound: `insert`, `update` of a record, and lookups by a
/// declared index or deterministic column, under every key id the
/// keyring holds. The SQL functions stay on the tools' connections (the
/// CLI's, the migration runner's, for the run only).
@Suite("No key-bearing SQL function on app connections")
struct SealedWritePathTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"),
                                          .randomized("phone", in: "customer"),
                                          .deterministic("country", in: "customer")]
    static let indexes = [BlindIndex("email_folded", on: "email", in: "customer", transformations: [.trimmed, .normalizedCaseFolded], unique: true)]
    static let schema = """
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email BLOB, email_index BLOB, email_folded BLOB,
                              phone BLOB, country BLOB);
        CREATE UNIQUE INDEX customer_email_folded ON customer(email_folded);
        """

    struct Customer: TableRecord, Equatable {
        var id: Int64
        var name: String
        var email: String
        var phone: String?
        var country: String?
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "name", "email", "phone", "country"]
        static let databaseSealedColumns = ["email", "phone", "country"]
        static let databaseRowKey = ["id"]
        init(id: Int64, name: String, email: String, phone: String?, country: String?) {
            self.id = id; self.name = name; self.email = email; self.phone = phone; self.country = country
        }
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0); name = try row.decode(at: 1); email = try row.decode(at: 2)
            phone = try row.decode(at: 3); country = try row.decode(at: 4)
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0); try binder.bind(name, at: 1); try binder.bind(email, at: 2)
            try binder.bind(phone, at: 3); try binder.bind(country, at: 4)
        }
    }

    /// The same row as a plain `Codable`, for `update(_:in:)`.
    struct Contact: Codable, SealedRecord {
        var id: Int64
        var phone: String?
        static let sealedProperties = [SealedProperty("phone", of: "customer")]
    }

    func configuration(_ keyring: FieldKeyring? = nil) -> Configuration {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, indexes: Self.indexes, keyring: keyring ?? self.keyring, rowKeys: ["customer": ["id"]])
        return config
    }

    static let ada = Customer(id: 1, name: "Ada", email: "ada@example.com", phone: "+44 1", country: "UK")
    static let bob = Customer(id: 2, name: "Bob", email: "bob@example.com", phone: nil, country: "FR")

    func database(_ name: String) throws -> (path: String, queue: DatabaseQueue) {
        let path = dir.file(name)
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            try db.insert(Self.ada)
            try db.insert(Self.bob)
        }
        return (path, queue)
    }

    // MARK: No key-bearing function

    /// The key-bearing functions are not there on a connection that seals:
    /// SQL the app (or a view, trigger or race-loaded schema the
    /// database-key holder planted) runs cannot call them.
    @Test(arguments: ["SELECT strongroom_seal('x', 'customer', 'phone', 'randomized', 1)",
                      "SELECT strongroom_open(phone, 'customer', 'phone', id) FROM customer",
                      "SELECT strongroom_blind_index('ada@example.com', 'customer', 'email')",
                      "SELECT strongroom_index('customer', 'email_folded', 'ada@example.com')"])
    func anAppConnectionHasNoKeyBearingFunction(sql: String) throws {
        let (_, queue) = try database("functions.db")
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in _ = try db.fetchAll(sql: sql) } }
        #expect(error?.message.contains("no such function") == true, "\(String(describing: error))")
        // The keyless ones stay: an envelope's key id, a transformation.
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT strongroom_key_id(phone) FROM customer WHERE id = 1") } == Int(keyring.activeKeyID))
    }

    /// A view whose text calls strongroom_open (planted by whoever holds
    /// the database key, to be run by the app's own `SELECT`): on an app
    /// connection it names no function at all.
    @Test func aPlantedViewCallingOpenFindsNoFunction() throws {
        let (path, queue) = try database("view.db")
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try bare.add(function: DatabaseFunction("strongroom_open", pure: true) { _ in .null })
        try bare.execute(sql: "CREATE VIEW leak AS SELECT id, strongroom_open(phone, 'customer', 'phone', id) AS phone FROM customer")
        bare.close()
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in _ = try db.fetchAll(sql: "SELECT * FROM leak") } }
        #expect(error?.message.contains("no such function: strongroom_open") == true, "\(String(describing: error))")
    }

    // MARK: update

    /// `update` seals each declared column bound to the row's key, and
    /// recomputes the blind indexes: the old e-mail is no longer found, the
    /// new one is, and the stored values are envelopes of this row.
    @Test func updateSealsBoundToTheRowAndRecomputesTheIndexes() throws {
        let (path, queue) = try database("update.db")
        var ada = Self.ada
        ada.email = "Ada.Lovelace@Example.com"
        ada.phone = "+44 2"
        ada.country = "FR"
        try queue.write { db in try db.update(ada) }
        let db = try Connection(path: path, configuration: configuration())
        #expect(try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 1") == ada)
        #expect(try db.fetchOne(Customer.self, where: .index("email_index", equals: "ada@example.com")) == nil)
        #expect(try db.fetchOne(Customer.self, where: .index("email_index", equals: "Ada.Lovelace@Example.com")) == ada)
        #expect(try db.fetchOne(Customer.self, where: .index("email_folded", equals: " ada.lovelace@example.COM")) == ada)
        #expect(try db.fetchAll(Customer.self, where: .column("country", equals: "FR")).map(\.id) == [1, 2])
        #expect(try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 2") == Self.bob)
        db.close()
        // What the file holds: envelopes, bound to row 1 (moved to row 2, Ada's phone does not open).
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        let stored = try bare.fetchOne(sql: "SELECT email, phone FROM customer WHERE id = 1")!
        for column in ["email", "phone"] {
            let value: DatabaseValue = try stored.decode(DatabaseValue.self, column: column)
            guard case .blob(let bytes) = value else { Issue.record("\(column) is stored as \(value)"); continue }
            #expect(!String(decoding: bytes, as: UTF8.self).contains("Lovelace") && !String(decoding: bytes, as: UTF8.self).contains("+44"))
        }
        try bare.execute(sql: "UPDATE customer SET phone = (SELECT phone FROM customer WHERE id = 1) WHERE id = 2")
        bare.close()
        #expect(throws: (any Error).self) { try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 2") } }
    }

    /// `update(_:in:)`: a plain `Encodable` updates the columns it encodes,
    /// in the row the table's declared row key names.
    @Test func updateOfAnEncodableSealsWhatItEncodes() throws {
        let (_, queue) = try database("encodable.db")
        try queue.write { db in try db.update(Contact(id: 2, phone: "+33 1"), in: "customer") }
        let bob = try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 2") }
        #expect(bob?.phone == "+33 1" && bob?.email == Self.bob.email && bob?.name == "Bob")
    }

    /// A row that does not exist: `notFound`, nothing written.
    @Test func updateOfAMissingRowIsNotFound() throws {
        let (_, queue) = try database("missing.db")
        var ghost = Self.ada
        ghost.id = 99
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(ghost) } }
        #expect(error?.code == .notFound && error?.message.contains("99") == true, "\(String(describing: error))")
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") } == 2)
    }

    /// A row key the WHERE would match only after SQLite converted it (text
    /// '1' for the INTEGER key 1): the value would be bound to text, and
    /// not open. Refused before anything is written.
    @Test func updateWithAKeyOfAnotherTypeIsRefused() throws {
        let (_, queue) = try database("key-type.db")
        struct TextKeyed: Encodable { var id: String; var phone: String }
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(TextKeyed(id: "1", phone: "+1"), in: "customer") } }
        #expect(error?.code == .sealedValue || error?.code == .misuse, "\(String(describing: error))")
        #expect(try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 1") } == Self.ada)
    }

    /// An update that gives some columns of an index and not the others
    /// would compute the index over NULLs: refused, naming the index.
    @Test func anUpdateGivingPartOfACompoundIndexIsRefused() throws {
        let path = dir.file("compound.db")
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("last_name", in: "person")],
                    indexes: [BlindIndex("name_born", in: "person", bits: 12, parts: [.init("last_name", [.normalizedCaseFolded]), .init("born", [.year])])],
                    keyring: keyring, rowKeys: ["person": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: config)
        struct Person: Codable { var id: Int64; var last_name: String; var born: String }
        struct Rename: Codable { var id: Int64; var last_name: String }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, last_name BLOB, born TEXT, name_born BLOB)")
            try db.insert(Person(id: 1, last_name: "Lovelace", born: "1815-12-10"), into: "person")
        }
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(Rename(id: 1, last_name: "King"), in: "person") } }
        #expect(error?.message.contains("name_born") == true && error?.message.contains("born") == true, "\(String(describing: error))")
        try queue.write { db in try db.update(Person(id: 1, last_name: "King", born: "1815-12-10"), in: "person") }
        struct Found: Codable, SealedRecord {
            var id: Int64; var last_name: String
            static let sealedProperties = [SealedProperty("last_name", of: "person")]
        }
        #expect(try queue.read { db in try db.fetchAll(sql: "SELECT id, last_name FROM person", opening: Found.sealedProperties) }.count == 1)
    }

    /// During a rotation, a row still under the old key keeps its unique
    /// index value under that key: updating the row itself to the same
    /// e-mail is no duplicate; another row taking it is.
    @Test func aUniqueIndexExcludesTheRowItselfUnderOlderKeys() throws {
        let (path, _) = try database("unique.db")
        let added = keyring.addingKey()
        let rotated = try added.keyring.activating(added.keyID)
        let queue = try DatabaseQueue(path: path, configuration: configuration(rotated))
        var ada = Self.ada
        ada.name = "Ada King"
        try queue.write { db in try db.update(ada) }
        var bob = Self.bob
        bob.email = " ADA@example.com"
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(bob) } }
        #expect(error?.code == .uniqueConstraint, "\(String(describing: error))")
        #expect(try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 2") } == Self.bob)
        #expect(try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = 1") } == ada)
    }

    /// Lookups by a declared index and by a deterministic column find rows
    /// sealed under every key of the keyring, not yet rotated ones too.
    @Test func lookupsSearchUnderEveryKeyID() throws {
        let (path, _) = try database("lookup.db")
        let added = keyring.addingKey()
        let rotated = try added.keyring.activating(added.keyID)
        let queue = try DatabaseQueue(path: path, configuration: configuration(rotated))
        try queue.write { db in try db.insert(Customer(id: 3, name: "Cy", email: "cy@example.com", phone: nil, country: "UK")) }
        let db = try Connection(path: path, configuration: configuration(rotated))
        defer { db.close() }
        #expect(try db.fetchAll(Customer.self, where: .column("country", equals: "UK").ordered(by: "id")).map(\.id) == [1, 3])
        #expect(try db.fetchOne(Customer.self, where: .index("email_index", equals: "ada@example.com"))?.id == 1)
        #expect(try db.fetchOne(Customer.self, where: .index("email_index", equals: "cy@example.com"))?.id == 3)
        #expect(try db.fetchAll(Customer.self, where: .column("country", equals: "DE")).isEmpty)
        // Only a deterministic column is looked up by value.
        let error = #expect(throws: FieldError.self) { try db.fetchAll(Customer.self, where: .column("phone", equals: "+44 1")) }
        #expect(error?.message.contains("deterministic") == true, "\(String(describing: error))")
    }

    // MARK: Review findings (issue 50, item 2)

    /// A key SQLite's `=` matches without being the stored key (`'ADA'`
    /// for `'ada'` under COLLATE NOCASE, `1` for `1.0`): the value would be
    /// bound to bytes the row does not hold, and never open again. The
    /// update finds only the row that holds the key exactly.
    @Test func anUpdateFindsOnlyTheRowThatHoldsTheKeyExactly() throws {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("phone", in: "account")], keyring: keyring, rowKeys: ["account": ["code"]])
        let queue = try DatabaseQueue(path: dir.file("nocase.db"), configuration: config)
        struct Account: Codable, SealedRecord, Equatable {
            var code: String
            var phone: String
            static let sealedProperties = [SealedProperty("phone", of: "account")]
        }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE account(code TEXT NOT NULL PRIMARY KEY COLLATE NOCASE, phone BLOB)")
            try db.insert(Account(code: "ada", phone: "+44 1"), into: "account")
        }
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(Account(code: "ADA", phone: "+44 2"), in: "account") } }
        #expect(error?.code == .notFound, "\(String(describing: error))")
        #expect(try queue.read { db in try db.fetchAll(Account.self, sql: "SELECT * FROM account") } == [Account(code: "ada", phone: "+44 1")])
        try queue.write { db in try db.update(Account(code: "ada", phone: "+44 2"), in: "account") }
        #expect(try queue.read { db in try db.fetchAll(Account.self, sql: "SELECT * FROM account") } == [Account(code: "ada", phone: "+44 2")])
    }

    struct Lookup: Codable, SealedRecord, Equatable {
        var id: Int64
        var phone: String?
        var country: String?
        static let sealedProperties = [SealedProperty("phone", of: "customer"), SealedProperty("country", of: "customer")]
    }

    /// A plain `Codable`'s lookup stops at its limit, as a `TableRecord`'s
    /// does: a later candidate is neither opened nor able to fail the read.
    @Test func aCodableLookupStopsAtItsLimit() throws {
        let (path, queue) = try database("codable-limit.db")
        try queue.write { db in try db.insert(Customer(id: 3, name: "Cy", email: "cy@example.com", phone: "+44 3", country: "UK")) }
        // The adversary copies Ada's phone into Cy's row: it does not open there.
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try bare.execute(sql: "UPDATE customer SET phone = (SELECT phone FROM customer WHERE id = 1) WHERE id = 3")
        bare.close()
        let first = try queue.read { db in try db.fetchOne(Lookup.self, where: .column("country", equals: "UK").ordered(by: "id")) }
        #expect(first == Lookup(id: 1, phone: "+44 1", country: "UK"))
        #expect(throws: StrongroomError.self) { try queue.read { db in try db.fetchAll(Lookup.self, where: .column("country", equals: "UK")) } }
    }

    /// The index's sealed column is opened to drop false positives, never
    /// handed to a property the type does not declare sealed: that one gets
    /// the envelope, and decoding it as a `String` fails.
    @Test func aLookupOpensNoUndeclaredProperty() throws {
        let (_, queue) = try database("undeclared.db")
        struct Undeclared: Codable, SealedRecord {
            var id: Int64
            var email: String
            static let sealedProperties = [SealedProperty("phone", of: "customer")]
        }
        let error = #expect(throws: StrongroomError.self) {
            try queue.read { db in try db.fetchOne(Undeclared.self, from: "customer", where: .index("email_folded", equals: "ADA@example.com")) }
        }
        #expect(error?.code == .conversion, "\(String(describing: error))")
        struct Declared: Codable, SealedRecord {
            var id: Int64
            var email: String
            static let sealedProperties = [SealedProperty("email", of: "customer")]
        }
        #expect(try queue.read { db in try db.fetchOne(Declared.self, where: .index("email_folded", equals: "ADA@example.com")) }?.email == "ada@example.com")
    }

    /// The unique check under older keys counts a row whose key column is
    /// NULL (a TEXT PRIMARY KEY may hold one): `NOT (code = ?)` is NULL
    /// there, `NOT (code IS ?)` is true.
    @Test func theUniqueCheckUnderOlderKeysCountsARowWithANullKey() throws {
        let path = dir.file("null-key.db")
        let columns: [SealedColumn] = [.deterministic("country", in: "site")]
        let indexes = [BlindIndex("country_unique", on: "country", in: "site", unique: true)]
        func queue(_ keyring: FieldKeyring) throws -> DatabaseQueue {
            var config = Configuration(key: databaseKey)
            config.seal(columns, indexes: indexes, keyring: keyring)
            return try DatabaseQueue(path: path, configuration: config)
        }
        struct Site: Codable { var code: String?; var country: String }
        try queue(keyring).write { db in
            try db.execute(sql: "CREATE TABLE site(code TEXT PRIMARY KEY, country BLOB, country_unique BLOB UNIQUE)")
            try db.insert(Site(code: "a", country: "UK"), into: "site")
            try db.insert(Site(code: nil, country: "FR"), into: "site")
        }
        let added = keyring.addingKey()
        let rotated = try queue(try added.keyring.activating(added.keyID))
        let error = #expect(throws: StrongroomError.self) { try rotated.write { db in try db.update(Site(code: "a", country: "FR"), in: "site") } }
        #expect(error?.code == .uniqueConstraint, "\(String(describing: error))")
    }
}
