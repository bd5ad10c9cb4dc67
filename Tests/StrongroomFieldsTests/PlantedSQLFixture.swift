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

    struct Customer: Codable, Equatable {
        var id: Int64?
        var email: String
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
    /// it); returns its path.
    func database(_ name: String) throws -> String {
        let path = dir.file(name)
        let queue = try app(path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country BLOB)")
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            try db.insert(Customer(id: 1, email: "ada@example.com"), into: "customer")
            try db.insert(Customer(id: 2, email: "bob@example.com"), into: "customer")
        }
        return path
    }

    /// A view stands in the table's place: the application's reads through
    /// `customer` are refused (since the third review of issue 39, a read
    /// of a sealed table's name finds the table or reads nothing), which
    /// leaves SQL that names the table elsewhere (`retire`) to be checked.
    func expectTheAppsReadsThroughTheStandInRefused(_ queue: DatabaseQueue, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) {
            try queue.read { db in
                try db.fetchAll(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer ORDER BY id")
            }
        }
        #expect(error?.code == .untrustedSchema && error?.message.contains("\"customer\"") == true, "\(String(describing: error))", sourceLocation: sourceLocation)
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

    struct NamedCustomer: Codable {
        var id: Int64?
        var name: String
        var email: String
    }

    /// The application's queue, with `views` declared as the ones sealed
    /// columns may be read through.
    func app(_ path: String, views: [String], keyring: FieldKeyring? = nil, rowKeys: [String: [String]] = [:]) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring ?? self.keyring, views: views, rowKeys: rowKeys)
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
