import Strongroom
import StrongroomFields

/// Randomized sealed values are bound to their row's primary key as stored
/// (`1` is not `'1'`): a migration that changes a row's key (a key column
/// of another type, a rebuild, an `UPDATE` of the key) without sealing the
/// value again leaves a value no keyring opens. Before a migration runs,
/// inside its transaction, each randomized or indexed column the registry
/// records has its envelopes noted with their row keys (in a temporary
/// table, in memory); before its commit, every envelope still in that
/// column must sit at the same key. Values sealed anew, new rows, deleted
/// rows and dropped columns pass. Needs no keyring.
struct SealedRowKeyCheck {
    struct Watched {
        let table: String
        let column: String
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
        for column in try SealedColumnRegistry.columns(in: db) where column.mode != .deterministic {
            let (key, columns) = try keyColumns(of: column.table, in: db)
            guard !key.isEmpty, columns.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) else { continue }
            let temporary = "strongroom_row_keys_\(watched.count)"
            let name = SQLScript.quotedIdentifier(column.column)
            try db.execute(sql: "CREATE TEMP TABLE \(temporary)(envelope BLOB PRIMARY KEY, row_key TEXT) WITHOUT ROWID")
            try db.execute(sql: """
                INSERT OR IGNORE INTO temp.\(temporary) SELECT \(name), \(rowKeyExpression(key))
                  FROM \(SQLScript.quotedIdentifier(column.table)) WHERE typeof(\(name)) = 'blob'
                """)
            watched.append(Watched(table: column.table, column: column.column, temporaryTable: temporary))
        }
        return SealedRowKeyCheck(watched: watched)
    }

    /// Before the commit: the first column whose values moved to another
    /// row key, as a sentence; nil when none did. Removes its tables.
    func moved(in db: Connection) throws(StrongroomError) -> String? {
        defer { for table in watched { try? db.execute(sql: "DROP TABLE IF EXISTS temp.\(table.temporaryTable)") } }
        for table in watched {
            let (key, columns) = try Self.keyColumns(of: table.table, in: db)
            // A table or column the migration dropped holds nothing to open.
            guard columns.contains(where: { $0.sqliteFolded == table.column.sqliteFolded }) else { continue }
            let now = key.isEmpty ? "NULL" : Self.rowKeyExpression(key, qualifier: "t.")
            let moved = try db.fetchOne(sql: """
                SELECT r.row_key AS was, \(now) AS now, (SELECT count(*) FROM \(SQLScript.quotedIdentifier(table.table)) AS t
                  JOIN temp.\(table.temporaryTable) AS r ON r.envelope = t.\(SQLScript.quotedIdentifier(table.column)) WHERE r.row_key IS NOT \(now)) AS moved
                  FROM \(SQLScript.quotedIdentifier(table.table)) AS t JOIN temp.\(table.temporaryTable) AS r ON r.envelope = t.\(SQLScript.quotedIdentifier(table.column))
                 WHERE r.row_key IS NOT \(now) LIMIT 1
                """)
            guard let moved else { continue }
            let count = try moved.decode(Int.self, column: "moved")
            let was = try moved.decode(String?.self, column: "was") ?? "?"
            let current = try moved.decode(String?.self, column: "now") ?? "no key"
            return "\(count) sealed value(s) of \(table.table).\(table.column) would sit at another row key than they were sealed for (row \(was) is now \(current)): randomized values are bound to their row's primary key as stored, and would no longer open. Open and seal them again in the same migration (strongroom_open under the old key, strongroom_seal under the new), or leave the key as it is"
        }
        return nil
    }
}
