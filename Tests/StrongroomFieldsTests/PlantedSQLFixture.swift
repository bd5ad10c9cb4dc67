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
        config.seal(Self.columns, keyring: keyring)
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// The application's connection.
    func appConnection(_ path: String) throws -> Connection {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring)
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
            try SealedColumnRegistry.record(Self.columns, in: db)
            try db.insert(Customer(id: 1, email: "ada@example.com"), into: "customer")
            try db.insert(Customer(id: 2, email: "bob@example.com"), into: "customer")
        }
        return path
    }

    /// The application still reads both e-mails through `customer`, whatever
    /// the adversary put behind that name.
    func expectTheAppReadsBothEmails(_ queue: DatabaseQueue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let read = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer ORDER BY id")
        }
        #expect(read == ["ada@example.com", "bob@example.com"], sourceLocation: sourceLocation)
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
}
