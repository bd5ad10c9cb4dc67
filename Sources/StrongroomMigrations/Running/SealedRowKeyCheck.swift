import Strongroom
import StrongroomFields

/// Randomized sealed values are bound to their row's primary key as stored
/// (`1` is not `'1'`), and every sealed value to its table's and column's
/// names: a migration that changes a row's key (a key column of another
/// type, a rebuild, an `UPDATE` of the key) or renames a sealed table or
/// column without sealing the values again leaves values no keyring opens.
/// Before a migration runs, inside its transaction, each randomized or
/// indexed column the registry records has its envelopes noted with their
/// row keys (in a temporary table, in memory); before its commit, every
/// envelope still in that column must sit at a key it was noted at, and
/// every recorded column must still exist. Values sealed anew, new rows,
/// deleted rows and columns dropped with their record pass. Needs no
/// keyring. It watches the columns the database records as sealed.
struct SealedRowKeyCheck {
    struct Watched {
        let table: String
        let column: String
        /// Randomized values are bound to their row too.
        let boundToRow: Bool
        let temporaryTable: String
    }

    let watched: [Watched]

    /// `quote(k1) || ',' || quote(k2)…` as text (SQLite 3.15 gives an integer back
    /// from `quote` of one): the key's values with their types.
    static func rowKeyExpression(_ keyColumns: [String], qualifier: String = "") -> String {
        keyColumns.map { "CAST(quote(\(qualifier)\(SQLScript.quotedIdentifier($0))) AS TEXT)" }.joined(separator: " || ',' || ")
    }

    static func keyColumns(of table: String, in db: Connection) throws(StrongroomError) -> (key: [String], columns: [String]) {
        var key: [(Int, String)] = [], columns: [String] = []
        for row in try db.fetchAll(sql: "PRAGMA table_info(\(SQLScript.quotedIdentifier(table)))") {
            let name = try row.decode(String.self, column: "name")
            columns.append(name)
            let position = try row.decode(Int.self, column: "pk")
            if position > 0 { key.append((position, name)) }
        }
        return (key.sorted { $0.0 < $1.0 }.map(\.1), columns)
    }

    /// Notes the row keys of every recorded randomized value; call it
    /// inside the migration's transaction, before its statements.
    static func noting(_ db: Connection) throws(StrongroomError) -> SealedRowKeyCheck {
        var watched: [Watched] = []
        for column in try SealedColumnRegistry.columns(in: db) {
            let (key, columns) = try keyColumns(of: column.table, in: db)
            guard columns.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) else { continue }
            let boundToRow = column.mode != .deterministic && !key.isEmpty
            let temporary = "strongroom_row_keys_\(watched.count)"
            let name = SQLScript.quotedIdentifier(column.column)
            // Pairs: a value copied to another row is noted at both keys.
            try db.execute(sql: "CREATE TEMP TABLE \(temporary)(envelope BLOB, row_key TEXT, PRIMARY KEY (envelope, row_key)) WITHOUT ROWID")
            try db.execute(sql: """
                INSERT OR IGNORE INTO temp.\(temporary) SELECT \(name), \(boundToRow ? rowKeyExpression(key) : "''")
                  FROM main.\(SQLScript.quotedIdentifier(column.table)) WHERE typeof(\(name)) = 'blob'
                """)
            watched.append(Watched(table: column.table, column: column.column, boundToRow: boundToRow, temporaryTable: temporary))
        }
        return SealedRowKeyCheck(watched: watched)
    }

    /// Before the commit: the first recorded sealed column whose values
    /// moved to another row key, or that is gone while still recorded (a
    /// table or column renamed: its values are bound to the old name), as a
    /// sentence; nil when none. Removes its tables.
    func moved(in db: Connection) throws(StrongroomError) -> String? {
        defer { for table in watched { try? db.execute(sql: "DROP TABLE IF EXISTS temp.\(table.temporaryTable)") } }
        for column in try SealedColumnRegistry.columns(in: db) {
            let (_, columns) = try Self.keyColumns(of: column.table, in: db)
            guard !columns.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) else { continue }
            return "\(column.table).\(column.column) is recorded as sealed in strongroom_sealed_columns but is gone after it: sealed values are bound to their table's and column's names, so a renamed one would hold values that no longer open. Rename it back (open and seal its values again under the new name, in a migration written by hand), or, if it was dropped, delete its record in the same migration (DELETE FROM strongroom_sealed_columns WHERE table_name = \(SQLScript.quotedLiteral(column.table)) AND column_name = \(SQLScript.quotedLiteral(column.column)))"
        }
        // Values noted in one sealed column that now sit in another (a table
        // or column renamed with its record): bound to the old names.
        // One pass over each recorded column, whatever the number of others.
        for column in try SealedColumnRegistry.columns(in: db) {
            let name = SQLScript.quotedIdentifier(column.column), source = "main.\(SQLScript.quotedIdentifier(column.table))"
            let others = watched.filter { !($0.table.sqliteFolded == column.table.sqliteFolded && $0.column.sqliteFolded == column.column.sqliteFolded) }
            guard !others.isEmpty else { continue }
            let origin = others.enumerated().map { index, table in
                "WHEN EXISTS (SELECT 1 FROM temp.\(table.temporaryTable) AS r WHERE r.envelope = t.\(name)) THEN \(index)"
            }.joined(separator: " ")
            guard let index = try db.fetchOne(Int.self, sql: """
                SELECT origin FROM (SELECT CASE \(origin) END AS origin FROM \(source) AS t WHERE typeof(t.\(name)) = 'blob') WHERE origin IS NOT NULL LIMIT 1
                """) else { continue }
            let table = others[index]
            return "Sealed values of \(table.table).\(table.column) now sit in \(column.table).\(column.column): sealed values are bound to their table's and column's names, and would no longer open there. Open and seal them again under the new names in the same migration (strongroom_open, then strongroom_seal)"
        }
        for table in watched where table.boundToRow {
            let (key, columns) = try Self.keyColumns(of: table.table, in: db)
            // A column the migration dropped, with its record, holds nothing to open.
            guard columns.contains(where: { $0.sqliteFolded == table.column.sqliteFolded }) else { continue }
            let now = key.isEmpty ? "NULL" : Self.rowKeyExpression(key, qualifier: "t.")
            let source = "main.\(SQLScript.quotedIdentifier(table.table)) AS t"
            // A noted value now at a key it was not noted at.
            let moved = """
                EXISTS (SELECT 1 FROM temp.\(table.temporaryTable) AS r WHERE r.envelope = t.\(SQLScript.quotedIdentifier(table.column)))
                AND NOT EXISTS (SELECT 1 FROM temp.\(table.temporaryTable) AS r WHERE r.envelope = t.\(SQLScript.quotedIdentifier(table.column)) AND r.row_key IS \(now))
                """
            guard let example = try db.fetchOne(sql: """
                SELECT (SELECT r.row_key FROM temp.\(table.temporaryTable) AS r WHERE r.envelope = t.\(SQLScript.quotedIdentifier(table.column)) LIMIT 1) AS was,
                       \(now) AS now, (SELECT count(*) FROM \(source) WHERE \(moved)) AS moved
                  FROM \(source) WHERE \(moved) LIMIT 1
                """) else { continue }
            let count = try example.decode(Int.self, column: "moved")
            let was = try example.decode(String?.self, column: "was") ?? "?"
            let current = try example.decode(String?.self, column: "now") ?? "no key"
            return "\(count) sealed value(s) of \(table.table).\(table.column) would sit at another row key than they were sealed for (row \(was) is now \(current)): randomized values are bound to their row's primary key as stored, and would no longer open. Open and seal them again in the same migration (strongroom_open under the old key, strongroom_seal under the new), or leave the key as it is"
        }
        return nil
    }
}
