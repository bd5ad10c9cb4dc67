internal import CSQLCipher

/// Where a ``RowDecoder`` reads columns from: a statement positioned on a row
/// (the fast path) or a materialized ``Row``.
protocol ColumnSource {
    func columnIndex(forKey key: String) -> Int32?
    func isNull(at index: Int32) -> Bool
    func int64(at index: Int32) -> Int64
    func double(at index: Int32) -> Double
    func text(at index: Int32) -> String
    func databaseValue(at index: Int32) -> DatabaseValue
    var columnCount: Int { get }
    func columnName(at index: Int32) -> String
}

/// A statement on its current row, reading straight from SQLite.
struct StatementColumns: ColumnSource {
    let statement: Statement

    @inline(__always)
    func columnIndex(forKey key: String) -> Int32? {
        let layout = statement.rowLayout
        return statement.decodingKeys.index(for: key) { name in layout.index(of: name).map(Int32.init) }
    }
    @inline(__always) func isNull(at index: Int32) -> Bool { statement.isNull(at: index) }
    @inline(__always) func int64(at index: Int32) -> Int64 { statement.int64(at: index) }
    @inline(__always) func double(at index: Int32) -> Double { statement.double(at: index) }
    @inline(__always) func text(at index: Int32) -> String { statement.text(at: index) }
    func databaseValue(at index: Int32) -> DatabaseValue { statement.databaseValue(at: index) }
    var columnCount: Int { statement.columnCount }
    func columnName(at index: Int32) -> String { statement.columnNames[Int(index)] }
}

extension Row: ColumnSource {
    func columnIndex(forKey key: String) -> Int32? { layout.index(of: key).map(Int32.init) }
    func isNull(at index: Int32) -> Bool { values[Int(index)].isNull }
    func int64(at index: Int32) -> Int64 {
        switch values[Int(index)] {
        case .integer(let n): return n
        case .real(let d): return Int64(exactly: d.rounded(.towardZero)) ?? 0
        case .text(let s): return Int64(s) ?? 0
        default: return 0
        }
    }
    func double(at index: Int32) -> Double {
        switch values[Int(index)] {
        case .integer(let n): return Double(n)
        case .real(let d): return d
        case .text(let s): return Double(s) ?? 0
        default: return 0
        }
    }
    func text(at index: Int32) -> String {
        switch values[Int(index)] {
        case .text(let s): return s
        case .blob(let b): return String(decoding: b, as: UTF8.self)
        case .null: return ""
        case let other: return other.description
        }
    }
    func databaseValue(at index: Int32) -> DatabaseValue { values[Int(index)] }
    func columnName(at index: Int32) -> String { layout.columnNames[Int(index)] }
    var columnCount: Int { values.count }
}
