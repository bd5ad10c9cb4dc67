public import Strongroom

/// Adding, changing, rebuilding and dropping the blind indexes a database
/// records (``BlindIndexRegistry``): what `strongroom fields index` does.
///
/// A rebuild computes every row's index value again, in rowid order,
/// `batchSize` rows per IMMEDIATE transaction, and records in the same
/// transaction how far it got. Killed at any moment, it loses nothing and
/// leaves no batch half done; run again, it goes on from there (the
/// registry says `building` until it is done).
///
/// ```swift
/// let index = BlindIndex("email_folded", on: "email", in: "customer", bits: 16, transformations: [.normalizedCaseFolded])
/// let report = try BlindIndexRebuild.add(index, in: queue, keyring: keyring) { progress in
///     print("\(progress.rebuilt) of \(progress.total) rows")
/// }
/// ```
///
/// While a rebuild runs, rows it has not reached yet hold the old values:
/// a lookup with the new definition misses them. Deploy the app's new
/// definition once ``BlindIndexRegistry/Entry/state`` is `ready` (or look
/// up through both for the time being).
public enum BlindIndexRebuild {
    /// How far a rebuild is.
    public struct Progress: Sendable, Hashable {
        /// Rows rebuilt, the ones of an earlier, interrupted run included.
        public let rebuilt: Int
        /// Rows in the table when the run started.
        public let total: Int
    }

    /// What a rebuild did.
    public struct Report: Sendable, Hashable {
        /// The index.
        public let index: BlindIndex
        /// Rows whose value this run computed.
        public let rows: Int
        /// Transactions committed.
        public let batches: Int
        /// The rowid an interrupted run had reached, where this one went on; nil when it started afresh.
        public let resumedAfter: Int64?
    }

    /// Adds `index` to its table, or changes the index recorded under its
    /// name to this definition, and fills it: the companion BLOB column and
    /// its SQL index are created when missing (`UNIQUE` for a unique index),
    /// the definition is recorded (with its check), then every row is
    /// rebuilt. Giving the definition already recorded confirms it (a
    /// migration's record, which has no check) and finishes an interrupted
    /// rebuild.
    ///
    /// - Throws: ``FieldError/Code/misuse`` for a definition that is not
    ///   valid for the recorded sealed columns (``BlindIndex/validate(_:of:)``),
    ///   or one named as an indexed column's own index.
    @discardableResult
    public static func add(_ index: BlindIndex, in queue: DatabaseQueue, keyring: FieldKeyring, batchSize: Int = 1000,
                           progress: ((Progress) throws -> Void)? = nil) throws -> Report {
        let resumeAfter: Int64? = try queue.write { db in
            let columns = try SealedColumnRegistry.columns(in: db, keyring: keyring)
            try BlindIndex.validate([index], of: columns)
            let recorded = try BlindIndexRegistry.entry(index.name, of: index.table, in: db, keyring: keyring)
            if let recorded, recorded.index.isColumnIndex {
                throw FieldError(.misuse, "\(index.table).\(index.name) is the blind index of indexed column \(recorded.index.parts[0].column), kept in the first format; give the new index another name.", table: index.table)
            }
            let same = recorded.map { $0.index == index && $0.verified } ?? false
            if recorded == nil { try refuseAColumnOfOtherData(index, in: db) }
            try ensureColumnAndIndex(index, in: db)
            if let recorded, recorded.index != index {
                // Another definition: its values go first (they could collide
                // under a new UNIQUE, and none matches the new key anyway).
                try db.execute(sql: "UPDATE main.\(SQLScript.quotedIdentifier(index.table)) SET \(SQLScript.quotedIdentifier(index.name)) = NULL")
            }
            let resume = same && recorded?.state == .building ? recorded?.rebuiltThrough : nil
            try BlindIndexRegistry.record(index, state: .building, rebuiltThrough: resume, keyring: keyring, in: db)
            return resume
        }
        return try fill(index, in: queue, keyring: keyring, after: resumeAfter, batchSize: batchSize, progress: progress)
    }

    /// Rebuilds the index recorded as `name` of `table` with its recorded
    /// definition: after a key rotation, or to finish a killed rebuild
    /// (from where it stopped).
    ///
    /// - Throws: ``FieldError/Code/misuse`` when no such index is recorded;
    ///   `StrongroomError.Code.untrustedRegistry` when the registry does not
    ///   verify under `keyring` (``RegistrySignature``: a row was changed
    ///   without the keyring, or a migration recorded it without
    ///   `--field-keys`: check it, then `strongroom fields confirm`).
    @discardableResult
    public static func rebuild(_ name: String, of table: String, in queue: DatabaseQueue, keyring: FieldKeyring, batchSize: Int = 1000,
                               progress: ((Progress) throws -> Void)? = nil) throws -> Report {
        let entry = try queue.read { db in try BlindIndexRegistry.entry(name, of: table, in: db, keyring: keyring) }
        guard let entry else {
            throw FieldError(.misuse, "\(table) records no blind index \(name); add it with `strongroom fields index add`.", table: table)
        }
        // An indexed column's own index has no record of its own to resume from.
        if entry.index.isColumnIndex {
            return try fill(entry.index, in: queue, keyring: keyring, after: nil, batchSize: batchSize, progress: progress)
        }
        let resume = entry.state == .building ? entry.rebuiltThrough : nil
        if entry.state == .ready {
            try queue.write { db in try BlindIndexRegistry.markBuilding(entry.index, keyring: keyring, in: db) }
        }
        return try fill(entry.index, in: queue, keyring: keyring, after: resume, batchSize: batchSize, progress: progress)
    }

    /// Drops a recorded index: its SQL index, its values (set to NULL: the
    /// column stays, as SQLite before 3.35 cannot drop a column) and its
    /// record, once the registry verifies under `keyring` (whose signature
    /// then covers the registry without it).
    public static func drop(_ name: String, of table: String, in queue: DatabaseQueue, keyring: FieldKeyring) throws {
        try queue.write { db in
            guard let entry = try BlindIndexRegistry.entry(name, of: table, in: db, keyring: keyring) else {
                throw FieldError(.misuse, "\(table) records no blind index \(name) (see `strongroom fields status`).", table: table)
            }
            if entry.index.isColumnIndex {
                throw FieldError(.misuse, "\(table).\(name) is the blind index of indexed column \(entry.index.parts[0].column): it goes with the column's sealing mode, not on its own.", table: table)
            }
            let quoted = SQLScript.quotedIdentifier
            if let existing = try existingSQLIndex(entry.index, in: db) {
                guard existing.ours else {
                    throw FieldError(.misuse, "The SQL index \(sqlIndexName(entry.index)) is on another table or column than blind index \(table).\(name): it is not dropped, and neither is the index. Check `strongroom fields status`.", table: table)
                }
                try db.execute(sql: "DROP INDEX main.\(quoted(sqlIndexName(entry.index)))")
            }
            try db.execute(sql: "UPDATE main.\(quoted(entry.index.table)) SET \(quoted(entry.index.name)) = NULL")
            try BlindIndexRegistry.remove(entry.index, keyring: keyring, in: db)
        }
    }

    /// The SQL index of a blind index: `table_name`.
    static func sqlIndexName(_ index: BlindIndex) -> String { "\(index.table)_\(index.name)" }

    /// Whether the SQL index of that name is on `index`'s table and column
    /// alone; nil when there is none. Another index of that name (`a.b_c`
    /// and `a_b.c` both name theirs `a_b_c`) is refused.
    private static func existingSQLIndex(_ index: BlindIndex, in db: Connection) throws -> (unique: Bool, ours: Bool)? {
        let name = sqlIndexName(index)
        guard let table = try db.fetchOne(String.self, sql: "SELECT tbl_name FROM main.sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE", arguments: [name]) else { return nil }
        let columns = try db.fetchAll(sql: "PRAGMA main.index_info(\(SQLScript.quotedIdentifier(name)))").map { try $0.decode(String?.self, column: "name") ?? "" }
        let ours = table.sqliteFolded == index.table.sqliteFolded && columns.map(\.sqliteFolded) == [index.name.sqliteFolded]
        let unique = try db.fetchAll(sql: "PRAGMA main.index_list(\(SQLScript.quotedIdentifier(table)))")
            .first { try $0.decode(String.self, column: "name").sqliteFolded == name.sqliteFolded }
            .map { try $0.decode(Int.self, column: "unique") != 0 } ?? false
        return (unique, ours)
    }

    /// A column the index would take over, that the registry does not give
    /// it: refused unless it holds only what index values look like
    /// (NULL, or BLOBs of 5 to 20 bytes), as a migration's empty column does.
    private static func refuseAColumnOfOtherData(_ index: BlindIndex, in db: Connection) throws {
        let columns = try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(index.table)))")
        guard let column = try columns.first(where: { try $0.decode(String.self, column: "name").sqliteFolded == index.name.sqliteFolded }) else { return }
        let name = SQLScript.quotedIdentifier(index.name), table = "main." + SQLScript.quotedIdentifier(index.table)
        let other = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM (SELECT 1 FROM \(table) WHERE \(name) IS NOT NULL AND NOT (typeof(\(name)) = 'blob' AND length(\(name)) BETWEEN 5 AND 20) LIMIT 1)") == 1
        let type = try column.decode(String.self, column: "type")
        if other || !["", "BLOB"].contains(type.asciiUppercased) {
            throw FieldError(.misuse, "\(index.table) has a column \(index.name) already, holding other data (declared \(type.isEmpty ? "without a type" : type)): blind index \(index.name) would overwrite it. Give the index another name.", table: index.table, column: index.name)
        }
    }

    /// The companion column, made when missing, and a plain SQL index on
    /// it (made UNIQUE, for a unique index, once every value is rebuilt).
    private static func ensureColumnAndIndex(_ index: BlindIndex, in db: Connection) throws {
        let quoted = SQLScript.quotedIdentifier
        let table = quoted(index.table), column = quoted(index.name), sqlIndex = quoted(sqlIndexName(index))
        let columns = try db.fetchAll(sql: "PRAGMA main.table_info(\(table))").map { try $0.decode(String.self, column: "name").sqliteFolded }
        if !columns.contains(index.name.sqliteFolded) {
            try db.execute(sql: "ALTER TABLE main.\(table) ADD COLUMN \(column) BLOB")
        }
        if let existing = try existingSQLIndex(index, in: db) {
            guard existing.ours else {
                throw FieldError(.misuse, "The SQL index \(sqlIndexName(index)) exists already, on another table or column: blind index \(index.table).\(index.name) would name its index so. Give the index another name.", table: index.table)
            }
            // Old values may collide under the new definition: UNIQUE comes back at the end.
            if existing.unique { try db.execute(sql: "DROP INDEX main.\(sqlIndex)") } else { return }
        }
        try db.execute(sql: "CREATE INDEX main.\(sqlIndex) ON \(table)(\(column))")
    }

    /// At the end of a rebuild, inside its last transaction: the SQL index
    /// made UNIQUE for a unique index, or refused with the rows whose new
    /// values are equal.
    private static func finishSQLIndex(_ index: BlindIndex, in db: Connection) throws {
        guard index.unique, let existing = try existingSQLIndex(index, in: db), existing.ours, !existing.unique else { return }
        let quoted = SQLScript.quotedIdentifier
        let table = "main." + quoted(index.table), column = quoted(index.name)
        let rowid = try db.rowidName(ofTable: index.table) ?? "rowid"
        let duplicates = try db.fetchAll(sql: "SELECT group_concat(\(rowid)) AS rows FROM \(table) WHERE \(column) IS NOT NULL GROUP BY \(column) HAVING count(*) > 1 LIMIT 3")
            .map { try $0.decode(String.self, column: "rows") }
        guard duplicates.isEmpty else {
            throw FieldError(.misuse, "Blind index \(index.table).\(index.name) is declared unique, and rows hold equal values under it (rowids \(duplicates.joined(separator: "; "))): nothing was made unique. Make those rows' values differ, or the index not unique; then run the rebuild again.", table: index.table)
        }
        try db.execute(sql: "DROP INDEX main.\(quoted(sqlIndexName(index)))")
        try db.execute(sql: "CREATE UNIQUE INDEX main.\(quoted(sqlIndexName(index))) ON \(quoted(index.table))(\(column))")
    }

    /// Adds `index` and fills it inside the caller's write transaction, all
    /// rows at once: for a database being made (`strongroom import --index`).
    public static func addInPlace(_ index: BlindIndex, keyring: FieldKeyring, in db: Connection) throws {
        try BlindIndex.validate([index], of: try SealedColumnRegistry.columns(in: db, keyring: keyring))
        if try BlindIndexRegistry.entry(index.name, of: index.table, in: db, keyring: keyring) != nil {
            throw FieldError(.misuse, "\(index.table) has a blind index \(index.name) already.", table: index.table)
        }
        try refuseAColumnOfOtherData(index, in: db)
        try ensureColumnAndIndex(index, in: db)
        try BlindIndexRegistry.record(index, state: .building, keyring: keyring, in: db)
        _ = try rebuildBatch(index, after: nil, limit: .max, keyring: keyring, in: db)
        try finishSQLIndex(index, in: db)
        try BlindIndexRegistry.advance(index, to: nil, keyring: keyring, in: db)
    }

    /// Computes the values of up to `limit` rows after rowid `after`:
    /// how many, and the last rowid done.
    private static func rebuildBatch(_ index: BlindIndex, after: Int64?, limit: Int, keyring: FieldKeyring, in db: Connection) throws -> (Int, Int64?) {
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        // Verified in every batch: each is a transaction of its own.
        let inputs = try BlindIndexInputs(index, cipher: cipher, sealedColumns: try SealedColumnRegistry.columns(in: db, keyring: keyring), in: db)
        var computed: [(Int64, DatabaseValue)] = []
        try inputs.forEach(after: after, limit: limit, in: db) { row in
            computed.append((row.rowid, try cipher.blindIndex(of: row.values, for: index, row: FieldCipher.row(row.rowKey))))
        }
        let rowid = try db.rowidName(ofTable: index.table) ?? "rowid"
        let statement = try db.prepare(sql: "UPDATE main.\(SQLScript.quotedIdentifier(index.table)) SET \(SQLScript.quotedIdentifier(index.name)) = ?1 WHERE \(rowid) = ?2")
        for (rowid, value) in computed {
            try statement.execute(arguments: [value, rowid])
        }
        return (computed.count, computed.last?.0 ?? after)
    }

    private static func fill(_ index: BlindIndex, in queue: DatabaseQueue, keyring: FieldKeyring, after resume: Int64?, batchSize: Int,
                             progress: ((Progress) throws -> Void)?) throws -> Report {
        precondition(batchSize > 0, "a batch holds at least one row")
        let (total, done) = try queue.read { db in
            let total = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(SQLScript.quotedIdentifier(index.table))") ?? 0
            let rowid = try db.rowidName(ofTable: index.table) ?? "rowid"
            let done = try resume.map { try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(SQLScript.quotedIdentifier(index.table)) WHERE \(rowid) <= ?", arguments: [$0]) ?? 0 } ?? 0
            return (total, done)
        }
        var cursor = resume
        var rows = 0, batches = 0
        while true {
            let count: Int = try queue.write { db in
                let (count, reached) = try rebuildBatch(index, after: cursor, limit: batchSize, keyring: keyring, in: db)
                // The last batch makes a unique index UNIQUE and marks it ready, in the same transaction.
                if !index.isColumnIndex {
                    if count < batchSize { try finishSQLIndex(index, in: db) }
                    try BlindIndexRegistry.advance(index, to: count < batchSize ? nil : reached, keyring: keyring, in: db)
                }
                cursor = reached
                return count
            }
            rows += count
            batches += 1
            try progress?(Progress(rebuilt: done + rows, total: max(total, done + rows)))
            if count < batchSize { break }
        }
        return Report(index: index, rows: rows, batches: batches, resumedAfter: resume)
    }
}
