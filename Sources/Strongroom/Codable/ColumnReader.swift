internal import CSQLCipher

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
        // Detached, nothing would ever break the cycle again.
        guard !isDetached else { return }
        cachedContainer = container
        cachedContainerKeyType = keyType
    }

    /// Breaks the reader → container → reader cycle.
    func clearContainerCache() {
        cachedContainer = nil
        cachedContainerKeyType = nil
    }

    /// True once the statement this reader read from is gone, or has
    /// replaced it: a container kept past `init(from:)` then finds no
    /// column, instead of reading through a freed statement. Read on every
    /// value without runtime exclusivity checks: single loads and one
    /// store, by the thread that uses the statement.
    @exclusivity(unchecked) private(set) var isDetached = false

    /// Cuts the reader off its statement for good: breaks the cycle with
    /// its container, and every later read finds nothing.
    func detach() {
        isDetached = true
        clearContainerCache()
    }

    /// The connection's ``ValueConversion`` policy.
    let conversion: ValueConversion

    init(conversion: ValueConversion) { self.conversion = conversion }

    func columnIndex(forKey key: String) -> Int32? { nil }
    func storageClass(at index: Int32) -> StorageClass { .null }
    func isNull(at index: Int32) -> Bool { storageClass(at: index) == .null }
    // The fast path of record decoding, one call per value: the value when
    // it is stored in the class the Swift type reads directly (INTEGER;
    // REAL or INTEGER held exactly; TEXT), else nil. Everything else, NULL
    // included, goes through databaseValue(at:) and the conversion policy.
    func int64(at index: Int32) -> Int64? { nil }
    func double(at index: Int32) -> Double? { nil }
    func text(at index: Int32) -> String? { nil }
    func databaseValue(at index: Int32) -> DatabaseValue { .null }
    var columnCount: Int { 0 }
    func columnName(at index: Int32) -> String { "" }
}

/// A statement on its current row, reading straight from SQLite. One per
/// statement, reused for every row.
final class StatementColumnReader: ColumnReader {
    // The statement owns this reader and detaches it when it goes (its
    // deinit): a container kept past `init(from:)` keeps the reader alive,
    // never the statement. Once detached this is a freed object, so every
    // use checks `isDetached` first, and reflection never shows it (see
    // `customMirror`). Neither optional nor strong: either costs a retain
    // and a release on every value (about 550 instructions a row).
    private unowned(unsafe) let statement: Statement
    /// The statement's cache of key lookups (the same object), held here:
    /// reaching it through `statement` cost a retain and a release of the
    /// statement on every key of every row.
    let decodingKeys: KeyIndexCache

    init(statement: Statement) {
        self.statement = statement
        self.decodingKeys = statement.decodingKeys
        super.init(conversion: statement.connection.configuration.valueConversion)
    }

    /// The statement, nil once it is gone.
    var liveStatement: Statement? { isDetached ? nil : statement }

    // Every read first checks that the statement is still there.
    override func columnIndex(forKey key: String) -> Int32? {
        guard !isDetached else { return nil }
        return decodingKeys.index(for: key) { name in self.statement.rowLayout.index(of: name).map(Int32.init) }
    }
    override func storageClass(at index: Int32) -> StorageClass { isDetached ? .null : statement.storageClass(at: index) }
    override func isNull(at index: Int32) -> Bool { isDetached || statement.isNull(at: index) }
    // One lookup of the column (its sqlite3_value) per value, as RowView does.
    override func int64(at index: Int32) -> Int64? {
        guard !isDetached, let value = sqlite3_column_value(statement.handle, index), sqlite3_value_type(value) == SQLITE_INTEGER else { return nil }
        return sqlite3_value_int64(value)
    }
    override func double(at index: Int32) -> Double? {
        guard !isDetached, let value = sqlite3_column_value(statement.handle, index) else { return nil }
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT: return sqlite3_value_double(value)
        case SQLITE_INTEGER: return Double(exactly: sqlite3_value_int64(value))
        default: return nil
        }
    }
    override func text(at index: Int32) -> String? {
        guard !isDetached, let value = sqlite3_column_value(statement.handle, index), sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        return Statement.text(value: value)
    }
    override func databaseValue(at index: Int32) -> DatabaseValue { isDetached ? .null : statement.databaseValue(at: index) }
    override var columnCount: Int { isDetached ? 0 : statement.columnCount }
    override func columnName(at index: Int32) -> String { isDetached ? "" : statement.columnNames[Int(index)] }
}

extension ColumnReader: CustomReflectable {
    /// Only whether the reader is detached: a detached statement reader's
    /// `statement` is a freed object, which reflection (a `dump`, a test
    /// library describing a value) must never follow.
    var customMirror: Mirror { Mirror(self, children: ["isDetached": isDetached], displayStyle: .class) }
}

/// A materialized row.
final class RowColumnReader: ColumnReader {
    let row: Row

    init(row: Row) {
        self.row = row
        super.init(conversion: row.conversion)
    }

    override func columnIndex(forKey key: String) -> Int32? { row.layout.index(of: key).map(Int32.init) }
    override func storageClass(at index: Int32) -> StorageClass { row.values[Int(index)].storageClass }
    override func int64(at index: Int32) -> Int64? { row.values[Int(index)].storedInt64 }
    override func double(at index: Int32) -> Double? { row.values[Int(index)].storedDouble }
    override func text(at index: Int32) -> String? { row.values[Int(index)].storedText }
    override func databaseValue(at index: Int32) -> DatabaseValue { row.values[Int(index)] }
    override var columnCount: Int { row.values.count }
    override func columnName(at index: Int32) -> String { row.layout.columnNames[Int(index)] }
}

/// A statement whose row has columns a read's declaration opens (an
/// ``OpeningPlan``): those are opened once per row (`load`), every other
/// column is read straight from SQLite.
final class OpeningColumnReader: ColumnReader {
    let base: StatementColumnReader
    let plan: OpeningPlan
    /// The opened value of each transformed column for the current row, by column index.
    private var opened: [DatabaseValue?]
    /// Whether the plan opens each column, by column index.
    private let transformed: [Bool]
    /// The current row's context (its primary key's values), for `load`:
    /// one array, overwritten from row to row.
    private var context: [DatabaseValue] = []

    init(base: StatementColumnReader, plan: OpeningPlan) {
        self.base = base
        self.plan = plan
        self.opened = Array(repeating: nil, count: base.columnCount)
        var transformed = Array(repeating: false, count: base.columnCount)
        for column in plan.columns where column.index < transformed.count { transformed[column.index] = true }
        self.transformed = transformed
        super.init(conversion: base.conversion)
    }

    /// Whether `opened` or `context` may hold a row's values: set by
    /// `load`, so that `forgetRow` on a reset with nothing read (each run
    /// resets before and after) costs one load.
    private var holdsRow = false

    /// Opens the transformed columns of the current row.
    func load() throws(StrongroomError) {
        guard !isDetached, let statement = base.liveStatement else {
            throw StrongroomError(.misuse, "The row was read through a reader its statement no longer uses: the statement was prepared again (its schema changed) or released while the row was being read. Read the row before using the statement again.")
        }
        if opened.count != statement.columnCount { opened = Array(repeating: nil, count: statement.columnCount) }
        holdsRow = true
        // Signed rows first: nothing of a row whose signature fails is opened.
        if !plan.signatures.isEmpty {
            try plan.verifySignatures(statement: statement) { statement.databaseValue(at: Int32($0)) }
        }
        // Sealed columns of one table share their context (its primary key):
        // read it once per row, into an array kept from row to row.
        var lastIndexes: [Int]?
        for column in plan.columns {
            if column.contextIndexes != lastIndexes {
                let indexes = column.contextIndexes
                if context.count == indexes.count {
                    for k in indexes.indices { context[k] = statement.databaseValue(at: Int32(indexes[k])) }
                } else {
                    context = indexes.map { statement.databaseValue(at: Int32($0)) }
                }
                lastIndexes = indexes
            }
            if !column.keyCopies.isEmpty {
                try plan.checkKeyCopies(column, context: context, statement: statement) { statement.databaseValue(at: Int32($0)) }
            }
            opened[column.index] = try plan.open(column, context: context, statement: statement)
        }
    }

    /// Lets go of the opened values of the last row (its run ended), and of
    /// its context: this reader holds none of them until the next run.
    func forgetRow() {
        guard holdsRow else { return }
        holdsRow = false
        for column in plan.columns where column.index < opened.count { opened[column.index] = nil }
        // Overwritten, not emptied: the array keeps its storage for the next run.
        for k in context.indices { context[k] = .null }
    }

    /// True when `index` is a column this reader opens, or when the reader
    /// reads nothing (detached): either way, not a value to read from
    /// SQLite in place.
    func opens(_ index: Int32) -> Bool {
        isDetached || Int(index) >= transformed.count || transformed[Int(index)]
    }

    /// Drops the opened values too: nothing of the last row stays in memory.
    override func detach() {
        super.detach()
        opened = Array(repeating: nil, count: opened.count)
        context = []
    }

    // Detached (its statement gone, or its plan replaced), it reads nothing:
    // neither opened values nor, through `base`, stored ones.
    override func columnIndex(forKey key: String) -> Int32? { isDetached ? nil : base.columnIndex(forKey: key) }
    override func storageClass(at index: Int32) -> StorageClass { isDetached ? .null : opened[Int(index)]?.storageClass ?? base.storageClass(at: index) }
    override func isNull(at index: Int32) -> Bool { isDetached || (opened[Int(index)]?.isNull ?? base.isNull(at: index)) }
    override func int64(at index: Int32) -> Int64? { isDetached ? nil : opened[Int(index)].map { $0.storedInt64 } ?? base.int64(at: index) }
    override func double(at index: Int32) -> Double? { isDetached ? nil : opened[Int(index)].map { $0.storedDouble } ?? base.double(at: index) }
    override func text(at index: Int32) -> String? { isDetached ? nil : opened[Int(index)].map { $0.storedText } ?? base.text(at: index) }
    override func databaseValue(at index: Int32) -> DatabaseValue { isDetached ? .null : opened[Int(index)] ?? base.databaseValue(at: index) }
    override var columnCount: Int { isDetached ? 0 : base.columnCount }
    override func columnName(at index: Int32) -> String { isDetached ? "" : base.columnName(at: index) }
}

extension DatabaseValue {
    // The value as stored, for a reader that checked its storage class first.
    var storedInt64: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }

    var storedDouble: Double? {
        switch self {
        case .real(let d): d
        case .integer(let n): Double(exactly: n)
        default: nil
        }
    }

    var storedText: String? {
        if case .text(let s) = self { return s }
        return nil
    }
}
