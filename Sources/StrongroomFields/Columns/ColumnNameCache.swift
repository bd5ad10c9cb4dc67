import Strongroom

/// Values kept by (table, column) as a query or a caller spells them. A
/// statement passes the same strings for every row: the last few are
/// searched first. Names are compared by their bytes (ExactText), as SQLite
/// compares text, never by Swift's canonical equivalence.
struct ColumnNameCache<Value> {
    private struct Key: Hashable {
        let table: ExactText
        let column: ExactText
    }

    private var recent: [(key: Key, value: Value)] = []
    private var all: [Key: Value] = [:]

    /// The value for `table.column`, made by `make` the first time.
    mutating func value(table: String, column: String, _ make: () throws -> Value) rethrows -> Value {
        let key = Key(table: ExactText(table), column: ExactText(column))
        for entry in recent where entry.key == key { return entry.value }
        let value = try all[key] ?? make()
        all[key] = value
        if recent.count == 4 { recent.removeFirst() }
        recent.append((key, value))
        return value
    }
}
