public import Strongroom

/// Where sealed columns live, recorded in the database itself (table
/// `strongroom_sealed_columns`), so that every tool finds them with the
/// keyring alone: `strongroom verify --field-keys`, `fields rotate`, `export`.
///
/// Record them with the field keyring, so that the rows carry its
/// signature (``RegistrySignature``): the tools refuse a registry that
/// someone holding only the database key changed.
///
/// ```swift
/// try queue.write { db in try SealedColumnRegistry.record(columns, keyring: keyring, in: db) }
/// let columns = try queue.read { db in try SealedColumnRegistry.columns(in: db, keyring: keyring) }   // verified
/// ```
public enum SealedColumnRegistry {
    package static let table = "strongroom_sealed_columns"
    package static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS main.\(table) (
          table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT,
          PRIMARY KEY (table_name, column_name))
        """

    /// Records `columns` (replacing what was recorded for the same table
    /// and column) and signs the registry with `keyring`
    /// (``RegistrySignature``) when it verified before. Call it inside the
    /// write transaction that seals them.
    public static func record(_ columns: [SealedColumn], keyring: FieldKeyring, in db: Connection) throws {
        try RegistrySignature.update(keyring, in: db) { try recordUnsigned(columns, in: db) }
    }

    /// Records `columns` without signing them: the tools refuse the
    /// registry until the operator confirms it (`strongroom fields
    /// confirm`). Prefer ``record(_:keyring:in:)``.
    @available(*, deprecated, message: "Record with the field keyring, record(_:keyring:in:), so that the tools can verify the registry.")
    public static func record(_ columns: [SealedColumn], in db: Connection) throws(StrongroomError) {
        try recordUnsigned(columns, in: db)
    }

    static func recordUnsigned(_ columns: [SealedColumn], in db: Connection) throws(StrongroomError) {
        try db.execute(sql: createTableSQL)
        for column in columns {
            try db.execute(sql: "INSERT OR REPLACE INTO main.\(table)(table_name, column_name, mode, index_column) VALUES (?, ?, ?, ?)",
                           arguments: [column.table, column.column, column.mode.rawValue, column.indexColumn])
        }
    }

    /// The mode of the row that records the database's ``FieldContext``
    /// (table and column names empty, the identifier in `index_column`): a
    /// Strongroom older than contexts refuses the database, which it could
    /// not open a value of.
    static let contextMode = "context"

    /// Records the ``FieldContext`` the database's sealed values are bound
    /// to, for the tools that open them (`verify`, `fields rotate`,
    /// `export`), which read it here. Call it once, when the database is
    /// made, before anything is sealed.
    ///
    /// - Throws: `StrongroomError.Code.misuse` when another context is
    ///   recorded already (its values are bound to that one).
    public static func record(context: FieldContext, keyring: FieldKeyring, in db: Connection) throws {
        try RegistrySignature.update(keyring, in: db) { try recordUnsigned(context: context, in: db) }
    }

    /// Records the context without signing it (see ``record(_:in:)``).
    @available(*, deprecated, message: "Record with the field keyring, record(context:keyring:in:), so that the tools can verify the registry.")
    public static func record(context: FieldContext, in db: Connection) throws(StrongroomError) {
        try recordUnsigned(context: context, in: db)
    }

    static func recordUnsigned(context: FieldContext, in db: Connection) throws(StrongroomError) {
        if let recorded = try self.context(in: db) {
            guard recorded == context else {
                throw StrongroomError(.misuse, "\(db.path) records the field context \(recorded), and its sealed values are bound to it; it cannot be recorded as \(context).", path: db.path)
            }
            return
        }
        try db.execute(sql: createTableSQL)
        try db.execute(sql: "INSERT INTO main.\(table)(table_name, column_name, mode, index_column) VALUES ('', '', ?, ?)", arguments: [contextMode, context.identifier])
    }

    /// The ``FieldContext`` the database records, or nil.
    public static func context(in db: Connection) throws(StrongroomError) -> FieldContext? {
        guard try exists(in: db),
              let identifier = try db.fetchOne(String.self, sql: "SELECT index_column FROM main.\(table) WHERE table_name = '' AND column_name = '' AND mode = ?", arguments: [contextMode]) else {
            return nil
        }
        do {
            return try FieldContext(identifier)
        } catch {
            throw StrongroomError(.misuse, "\(table) records a field context that is not one: \(error.message)", path: db.path)
        }
    }

    private static func exists(in db: Connection) throws(StrongroomError) -> Bool {
        try RegistrySignature.exists(table, in: db)
    }

    /// The recorded sealed columns, once the registry verifies under
    /// `keyring` (``RegistrySignature/verify(_:in:)``): what a tool that
    /// seals, re-seals or writes index values acts on.
    ///
    /// - Throws: `StrongroomError.Code.untrustedRegistry` naming a row
    ///   changed, added or deleted without the keyring.
    public static func columns(in db: Connection, keyring: FieldKeyring) throws(StrongroomError) -> [SealedColumn] {
        try RegistrySignature.verify(keyring, in: db)
        return try columns(in: db)
    }

    /// The recorded sealed columns, by table and column; none when the
    /// database records none. Not verified: whoever holds the database key
    /// can write them (see ``columns(in:keyring:)``).
    public static func columns(in db: Connection) throws(StrongroomError) -> [SealedColumn] {
        guard try exists(in: db) else { return [] }
        var columns: [SealedColumn] = []
        for row in try db.fetchAll(sql: "SELECT table_name, column_name, mode, index_column FROM main.\(table) WHERE mode <> '\(contextMode)' ORDER BY table_name, column_name") {
            let modeName = try row.decode(String.self, column: "mode")
            guard let mode = SealingMode(rawValue: modeName) else {
                throw StrongroomError(.misuse, "\(table) records an unknown sealing mode '\(modeName)'; this Strongroom is older than the database.", path: db.path)
            }
            columns.append(SealedColumn(table: try row.decode(String.self, column: "table_name"), column: try row.decode(String.self, column: "column_name"),
                                        mode: mode, indexColumn: try row.decode(String?.self, column: "index_column")))
        }
        return columns
    }
}

extension FieldCipher {
    /// A cipher for `keyring` with the context `db` records (the tools' way:
    /// they are given none of their own).
    convenience init(keyring: FieldKeyring, contextRecordedIn db: Connection) throws(StrongroomError) {
        self.init(keyring: keyring, context: try SealedColumnRegistry.context(in: db))
        // A keyring the database knows another key of is refused here.
        try FieldKeyCheck.verify(keyring, in: db)
    }
}
