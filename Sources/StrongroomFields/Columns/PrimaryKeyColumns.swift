import Strongroom

/// A table's declared PRIMARY KEY: the columns sealed values are bound to.
enum PrimaryKeyColumns {
    /// Its columns in key order, with their declared types; none when the
    /// table declares no primary key (`PRAGMA main.table_info`: a TEMP object of the same name
    /// would answer the plain one).
    static func read(_ table: String, in db: Connection) throws(StrongroomError) -> [(name: String, type: String)] {
        var keyed: [(position: Int, name: String, type: String)] = []
        for row in try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))") {
            let position = try row.decode(Int.self, column: "pk")
            if position > 0 {
                keyed.append((position, try row.decode(String.self, column: "name"), try row.decode(String?.self, column: "type") ?? ""))
            }
        }
        return keyed.sorted { $0.position < $1.position }.map { ($0.name, $0.type) }
    }
}
