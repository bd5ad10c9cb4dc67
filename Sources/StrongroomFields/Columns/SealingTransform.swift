import Strongroom

/// Seals and opens the declared columns for one connection: Strongroom's
/// ``ColumnTransform`` extension point, with that connection's
/// ``FieldCipher``.
final class SealingTransform: ColumnTransform {
    private let cipher: FieldCipher
    /// Sealed columns by bound (ASCII lower-case) table, then column.
    private let columns: [String: [String: SealedColumn]]
    /// The connection this transform is installed on (it owns the transform).
    private unowned let connection: Connection
    private var primaryKeys: [String: PrimaryKey] = [:]

    struct PrimaryKey {
        /// The primary key's columns, in declaration order; empty without one.
        let columns: [String]
        /// True for a single `INTEGER PRIMARY KEY` (the rowid), which SQLite assigns when none is given.
        let isRowid: Bool
    }

    init(columns: [SealedColumn], cipher: FieldCipher, connection: Connection) {
        var byTable: [String: [String: SealedColumn]] = [:]
        for column in columns {
            byTable[Self.folded(column.table), default: [:]][Self.folded(column.column)] = column
        }
        self.columns = byTable
        self.cipher = cipher
        self.connection = connection
    }

    static func folded(_ name: String) -> String {
        String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    private func sealed(_ column: String, of table: String) -> SealedColumn? {
        columns[Self.folded(table)]?[Self.folded(column)]
    }

    func primaryKey(of table: String) throws(StrongroomError) -> PrimaryKey {
        if let known = primaryKeys[Self.folded(table)] { return known }
        let rows = try connection.fetchAll(sql: "PRAGMA table_info(\(SQLScript.quotedIdentifier(table)))")
        var keyed: [(position: Int, name: String, type: String)] = []
        for row in rows {
            let position = try row.decode(Int.self, column: "pk")
            if position > 0 {
                keyed.append((position, try row.decode(String.self, column: "name"), (try? row.decode(String.self, column: "type")) ?? ""))
            }
        }
        keyed.sort { $0.position < $1.position }
        let key = PrimaryKey(columns: keyed.map(\.name), isRowid: keyed.count == 1 && keyed[0].type.uppercased() == "INTEGER")
        primaryKeys[Self.folded(table)] = key
        return key
    }

    // MARK: ColumnTransform

    func contextColumns(forReading column: String, of table: String) -> [String]? {
        guard let sealed = sealed(column, of: table) else { return nil }
        if sealed.mode == .deterministic { return [] }
        return (try? primaryKey(of: table))?.columns ?? []
    }

    func open(_ stored: DatabaseValue, column: String, table: String, context: [DatabaseValue]) throws -> DatabaseValue {
        try cipher.open(stored, table: table, column: column, rowKey: context)
    }

    func transformsInserts(into table: String) -> Bool {
        columns[Self.folded(table)] != nil
    }

    func prepareInsert(into table: String, columns names: inout [String], values: inout [DatabaseValue], connection: Connection) throws {
        guard let sealedColumns = columns[Self.folded(table)] else { return }
        let key = try primaryKey(of: table)
        let needsRowKey = sealedColumns.values.contains { $0.mode != .deterministic }
        var rowKey: [DatabaseValue] = []
        if needsRowKey {
            guard !key.columns.isEmpty else {
                throw FieldError(.misuse, "\(table) has sealed columns bound to their row, but no declared PRIMARY KEY to bind them to; declare one.", table: table)
            }
            for column in key.columns {
                let index = names.firstIndex { Self.folded($0) == Self.folded(column) }
                if let index, !values[index].isNull {
                    rowKey.append(values[index])
                } else if key.isRowid {
                    // SQLite would assign the rowid after the row is written;
                    // the value must be sealed before. Assign it here, as SQLite
                    // would (past the largest rowid, and for AUTOINCREMENT past
                    // every one ever used), inside the insert's savepoint.
                    let id = try assignRowid(table: table, connection: connection)
                    if let index { values[index] = id } else { names.append(column); values.append(id) }
                    rowKey.append(id)
                } else {
                    throw FieldError(.misuse, "Inserting into \(table), whose sealed columns are bound to the primary key: give \(column) a value.", table: table)
                }
            }
        }
        for index in names.indices {
            guard let sealed = sealedColumns[Self.folded(names[index])] else { continue }
            if sealed.mode == .indexed, let indexColumn = sealed.indexColumn {
                let blindIndex = try cipher.blindIndex(values[index], table: table, column: sealed.column)
                if let existing = names.firstIndex(where: { Self.folded($0) == Self.folded(indexColumn) }) {
                    values[existing] = blindIndex
                } else {
                    names.append(indexColumn)
                    values.append(blindIndex)
                }
            }
            values[index] = try cipher.seal(values[index], table: table, column: sealed.column, rowKey: rowKey, mode: sealed.mode)
        }
    }

    private func assignRowid(table: String, connection: Connection) throws(StrongroomError) -> DatabaseValue {
        let quoted = SQLScript.quotedIdentifier(table)
        var next = (try connection.fetchOne(Int64.self, sql: "SELECT coalesce(max(rowid), 0) FROM \(quoted)") ?? 0)
        let hasSequence = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") == 1
        if hasSequence, let used = try connection.fetchOne(Int64.self, sql: "SELECT coalesce(seq, 0) FROM sqlite_sequence WHERE name = ?", arguments: [table]) {
            next = max(next, used)
        }
        guard next < Int64.max else {
            throw StrongroomError(.constraint, "\(table) has no rowid left to assign; give the primary key a value.", path: connection.path)
        }
        return .integer(next + 1)
    }
}
