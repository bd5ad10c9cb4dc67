/// The column names of a statement's rows, shared by all of them.
final class RowLayout: Sendable {
    let columnNames: [String]
    let indexByName: [String: Int]
    let indexByLowercasedName: [String: Int]

    init(columnNames: [String]) {
        self.columnNames = columnNames
        var exact: [String: Int] = [:]
        var folded: [String: Int] = [:]
        for (i, name) in columnNames.enumerated() {
            if exact[name] == nil { exact[name] = i }
            if folded[name.lowercased()] == nil { folded[name.lowercased()] = i }
        }
        indexByName = exact
        indexByLowercasedName = folded
    }

    /// The index of the leftmost column named `name`, matched exactly first,
    /// then case-insensitively (as SQLite matches column names).
    func index(of name: String) -> Int? {
        indexByName[name] ?? indexByLowercasedName[name.lowercased()]
    }
}

/// A row read from the database: values by index or by column name.
///
/// ```swift
/// for row in try db.fetchAll(sql: "SELECT id, name FROM person") {
///     let id: Int = try row.decode(at: 0)
///     let name: String? = try row.decode(column: "name")
///     print(row["name"] ?? .null)
/// }
/// ```
public struct Row: Sendable {
    let layout: RowLayout
    /// The values, in column order.
    public let values: [DatabaseValue]

    init(layout: RowLayout, values: [DatabaseValue]) {
        self.layout = layout
        self.values = values
    }

    /// The column names, in order.
    public var columnNames: [String] { layout.columnNames }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value at `index` (0-based).
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// The value of the column named `name` (case-insensitive), or nil when
    /// there is no such column.
    public subscript(name: String) -> DatabaseValue? {
        layout.index(of: name).map { values[$0] }
    }

    /// The value at `index` converted to `T`.
    ///
    /// - Throws: ``StrongroomError/Code/conversion`` when the value does not
    ///   convert (NULL converts only to an `Optional`).
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws(StrongroomError) -> T {
        guard index >= 0 && index < values.count else {
            throw StrongroomError(.misuse, "Row has \(values.count) column(s); there is no column \(index).")
        }
        guard let value = T.fromDatabaseValue(values[index]) else {
            throw StrongroomError(.conversion, "Column \(columnNames[index]) holds \(values[index].typeName), which does not convert to \(T.self).")
        }
        return value
    }

    /// The value of the column named `name` converted to `T`.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, column name: String) throws(StrongroomError) -> T {
        guard let index = layout.index(of: name) else {
            throw StrongroomError(.misuse, "Row has no column named \(name); it has \(columnNames.joined(separator: ", ")).")
        }
        return try decode(type, at: index)
    }
}

extension DatabaseValue {
    /// SQLite's name of the storage class, for error messages (never the value).
    var typeName: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }
}
