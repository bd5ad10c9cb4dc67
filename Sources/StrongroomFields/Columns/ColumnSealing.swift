public import Strongroom

/// Sealing the plaintext values of existing columns in place, and opening
/// them again: what `strongroom import --seal` and `export --field-keys` do.
public enum ColumnSealing {
    /// Seals the values of `columns` where they are, adding the blind index
    /// column (and an index on it) of each indexed column that lacks one,
    /// and records the columns in the database. Run it inside a write
    /// transaction: it seals everything or nothing.
    ///
    /// ```swift
    /// try queue.write { db in
    ///     try ColumnSealing.sealInPlace([.indexed("Email", in: "Customer", indexColumn: "Email_blind_index")], keyring: keyring, in: db)
    /// }
    /// try queue.inDatabase { db in  // VACUUM runs outside a transaction: see below
    ///     try db.execute(sql: "VACUUM")
    ///     _ = try db.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
    /// }
    /// ```
    ///
    /// Every column is checked before anything is written: a column that is
    /// sealed already, missing, of a virtual table (or of one's shadow
    /// table, or held by an FTS index as its `content=`, directly or
    /// through a view),
    /// part of the primary key, the parent key of a foreign key with an ON
    /// UPDATE action, or one whose sealing would run a trigger (below), and
    /// a blind index column in the primary key, of the batch, holding any
    /// value, or a foreign key's parent key with an action, throws with the
    /// database as it was (inside the caller's transaction: outside one,
    /// another connection may change the schema between the checks and the
    /// writing). The writing runs in a savepoint and must change every value
    /// and keep every row: anything that fails, skips a row or deletes one
    /// (a REPLACE conflict) once it has begun leaves every column as it was.
    ///
    /// What it leaves of the plaintext:
    /// - **In the pages**: old copies of cells that SQLite's rebalancing
    ///   left in pages' unused space, which `secure_delete` does not zero.
    ///   A `VACUUM` after the transaction rewrites every page from the live
    ///   rows, and a checkpoint moves them from the `-wal` into the file
    ///   (`PlaintextConversion.importPlaintext(from:to:key:finishing:)`
    ///   does both after its `finishing`).
    /// - **Index samples**: `sqlite_stat2`, `sqlite_stat3` and
    ///   `sqlite_stat4` (what a SQLite built with STAT4 writes at ANALYZE)
    ///   are emptied; `sqlite_stat1` holds counts only.
    /// - **Triggers**: a trigger the sealing UPDATE would run sees each
    ///   plaintext value as `old` and could copy it elsewhere (an audit
    ///   table, an FTS index kept in step, a mirror table filled with
    ///   `INSERT … SELECT *`), or skip rows (`RAISE(IGNORE)`), so sealing
    ///   refuses with ``FieldError/Code/misuse``, naming it, whatever its
    ///   body does: drop it, seal, and create it again (one that sets
    ///   `updated_at` too). A trigger `UPDATE OF` other columns only is no
    ///   obstacle; one that calls a sealed-column function is refused as
    ///   planted (`untrustedSchema`). Copies the application keeps elsewhere
    ///   (another column, an FTS table with its own content) are the
    ///   application's.
    public static func sealInPlace(_ columns: [SealedColumn], keyring: FieldKeyring, in db: Connection) throws {
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        // Checked with the functions lent, so that a trigger calling one is
        // compiled as the application's statements are (and refused).
        let keys = try FieldFunctions.lending(cipher, to: db) { try check(columns, keyring: keyring, in: db) }
        // In a savepoint: whatever fails once writing has begun (a check
        // that only the new blind index column makes true, a constraint)
        // leaves every column as it was, even to a caller that catches the
        // error and commits.
        try db.inSavepoint { db in
            // Values already sealed (whatever the registry says) must open first.
            try FieldKeyCheck.recordActiveKey(of: keyring, sealing: try SealedValueSearch.sealedColumns(in: db), in: db)
            try FieldFunctions.lending(cipher, to: db) { try seal(columns, keys: keys, keyring: keyring, in: db) }
        }
    }

    /// Checks every column, writing nothing; returns each one's primary key.
    private static func check(_ columns: [SealedColumn], keyring: FieldKeyring, in db: Connection) throws -> [[String]] {
        let recorded = try SealedColumnRegistry.columns(in: db, keyring: keyring)
        for (index, column) in columns.enumerated() where columns[..<index].contains(where: { $0.names(sameColumnAs: column) }) {
            throw FieldError(.misuse, "\(column.table).\(column.column) is named twice (names are compared without case, as SQLite compares them); give each column once, with its mode.", table: column.table, column: column.column)
        }
        var keys: [[String]] = []
        for column in columns {
            if recorded.contains(where: { $0.names(sameColumnAs: column) }) {
                throw FieldError(.misuse, "\(column.table).\(column.column) is sealed already.", table: column.table, column: column.column)
            }
            try checkExists(column, in: db)
            let key = try FieldRotation.primaryKey(of: column.table, in: db)
            if key.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) {
                throw FieldError(.misuse, "\(column.table).\(column.column) is part of the primary key, which sealed values are bound to: it cannot be sealed itself.", table: column.table, column: column.column)
            }
            guard !key.isEmpty || column.mode == .deterministic else {
                throw FieldError(.misuse, "\(column.table) has no declared PRIMARY KEY to bind \(column.column)'s sealed values to; seal it deterministic, or give the table a primary key first.", table: column.table, column: column.column)
            }
            try checkIndexColumn(of: column, key: key, batch: columns, recorded: recorded, in: db)
            try refuseTriggers(of: column, in: db)
            try refuseForeignKeyActions(on: column, in: db)
            keys.append(key)
        }
        return keys
    }

    private static func seal(_ columns: [SealedColumn], keys: [[String]], keyring: FieldKeyring, in db: Connection) throws {
        for (column, key) in zip(columns, keys) {
            let table = "main." + SQLScript.quotedIdentifier(column.table), name = SQLScript.quotedIdentifier(column.column)
            // Table, column and mode are bound (?1, ?2, ?3), never pasted as literals.
            var assignments: [String] = []
            if column.mode == .indexed, let indexColumn = column.indexColumn {
                if try !columnNames(of: column.table, in: db).contains(where: { $0.sqliteFolded == indexColumn.sqliteFolded }) {
                    try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(SQLScript.quotedIdentifier(indexColumn)) BLOB")
                    try db.execute(sql: "CREATE INDEX main.\(SQLScript.quotedIdentifier("\(column.table)_\(indexColumn)")) ON \(SQLScript.quotedIdentifier(column.table))(\(SQLScript.quotedIdentifier(indexColumn)))")
                    // A trigger `UPDATE OF` the new column fires now.
                    try refuseTriggers(of: column, in: db)
                }
                assignments.append("\(SQLScript.quotedIdentifier(indexColumn)) = strongroom_blind_index(\(name), ?1, ?2)")
            }
            let rowKey = column.mode == .deterministic ? "" : ", " + key.map(SQLScript.quotedIdentifier).joined(separator: ", ")
            assignments.append("\(name) = strongroom_seal(\(name), ?1, ?2, ?3\(rowKey))")
            // count(column) counts its non-NULL values: the rows the UPDATE must change.
            let counts = try db.fetchAll(sql: "SELECT count(*), count(\(name)) FROM \(table)")
            let rows = try counts.first?.decode(Int.self, at: 0) ?? 0, values = try counts.first?.decode(Int.self, at: 1) ?? 0
            try db.execute(sql: "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(name) IS NOT NULL",
                           arguments: [column.table, column.column, column.mode.rawValue])
            // No row lost: a REPLACE conflict deletes rows (their foreign
            // keys' ON DELETE actions run) and still counts them as changed.
            let rowsLeft = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table)") ?? 0
            guard rowsLeft == rows else {
                throw FieldError(.misuse, "Sealing \(column.table).\(column.column) left \(rowsLeft) of its \(rows) rows: a constraint resolved a conflict by deleting rows (ON CONFLICT REPLACE, on its blind index column for one); nothing was sealed. Remove what deletes them, then seal again.", table: column.table, column: column.column)
            }
            // Every value or none: a row the UPDATE skips keeps its plaintext
            // under a registry that calls the column sealed.
            guard db.changesCount == values else {
                throw FieldError(.misuse, "Sealing \(column.table).\(column.column) changed \(db.changesCount) of its \(values) values: something skipped the others (an ON CONFLICT IGNORE constraint, on its blind index column for one); nothing was sealed. Remove what skips them, then seal again.", table: column.table, column: column.column)
            }
        }
        try emptyIndexSamples(in: db)
        try SealedColumnRegistry.record(columns, keyring: keyring, in: db)
    }

    /// Refuses when the UPDATE that seals `column` would run any trigger
    /// (or a view one reads): it would see each plaintext value, as `old`,
    /// and what it may do with it cannot be told from what it reads (an
    /// `INSERT … SELECT *` reads nothing SQLite reports, a virtual table's
    /// `'rebuild'` reads the table as it runs, a foreign key's cascade runs
    /// the child table's triggers, a generated column hides the column).
    /// The probe sets the column (and its blind index column, when there is
    /// one) to itself: SQLite compiles the triggers the sealing UPDATE fires.
    static func refuseTriggers(of column: SealedColumn, in db: Connection) throws {
        let name = SQLScript.quotedIdentifier(column.column)
        var assignments = ["\(name) = \(name)"]
        if column.mode == .indexed, let indexColumn = column.indexColumn,
           let existing = try columnNames(of: column.table, in: db).first(where: { $0.sqliteFolded == indexColumn.sqliteFolded }) {
            assignments.append("\(SQLScript.quotedIdentifier(existing)) = \(SQLScript.quotedIdentifier(existing))")
        }
        let probe = "UPDATE main.\(SQLScript.quotedIdentifier(column.table)) SET \(assignments.joined(separator: ", ")) WHERE \(name) IS NOT NULL"
        // Compiled as the application's statements are: a trigger that calls
        // a sealed-column function is refused here as planted.
        _ = try db.prepare(sql: probe)
        let run = try db.triggersAndViews(runBy: probe)
        guard run.isEmpty else {
            throw FieldError(.misuse, "Sealing \(column.table).\(column.column) would run \(run.joined(separator: ", ")) (a trigger, or a view one reads) with each plaintext value, which it could copy elsewhere in the file; nothing was sealed. Drop the trigger, seal the column, then create it again if it still makes sense on sealed values.", table: column.table, column: column.column)
        }
    }

    /// The blind index column an indexed column names must be a column the
    /// blind index may overwrite: not in the primary key (the envelopes are
    /// bound to it), not a column of the batch or one sealed already, and,
    /// when it exists, empty: whatever it holds (a photo, a hash, a blind
    /// index `openInPlace` left) would be overwritten, and kept where the
    /// sealed value is NULL; and no foreign key with an ON UPDATE action
    /// may reference it.
    static func checkIndexColumn(of column: SealedColumn, key: [String], batch: [SealedColumn], recorded: [SealedColumn], in db: Connection) throws {
        guard column.mode == .indexed, let indexColumn = column.indexColumn else { return }
        let table = column.table.sqliteFolded, folded = indexColumn.sqliteFolded
        func refuse(_ why: String) -> FieldError {
            FieldError(.misuse, "\(column.table).\(column.column)'s blind index column \(indexColumn) \(why); nothing was sealed. Name a new column for the blind index.", table: column.table, column: column.column)
        }
        if key.contains(where: { $0.sqliteFolded == folded }) {
            throw refuse("is part of the primary key, which the sealed values are bound to")
        }
        let others = (batch + recorded).filter { $0.table.sqliteFolded == table && !($0.names(sameColumnAs: column) && $0.indexColumn == column.indexColumn) }
        if folded == column.column.sqliteFolded || others.contains(where: { $0.column.sqliteFolded == folded || $0.indexColumn?.sqliteFolded == folded }) {
            throw refuse("is a sealed column, or another one's blind index column")
        }
        guard let existing = try columnNames(of: column.table, in: db).first(where: { $0.sqliteFolded == folded }) else { return }
        let held = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(SQLScript.quotedIdentifier(column.table)) WHERE \(SQLScript.quotedIdentifier(existing)) IS NOT NULL") ?? 0
        if held > 0 {
            throw refuse("holds values (\(held) rows), which the blind index would overwrite (set it to NULL first if they are a blind index no longer wanted)")
        }
        try refuseForeignKeyActions(on: existing, of: column, in: db)
    }

    /// Refuses when a foreign key's parent key is the column and it has an
    /// ON UPDATE action: sealing would set the child rows to NULL, to their
    /// default, or to the envelope (which opens only in the parent's row),
    /// and SQLite runs the action without a word. (With NO ACTION or
    /// RESTRICT, a referenced value fails the sealing UPDATE instead.)
    static func refuseForeignKeyActions(on column: SealedColumn, in db: Connection) throws {
        try refuseForeignKeyActions(on: column.column, of: column, in: db)
    }

    /// The same for `parentKey`, a column of `column`'s table (the sealed
    /// column, or its blind index column).
    static func refuseForeignKeyActions(on parentKey: String, of column: SealedColumn, in db: Connection) throws {
        for child in try db.fetchAll(String.self, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name") {
            for reference in try db.fetchAll(sql: "PRAGMA main.foreign_key_list(\(SQLScript.quotedIdentifier(child)))") {
                guard try reference.decode(String.self, column: "table").sqliteFolded == column.table.sqliteFolded,
                      let referenced = try reference.decode(String?.self, column: "to"), referenced.sqliteFolded == parentKey.sqliteFolded else { continue }
                let action = try reference.decode(String.self, column: "on_update")
                guard action == "NO ACTION" || action == "RESTRICT" else {
                    throw FieldError(.misuse, "\(child) has a foreign key to \(column.table).\(parentKey) with ON UPDATE \(action): sealing \(column.column) would change \(child)'s rows (to NULL, their default, or an envelope that opens only in \(column.table)); nothing was sealed. Point the foreign key at the primary key, or seal another column.", table: column.table, column: column.column)
                }
            }
        }
    }

    static func columnNames(of table: String, in db: Connection) throws -> [String] {
        try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))").map { try $0.decode(String.self, column: "name") }
    }

    /// Empties the index sample tables. A SQLite built with STAT4 keeps
    /// sample keys of each index in `sqlite_stat4` (STAT3 and STAT2, in
    /// older ones, in `sqlite_stat3` and `sqlite_stat2`): for an index on a
    /// sealed column, copies of its plaintext. A row may name its table by
    /// an old name (ALTER TABLE RENAME leaves these tables alone, and SQLite
    /// finds samples by index), so every row goes. Neither engine here
    /// writes or reads them; a plaintext file analyzed elsewhere brings
    /// them. `sqlite_stat1` holds only counts and stays; an ANALYZE on a
    /// STAT4 build samples again, the envelopes.
    static func emptyIndexSamples(in db: Connection) throws {
        let samples = try db.fetchAll(String.self, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' AND lower(name) IN ('sqlite_stat2', 'sqlite_stat3', 'sqlite_stat4')")
        for sampleTable in samples {
            try db.execute(sql: "DELETE FROM main.\(SQLScript.quotedIdentifier(sampleTable))")
        }
    }

    /// A column named to be sealed must be one of a table of the main
    /// database: a misspelled table or column is the caller's mistake,
    /// named as such (not SQLite's "no such column" from the UPDATE, nor a
    /// missing primary key of a table that does not exist).
    static func checkExists(_ column: SealedColumn, in db: Connection) throws {
        let objects = try db.fetchAll(sql: "SELECT type, name FROM main.sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            .map { (type: try $0.decode(String.self, column: "type"), name: try $0.decode(String.self, column: "name")) }
        guard let object = objects.first(where: { $0.name.sqliteFolded == column.table.sqliteFolded }) else {
            let tables = objects.filter { $0.type == "table" && !$0.name.hasPrefix("strongroom_") }.map(\.name).sorted()
            throw FieldError(.misuse, "There is no table \(column.table) to seal \(column.column) in (the tables are \(tables.isEmpty ? "none" : tables.joined(separator: ", "))); check the table's name.",
                             table: column.table, column: column.column)
        }
        guard object.type == "table" else {
            throw FieldError(.misuse, "\(object.name) is a view, not a table: seal the column of the table it reads.", table: column.table, column: column.column)
        }
        // Virtual tables (SQLite stores each as `CREATE VIRTUAL TABLE name
        // USING module(arguments)`, however it was typed).
        // Read as SQLite reads the stored text (a schema rewritten with
        // `writable_schema` may put two spaces or a comment between the
        // words, or write them in lower case).
        // SQLite 3.15 builds each object from its SQL alone, and SQLite 3.46
        // takes the row's type in any case: every row is read, and a
        // virtual table goes by the name in its SQL as well as the row's.
        let schema = try db.fetchAll(sql: "SELECT CAST(name AS TEXT) AS name, CAST(sql AS TEXT) AS sql FROM main.sqlite_master WHERE sql IS NOT NULL")
            .map { (name: (try? $0.decode(String.self, column: "name")) ?? "", sql: try $0.decode(String.self, column: "sql")) }
        // SQLite 3.46 reads a byte-order mark that starts a token as space,
        // SQLite 3.15 (and the tokenizer) as part of a name: what such SQL
        // defines depends on the engine that reads it.
        if let marked = schema.first(where: { $0.sql.unicodeScalars.contains("\u{FEFF}") }) {
            throw FieldError(.misuse, "The SQL of \(marked.name) in the schema holds a byte-order mark (U+FEFF), which SQLite 3.46 reads as space and SQLite 3.15 as part of a name: what it defines (a virtual table, an FTS index of \(object.name)) cannot be told, so nothing was sealed. Create it again without the mark, and find out who wrote it.", table: column.table, column: column.column)
        }
        let virtual = schema
            .filter { isVirtualTable($0.sql) }
            .flatMap { row in Set([row.name, virtualTableName(row.sql) ?? row.name]).map { (name: $0, sql: row.sql) } }
        let table = object.name.sqliteFolded
        if virtual.contains(where: { $0.name.sqliteFolded == table }) {
            throw FieldError(.misuse, "\(object.name) is a virtual table (FTS, R-tree…): its module keeps copies of what it holds (an FTS index, every term) that sealing cannot reach. Seal the column of an ordinary table.", table: column.table, column: column.column)
        }
        if let owner = virtual.first(where: { owner in shadowSuffixes(of: owner.sql).contains { (owner.name + "_" + $0).sqliteFolded == table } }) {
            throw FieldError(.misuse, "\(object.name) has the name of a shadow table of the virtual table \(owner.name) (where its module stores what it holds, an FTS index's terms among them): sealing it would leave them, and break \(owner.name). Seal the column of an ordinary table; if \(object.name) is one of yours, rename it.", table: column.table, column: column.column)
        }
        // An FTS index whose `content=` is this table, or a view that reads
        // the column, keeps its own copy of the terms it indexed.
        for index in virtual {
            switch try indexesExternally(index.sql, column: column.column, of: object.name, in: db) {
            case nil: continue
            case .reads:
                throw FieldError(.misuse, "The virtual table \(index.name) is an FTS index of \(object.name) as its external content (`content=`) and keeps every term it indexed, which sealing cannot reach. Drop it, seal, and index something else.", table: column.table, column: column.column)
            case .unreadable(let content):
                throw FieldError(.misuse, "The virtual table \(index.name) is an FTS index whose external content (`content=`) \(content) cannot be read here (it is gone, or calls a function, collation or module only the application has): what it indexed cannot be told, and it keeps every term, perhaps of \(object.name).\(column.column), which sealing cannot reach. Drop it, or seal where \(content) can be read.", table: column.table, column: column.column)
            }
        }
        let columns = try columnNames(of: object.name, in: db)
        guard columns.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) else {
            throw FieldError(.misuse, "Table \(object.name) has no column \(column.column) (its columns are \(columns.joined(separator: ", "))); check the column's name.",
                             table: column.table, column: column.column)
        }
    }

    /// Opens every sealed column the database records, in place (the values
    /// become plain again), and removes the record. Blind index columns are
    /// left to the caller. Run it inside a write transaction.
    ///
    /// - Returns: the columns that were sealed.
    @discardableResult
    public static func openInPlace(keyring: FieldKeyring, in db: Connection) throws -> [SealedColumn] {
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        return try FieldFunctions.lending(cipher, to: db) { try open(keyring: keyring, in: db) }
    }

    private static func open(keyring: FieldKeyring, in db: Connection) throws -> [SealedColumn] {
        let columns = try SealedColumnRegistry.columns(in: db, keyring: keyring)
        for column in columns {
            let key = try FieldRotation.primaryKey(of: column.table, in: db)
            let table = "main." + SQLScript.quotedIdentifier(column.table), name = SQLScript.quotedIdentifier(column.column)
            let rowKey = column.mode == .deterministic ? "" : ", " + key.map(SQLScript.quotedIdentifier).joined(separator: ", ")
            try db.execute(sql: "UPDATE \(table) SET \(name) = strongroom_open(\(name), ?1, ?2\(rowKey)) WHERE \(name) IS NOT NULL",
                           arguments: [column.table, column.column])
        }
        try db.execute(sql: "DROP TABLE IF EXISTS main.\(SealedColumnRegistry.table)")
        try db.execute(sql: "DROP TABLE IF EXISTS main.\(FieldKeyCheck.table)")
        try db.execute(sql: "DROP TABLE IF EXISTS main.\(RegistrySignature.table)")
        return columns
    }

    /// Opens every value of every recorded sealed column and reports each
    /// one that fails, by table, column and row (for `strongroom verify`);
    /// a registry that does not verify under `keyring` is reported first
    /// (``FieldError/Code/untrustedRegistry``).
    public static func failures(keyring: FieldKeyring, in db: Connection, limit: Int = 100) throws -> [FieldError] {
        let cipher = try FieldCipher(keyring: keyring, contextRecordedIn: db)
        var failures: [FieldError] = []
        // A registry that does not verify is a finding; its columns are
        // still opened, which writes nothing.
        if let problem = try RegistrySignature.problem(with: keyring, in: db) {
            failures.append(FieldError(.untrustedRegistry, problem.message))
        }
        for column in try SealedColumnRegistry.columns(in: db) {
            let present = try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(column.table)))")
                .contains { row in (try? row.decode(String.self, column: "name"))?.sqliteFolded == column.column.sqliteFolded }
            guard present else {
                failures.append(FieldError(.misuse, "\(column.table).\(column.column) is recorded as sealed, but the database has no such column: renamed (its values are bound to the old name and no longer open) or dropped without its record.", table: column.table, column: column.column))
                if failures.count >= limit { return failures }
                continue
            }
            let key = column.mode == .deterministic ? [] : try FieldRotation.primaryKey(of: column.table, in: db)
            for row in try StoredValues.rows(of: column.table, column: column.column, key: key, in: db) {
                do {
                    _ = try cipher.open(row.stored, table: column.table, column: column.column, rowKey: row.rowKey, mode: column.mode)
                } catch {
                    failures.append(error)
                    if failures.count >= limit { return failures }
                }
            }
        }
        return failures
    }
}
