public import Strongroom

/// Changes a table's shape with SQLite's documented 12-step procedure
/// (https://sqlite.org/lang_altertable.html, "Making Other Kinds Of Table
/// Schema Changes"): create the new table, copy the rows, drop the old table,
/// rename the new one, recreate indexes, triggers and views.
///
/// Call it inside a migration that runs with foreign keys off
/// (``Migration/init(version:description:disablesForeignKeys:_:)`` with
/// `disablesForeignKeys: true`, or any SQL migration that contains a rebuild):
/// the runner switches foreign keys off *outside* the transaction, so dropping
/// the old table never fires `ON DELETE CASCADE` on its children, and runs
/// `PRAGMA foreign_key_check` before committing.
///
/// ```swift
/// Migration(version: 7, description: "widen price", disablesForeignKeys: true) { db in
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
        guard let new = CreateTableDefinition(createTableSQL), new.table.lowercased() == table.lowercased() else {
            throw MigrationError(.unsupportedRebuild, "The rebuild of \(table) needs a CREATE TABLE \(table) (...) statement with the new definition.")
        }
        let old = try definition(of: table, in: db)
        let shared = new.columns.filter { column in old.columns.contains { $0.lowercased() == column.lowercased() } }
        let mapping = shared.map { ($0, $0) }
        return try perform(db, table: old.table, newDefinition: new, columnMapping: mapping) { $1 }
    }

    /// `ALTER TABLE table DROP COLUMN column`, refused (like SQLite's own) when
    /// the column is part of a key, a constraint or an index.
    @discardableResult
    static func dropColumn(_ db: Connection, table: String, column: String) throws -> Int {
        var definition = try definition(of: table, in: db)
        guard let index = definition.items.firstIndex(where: { $0.column?.lowercased() == column.lowercased() }) else {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column): table \(table) has no such column.")
        }
        let columnText = definition.items[index].text.uppercased()
        if columnText.contains("PRIMARY KEY") || columnText.contains("UNIQUE") {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): it is a PRIMARY KEY or UNIQUE column.")
        }
        if definition.constraints.contains(where: { $0.mentionsIdentifier(column) }) {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): a table constraint uses it; rebuild the table with the rebuild directive instead.")
        }
        for (name, sql) in try indexes(of: definition.table, in: db) where sql.mentionsIdentifier(column, from: openingParenthesis(sql)) {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): index \(name) uses it; drop the index first.")
        }
        for (name, sql) in try triggers(of: definition.table, in: db) where sql.mentionsIdentifier(column) {
            throw MigrationError(.unsupportedRebuild, "Cannot drop column \(column) of \(table): trigger \(name) mentions it; drop the trigger first.")
        }
        definition.items.remove(at: index)
        let mapping = definition.columns.map { ($0, $0) }
        return try perform(db, table: definition.table, newDefinition: definition, columnMapping: mapping) { $1 }
    }

    /// `ALTER TABLE table RENAME COLUMN from TO to`: the column definition,
    /// table constraints, indexes and triggers on the table are rewritten.
    @discardableResult
    static func renameColumn(_ db: Connection, table: String, from: String, to: String) throws -> Int {
        var definition = try definition(of: table, in: db)
        guard let index = definition.items.firstIndex(where: { $0.column?.lowercased() == from.lowercased() }) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rename column \(from): table \(table) has no such column.")
        }
        if definition.columns.contains(where: { $0.lowercased() == to.lowercased() }) {
            throw MigrationError(.unsupportedRebuild, "Cannot rename column \(from) to \(to): table \(table) already has a column \(to).")
        }
        let oldColumns = definition.columns
        // The first token of a column definition is its name.
        let item = definition.items[index].text
        let nameEnd = SQLTokenizer.tokenize(item).first?.range.upperBound ?? 0
        definition.items[index].text = SQLScript.quotedIdentifier(to) + item.scalars(nameEnd..<item.unicodeScalars.count)
        definition.items[index].column = to
        for i in definition.items.indices where definition.items[i].column == nil {
            definition.items[i].text = definition.items[i].text.renamingIdentifier(from, to: to)
        }
        let mapping = zip(definition.columns, oldColumns).map { ($0, $1) }
        return try perform(db, table: definition.table, newDefinition: definition, columnMapping: mapping) { kind, sql in
            // An index's columns and WHERE clause follow its first parenthesis;
            // a trigger's column list and body follow its name.
            sql.renamingIdentifier(from, to: to, from: kind == .index ? openingParenthesis(sql) : afterTriggerName(sql))
        }
    }

    // MARK: The procedure

    /// Steps 3 to 9 of the procedure, inside the caller's transaction.
    enum SchemaObject { case index, trigger, view }

    private static func perform(_ db: Connection, table: String, newDefinition: CreateTableDefinition, columnMapping: [(new: String, old: String)], rewrite: (SchemaObject, String) -> String) throws -> Int {
        guard db.isInsideTransaction else {
            throw MigrationError(.unsupportedRebuild, "A table rebuild must run inside the migration's transaction.")
        }
        if try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1 {
            throw MigrationError(.unsupportedRebuild, "A table rebuild needs foreign keys off outside the transaction, or dropping \(table) would delete its children's rows; mark the migration disablesForeignKeys.")
        }
        // 3. Save the indexes, triggers and views.
        let savedIndexes = try indexes(of: table, in: db)
        let savedTriggers = try triggers(of: table, in: db)
        let savedViews = try db.fetchAll(sql: "SELECT name, sql FROM sqlite_master WHERE type = 'view' AND sql IS NOT NULL ORDER BY rowid")
            .map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
        // Views that mention the table are dropped and recreated (step 9).
        let affectedViews = savedViews.filter { $0.1.mentionsIdentifier(table) }
        for (name, _) in affectedViews { try db.execute(sql: "DROP VIEW \(SQLScript.quotedIdentifier(name))") }

        // 4. The new table under a temporary name.
        let temporary = "strongroom_new_\(table)"
        try db.execute(sql: newDefinition.sql(named: temporary))
        // 5. Copy the rows.
        let newColumns = columnMapping.map { SQLScript.quotedIdentifier($0.new) }.joined(separator: ", ")
        let oldColumns = columnMapping.map { SQLScript.quotedIdentifier($0.old) }.joined(separator: ", ")
        try db.execute(sql: "INSERT INTO \(SQLScript.quotedIdentifier(temporary)) (\(newColumns)) SELECT \(oldColumns) FROM \(SQLScript.quotedIdentifier(table))")
        let copied = db.changesCount
        // The AUTOINCREMENT counter goes with the old table: remember it, so
        // ids issued once are never issued again.
        let sequence = try autoincrementSequence(of: table, in: db)
        // 6. Drop the old table (foreign keys are off: no cascade fires).
        try db.execute(sql: "DROP TABLE \(SQLScript.quotedIdentifier(table))")
        // 7. Give the new table the old name.
        try db.execute(sql: "ALTER TABLE \(SQLScript.quotedIdentifier(temporary)) RENAME TO \(SQLScript.quotedIdentifier(table))")
        if let sequence, newDefinition.usesAutoincrement {
            try restoreAutoincrementSequence(sequence, of: table, in: db)
        }
        // 8. Recreate indexes and triggers.
        for (_, sql) in savedIndexes { try db.execute(sql: rewrite(.index, sql)) }
        for (_, sql) in savedTriggers { try db.execute(sql: rewrite(.trigger, sql)) }
        // 9. Recreate the views, and check they still read.
        for (name, sql) in affectedViews {
            try db.execute(sql: rewrite(.view, sql))
            do {
                _ = try db.fetchAll(sql: "SELECT * FROM \(SQLScript.quotedIdentifier(name)) LIMIT 0")
            } catch {
                throw MigrationError(.unsupportedRebuild, "View \(name) no longer reads after rebuilding \(table): \(error.message). Drop or rewrite the view in the migration.", underlying: error)
            }
        }
        // Steps 10 to 12 (foreign_key_check, commit, restoring foreign keys)
        // belong to the runner, around the whole migration.
        return copied
    }

    /// The table's `sqlite_sequence` value, if it has one.
    static func autoincrementSequence(of table: String, in db: Connection) throws -> Int64? {
        guard try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'") == 1 else { return nil }
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

    static func definition(of table: String, in db: Connection) throws -> CreateTableDefinition {
        guard let sql = try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [table]) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rebuild \(table): there is no such table.")
        }
        guard let definition = CreateTableDefinition(sql) else {
            throw MigrationError(.unsupportedRebuild, "Cannot rebuild \(table): its CREATE TABLE statement could not be read.")
        }
        return definition
    }

    static func indexes(of table: String, in db: Connection) throws -> [(String, String)] {
        try db.fetchAll(sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL ORDER BY rowid", arguments: [table])
            .map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    static func triggers(of table: String, in db: Connection) throws -> [(String, String)] {
        try db.fetchAll(sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL ORDER BY rowid", arguments: [table])
            .map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    static func afterTriggerName(_ sql: String) -> Int {
        let tokens = SQLTokenizer.tokenize(sql).filter { !$0.isKeyword("TEMP") && !$0.isKeyword("TEMPORARY") }
        // CREATE TRIGGER [IF NOT EXISTS] name
        let nameIndex = tokens.count > 4 && tokens[2].isKeyword("IF") ? 5 : 2
        return nameIndex < tokens.count ? tokens[nameIndex].range.upperBound : 0
    }

    static func openingParenthesis(_ sql: String) -> Int {
        SQLTokenizer.tokenize(sql).first { $0.text == "(" }?.range.lowerBound ?? 0
    }
}
