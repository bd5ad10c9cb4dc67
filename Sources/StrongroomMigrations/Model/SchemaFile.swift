import Foundation
public import Strongroom
import StrongroomFields

/// The model's schema as a checked-in file (`Migrations/schema.sql`), and
/// the schema the migrations produce: the two sides `strongroom diff` compares.
extension DatabaseSchema {
    /// The schema that running `sql` (a schema file) gives.
    /// It runs in memory, where it cannot attach (and so create or change)
    /// a file, nor set a key.
    public static func read(sql: String) throws(StrongroomError) -> DatabaseSchema {
        let db = try Connection.inMemory()
        db.refuseKeyChangesAndPlaintextCopies()
        try db.execute(sql: sql)
        return try read(from: db)
    }

    /// The schema of a schema file.
    public static func read(file path: String) throws -> DatabaseSchema {
        try read(sql: String(contentsOfFile: path, encoding: .utf8))
    }

    /// Writes the schema file (``sql``): call it whenever the model
    /// changes, and commit the file beside the migrations.
    ///
    /// ```swift
    /// try DatabaseSchema(Artist.self, Album.self).writeSchemaFile(to: "Migrations/schema.sql")
    /// ```
    public func writeSchemaFile(to path: String) throws {
        try sql.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Fails when the schema file at `path` is not this model: for a test
    /// that keeps the checked-in file in step with the Swift types.
    ///
    /// ```swift
    /// @Test func schemaFileIsCurrent() throws {
    ///     try AppModel.schema.checkSchemaFile(at: "Migrations/schema.sql")
    /// }
    /// ```
    ///
    /// - Throws: ``SchemaMismatch`` listing how the file differs, with the
    ///   remedy (regenerate it with ``writeSchemaFile(to:)``).
    public func checkSchemaFile(at path: String) throws {
        let file = try DatabaseSchema.read(file: path)
        let differences = differences(from: file)
        if !differences.isEmpty {
            throw SchemaMismatch(path: path, differences: differences,
                                 remedy: "the schema file \(path) is not the model; regenerate it with DatabaseSchema.writeSchemaFile(to:) and commit it")
        }
    }
}

extension Migrator {
    /// The schema the migrations give a new database, replayed in memory
    /// (with the sealed-column functions present, under a throwaway key:
    /// there are no rows to seal).
    ///
    /// ```swift
    /// let migrated = try Migrator(directory: "Migrations").replayedSchema()
    /// let missing = model.differences(from: migrated)   // empty: the migrations reach the model
    /// ```
    public func replayedSchema() throws -> DatabaseSchema {
        let db = try Self.scratchDatabase()
        try migrate(db)
        return try DatabaseSchema.read(from: db)
    }

    /// An empty in-memory database to replay migrations into, with the
    /// sealed-column functions under a throwaway keyring: a migration that
    /// seals a column prepares there, and has no rows to seal.
    static func scratchDatabase() throws(StrongroomError) -> Connection {
        var configuration = Configuration.plaintext
        configuration.addFieldFunctionsForTools(keyring: FieldKeyring.generate())
        return try Connection.inMemory(configuration: configuration)
    }
}
