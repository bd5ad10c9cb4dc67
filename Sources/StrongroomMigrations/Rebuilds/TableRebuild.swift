public import Strongroom

/// Changes a table's shape with SQLite's documented 12-step procedure
/// (https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table
/// Schema Changes"): create the new table, copy the rows (with their rowids),
/// drop the old table, rename the new one, recreate indexes, triggers and views.
///
/// Every view and trigger that names the table (on any table, and views over
/// those views) is dropped before and created again after, so the procedure
/// also works on SQLite 3.26 and later, where `ALTER TABLE … RENAME` re-checks
/// the whole schema. Views must still read and triggers still compile
/// afterwards, or the rebuild fails naming the object. The `AUTOINCREMENT`
/// counter is kept.
///
/// The runner calls it inside a migration's transaction with foreign keys
/// switched off *outside* that transaction (the default for every migration:
/// ``Migration/ForeignKeyChecks/deferred``), so dropping the old table never
/// fires `ON DELETE CASCADE` on its children; `PRAGMA foreign_key_check` runs
/// before the commit.
///
/// ```swift
/// Migration(version: 7, description: "widen price") { db in
///     try TableRebuild.rebuild(db, table: "track", to: """
///         CREATE TABLE track(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(10,2) NOT NULL DEFAULT 0)
///         """)
/// }
/// ```
public enum TableRebuild {
    /// Rebuilds `table` to the definition in `createTableSQL` (a `CREATE TABLE`
    /// for the same name), copying the columns both definitions share.
    /// - Returns: the number of rows copied.
    @discardableResult
    public static func rebuild(_ db: Connection, table: String, to createTableSQL: String) throws -> Int {
        guard let new = CreateTableDefinition(createTableSQL), new.table.sqliteFolded == table.sqliteFolded else {
            throw MigrationError(.unsupportedRebuild, "The rebuild of \(table) needs a CREATE TABLE \(table) (...) statement with the new definition.")
        }
        let catalog = try SchemaCatalog(db)
        let old = try definition(of: table, in: catalog)
        let shared = new.columns.filter { column in old.columns.contains { $0.sqliteFolded == column.sqliteFolded } }
        let change = TableChange(name: old.table, definition: new, columnMapping: shared.map { ($0, $0) })
        return try perform(db, [change], rewritten: [:], catalog: catalog)
    }

    /// `ALTER TABLE table DROP COLUMN column` on SQLite versions without it
    /// (before 3.35; Debian 12's SQLCipher is 3.15), by a rebuild that keeps
    /// rowids. Refused (like SQLite's own) when the column is a key, unique,
    /// or used by an index, a constraint, another table's foreign key, a view
    /// or a trigger.
    ///
    /// ```swift
    /// try TableRebuild.dropColumn(db, table: "customer", column: "fax")
    /// ```
    /// - Returns: the number of rows copied.
    @discardableResult
    public static func dropColumn(_ db: Connection, table: String, column: String) throws -> Int {
        let catalog = try SchemaCatalog(db)
        var definition = try definition(of: table, in: catalog)
        guard let index = definition.items.firstIndex(where: { $0.column?.sqliteFolded == column.sqliteFolded }) else {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column): table \(table) has no such column.")
        }
        let columnTokens = SQLTokenizer.tokenize(definition.items[index].text)
        if columnTokens.contains(where: { $0.isKeyword("PRIMARY") }) || columnTokens.contains(where: { $0.isKeyword("UNIQUE") }) {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): it is a PRIMARY KEY or UNIQUE column.")
        }
        if definition.columns.count == 1 {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column): it is the only column of \(table).")
        }
        let finder = ColumnReferenceFinder(table: definition.table, column: column, catalog: catalog)
        for object in catalog.objects {
            let references = try references(to: column, of: table, in: object, finder: finder, change: "drop", includingUpdateOfLists: false)
            if object.kind == .table && object.name.sqliteFolded == definition.table.sqliteFolded {
                // The column's own definition goes with it; anything else in the table uses it.
                let ownRange = definition.items[index].range
                if references.contains(where: { !ownRange.contains($0.lowerBound) }) {
                    throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): a constraint of the table (a key, CHECK or foreign key) uses it; rebuild the table with the rebuild directive instead.")
                }
            } else if !references.isEmpty {
                throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): \(object.kind.rawValue) \(object.name) uses it; drop or change the \(object.kind.rawValue) first.")
            }
        }
        definition.items.remove(at: index)
        let change = TableChange(name: definition.table, definition: definition, columnMapping: definition.columns.map { ($0, $0) })
        return try perform(db, [change], rewritten: [:], catalog: catalog)
    }

    /// `ALTER TABLE table RENAME COLUMN from TO to`, as SQLite 3.25 does it:
    /// every reference to the column is rewritten (the table's definition and
    /// constraints, its indexes, other tables' foreign keys, views and
    /// triggers anywhere in the schema), and nothing else. A reference that
    /// cannot be resolved with certainty makes it refuse, naming the object.
    @discardableResult
    static func renameColumn(_ db: Connection, table: String, from: String, to: String) throws -> Int {
        let catalog = try SchemaCatalog(db)
        let definition = try definition(of: table, in: catalog)
        guard definition.columns.contains(where: { $0.sqliteFolded == from.sqliteFolded }) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rename column \(from): table \(table) has no such column.")
        }
        if definition.columns.contains(where: { $0.sqliteFolded == to.sqliteFolded }) && from.sqliteFolded != to.sqliteFolded {
            throw MigrationError(.unsupportedRebuild, "Cannot rename column \(from) to \(to): table \(table) already has a column \(to).")
        }
        let finder = ColumnReferenceFinder(table: definition.table, column: from, catalog: catalog)
        var rewritten: [SchemaCatalog.Object.Key: String] = [:]
        for object in catalog.objects {
            let references = try references(to: from, of: table, in: object, finder: finder, change: "rename")
            if !references.isEmpty {
                rewritten[object.key] = replacing(references, in: object.sql, with: SQLScript.quotedIdentifier(to))
            }
        }
        // The table itself, then every table whose foreign key names the column.
        var changes: [TableChange] = []
        for object in catalog.objects where object.kind == .table {
            guard let sql = rewritten[object.key], let newDefinition = CreateTableDefinition(sql),
                  let oldDefinition = CreateTableDefinition(object.sql) else { continue }
            changes.append(TableChange(name: object.name, definition: newDefinition, columnMapping: Array(zip(newDefinition.columns, oldDefinition.columns))))
        }
        let isRenamedTable = { (change: TableChange) in change.name.sqliteFolded == definition.table.sqliteFolded }
        guard changes.contains(where: isRenamedTable) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rename column \(from) of \(table): the table's definition could not be rewritten.")
        }
        return try perform(db, changes.filter(isRenamedTable) + changes.filter { !isRenamedTable($0) }, rewritten: rewritten, catalog: catalog)
    }

    private static func references(to column: String, of table: String, in object: SchemaCatalog.Object, finder: ColumnReferenceFinder,
                                   change: String, includingUpdateOfLists: Bool = true) throws -> [Range<Int>] {
        do {
            return try finder.references(in: object, includingUpdateOfLists: includingUpdateOfLists)
        } catch {
            throw MigrationError(.unsupportedRebuild, "Cannot \(change) column \(column) of \(table): \(object.kind.rawValue) \(object.name) \(error.reason), so its references to the column cannot be rewritten with certainty. Drop the \(object.kind.rawValue) in the migration before this statement and create it again after.")
        }
    }

    private static func replacing(_ ranges: [Range<Int>], in sql: String, with replacement: String) -> String {
        let scalars = Array(sql.unicodeScalars)
        var result = ""
        var position = 0
        for range in ranges {
            result.unicodeScalars.append(contentsOf: scalars[position..<range.lowerBound])
            result += replacement
            position = range.upperBound
        }
        result.unicodeScalars.append(contentsOf: scalars[position...])
        return result
    }

    // MARK: The procedure

    /// One table to rebuild: its new definition, and which old column fills each new one.
    struct TableChange {
        let name: String
        let definition: CreateTableDefinition
        let columnMapping: [(new: String, old: String)]
    }

    /// Steps 3 to 9 of the procedure for each table, inside the caller's
    /// transaction. `rewritten` holds new SQL for objects (by ``SchemaCatalog/Object/key``).
    /// Returns the rows copied into the first table.
    private static func perform(_ db: Connection, _ changes: [TableChange], rewritten: [SchemaCatalog.Object.Key: String], catalog: SchemaCatalog) throws -> Int {
        guard db.isInsideTransaction else {
            throw MigrationError(.unsupportedRebuild, "A table rebuild must run inside the migration's transaction.")
        }
        if try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1 {
            throw MigrationError(.unsupportedRebuild, "A table rebuild needs foreign keys off outside the transaction, or dropping \(changes.first?.name ?? "the table") would delete its children's rows; the runner switches them off for migrations with deferred checks (the default): remove the immediate-foreign-keys setting, and in a no-transaction file do not switch them on.")
        }
        // 3. Save the indexes, triggers and views, and drop the views and
        // triggers that name a rebuilt table (indexes go with their table).
        // The names as a list: a Set of Strings takes names SQLite keeps
        // apart for one (`Kept` and KELVIN SIGN + `ept`).
        let dependents = catalog.dependents(of: changes.map(\.name))
        for object in dependents.reversed() where object.kind == .view || object.kind == .trigger {
            try db.execute(sql: "DROP \(object.kind.rawValue.uppercased()) IF EXISTS \(SQLScript.quotedIdentifier(object.name))")
        }
        var copied: [Int] = []
        for change in changes {
            copied.append(try replaceTable(db, change, old: try definition(of: change.name, in: catalog)))
        }
        // 8, 9. Create the indexes, views and triggers again, in their order.
        for object in dependents {
            let sql = rewritten[object.key] ?? object.sql
            do {
                try db.execute(sql: sql)
            } catch {
                throw MigrationError(.unsupportedRebuild, "\(object.kind.rawValue.capitalized) \(object.name) cannot be created again after rebuilding \(changes.map(\.name).joined(separator: ", ")): \(error.message). Drop or change it in the migration.", underlying: error)
            }
        }
        try checkStillValid(db, rebuilt: changes.map(\.name))
        // Steps 10 to 12 (foreign_key_check, commit, restoring foreign keys)
        // belong to the runner, around the whole migration.
        return copied.first ?? 0
    }

    /// Steps 4 to 7 for one table. Returns the number of rows copied.
    private static func replaceTable(_ db: Connection, _ change: TableChange, old: CreateTableDefinition) throws -> Int {
        let table = change.name
        if change.definition.qualifiesColumnsWithItsName {
            throw MigrationError(.unsupportedRebuild, "Cannot rebuild \(table): a constraint names its columns as \(table).column, which cannot be checked while the new table has a temporary name. Write the constraint with unqualified column names (a rebuild directive can change it).")
        }
        // 4. The new table under a temporary name.
        let temporary = "strongroom_new_\(table)"
        try db.execute(sql: change.definition.sql(named: temporary))
        // 5. Copy the rows. A rowid table keeps its rowids, as SQLite's own
        // DROP COLUMN does (rows referenced by rowid stay the same rows). The
        // rowid comes first: when the new table has an INTEGER PRIMARY KEY,
        // the value of that column, named later, is what SQLite keeps (3.15
        // and 3.51 alike).
        var newColumns = change.columnMapping.map { SQLScript.quotedIdentifier($0.new) }
        var oldColumns = change.columnMapping.map { SQLScript.quotedIdentifier($0.old) }
        if !old.isWithoutRowid, !change.definition.isWithoutRowid,
           let rowid = ["rowid", "oid", "_rowid_"].first(where: { name in !(old.columns + change.definition.columns).contains { $0.sqliteFolded == name.sqliteFolded } }) {
            newColumns.insert(rowid, at: 0)
            oldColumns.insert(rowid, at: 0)
        }
        try db.execute(sql: "INSERT INTO \(SQLScript.quotedIdentifier(temporary)) (\(newColumns.joined(separator: ", "))) SELECT \(oldColumns.joined(separator: ", ")) FROM \(SQLScript.quotedIdentifier(table))")
        let copied = db.changesCount
        // The AUTOINCREMENT counter goes with the old table: remember it, so
        // ids issued once are never issued again.
        let sequence = try autoincrementSequence(of: table, in: db)
        // 6. Drop the old table (foreign keys are off: no cascade fires).
        try db.execute(sql: "DROP TABLE \(SQLScript.quotedIdentifier(table))")
        // 7. Give the new table the old name.
        try db.execute(sql: "ALTER TABLE \(SQLScript.quotedIdentifier(temporary)) RENAME TO \(SQLScript.quotedIdentifier(table))")
        if let sequence, change.definition.usesAutoincrement {
            try restoreAutoincrementSequence(sequence, of: table, in: db)
        }
        return copied
    }

    /// After the rebuild every view in the schema must still read and every
    /// trigger still compile (SQLite checks trigger bodies only when a
    /// statement that fires them is prepared): otherwise the change is
    /// refused, as SQLite's own ALTER TABLE refuses it after re-checking the
    /// whole schema.
    private static func checkStillValid(_ db: Connection, rebuilt: [String]) throws {
        let catalog = try SchemaCatalog(db)
        for object in catalog.objects {
            let probe: String
            switch object.kind {
            case .view:
                probe = "SELECT * FROM \(SQLScript.quotedIdentifier(object.name)) LIMIT 0"
            case .trigger:
                guard let sql = triggerProbe(object, catalog: catalog) else { continue }
                probe = sql
            case .table, .index:
                continue
            }
            do {
                _ = try db.prepare(sql: probe)
            } catch {
                throw MigrationError(.unsupportedRebuild, "\(object.kind.rawValue.capitalized) \(object.name) no longer works after rebuilding \(rebuilt.joined(separator: ", ")): \(error.message). Drop or rewrite it in the migration.", underlying: error)
            }
        }
    }

    /// A statement that fires `trigger` (prepared, never run), or nil.
    private static func triggerProbe(_ trigger: SchemaCatalog.Object, catalog: SchemaCatalog) -> String? {
        let tokens = SQLTokenizer.tokenize(trigger.sql)
        guard let on = tokens.firstIndex(where: { $0.isKeyword("ON") }), let columns = catalog.columns(of: trigger.tableName) else { return nil }
        let table = SQLScript.quotedIdentifier(trigger.tableName)
        let event = tokens[..<on]
        if event.contains(where: { $0.isKeyword("INSERT") }) { return "INSERT INTO \(table) DEFAULT VALUES" }
        if event.contains(where: { $0.isKeyword("DELETE") }) { return "DELETE FROM \(table)" }
        guard event.contains(where: { $0.isKeyword("UPDATE") }), !columns.isEmpty else { return nil }
        return "UPDATE \(table) SET " + columns.map { "\(SQLScript.quotedIdentifier($0)) = \(SQLScript.quotedIdentifier($0))" }.joined(separator: ", ")
    }

    /// The table's `sqlite_sequence` value, if it has one.
    static func autoincrementSequence(of table: String, in db: Connection) throws -> Int64? {
        guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'") == 1 else { return nil }
        return try db.fetchOne(Int64.self, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table])
    }

    /// Sets the rebuilt table's counter to at least `sequence`.
    static func restoreAutoincrementSequence(_ sequence: Int64, of table: String, in db: Connection) throws {
        if try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_sequence WHERE name = ?", arguments: [table]) == 0 {
            try db.execute(sql: "INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", arguments: [table, sequence])
        } else {
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", arguments: [sequence, table])
        }
    }

    static func definition(of table: String, in catalog: SchemaCatalog) throws -> CreateTableDefinition {
        guard let object = catalog.object(named: table), object.kind == .table else {
            throw MigrationError(.unsupportedRebuild, "Cannot rebuild \(table): there is no such table.")
        }
        guard let definition = CreateTableDefinition(object.sql) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rebuild \(table): its CREATE TABLE statement could not be read.")
        }
        return definition
    }
}
