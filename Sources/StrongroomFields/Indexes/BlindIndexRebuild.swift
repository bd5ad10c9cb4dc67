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
            let columns = try SealedColumnRegistry.columns(in: db)
            try BlindIndex.validate([index], of: columns)
            let recorded = try BlindIndexRegistry.entry(index.name, of: index.table, in: db, keyring: keyring)
            if let recorded, recorded.index.isColumnIndex {
                throw FieldError(.misuse, "\(index.table).\(index.name) is the blind index of indexed column \(recorded.index.parts[0].column), kept in the first format; give the new index another name.", table: index.table)
            }
            let same = recorded.map { $0.index == index && $0.verified } ?? false
            try ensureColumnAndIndex(index, replacingUnique: recorded.map { $0.index.unique != index.unique } ?? false, in: db)
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
    /// - Throws: ``FieldError/Code/misuse`` when no such index is recorded,
    ///   or its definition's check does not match under `keyring` (it was
    ///   rewritten, or recorded by a migration: confirm it with ``add(_:in:keyring:batchSize:progress:)``).
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
        guard entry.verified else {
            throw FieldError(.misuse, "Blind index \(table).\(name)'s recorded definition does not carry a check made with this keyring: a migration recorded it, another keyring did, or someone changed it. Nothing was rebuilt. If \(entry.index) is the definition you want, confirm it with `strongroom fields index add` giving exactly that definition.", table: table)
        }
        let resume = entry.state == .building ? entry.rebuiltThrough : nil
        if entry.state == .ready {
            try queue.write { db in try BlindIndexRegistry.markBuilding(entry.index, in: db) }
        }
        return try fill(entry.index, in: queue, keyring: keyring, after: resume, batchSize: batchSize, progress: progress)
    }

    /// Drops a recorded index: its SQL index, its values (set to NULL: the
    /// column stays, as SQLite before 3.35 cannot drop a column) and its record.
    public static func drop(_ name: String, of table: String, in queue: DatabaseQueue) throws {
        try queue.write { db in
            guard let entry = try BlindIndexRegistry.entry(name, of: table, in: db) else {
                throw FieldError(.misuse, "\(table) records no blind index \(name) (see `strongroom fields status`).", table: table)
            }
            if entry.index.isColumnIndex {
                throw FieldError(.misuse, "\(table).\(name) is the blind index of indexed column \(entry.index.parts[0].column): it goes with the column's sealing mode, not on its own.", table: table)
            }
            let quoted = SQLScript.quotedIdentifier
            try db.execute(sql: "DROP INDEX IF EXISTS main.\(quoted("\(entry.index.table)_\(entry.index.name)"))")
            try db.execute(sql: "UPDATE main.\(quoted(entry.index.table)) SET \(quoted(entry.index.name)) = NULL")
            try BlindIndexRegistry.remove(entry.index, in: db)
        }
    }

    /// The companion column and its SQL index, made when missing; the SQL
    /// index made again when uniqueness changes.
    private static func ensureColumnAndIndex(_ index: BlindIndex, replacingUnique: Bool, in db: Connection) throws {
        let quoted = SQLScript.quotedIdentifier
        let table = quoted(index.table), column = quoted(index.name), sqlIndex = quoted("\(index.table)_\(index.name)")
        let columns = try db.fetchAll(sql: "PRAGMA main.table_info(\(table))").map { try $0.decode(String.self, column: "name").sqliteFolded }
        if !columns.contains(index.name.sqliteFolded) {
            try db.execute(sql: "ALTER TABLE main.\(table) ADD COLUMN \(column) BLOB")
        }
        if replacingUnique { try db.execute(sql: "DROP INDEX IF EXISTS main.\(sqlIndex)") }
        try db.execute(sql: "CREATE \(index.unique ? "UNIQUE " : "")INDEX IF NOT EXISTS main.\(sqlIndex) ON \(table)(\(column))")
    }

    /// Adds `index` and fills it inside the caller's write transaction, all
    /// rows at once: for a database being made (`strongroom import --index`).
    public static func addInPlace(_ index: BlindIndex, keyring: FieldKeyring, in db: Connection) throws {
        try BlindIndex.validate([index], of: try SealedColumnRegistry.columns(in: db))
        if try BlindIndexRegistry.entry(index.name, of: index.table, in: db) != nil {
            throw FieldError(.misuse, "\(index.table) has a blind index \(index.name) already.", table: index.table)
        }
        try ensureColumnAndIndex(index, replacingUnique: false, in: db)
        try BlindIndexRegistry.record(index, state: .building, keyring: keyring, in: db)
        _ = try rebuildBatch(index, after: nil, limit: .max, keyring: keyring, in: db)
        try BlindIndexRegistry.advance(index, to: nil, in: db)
    }

    /// Computes the values of up to `limit` rows after rowid `after`:
    /// how many, and the last rowid done.
    private static func rebuildBatch(_ index: BlindIndex, after: Int64?, limit: Int, keyring: FieldKeyring, in db: Connection) throws -> (Int, Int64?) {
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        let inputs = try BlindIndexInputs(index, cipher: cipher, sealedColumns: try SealedColumnRegistry.columns(in: db), in: db)
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
                // The last batch marks the index ready in the same transaction.
                if !index.isColumnIndex {
                    try BlindIndexRegistry.advance(index, to: count < batchSize ? nil : reached, in: db)
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
