import Foundation
import Strongroom

/// One column's values as stored (envelopes, never opened by a connection's
/// sealing), each with its row key: what verify, retire and the key check
/// open themselves, with the binding they choose.
enum StoredValues {
    struct Row {
        /// The values of the key columns asked for, in their order.
        let rowKey: [DatabaseValue]
        /// The value as stored; a TEXT envelope read as its bytes when `asBytes`.
        let stored: DatabaseValue
    }

    /// `column` of `main.table` with the values of `key` (`rowid` allowed),
    /// for the rows `condition` selects (SQL naming the column as
    /// `strongroom_value`), at most `limit`.
    static func rows(of table: String, column: String, key: [String], where condition: String = "1", arguments: StatementArguments = .none,
                     asBytes: Bool = false, limit: Int? = nil, in db: Connection) throws(StrongroomError) -> [Row] {
        let name = SQLScript.quotedIdentifier(column)
        // `+name`: an expression, so the connection's transform opens nothing.
        let value = asBytes ? "CAST(\(name) AS BLOB)" : "+\(name)"
        let selected = (key.map { $0 == "rowid" ? $0 : SQLScript.quotedIdentifier($0) } + ["\(value) AS strongroom_stored"]).joined(separator: ", ")
        let filter = condition.replacingOccurrences(of: "strongroom_value", with: name)
        let rows = try db.fetchAll(sql: "SELECT \(selected) FROM main.\(SQLScript.quotedIdentifier(table)) WHERE \(filter)\(limit.map { " LIMIT \($0)" } ?? "")",
                                   arguments: arguments)
        return try rows.map { row throws(StrongroomError) in
            Row(rowKey: try key.indices.map { i throws(StrongroomError) in try row.decode(DatabaseValue.self, at: i) },
                stored: try row.decode(DatabaseValue.self, column: "strongroom_stored"))
        }
    }
}
