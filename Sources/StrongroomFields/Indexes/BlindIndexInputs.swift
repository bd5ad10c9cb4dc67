import Strongroom

/// Reads, row by row in rowid order, the plain values an index covers: its
/// sealed columns opened with the cipher (each bound to its row), its plain
/// ones as stored. What the planner and a rebuild compute from, on a
/// connection that seals nothing itself (the tools').
struct BlindIndexInputs {
    let index: BlindIndex
    let cipher: FieldCipher
    private let sql: String
    private let keyColumns: [String]
    /// Per part: its sealed column, or nil for a plain column.
    private let sealing: [SealedColumn?]

    /// One row: its rowid, its primary key (as sealed values are bound to
    /// it), and the index's inputs (one per part, before transformation).
    struct Row {
        let rowid: Int64
        let rowKey: [DatabaseValue]
        let values: [DatabaseValue]
    }

    init(_ index: BlindIndex, cipher: FieldCipher, sealedColumns: [SealedColumn], in db: Connection) throws {
        self.index = index
        self.cipher = cipher
        sealing = index.parts.map { part in
            sealedColumns.first { $0.table.sqliteFolded == index.table.sqliteFolded && $0.column.sqliteFolded == part.column.sqliteFolded }
        }
        keyColumns = try FieldRotation.primaryKey(of: index.table, in: db)
        guard let rowid = try db.rowidName(ofTable: index.table) else {
            throw FieldError(.misuse, "\(index.table) is a WITHOUT ROWID table (or its columns hide every name of the rowid): its blind indexes are rebuilt and planned in rowid order, which it has not.", table: index.table)
        }
        let quoted = SQLScript.quotedIdentifier
        // Sealed parts as expressions (`+column`): a connection that seals
        // (the application's own) opens only columns, so the envelopes come
        // as stored whichever connection reads them.
        let selected = [rowid] + keyColumns.map(quoted) + zip(index.parts, sealing).map { part, sealed in
            sealed == nil ? quoted(part.column) : "+" + quoted(part.column)
        }
        sql = "SELECT \(selected.joined(separator: ", ")) FROM main.\(quoted(index.table)) WHERE \(rowid) >= ?1 ORDER BY \(rowid) LIMIT ?2"
    }

    /// Calls `body` with each row after rowid `after` (all rows for nil), at
    /// most `limit` of them.
    func forEach(after: Int64?, limit: Int = .max, in db: Connection, _ body: (Row) throws -> Void) throws {
        if after == Int64.max { return }
        let statement = try db.prepare(sql: sql)
        let keyCount = keyColumns.count
        try statement.forEachRow(arguments: [after.map { $0 + 1 } ?? Int64.min, limit == .max ? -1 : limit]) { row in
            let rowid = try row.decode(Int64.self, at: 0)
            let rowKey = (0..<keyCount).map { row[1 + $0] }
            var values: [DatabaseValue] = []
            values.reserveCapacity(sealing.count)
            for (position, sealed) in sealing.enumerated() {
                let stored = row[1 + keyCount + position]
                if let sealed {
                    values.append(try cipher.open(stored, table: sealed.table, column: sealed.column,
                                                  rowKey: sealed.mode == .deterministic ? [] : rowKey, mode: sealed.mode))
                } else {
                    values.append(stored)
                }
            }
            try body(Row(rowid: rowid, rowKey: rowKey, values: values))
        }
    }

    /// The table's row count.
    func count(in db: Connection) throws -> Int {
        try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(SQLScript.quotedIdentifier(index.table))") ?? 0
    }
}
