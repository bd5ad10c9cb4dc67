public import Strongroom

/// Where sealed columns live, recorded in the database itself (table
/// `strongroom_sealed_columns`), so that every tool finds them with the
/// keyring alone: `strongroom verify --field-keys`, `fields rotate`, `export`.
///
/// ```swift
/// try queue.write { db in try SealedColumnRegistry.record(columns, in: db) }
/// let columns = try queue.read { db in try SealedColumnRegistry.columns(in: db) }
/// ```
public enum SealedColumnRegistry {
    package static let table = "strongroom_sealed_columns"
    package static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS \(table) (
          table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT,
          PRIMARY KEY (table_name, column_name))
        """

    /// Records `columns` (replacing what was recorded for the same table
    /// and column). Call it inside the write transaction that seals them.
    public static func record(_ columns: [SealedColumn], in db: Connection) throws(StrongroomError) {
        try db.execute(sql: createTableSQL)
        for column in columns {
            try db.execute(sql: "INSERT OR REPLACE INTO \(table)(table_name, column_name, mode, index_column) VALUES (?, ?, ?, ?)",
                           arguments: [column.table, column.column, column.mode.rawValue, column.indexColumn])
        }
    }

    /// The recorded sealed columns, by table and column; none when the
    /// database records none.
    public static func columns(in db: Connection) throws(StrongroomError) -> [SealedColumn] {
        guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) == 1 else {
            return []
        }
        var columns: [SealedColumn] = []
        for row in try db.fetchAll(sql: "SELECT table_name, column_name, mode, index_column FROM \(table) ORDER BY table_name, column_name") {
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
