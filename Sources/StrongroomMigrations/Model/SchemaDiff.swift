import Strongroom
import StrongroomFields

/// The migration that takes one schema to another: what `strongroom diff`
/// writes.
///
/// ```swift
/// let current = try DatabaseSchema.read(from: replayed)   // what the migrations give
/// let plan = SchemaDiff.plan(from: current, to: model, renames: [.table(from: "artist", to: "performer")])
/// if !plan.destructiveSteps.isEmpty && !allowDestructive { … refuse … }
/// try plan.sql.write(toFile: "Migrations/0007_model.sql", atomically: true, encoding: .utf8)
/// ```
///
/// Steps, in order: table renames, column renames, indexes dropped, tables
/// created, columns added (`ALTER TABLE … ADD COLUMN` where SQLite allows
/// it, else the runner's rebuild, `-- strongroom: rebuild`), tables
/// dropped, indexes created, then columns sealed or opened with the SQL
/// functions of field encryption (the migration then runs with the field
/// keyring: `strongroom migrate --field-keys`).
public struct SchemaDiff: Sendable {
    /// A rename the diff cannot tell from a drop and an add.
    public enum Rename: Sendable, Hashable {
        /// A table renamed.
        case table(from: String, to: String)
        /// A column of `table` (its new name) renamed.
        case column(table: String, from: String, to: String)
    }

    /// One statement of the migration.
    public struct Step: Sendable, Hashable {
        /// The SQL, without a final semicolon (a rebuild's includes its directive line).
        public let sql: String
        /// Why it loses data, when it does (a dropped table or column, a new
        /// `NOT NULL` column without a default, a narrowed type, a column
        /// opened); nil when it does not.
        public let destructive: String?
    }

    /// The steps, in order; empty when the schemas are the same.
    public let steps: [Step]

    /// Changes the diff cannot write safely, each a sentence: a primary key
    /// changed or a table or column renamed under sealed values (bound to
    /// them), a rebuild that would drop what the model cannot express
    /// (`CHECK`, `COLLATE`, `AUTOINCREMENT`, `WITHOUT ROWID`, …). Write
    /// those migrations by hand; `strongroom diff` writes nothing while
    /// there are any.
    public let refusals: [String]

    /// The steps that lose data.
    public var destructiveSteps: [Step] { steps.filter { $0.destructive != nil } }

    /// The migration file: each step, a destructive one preceded by a
    /// comment that says what it loses.
    public var sql: String {
        var out = "-- Written by `strongroom diff` from the model's schema. Read it before applying it.\n"
        if steps.contains(where: { $0.sql.contains("strongroom_seal(") || $0.sql.contains("strongroom_open(") }) {
            out += "-- It seals or opens columns: run it with the field keyring (strongroom migrate --field-keys PATH).\n"
        }
        for step in steps {
            out += "\n"
            if let destructive = step.destructive { out += "-- DESTRUCTIVE: \(destructive)\n" }
            out += step.sql + ";\n"
        }
        return out
    }

    /// The migration from `current` to `desired`.
    public static func plan(from current: DatabaseSchema, to desired: DatabaseSchema, renames: [Rename] = []) -> SchemaDiff {
        var planner = Planner(current: current, desired: desired, renames: renames)
        planner.run()
        return SchemaDiff(steps: planner.steps, refusals: planner.refusals)
    }
}

private struct Planner {
    let desired: DatabaseSchema
    let renames: [SchemaDiff.Rename]
    /// The current schema, renames applied.
    var current: DatabaseSchema
    var steps: [SchemaDiff.Step] = []
    var refusals: [String] = []

    init(current: DatabaseSchema, desired: DatabaseSchema, renames: [SchemaDiff.Rename]) {
        self.current = current
        self.desired = desired
        self.renames = renames
    }

    mutating func add(_ sql: String, destructive: String? = nil) {
        steps.append(.init(sql: sql, destructive: destructive))
    }

    func q(_ name: String) -> String { SQLScript.quotedIdentifier(name) }

    mutating func run() {
        applyRenames()
        let currentByName = Dictionary(current.tables.map { ($0.name.sqliteFolded, $0) }, uniquingKeysWith: { a, _ in a })
        let desiredByName = Dictionary(desired.tables.map { ($0.name.sqliteFolded, $0) }, uniquingKeysWith: { a, _ in a })

        // Indexes that go or change: dropped first, so a rebuild does not recreate them.
        for table in current.tables {
            guard let target = desiredByName[table.name.sqliteFolded] else { continue }
            let wanted = Set(target.indexes.map(\.folded))
            for index in table.indexes where !wanted.contains(index.folded) {
                add("DROP INDEX \(q(index.name))")
            }
        }
        // New tables.
        for table in desired.tables where currentByName[table.name.sqliteFolded] == nil {
            add(table.createTableSQL)
        }
        // Changed tables.
        for table in desired.tables {
            guard let old = currentByName[table.name.sqliteFolded] else { continue }
            alter(old, to: table)
        }
        // Dropped tables.
        for table in current.tables where desiredByName[table.name.sqliteFolded] == nil {
            add("DROP TABLE \(q(table.name))", destructive: "drops table \(table.name) and its rows")
        }
        // Indexes that are new or changed (all of a new table's).
        for table in desired.tables {
            let existing = Set((currentByName[table.name.sqliteFolded]?.indexes ?? []).map(\.folded))
            for (index, sql) in zip(table.indexes, table.createIndexSQL) where !existing.contains(index.folded) {
                add(sql)
            }
        }
        seal()
        recordBlindIndexes()
    }

    /// The blind index registry kept in step with the model: an index that
    /// is new or changed is recorded `building` (its values are computed by
    /// `strongroom fields index add`, which needs the keyring), one that is
    /// gone is forgotten.
    mutating func recordBlindIndexes() {
        let before = current.tables.flatMap(\.blindIndexes), after = desired.tables.flatMap(\.blindIndexes)
        func same(_ a: BlindIndex, _ b: BlindIndex) -> Bool { a.table.sqliteFolded == b.table.sqliteFolded && a.name.sqliteFolded == b.name.sqliteFolded }
        let gone = before.filter { old in !after.contains { same($0, old) } }
        let changed = after.filter { new in !before.contains(new) }
        guard !gone.isEmpty || !changed.isEmpty else { return }
        add(BlindIndexRegistry.createTableSQL)
        for index in gone {
            add("DELETE FROM main.\(BlindIndexRegistry.table) WHERE table_name = \(DatabaseSchema.literal(index.table)) AND name = \(DatabaseSchema.literal(index.name))")
        }
        for index in changed { add(DatabaseSchema.recordingSQL(index, state: "building")) }
    }

    /// Renames first, so the rest of the plan compares like with like.
    mutating func applyRenames() {
        var tables = current.tables
        for rename in renames {
            switch rename {
            case .table(let from, let to):
                guard let i = tables.firstIndex(where: { $0.name.sqliteFolded == from.sqliteFolded }) else { continue }
                let sealed = tables[i].columns.filter { $0.sealing != nil }.map { "\(tables[i].name).\($0.name)" }
                if !sealed.isEmpty {
                    refusals.append("Renaming \(tables[i].name) to \(to): the sealed values of \(sealed.joined(separator: ", ")) are bound to the table's name. Open them (strongroom_open), rename, and seal them again, in a migration written by hand.")
                }
                add("ALTER TABLE \(q(tables[i].name)) RENAME TO \(q(to))")
                tables[i].name = to
                // Other tables' REFERENCES to it are left as they were: SQLite
                // before 3.26 rewrites them only with foreign keys on, which
                // the runner turns off. Those tables are then rebuilt below
                // (on a newer SQLite, to the definition they already have).
            case .column(let table, let from, let to):
                guard let i = tables.firstIndex(where: { $0.name.sqliteFolded == table.sqliteFolded }),
                      let c = tables[i].columns.firstIndex(where: { $0.name.sqliteFolded == from.sqliteFolded }) else { continue }
                if tables[i].columns[c].sealing != nil {
                    refusals.append("Renaming \(tables[i].name).\(tables[i].columns[c].name) to \(to): its sealed values are bound to the column's name. Open them (strongroom_open), rename, and seal them again, in a migration written by hand.")
                }
                add("ALTER TABLE \(q(tables[i].name)) RENAME COLUMN \(q(tables[i].columns[c].name)) TO \(q(to))")
                func renamed(_ names: [String]) -> [String] { names.map { $0.sqliteFolded == from.sqliteFolded ? to : $0 } }
                tables[i].columns[c].name = to
                tables[i].primaryKey = renamed(tables[i].primaryKey)
                tables[i].uniqueKeys = tables[i].uniqueKeys.map(renamed)
                for k in tables[i].indexes.indices { tables[i].indexes[k].columns = renamed(tables[i].indexes[k].columns) }
                for k in tables[i].foreignKeys.indices { tables[i].foreignKeys[k].columns = renamed(tables[i].foreignKeys[k].columns) }
                for j in tables.indices {
                    for k in tables[j].foreignKeys.indices where tables[j].foreignKeys[k].table.sqliteFolded == table.sqliteFolded {
                        tables[j].foreignKeys[k].referencedColumns = renamed(tables[j].foreignKeys[k].referencedColumns)
                    }
                }
            }
        }
        var renamed = DatabaseSchema(tables: tables)
        renamed.createTableSQL = current.createTableSQL
        for case .table(let from, let to) in renames {
            renamed.createTableSQL[to.sqliteFolded] = current.createTableSQL[from.sqliteFolded]
        }
        current = renamed
    }

    /// Columns added, dropped or changed, and constraints changed.
    mutating func alter(_ old: TableDefinition, to new: TableDefinition) {
        let name = new.name
        // What differs is what validation would report; the plan follows from it.
        let differences = new.differences(from: old, model: desired, other: current)
        let added = differences.compactMap { difference -> ColumnDefinition? in
            if case .missingColumn(_, let column) = difference { return new.column(column) }
            return nil
        }
        let addedNames = Set(added.map(\.name.sqliteFolded))
        var dropped: [String] = []
        var changedNames: Set<FoldedName> = []
        var constraintsChanged = false
        for difference in differences {
            switch difference {
            case .extraColumn(_, let column): dropped.append(column)
            case .columnType(_, let column, _, _), .columnNullability(_, let column, _), .columnDefault(_, let column, _, _):
                changedNames.insert(column.sqliteFolded)
            case .primaryKey, .missingUniqueKey, .extraUniqueKey, .extraForeignKey:
                constraintsChanged = true
            case .missingForeignKey(_, let key):
                // A foreign key on one added column goes in its ADD COLUMN.
                if !(key.columns.count == 1 && addedNames.contains(key.columns[0].sqliteFolded)) { constraintsChanged = true }
            default:
                break   // indexes and sealing have steps of their own
            }
        }
        let changed = new.columns.filter { changedNames.contains($0.name.sqliteFolded) }
        // What each change loses.
        var losses: [String] = dropped.map { "drops column \(name).\($0) and its values" }
        for column in changed {
            let before = old.column(column.name)!
            if Affinity(before.type).narrows(to: Affinity(column.type)) {
                losses.append("narrows \(name).\(column.name) from \(before.type.isEmpty ? "(no type)" : before.type) to \(column.type): values that do not fit are changed")
            }
            if new.enforcesNotNull(column) && !old.enforcesNotNull(before) {
                losses.append("makes \(name).\(column.name) NOT NULL: the migration fails on a row where it is NULL")
            }
        }
        for column in added where column.notNull && column.defaultSQL == nil {
            losses.append("adds \(name).\(column.name) NOT NULL without a default: the migration fails on a table with rows")
        }
        let needsRebuild = !dropped.isEmpty || !changed.isEmpty || constraintsChanged
            || added.contains { !Self.canAddColumn($0, of: new) }
        // Randomized values are bound to the key's values as stored: another
        // key, or a key column of another type (1 becomes '1'), unbinds them.
        let keyTypeChanged = old.primaryKey.contains { key in
            guard let before = old.column(key), let after = new.column(key) else { return false }
            return before.type.asciiUppercased != after.type.asciiUppercased
        }
        if old.primaryKey.map(\.sqliteFolded) != new.primaryKey.map(\.sqliteFolded) || keyTypeChanged {
            let bound = old.columns.filter { $0.sealing != nil && $0.sealing != .deterministic }.map { "\(name).\($0.name)" }
            if !bound.isEmpty {
                refusals.append("Changing the primary key of \(name)\(keyTypeChanged ? " (the type of its columns)" : ""): the sealed values of \(bound.joined(separator: ", ")) are bound to its values as stored, and would no longer open. Open them, change the key and seal them again, in a migration written by hand.")
            }
        }
        if needsRebuild {
            let unmodeled = Self.unmodeledFeatures(current.createTableSQL[old.name.sqliteFolded] ?? "")
            if !unmodeled.isEmpty {
                refusals.append("Rebuilding \(name) from the model would drop its \(unmodeled.joined(separator: ", ")), which the model cannot express. Write this change by hand (`-- strongroom: rebuild` with the full CREATE TABLE).")
            }
            add("-- strongroom: rebuild\n" + new.createTableSQL, destructive: losses.isEmpty ? nil : losses.joined(separator: "; "))
            return
        }
        for column in added {
            var line = "ALTER TABLE \(q(name)) ADD COLUMN " + column.sql()
            if let key = new.foreignKeys.first(where: { $0.columns.count == 1 && $0.columns[0].sqliteFolded == column.name.sqliteFolded }) {
                line += " REFERENCES \(q(key.table))"
                if !key.referencedColumns.isEmpty { line += " (\(TableDefinition.list(key.referencedColumns)))" }
                if key.onDelete != .noAction { line += " ON DELETE " + key.onDelete.rawValue }
                if key.onUpdate != .noAction { line += " ON UPDATE " + key.onUpdate.rawValue }
            }
            add(line, destructive: column.notNull && column.defaultSQL == nil ? "adds \(name).\(column.name) NOT NULL without a default: the migration fails on a table with rows" : nil)
        }
    }

    /// What a table's `CREATE TABLE` says that a ``TableDefinition`` does not
    /// hold, and a rebuild from the model would drop.
    static func unmodeledFeatures(_ sql: String) -> [String] {
        let tokens = SQLTokenizer.tokenize(sql)
        var found: [String] = []
        for (keyword, label) in [("CHECK", "CHECK constraints"), ("COLLATE", "COLLATE clauses"), ("AUTOINCREMENT", "AUTOINCREMENT"),
                                 ("WITHOUT", "WITHOUT ROWID"), ("DEFERRABLE", "DEFERRABLE foreign keys"), ("GENERATED", "generated columns"),
                                 ("ASC", "PRIMARY KEY ASC/DESC"), ("DESC", "PRIMARY KEY ASC/DESC"), ("ON", "ON CONFLICT clauses")] {
            guard tokens.contains(where: { $0.isKeyword(keyword) }) else { continue }
            // ON is also the ON DELETE / ON UPDATE of a foreign key, which the model holds.
            if keyword == "ON", !tokens.indices.contains(where: { tokens[$0].isKeyword("ON") && $0 + 1 < tokens.count && tokens[$0 + 1].isKeyword("CONFLICT") }) { continue }
            if !found.contains(label) { found.append(label) }
        }
        return found
    }

    /// What `ALTER TABLE … ADD COLUMN` accepts (https://sqlite.org/lang_altertable.html):
    /// not a key or UNIQUE, NOT NULL only with a default, a constant default
    /// (no CURRENT_TIME… nor expression in parentheses), a foreign key only
    /// on a single column with a NULL default. The column goes last: the
    /// model does not compare column order.
    static func canAddColumn(_ column: ColumnDefinition, of table: TableDefinition) -> Bool {
        let folded = column.name.sqliteFolded
        if table.primaryKey.contains(where: { $0.sqliteFolded == folded }) { return false }
        if table.uniqueKeys.contains(where: { $0.contains { $0.sqliteFolded == folded } }) { return false }
        if column.notNull && column.defaultSQL == nil { return false }
        if let defaultSQL = column.defaultSQL {
            let text = TableDefinition.defaultClause(defaultSQL)
            if text.hasPrefix("(") || text.asciiUppercased.hasPrefix("CURRENT_") { return false }
        }
        let keys = table.foreignKeys.filter { $0.columns.contains { $0.sqliteFolded == folded } }
        if keys.contains(where: { $0.columns.count > 1 }) { return false }
        if !keys.isEmpty, let defaultSQL = column.defaultSQL, defaultSQL.asciiUppercased != "NULL" { return false }
        return true
    }

    /// `column = strongroom_seal(value, …)`, and its blind index for an indexed column.
    func sealingAssignments(_ column: ColumnDefinition, mode: SealingMode, value: String, table: String, key: String) -> [String] {
        let tableLiteral = DatabaseSchema.literal(table), columnLiteral = DatabaseSchema.literal(column.name)
        var assignments: [String] = []
        if mode == .indexed, let indexColumn = column.sealedIndexColumn {
            assignments.append("\(q(indexColumn)) = strongroom_blind_index(\(value), \(tableLiteral), \(columnLiteral))")
        }
        assignments.append("\(q(column.name)) = strongroom_seal(\(value), \(tableLiteral), \(columnLiteral), '\(mode.rawValue)'\(mode == .deterministic || key.isEmpty ? "" : ", " + key))")
        return assignments
    }

    /// Columns that became sealed or plain, with the SQL functions of field
    /// encryption, and the sealed columns' registry kept in step.
    mutating func seal() {
        var recorded: [SealedColumn] = []
        var forgotten: [(table: String, column: String)] = []
        for table in desired.tables {
            let old = current.table(table.name)
            for column in table.columns {
                let before = old?.column(column.name)
                let wasSealed = before?.sealing
                // An indexed column whose blind index moves to another column:
                // the new one is filled from the opened values.
                let indexMoved = column.sealing == .indexed && wasSealed == .indexed
                    && before?.sealedIndexColumn?.sqliteFolded != column.sealedIndexColumn?.sqliteFolded
                guard column.sealing != wasSealed || indexMoved else { continue }
                let t = q(table.name), c = q(column.name)
                let key = table.primaryKey.map(q).joined(separator: ", ")
                if let mode = column.sealing, mode != .deterministic, table.primaryKey.isEmpty {
                    refusals.append("Sealing \(table.name).\(column.name) \(mode.rawValue): such values are bound to their row's PRIMARY KEY, and \(table.name) declares none. Give \(table.name) a primary key, or seal the column deterministic.")
                    continue
                }
                // The stored value opened, under the table's old key.
                let opened = wasSealed.map { before in
                    let oldKey = (old?.primaryKey ?? []).map(q).joined(separator: ", ")
                    return "strongroom_open(\(c), \(DatabaseSchema.literal(table.name)), \(DatabaseSchema.literal(column.name))\(before == .deterministic || oldKey.isEmpty ? "" : ", " + oldKey))"
                }
                if indexMoved, let opened, let indexColumn = column.sealedIndexColumn {
                    add("UPDATE \(t) SET \(q(indexColumn)) = strongroom_blind_index(\(opened), \(DatabaseSchema.literal(table.name)), \(DatabaseSchema.literal(column.name))) WHERE \(c) IS NOT NULL")
                    recorded.append(SealedColumn(table: table.name, column: column.name, mode: .indexed, indexColumn: indexColumn))
                    continue
                }
                switch (opened, column.sealing) {
                case (let opened?, let mode?):
                    // Another mode: opened and sealed again in one statement,
                    // so the plaintext is never written.
                    add("UPDATE \(t) SET \(sealingAssignments(column, mode: mode, value: opened, table: table.name, key: key).joined(separator: ", ")) WHERE \(c) IS NOT NULL")
                    recorded.append(SealedColumn(table: table.name, column: column.name, mode: mode, indexColumn: column.sealedIndexColumn))
                case (let opened?, nil):
                    add("UPDATE \(t) SET \(c) = \(opened) WHERE \(c) IS NOT NULL", destructive: "opens \(table.name).\(column.name): its values are stored as plaintext")
                    forgotten.append((table.name, column.name))
                case (nil, let mode?):
                    // A column that existed holds plaintext to seal; so does a
                    // new one with a default (ADD COLUMN wrote it in every row).
                    if old != nil && (before != nil || column.defaultSQL != nil) {
                        add("UPDATE \(t) SET \(sealingAssignments(column, mode: mode, value: c, table: table.name, key: key).joined(separator: ", ")) WHERE \(c) IS NOT NULL")
                    }
                    recorded.append(SealedColumn(table: table.name, column: column.name, mode: mode, indexColumn: column.sealedIndexColumn))
                case (nil, nil):
                    break   // not reached: the guard above
                }
            }
        }
        // Sealed columns that are gone, with their table or alone.
        for table in current.tables {
            for column in table.columns where column.sealing != nil && desired.table(table.name)?.column(column.name) == nil {
                forgotten.append((table.name, column.name))
            }
        }
        guard !recorded.isEmpty || !forgotten.isEmpty else { return }
        add(SealedColumnRegistry.createTableSQL)
        for (table, column) in forgotten {
            add("DELETE FROM main.\(SealedColumnRegistry.table) WHERE table_name = \(DatabaseSchema.literal(table)) AND column_name = \(DatabaseSchema.literal(column))")
        }
        for column in recorded {
            add("INSERT OR REPLACE INTO main.\(SealedColumnRegistry.table) (table_name, column_name, mode, index_column) VALUES (\(DatabaseSchema.literal(column.table)), \(DatabaseSchema.literal(column.column)), '\(column.mode.rawValue)', \(column.indexColumn.map(DatabaseSchema.literal) ?? "NULL"))")
        }
    }
}

/// SQLite's type affinity of a declared type (https://sqlite.org/datatype3.html, 3.1).
enum Affinity {
    case integer, text, blob, real, numeric

    init(_ declared: String) {
        let type = declared.asciiUppercased
        if type.contains("INT") { self = .integer }
        else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { self = .text }
        else if type.contains("BLOB") || type.isEmpty { self = .blob }
        else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { self = .real }
        else { self = .numeric }
    }

    /// Whether values stored under `self` may change when copied into a
    /// column of `other` (TEXT `'abc'` stays, but `'007'` becomes 7; a large
    /// integer becomes an inexact REAL).
    func narrows(to other: Affinity) -> Bool {
        switch (self, other) {
        case (_, .blob): return false
        case (let a, let b) where a == b: return false
        case (.integer, .numeric), (.real, .numeric): return false
        default: return true
        }
    }
}
