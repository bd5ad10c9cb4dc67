/// The values bound to a statement's parameters: positional (`?`) or named
/// (`:name`, `@name`, `$name`).
///
/// ```swift
/// try db.execute(sql: "INSERT INTO t(a, b) VALUES (?, ?)", arguments: [1, "x"])
/// try db.execute(sql: "INSERT INTO t(a, b) VALUES (:a, :b)", arguments: ["a": 1, "b": nil])
/// ```
///
/// Arguments are never logged and never kept in errors.
public struct StatementArguments: ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    enum Storage {
        case positional([DatabaseValue])
        case named([(String, DatabaseValue)])
    }

    let storage: Storage

    /// Positional arguments.
    public init(_ values: [any DatabaseValueConvertible]) {
        storage = .positional(values.map(\.databaseValue))
    }

    /// Named arguments; names are given without their `:` prefix.
    public init(named values: [String: any DatabaseValueConvertible]) {
        storage = .named(values.map { ($0.key, $0.value.databaseValue) })
    }

    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        storage = .positional(elements.map { $0?.databaseValue ?? .null })
    }

    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        storage = .named(elements.map { ($0.0, $0.1?.databaseValue ?? .null) })
    }

    /// No arguments.
    public static var none: StatementArguments { [] }
}
