import Foundation

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

    /// Positional arguments already made values: nothing boxed.
    package init(values: [DatabaseValue]) {
        storage = .positional(values)
    }

    /// Positional arguments from values of any type, as FMDB takes them:
    /// `nil` and `NSNull` are NULL, `Data` is a BLOB, `NSString` is TEXT,
    /// `NSNumber` is INTEGER (integers and Bools) or REAL, and every
    /// ``DatabaseValueConvertible`` is itself.
    ///
    /// ```swift
    /// let values: [Any?] = ["Alien", 1979, 8.5, posterData, nil]
    /// try db.execute(sql: "INSERT INTO movie VALUES (?, ?, ?, ?, ?)", arguments: try StatementArguments(anyValues: values))
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/conversion`` naming the first value
    ///   that is none of these, by position.
    public init(anyValues values: [Any?]) throws(StrongroomError) {
        var converted: [DatabaseValue] = []
        converted.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            switch value {
            case .none, is NSNull:
                converted.append(.null)
            case let data as Data:
                converted.append(.blob([UInt8](data)))
            case let convertible as any DatabaseValueConvertible:
                converted.append(convertible.databaseValue)
            case let string as NSString:
                converted.append(.text(string as String))
            case let number as NSNumber:
                converted.append(Self.databaseValue(of: number))
            case let some?:
                throw StrongroomError(.conversion, "StatementArguments: argument \(index + 1) is a \(type(of: some)), which SQLite cannot store; pass a String, a number, a Bool, Data, [UInt8] or nil (for dates, a String or a number of seconds).")
            }
        }
        storage = .positional(converted)
    }

    /// An NSNumber as it was made: a Bool or an integer as INTEGER, a
    /// floating-point number as REAL.
    private static func databaseValue(of number: NSNumber) -> DatabaseValue {
        switch String(cString: number.objCType) {
        case "f", "d": return .real(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            // Unsigned: beyond Int64, as REAL (SQLite has no larger integer).
            return Int64(exactly: number.uint64Value).map(DatabaseValue.integer) ?? .real(number.doubleValue)
        default: return .integer(number.int64Value)
        }
    }

    /// Named arguments; names are given without their `:` prefix.
    public init(named values: [String: any DatabaseValueConvertible]) {
        storage = .named(values.map { ($0.key, $0.value.databaseValue) })
    }

    /// Positional arguments from an array literal: `[8, "Di", nil]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        storage = .positional(elements.map { $0?.databaseValue ?? .null })
    }

    /// Named arguments from a dictionary literal: `["name": "Di", "score": nil]`.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        storage = .named(elements.map { ($0.0, $0.1?.databaseValue ?? .null) })
    }

    /// No arguments.
    public static var none: StatementArguments { [] }
}
