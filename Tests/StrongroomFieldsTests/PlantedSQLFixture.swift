import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// What the planted-SQL suites share: the application, which holds the
/// field keyring, and the adversary, who holds only the database key.
final class PlantedSQLFixture {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int64?
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    static let columns: [SealedColumn] = [.randomized("email", in: "customer"), .deterministic("country", in: "customer")]

    /// The application's queue: it holds the keyring.
    func app(_ path: String) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// The application's connection.
    func appConnection(_ path: String) throws -> Connection {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        return try Connection(path: path, configuration: config)
    }

    /// A tool's queue (the CLI's, the migration runner's): the keyring and
    /// the sealed-column SQL functions, which the operator's SQL calls. An
    /// app connection carries no key-bearing function (SQL planted to call
    /// one there names no function at all); on a tool's connection, SQLite's
    /// `SQLITE_DIRECTONLY` (3.30 and later) or the connection's authorizer
    /// and schema scan (SQLite 3.15.2) refuse planted calls.
    func tool(_ path: String) throws -> DatabaseQueue {
        try DatabaseQueue(path: path, configuration: toolConfiguration())
    }

    /// A tool's connection.
    func toolConnection(_ path: String) throws -> Connection {
        try Connection(path: path, configuration: toolConfiguration())
    }

    func toolConfiguration() -> Configuration {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        config.addFieldFunctionsForTools(keyring: keyring, columns: Self.columns)
        return config
    }

    /// SQLite 3.46.1 (SQLCipher 4.6.1) refuses to load schema rows that SQLite
    /// 3.15.2 (SQLCipher 3.4.1) loads: a TEMP object stored in the main schema
    /// (a second sqlite_master), a row whose type or name disagrees with its
    /// SQL. There such a plant leaves a file no connection opens, so the
    /// attack ends before any SQL runs (checked on these two versions).
    static let sqliteRefusesPlantedSchemaRows = SQLCipherLibrary.sqliteVersionNumber >= 3_046_000

    /// Where SQLite refuses the planted row: the application's open fails as
    /// a malformed schema, saying who could have put it there.
    func expectTheAppCannotOpen(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) { try self.appConnection(path) }
        #expect(error?.code == .corrupt && error?.message.contains("malformed database schema") == true
                && error?.message.contains("writable_schema") == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
    }

    /// A connection with the database key alone.
    func bare(_ path: String) throws -> Connection {
        try Connection(path: path, configuration: Configuration(key: databaseKey))
    }

    /// The adversary's connection: the database key, and stand-ins of the
    /// field functions of its own (so that SQLite accepts what it plants
    /// wherever SQLite checks names when the schema is written).
    func adversary(_ path: String) throws -> Connection {
        let db = try bare(path)
        for name in ["strongroom_open", "strongroom_seal", "strongroom_blind_index"] {
            try db.add(function: DatabaseFunction(name, pure: true) { _ in .null })
        }
        return db
    }

    /// A database with two customers whose e-mails are sealed, and the
    /// registry (its name starts like strongroom_seal, and is no mention of
    /// it); returns its path. `encoding`: the database's text encoding
    /// (`PRAGMA encoding`), fixed by its first table.
    func database(_ name: String, encoding: String = "UTF-8") throws -> String {
        let path = dir.file(name)
        let table = "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB)"
        if encoding != "UTF-8" {
            try bare(path).execute(sql: "PRAGMA encoding = '\(encoding)'; \(table);")
        }
        let queue = try app(path)
        try queue.write { db in
            if encoding == "UTF-8" { try db.execute(sql: table) }
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try db.insert(Customer(id: 1, email: "ada@example.com"), into: "customer")
            try db.insert(Customer(id: 2, email: "bob@example.com"), into: "customer")
        }
        return path
    }

    /// A view stands in the table's place: whatever the application reads
    /// through `customer` is either refused or the values sealed in those
    /// rows, never one the adversary chose or another row's (a value opens
    /// only under the binding the read names, with the row key it reads);
    /// which leaves SQL that names the table elsewhere (`retire`) to be
    /// checked.
    func expectTheAppsReadsThroughTheStandInForgeNothing(_ queue: DatabaseQueue, sourceLocation: SourceLocation = #_sourceLocation) {
        let genuine: [Int64: String] = [1: "ada@example.com", 2: "bob@example.com"]
        let reads: [(String, () throws -> [Customer])] = [
            ("strongroom_open", {
                try queue.read { db in
                    try db.fetchAll(sql: "SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer ORDER BY id")
                        .map { Customer(id: try $0.decode(Int64?.self, column: "id"), email: try $0.decode(String.self, column: "email")) }
                }
            }),
            ("record", { try queue.read { db in try db.fetchAll(Customer.self, sql: "SELECT * FROM customer ORDER BY id") } }),
        ]
        for (name, read) in reads {
            guard let customers = try? read() else { continue }
            for customer in customers {
                #expect(customer.id.flatMap { genuine[$0] } == customer.email, "\(name): a forged or moved value", sourceLocation: sourceLocation)
            }
        }
    }

    /// Whatever a read hands the application holds no planted text (the
    /// adversary's is marked PLANTED) and, by `genuine`, no value of another
    /// row: the read fails (its error holding no planted text either), or
    /// what it returns is genuine. Under declared bindings a value opens
    /// only when it authenticates under the read's own declaration, with
    /// the row key the record holds: the planted-schema attacks pass by
    /// construction, and these checks keep them as regressions.
    ///
    /// `declaresNothing`: the read declares nothing sealed, so what it gets
    /// is the database's plain values (planted text included, as any plain
    /// column can hold); `genuine` then checks that no sealed value's
    /// plaintext is among them.
    static func expectNothingForged<T>(sourceLocation: SourceLocation = #_sourceLocation, declaresNothing: Bool = false, genuine: (T) -> Bool = { _ in true },
                                       _ read: () throws -> T) {
        do {
            let got = try read()
            if !declaresNothing {
                #expect(!"\(got)".contains("PLANTED"), "the application got planted text: \(got)", sourceLocation: sourceLocation)
            }
            #expect(genuine(got), "the application got a forged or moved value: \(got)", sourceLocation: sourceLocation)
        } catch {
            #expect(!"\(error)".contains("PLANTED"), "\(error)", sourceLocation: sourceLocation)
        }
    }

    /// Retiring the key every e-mail is sealed under is refused; returns the error.
    @discardableResult
    func expectRetireRefused(_ queue: DatabaseQueue, sourceLocation: SourceLocation = #_sourceLocation) -> FieldError? {
        let active = keyring.activeKeyID
        let added = keyring.addingKey()
        return #expect(throws: FieldError.self, "retire deleted the key that every e-mail is sealed under", sourceLocation: sourceLocation) {
            let ring = try added.keyring.activating(added.keyID)
            _ = try queue.write { db in try FieldRotation.retire(active, from: ring, in: db) }
        }
    }

    // MARK: The SQLite 3.15 race, and a table with a name beside the e-mail (issue 36)

    /// Stores `planted` as `name`'s text with a schema version change, runs
    /// `load` (the application's connection loads it), then stores `clean`
    /// again with none: the stored schema reads clean, while the connection
    /// runs what it loaded.
    func race(_ path: String, name: String, planted: String, clean: String, load: () throws -> Void) throws {
        func quoted(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "''") }
        let adversary = try self.adversary(path)
        let version = try #require(try adversary.fetchOne(Int.self, sql: "PRAGMA schema_version"))
        try adversary.execute(sql: "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = '\(quoted(planted))' WHERE name = '\(name)'; PRAGMA writable_schema = OFF; PRAGMA schema_version = \(version + 1);")
        adversary.close()
        try load()
        let restorer = try self.adversary(path)
        try restorer.execute(sql: "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = '\(quoted(clean))' WHERE name = '\(name)'; PRAGMA writable_schema = OFF;")
        #expect(try restorer.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name]) == clean)
        #expect(try restorer.fetchOne(Int.self, sql: "PRAGMA schema_version") == version + 1)
        restorer.close()
    }

    static let namedTable = "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, email BLOB, country BLOB)"
    static let secret = "ada.secret@example.com"

    struct NamedCustomer: Codable, SealedRecord {
        var id: Int64?
        var name: String
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    /// The application's queue (`views`, once declared as the ones sealed
    /// columns may be read through, are no longer part of the configuration:
    /// a read opens what its record declares, whatever it reads through).
    func app(_ path: String, views: [String], keyring: FieldKeyring? = nil, rowKeys: [String: [String]] = ["customer": ["id"]]) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring ?? self.keyring, rowKeys: rowKeys)
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// Ada (a name, her e-mail sealed) and the application's own `views`;
    /// returns the path.
    func namedDatabase(_ name: String, views: [String]) throws -> String {
        let path = dir.file(name)
        try app(path, views: views).write { db in
            try db.execute(sql: Self.namedTable)
            for view in views { try db.execute(sql: view) }
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try db.insert(NamedCustomer(id: 1, name: "Ada Lovelace", email: Self.secret), into: "customer")
        }
        return path
    }
}
