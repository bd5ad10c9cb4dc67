public import Foundation

/// Where a ``TableRecord`` puts its values on the way into the database:
/// bound straight to a prepared INSERT, or collected for a
/// ``ColumnTransform`` that seals some of them first.
///
/// ```swift
/// func encode(to binder: inout RecordBinder) throws(StrongroomError) {
///     try binder.bind(id, at: 0)
///     try binder.bind(name, at: 1)
/// }
/// ```
///
/// Property *n* (in ``TableRecord/databaseColumnNames`` order) is bound at
/// `n`. `Int`, `Int64`, `Double`, `Bool`, `String`, `Data` and their
/// optionals bind with one SQLite call; any other
/// ``DatabaseValueConvertible`` through its ``DatabaseValue``.
public struct RecordBinder {
    // Usable from inline: the binds inline into a record's generated
    // `encode(to:)`, which then holds the statement once for all its values.
    @usableFromInline let statement: Statement?
    /// The values, when collecting.
    @usableFromInline var values: [DatabaseValue]

    @usableFromInline
    init(statement: Statement) {
        self.statement = statement
        self.values = []
    }

    init(collecting count: Int) {
        self.statement = nil
        self.values = Array(repeating: .null, count: count)
    }

    /// Binds any value that converts to a ``DatabaseValue``.
    @inlinable
    public mutating func bind<T: DatabaseValueConvertible>(_ value: T, at index: Int) throws(StrongroomError) {
        if let statement {
            try statement.bind(value.databaseValue, at: Int32(index + 1))
        } else {
            values[index] = value.databaseValue
        }
    }

    /// Binds an `Int64`.
    @inlinable
    public mutating func bind(_ value: Int64, at index: Int) throws(StrongroomError) {
        guard let statement else { return values[index] = .integer(value) }
        try statement.bindInt64(value, at: Int32(index + 1))
    }

    /// Binds an `Int`.
    @inlinable
    public mutating func bind(_ value: Int, at index: Int) throws(StrongroomError) {
        try bind(Int64(value), at: index)
    }

    /// Binds a `Bool` as 0 or 1.
    @inlinable
    public mutating func bind(_ value: Bool, at index: Int) throws(StrongroomError) {
        try bind(Int64(value ? 1 : 0), at: index)
    }

    /// Binds a `Double`.
    @inlinable
    public mutating func bind(_ value: Double, at index: Int) throws(StrongroomError) {
        guard let statement else { return values[index] = .real(value) }
        try statement.bindDouble(value, at: Int32(index + 1))
    }

    /// Binds a `String` as TEXT.
    @inlinable
    public mutating func bind(_ value: String, at index: Int) throws(StrongroomError) {
        guard let statement else { return values[index] = .text(value) }
        try statement.bindText(value, at: Int32(index + 1))
    }

    /// Binds `Data` as a BLOB.
    public mutating func bind(_ value: Data, at index: Int) throws(StrongroomError) {
        guard let statement else { return values[index] = .blob([UInt8](value)) }
        try statement.bindBlob(value, at: Int32(index + 1))
    }

    /// Binds an optional `Int64`: nil is NULL.
    @inlinable
    public mutating func bind(_ value: Int64?, at index: Int) throws(StrongroomError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds an optional `Int`: nil is NULL.
    @inlinable
    public mutating func bind(_ value: Int?, at index: Int) throws(StrongroomError) {
        if let value { try bind(Int64(value), at: index) } else { try bindNull(at: index) }
    }

    /// Binds an optional `Bool`: nil is NULL.
    @inlinable
    public mutating func bind(_ value: Bool?, at index: Int) throws(StrongroomError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds an optional `Double`: nil is NULL.
    @inlinable
    public mutating func bind(_ value: Double?, at index: Int) throws(StrongroomError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds an optional `String`: nil is NULL.
    @inlinable
    public mutating func bind(_ value: String?, at index: Int) throws(StrongroomError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds optional `Data`: nil is NULL.
    public mutating func bind(_ value: Data?, at index: Int) throws(StrongroomError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds NULL.
    @inlinable
    public mutating func bindNull(at index: Int) throws(StrongroomError) {
        guard let statement else { return values[index] = .null }
        try statement.bindNull(at: Int32(index + 1))
    }
}
