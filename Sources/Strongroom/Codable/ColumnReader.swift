/// Where a ``RowDecoder`` reads columns from: a statement positioned on a row
/// (the fast path) or a materialized ``Row``.
///
/// A class rather than a generic parameter: the decoder's containers are
/// generic over the caller's `CodingKey` type and so run unspecialized; with a
/// class, each column access is one virtual call instead of witness-table
/// calls and generic copies.
class ColumnReader {
    /// The keyed container built for the last `CodingKey` type, reused for
    /// the next row: building one costs an allocation and runtime generic
    /// metadata lookups, which dominate decoding small rows.
    private(set) var cachedContainerKeyType: ObjectIdentifier?
    private(set) var cachedContainer: AnyObject?

    func cacheContainer(_ container: AnyObject, for keyType: ObjectIdentifier) {
        cachedContainer = container
        cachedContainerKeyType = keyType
    }

    /// Breaks the reader → container → reader cycle.
    func clearContainerCache() {
        cachedContainer = nil
        cachedContainerKeyType = nil
    }

    func columnIndex(forKey key: String) -> Int32? { nil }
    func isNull(at index: Int32) -> Bool { true }
    /// The value, or nil for NULL.
    func int64(at index: Int32) -> Int64? { nil }
    /// The value, or nil for NULL.
    func double(at index: Int32) -> Double? { nil }
    /// The value, or nil for NULL.
    func text(at index: Int32) -> String? { nil }
    func databaseValue(at index: Int32) -> DatabaseValue { .null }
    var columnCount: Int { 0 }
    func columnName(at index: Int32) -> String { "" }
}

/// A statement on its current row, reading straight from SQLite. One per
/// statement, reused for every row.
final class StatementColumnReader: ColumnReader {
    // The statement owns this reader, so it always outlives it.
    unowned(unsafe) let statement: Statement

    init(statement: Statement) { self.statement = statement }

    override func columnIndex(forKey key: String) -> Int32? {
        let statement = self.statement
        return statement.decodingKeys.index(for: key) { name in statement.rowLayout.index(of: name).map(Int32.init) }
    }
    override func isNull(at index: Int32) -> Bool { statement.isNull(at: index) }
    // One SQLite call per value in the common case: NULL reads as 0, so the
    // column type is asked only for a zero.
    override func int64(at index: Int32) -> Int64? {
        let value = statement.int64(at: index)
        return value == 0 && statement.isNull(at: index) ? nil : value
    }
    override func double(at index: Int32) -> Double? {
        let value = statement.double(at: index)
        return value == 0 && statement.isNull(at: index) ? nil : value
    }
    override func text(at index: Int32) -> String? { statement.textOrNil(at: index) }
    override func databaseValue(at index: Int32) -> DatabaseValue { statement.databaseValue(at: index) }
    override var columnCount: Int { statement.columnCount }
    override func columnName(at index: Int32) -> String { statement.columnNames[Int(index)] }
}

/// A materialized row.
final class RowColumnReader: ColumnReader {
    let row: Row

    init(row: Row) { self.row = row }

    override func columnIndex(forKey key: String) -> Int32? { row.layout.index(of: key).map(Int32.init) }
    override func isNull(at index: Int32) -> Bool { row.values[Int(index)].isNull }
    // The conversions SQLite applies in sqlite3_column_int64/_double/_text.
    override func int64(at index: Int32) -> Int64? {
        switch row.values[Int(index)] {
        case .integer(let n): return n
        case .real(let d): return Int64(exactly: d.rounded(.towardZero)) ?? 0
        case .text(let s): return Int64(s) ?? 0
        case .blob: return 0
        case .null: return nil
        }
    }
    override func double(at index: Int32) -> Double? {
        switch row.values[Int(index)] {
        case .integer(let n): return Double(n)
        case .real(let d): return d
        case .text(let s): return Double(s) ?? 0
        case .blob: return 0
        case .null: return nil
        }
    }
    override func text(at index: Int32) -> String? {
        switch row.values[Int(index)] {
        case .text(let s): return s
        case .blob(let b): return String(decoding: b, as: UTF8.self)
        case .null: return nil
        case let other: return other.description
        }
    }
    override func databaseValue(at index: Int32) -> DatabaseValue { row.values[Int(index)] }
    override var columnCount: Int { row.values.count }
    override func columnName(at index: Int32) -> String { row.layout.columnNames[Int(index)] }
}
