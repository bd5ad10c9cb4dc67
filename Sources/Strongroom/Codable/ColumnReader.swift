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
    override func int64(at index: Int32) -> Int64? { row.values[Int(index)].sqliteInt64 }
    override func double(at index: Int32) -> Double? { row.values[Int(index)].sqliteDouble }
    override func text(at index: Int32) -> String? { row.values[Int(index)].sqliteText }
    override func databaseValue(at index: Int32) -> DatabaseValue { row.values[Int(index)] }
    override var columnCount: Int { row.values.count }
    override func columnName(at index: Int32) -> String { row.layout.columnNames[Int(index)] }
}

/// A statement whose row has columns a ``ColumnTransform`` opens: those are
/// opened once per row (`load`), every other column is read straight from
/// SQLite.
final class OpeningColumnReader: ColumnReader {
    let base: StatementColumnReader
    let plan: OpeningPlan
    /// The opened value of each transformed column for the current row, by column index.
    private var opened: [DatabaseValue?]

    init(base: StatementColumnReader, plan: OpeningPlan) {
        self.base = base
        self.plan = plan
        self.opened = Array(repeating: nil, count: base.columnCount)
    }

    /// Opens the transformed columns of the current row.
    func load() throws(StrongroomError) {
        let statement = base.statement
        if opened.count != statement.columnCount { opened = Array(repeating: nil, count: statement.columnCount) }
        // Sealed columns of one table share their context (its primary key):
        // read it once per row.
        var lastIndexes: [Int]?
        var lastContext: [DatabaseValue] = []
        for column in plan.columns {
            if column.contextIndexes != lastIndexes {
                lastContext = column.contextIndexes.map { statement.databaseValue(at: Int32($0)) }
                lastIndexes = column.contextIndexes
            }
            opened[column.index] = try plan.open(column, context: lastContext, statement: statement)
        }
    }

    override func columnIndex(forKey key: String) -> Int32? { base.columnIndex(forKey: key) }
    override func isNull(at index: Int32) -> Bool { opened[Int(index)]?.isNull ?? base.isNull(at: index) }
    override func int64(at index: Int32) -> Int64? { opened[Int(index)].map { $0.sqliteInt64 } ?? base.int64(at: index) }
    override func double(at index: Int32) -> Double? { opened[Int(index)].map { $0.sqliteDouble } ?? base.double(at: index) }
    override func text(at index: Int32) -> String? { opened[Int(index)].map { $0.sqliteText } ?? base.text(at: index) }
    override func databaseValue(at index: Int32) -> DatabaseValue { opened[Int(index)] ?? base.databaseValue(at: index) }
    override var columnCount: Int { base.columnCount }
    override func columnName(at index: Int32) -> String { base.columnName(at: index) }
}

extension DatabaseValue {
    // The conversions SQLite applies in sqlite3_column_int64/_double/_text;
    // nil for NULL.
    var sqliteInt64: Int64? {
        switch self {
        case .integer(let n): return n
        case .real(let d): return Int64(exactly: d.rounded(.towardZero)) ?? 0
        case .text(let s): return Int64(s) ?? 0
        case .blob: return 0
        case .null: return nil
        }
    }

    var sqliteDouble: Double? {
        switch self {
        case .integer(let n): return Double(n)
        case .real(let d): return d
        case .text(let s): return Double(s) ?? 0
        case .blob: return 0
        case .null: return nil
        }
    }

    var sqliteText: String? {
        switch self {
        case .text(let s): return s
        case .blob(let b): return String(decoding: b, as: UTF8.self)
        case .null: return nil
        case let other: return other.description
        }
    }
}
