internal import CSQLCipher
import StrongroomCrypto

extension Connection {
    /// The user tables of `schema` (`main` or an attached name), by name.
    package func tableNames(schema: String = "main") throws(StrongroomError) -> [String] {
        try fetchAll(String.self, sql: "SELECT name FROM \(SQLScript.quotedIdentifier(schema)).sqlite_master WHERE type = 'table' AND \(SQLScript.isUserObjectName()) ORDER BY name")
    }

    /// Every user table and its row count, in name order (status, and the
    /// check of a backup, upgrade tests).
    package func tableRowCounts() throws(StrongroomError) -> [DatabaseStatus.Table] {
        try tableNames().map { name throws(StrongroomError) in
            DatabaseStatus.Table(name: name, rowCount: try fetchOne(Int.self, sql: "SELECT count(*) FROM \(SQLScript.quotedIdentifier(name))") ?? 0)
        }
    }

    /// Row counts and content hashes of every user table, to prove that a copy
    /// holds exactly the same rows. Read in one pass, in constant memory.
    public func tableDigests() throws(StrongroomError) -> [TableDigest] {
        var hasher = RowHasher()
        return try tableNames().map { name throws(StrongroomError) in
            try rowHashSum(ofTable: name, part: nil, hasher: &hasher).digest(name: name)
        }
    }

    /// The sum of the row hashes of `name`, or of the rows whose rowid lies
    /// in `part` (see ``rowidRange(ofTable:)``). `onRows` is told every
    /// 65,536 rows how many were hashed since it was last called.
    func rowHashSum(ofTable name: String, part: RowidPart?, hasher: inout RowHasher,
                    onRows: ((Int) -> Void)? = nil) throws(StrongroomError) -> RowHashSum {
        let table = SQLScript.quotedIdentifier(name)
        let statement: Statement
        if let part {
            statement = try prepare(sql: "SELECT * FROM \(table) WHERE \(part.column) BETWEEN ?1 AND ?2")
            try statement.bind(.integer(part.lower), at: 1)
            try statement.bind(.integer(part.upper), at: 2)
        } else {
            statement = try prepare(sql: "SELECT * FROM \(table)")
        }
        var sum = RowHashSum()
        var sinceReport = 0
        try statement.withRows { statement in
            hasher.hashRow(statement.handle, columnCount: Int32(statement.columnCount), into: &sum)
            sinceReport += 1
            if sinceReport == 65_536, let onRows {
                onRows(sinceReport)
                sinceReport = 0
            }
        }
        if sinceReport > 0 { onRows?(sinceReport) }
        return sum
    }

    /// A name that reaches the rowid of `table` (`rowid`, `_rowid_` or `oid`,
    /// the first no column takes), or nil for a WITHOUT ROWID table and one
    /// whose columns hide all three.
    package func rowidName(ofTable table: String) throws(StrongroomError) -> String? {
        let quoted = SQLScript.quotedIdentifier(table)
        let columns = Set(try fetchAll(sql: "PRAGMA table_info(\(quoted))").map { row throws(StrongroomError) in
            try row.decode(String.self, column: "name").sqliteFolded
        })
        guard let name = ["rowid", "_rowid_", "oid"].first(where: { !columns.contains($0.sqliteFolded) }) else { return nil }
        // A WITHOUT ROWID table has no rowid: the statement does not prepare.
        return (try? prepare(sql: "SELECT \(name) FROM \(quoted) LIMIT 0")) == nil ? nil : name
    }

    /// The smallest and largest rowid of a rowid table, and a name that
    /// reaches its rowid; nil for an empty or WITHOUT ROWID table, or one
    /// whose columns hide every name of the rowid.
    func rowidRange(ofTable name: String) throws(StrongroomError) -> (column: String, lower: Int64, upper: Int64)? {
        guard let column = try rowidName(ofTable: name),
              let statement = try? prepare(sql: "SELECT min(\(column)), max(\(column)) FROM \(SQLScript.quotedIdentifier(name))") else { return nil }
        var range: (String, Int64, Int64)?
        try statement.withRows { statement in
            if case .integer(let lower) = statement.databaseValue(at: 0), case .integer(let upper) = statement.databaseValue(at: 1) {
                range = (column, lower, upper)
            }
        }
        return range
    }
}

/// A range of rowids of one table, hashed by one connection.
struct RowidPart: Sendable {
    let column: String
    let lower: Int64
    let upper: Int64

    /// `count` contiguous parts covering lower...upper.
    static func split(column: String, lower: Int64, upper: Int64, into count: Int) -> [RowidPart] {
        let span = upper.subtractingReportingOverflow(lower)
        guard count > 1, !span.overflow, span.partialValue >= Int64(count) else {
            return [RowidPart(column: column, lower: lower, upper: upper)]
        }
        let step = span.partialValue / Int64(count)
        return (0..<count).map { i in
            let start = lower + Int64(i) * step
            let end = i == count - 1 ? upper : start + step - 1
            return RowidPart(column: column, lower: start, upper: end)
        }
    }
}

/// Hashes rows straight from SQLite's column buffers: one reused SHA-256
/// context and one reused scratch buffer, no allocation per row or value.
struct RowHasher: ~Copyable {
    private var hash = SHA256()
    private var scratch: UnsafeMutableRawBufferPointer
    private var used = 0
    private let rowHash = UnsafeMutableRawBufferPointer.allocate(byteCount: SHA256.byteCount, alignment: 8)

    /// Values longer than this go to the hash directly, not through the scratch buffer.
    private static let directThreshold = 1024

    init() {
        scratch = .allocate(byteCount: 4096, alignment: 8)
    }

    deinit {
        scratch.deallocate()
        rowHash.deallocate()
    }

    /// Each value: a type tag (0 NULL, 1 INTEGER, 2 REAL, 3 TEXT, 4 BLOB),
    /// then 8 big-endian bytes (the integer, the double's bits, or the
    /// length of the text or blob), then the text's UTF-8 or the blob's bytes.
    mutating func hashRow(_ statement: OpaquePointer, columnCount: Int32, into sum: inout RowHashSum) {
        used = 0
        for i in 0..<columnCount {
            switch sqlite3_column_type(statement, i) {
            case SQLITE_INTEGER:
                append(tag: 1, UInt64(bitPattern: sqlite3_column_int64(statement, i)))
            case SQLITE_FLOAT:
                append(tag: 2, sqlite3_column_double(statement, i).bitPattern)
            case SQLITE_TEXT:
                let text = sqlite3_column_text(statement, i)
                let count = Int(sqlite3_column_bytes(statement, i))
                append(tag: 3, UInt64(count))
                appendBytes(text.map(UnsafeRawPointer.init), count)
            case SQLITE_BLOB:
                let blob = sqlite3_column_blob(statement, i)
                let count = Int(sqlite3_column_bytes(statement, i))
                append(tag: 4, UInt64(count))
                appendBytes(blob, count)
            default:
                reserve(1)
                scratch.storeBytes(of: 0, toByteOffset: used, as: UInt8.self)
                used += 1
            }
        }
        flush()
        hash.finalizeAndRestart(into: rowHash)
        sum.add(UnsafeRawBufferPointer(rowHash))
    }

    private mutating func append(tag: UInt8, _ value: UInt64) {
        reserve(9)
        scratch.storeBytes(of: tag, toByteOffset: used, as: UInt8.self)
        scratch.storeBytes(of: value.bigEndian, toByteOffset: used + 1, as: UInt64.self)
        used += 9
    }

    private mutating func appendBytes(_ bytes: UnsafeRawPointer?, _ count: Int) {
        guard count > 0, let bytes else { return }
        if count > Self.directThreshold {
            flush()
            hash.update(UnsafeRawBufferPointer(start: bytes, count: count))
            return
        }
        reserve(count)
        (scratch.baseAddress! + used).copyMemory(from: bytes, byteCount: count)
        used += count
    }

    /// Room for `count` more bytes: the buffer goes to the hash when full.
    private mutating func reserve(_ count: Int) {
        if used + count > scratch.count { flush() }
    }

    private mutating func flush() {
        if used > 0 { hash.update(UnsafeRawBufferPointer(rebasing: scratch[0..<used])) }
        used = 0
    }
}

extension Statement {
    /// Steps through every row, calling `body` with the statement positioned on it.
    func withRows(_ body: (Statement) throws(StrongroomError) -> Void) throws(StrongroomError) {
        reset()
        defer { reset() }
        while try step() {
            try body(self)
        }
    }
}
