public import Foundation
public import Strongroom
public import StrongroomFields

/// One way a database's schema differs from the model.
public enum SchemaDifference: Sendable, Hashable, CustomStringConvertible {
    /// The model's table is not in the database.
    case missingTable(String)
    /// The database has a table the model does not declare.
    case extraTable(String)
    /// The model's column is not in the table.
    case missingColumn(table: String, column: String)
    /// The table has a column the model does not declare.
    case extraColumn(table: String, column: String)
    /// The column's declared type differs.
    case columnType(table: String, column: String, expected: String, found: String)
    /// The column is `NOT NULL` in one and not the other.
    case columnNullability(table: String, column: String, expectedNotNull: Bool)
    /// The column's default differs (SQL as written; nil for none).
    case columnDefault(table: String, column: String, expected: String?, found: String?)
    /// The primary key's columns differ.
    case primaryKey(table: String, expected: [String], found: [String])
    /// A UNIQUE constraint of the model is missing.
    case missingUniqueKey(table: String, columns: [String])
    /// The table has a UNIQUE constraint the model does not declare.
    case extraUniqueKey(table: String, columns: [String])
    /// A foreign key of the model is missing (or differs).
    case missingForeignKey(table: String, ForeignKeyDefinition)
    /// The table has a foreign key the model does not declare (or one that differs).
    case extraForeignKey(table: String, ForeignKeyDefinition)
    /// An index of the model is missing (or differs).
    case missingIndex(table: String, IndexDefinition)
    /// The table has an index the model does not declare (or one that differs).
    case extraIndex(table: String, IndexDefinition)
    /// The model seals the column; the database does not record it sealed,
    /// or holds plaintext values in it.
    case columnNotSealed(table: String, column: String, mode: SealingMode, plaintextValues: Int)
    /// The database records the column sealed, the model does not.
    case columnSealed(table: String, column: String)
    /// The column is sealed in another mode.
    case sealingMode(table: String, column: String, expected: SealingMode, found: SealingMode)
    /// The indexed sealed column keeps its blind index in another column.
    case blindIndexColumn(table: String, column: String, expected: String?, found: String?)
    /// A trigger or view (`type`) on a table the model seals columns of, or
    /// calling a sealed-column function: the model declares none, and such
    /// SQL could copy sealed values elsewhere.
    case triggerOrViewOnSealedTable(type: String, name: String, table: String)

    /// One line: what differs, as expected against found.
    public var description: String {
        func list(_ names: [String]) -> String { "(" + names.joined(separator: ", ") + ")" }
        func key(_ key: ForeignKeyDefinition) -> String {
            var text = "\(list(key.columns)) REFERENCES \(key.table)"
            if !key.referencedColumns.isEmpty { text += list(key.referencedColumns) }
            if key.onDelete != .noAction { text += " ON DELETE \(key.onDelete.rawValue)" }
            if key.onUpdate != .noAction { text += " ON UPDATE \(key.onUpdate.rawValue)" }
            return text
        }
        func index(_ index: IndexDefinition) -> String {
            "\(index.unique ? "unique " : "")index \(index.name) on \(list(index.columns))" + (index.whereSQL.map { " where \($0)" } ?? "")
        }
        switch self {
        case .missingTable(let table): return "table \(table): missing"
        case .extraTable(let table): return "table \(table): not in the model"
        case .missingColumn(let table, let column): return "\(table).\(column): missing"
        case .extraColumn(let table, let column): return "\(table).\(column): not in the model"
        case .columnType(let table, let column, let expected, let found): return "\(table).\(column): type \(expected.isEmpty ? "(none)" : expected) expected, \(found.isEmpty ? "(none)" : found) found"
        case .columnNullability(let table, let column, let expectedNotNull): return "\(table).\(column): \(expectedNotNull ? "NOT NULL" : "nullable") expected, \(expectedNotNull ? "nullable" : "NOT NULL") found"
        case .columnDefault(let table, let column, let expected, let found): return "\(table).\(column): default \(expected ?? "(none)") expected, \(found ?? "(none)") found"
        case .primaryKey(let table, let expected, let found): return "\(table): primary key \(expected.isEmpty ? "(rowid)" : list(expected)) expected, \(found.isEmpty ? "(rowid)" : list(found)) found"
        case .missingUniqueKey(let table, let columns): return "\(table): UNIQUE \(list(columns)) missing"
        case .extraUniqueKey(let table, let columns): return "\(table): UNIQUE \(list(columns)) not in the model"
        case .missingForeignKey(let table, let foreignKey): return "\(table): foreign key \(key(foreignKey)) missing"
        case .extraForeignKey(let table, let foreignKey): return "\(table): foreign key \(key(foreignKey)) not in the model"
        case .missingIndex(let table, let definition): return "\(table): \(index(definition)) missing"
        case .extraIndex(let table, let definition): return "\(table): \(index(definition)) not in the model"
        case .columnNotSealed(let table, let column, let mode, let plaintextValues):
            return plaintextValues > 0 ? "\(table).\(column): sealed (\(mode.rawValue)) expected, \(plaintextValues) plaintext value(s) found"
                : "\(table).\(column): sealed (\(mode.rawValue)) expected, not recorded as sealed"
        case .columnSealed(let table, let column): return "\(table).\(column): plaintext expected, sealed found"
        case .sealingMode(let table, let column, let expected, let found): return "\(table).\(column): sealed \(expected.rawValue) expected, \(found.rawValue) found"
        case .blindIndexColumn(let table, let column, let expected, let found): return "\(table).\(column): blind index in \(expected ?? "(none)") expected, \(found ?? "(none)") found"
        case .triggerOrViewOnSealedTable(let type, let name, let table): return "\(type) \(name) on sealed table \(table): not in the model (it could copy sealed values elsewhere; find out who added it)"
        }
    }
}

/// The database's schema is not the model's: every difference, listed.
///
/// ```swift
/// do {
///     try model.validate(db)
/// } catch let mismatch as SchemaMismatch {
///     for difference in mismatch.differences { logger.error("\(difference)") }
/// }
/// ```
public struct SchemaMismatch: Error, Sendable, CustomStringConvertible {
    /// A stable code to match: `schema_mismatch`.
    public let code = "schema_mismatch"
    /// The database's file (nil in memory).
    public let path: String?
    /// Every difference, model first: what is missing or differs, then what is extra.
    public let differences: [SchemaDifference]
    /// What to do about it.
    public let remedy: String

    init(path: String?, differences: [SchemaDifference],
         remedy: String = "the database's schema is not the model's; write a migration that brings it there (`strongroom diff` writes one)") {
        self.path = path
        self.differences = differences
        self.remedy = remedy
    }

    /// What differs, one line each, and what to do.
    public var description: String {
        remedy.prefix(1).uppercased() + remedy.dropFirst() + " (\(differences.count) difference\(differences.count == 1 ? "" : "s")):\n"
            + differences.map { "  - \($0)" }.joined(separator: "\n")
    }
}

extension SchemaMismatch: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension DatabaseSchema {
    /// Checks that the main database of `db` holds exactly this schema:
    /// tables, columns (type, NULL-ness, default), primary keys, UNIQUE
    /// constraints, foreign keys, indexes and sealed columns. Run it after
    /// migrating.
    ///
    /// What the model cannot express is not compared: `CHECK` constraints,
    /// `COLLATE` clauses (a UNIQUE key on a primary key's columns with another
    /// collation, `UNIQUE(a COLLATE NOCASE)` beside `a TEXT PRIMARY KEY`, is the
    /// primary key to the model), `AUTOINCREMENT`, `WITHOUT ROWID`. A
    /// ``SchemaDiff`` that would rebuild such a table refuses, rather than drop them.
    ///
    /// ```swift
    /// try migrator.migrate(queue)
    /// try queue.read { db in try DatabaseSchema(Artist.self, Album.self).validate(db) }
    /// ```
    ///
    /// - Throws: ``SchemaMismatch`` listing every difference; a
    ///   `StrongroomError` when the database cannot be read.
    public func validate(_ db: Connection) throws {
        let found = try DatabaseSchema.read(from: db)
        var differences = differences(from: found)
        // A column the model seals and the database records sealed may
        // still hold plaintext (written around the transform).
        for table in tables {
            guard let foundTable = found.table(table.name) else { continue }
            for column in table.columns where column.sealing != nil {
                guard let foundColumn = foundTable.column(column.name), foundColumn.sealing == column.sealing else { continue }
                // An envelope is a BLOB that starts with format version 1 and
                // an algorithm (1: AES-GCM, 2: AES-SIV), and is longer than
                // the shortest one; anything else is plaintext.
                let c = SQLScript.quotedIdentifier(column.name)
                let plaintext = try db.fetchOne(Int.self, sql: """
                    SELECT count(*) FROM \(SQLScript.quotedIdentifier(table.name))
                    WHERE \(c) IS NOT NULL AND (typeof(\(c)) <> 'blob' OR length(\(c)) < 23
                      OR substr(\(c), 1, 1) <> x'01' OR substr(\(c), 2, 1) NOT IN (x'01', x'02'))
                    """) ?? 0
                if plaintext > 0 {
                    differences.append(.columnNotSealed(table: table.name, column: column.name, mode: column.sealing!, plaintextValues: plaintext))
                }
            }
        }
        differences += try triggersAndViewsOnSealedTables(db)
        if !differences.isEmpty {
            throw SchemaMismatch(path: db.path, differences: differences)
        }
    }

    /// Triggers and views that name a table with sealed columns in the
    /// model, or call a sealed-column function.
    ///
    /// A table named by a 'string' (which SQLite takes where a name is
    /// expected) counts as named; a view or trigger that holds a sealed
    /// table's name only as a string value is reported too (a false positive,
    /// accepted: the names are gathered from tokens, not from a parse).
    func triggersAndViewsOnSealedTables(_ db: Connection) throws(StrongroomError) -> [SchemaDifference] {
        let sealed = Dictionary(tables.filter { $0.columns.contains { $0.sealing != nil } }.map { ($0.name.sqliteFolded, $0.name) }, uniquingKeysWith: { a, _ in a })
        let functions = Set(["strongroom_open", "strongroom_seal", "strongroom_blind_index"].map(\.sqliteFolded))
        var found: [SchemaDifference] = []
        for row in try db.fetchAll(sql: "SELECT type, name, tbl_name, sql FROM main.sqlite_master WHERE type IN ('trigger', 'view') AND sql IS NOT NULL ORDER BY name") {
            let tokens = SQLTokenizer.tokenize(SQLScript.schemaText(row[3]))
            let names = Set(tokens.compactMap { $0.name?.sqliteFolded }).union([SQLScript.schemaText(row[2]).sqliteFolded])
            // A function is never named by a string.
            let calls = !Set(tokens.compactMap { $0.identifier?.sqliteFolded }).isDisjoint(with: functions)
            guard let table = names.compactMap({ sealed[$0] }).sorted().first ?? (calls ? "(a field function)" : nil) else { continue }
            found.append(.triggerOrViewOnSealedTable(type: SQLScript.schemaText(row[0]), name: SQLScript.schemaText(row[1]), table: table))
        }
        return found
    }

    /// How `other` (a database's schema) differs from this one (the model):
    /// empty when they are the same.
    public func differences(from other: DatabaseSchema) -> [SchemaDifference] {
        var differences: [SchemaDifference] = []
        for table in tables {
            guard let found = other.table(table.name) else {
                differences.append(.missingTable(table.name))
                continue
            }
            differences += table.differences(from: found, model: self, other: other)
        }
        for table in other.tables where self.table(table.name) == nil {
            differences.append(.extraTable(table.name))
        }
        return differences
    }
}

extension TableDefinition {
    /// How `found` differs from this table; `model` and `other` (the
    /// schemas they belong to) resolve a foreign key that names no column
    /// to the referenced table's primary key.
    func differences(from found: TableDefinition, model: DatabaseSchema, other: DatabaseSchema) -> [SchemaDifference] {
        var differences: [SchemaDifference] = []
        let name = self.name
        for column in columns {
            guard let other = found.column(column.name) else {
                differences.append(.missingColumn(table: name, column: column.name))
                continue
            }
            if Self.normalizedType(column.type, sealed: column.sealing != nil) != Self.normalizedType(other.type, sealed: column.sealing != nil) {
                differences.append(.columnType(table: name, column: column.name, expected: column.type, found: other.type))
            }
            if enforcesNotNull(column) != found.enforcesNotNull(other) {
                differences.append(.columnNullability(table: name, column: column.name, expectedNotNull: column.notNull))
            }
            if column.defaultSQL.map(Self.normalizedDefault) != other.defaultSQL.map(Self.normalizedDefault) {
                differences.append(.columnDefault(table: name, column: column.name, expected: column.defaultSQL, found: other.defaultSQL))
            }
            switch (column.sealing, other.sealing) {
            case (let expected?, nil): differences.append(.columnNotSealed(table: name, column: column.name, mode: expected, plaintextValues: 0))
            case (nil, _?): differences.append(.columnSealed(table: name, column: column.name))
            case (let expected?, let found?) where expected != found: differences.append(.sealingMode(table: name, column: column.name, expected: expected, found: found))
            case (.indexed?, .indexed?) where column.sealedIndexColumn?.sqliteFolded != other.sealedIndexColumn?.sqliteFolded:
                differences.append(.blindIndexColumn(table: name, column: column.name, expected: column.sealedIndexColumn, found: other.sealedIndexColumn))
            default: break
            }
        }
        for column in found.columns where self.column(column.name) == nil {
            differences.append(.extraColumn(table: name, column: column.name))
        }
        if primaryKey.map(\.sqliteFolded) != found.primaryKey.map(\.sqliteFolded) {
            differences.append(.primaryKey(table: name, expected: primaryKey, found: found.primaryKey))
        }
        let foundUniques = Set(found.distinctUniqueKeys.map { $0.map(\.sqliteFolded) })
        let uniques = Set(distinctUniqueKeys.map { $0.map(\.sqliteFolded) })
        for key in distinctUniqueKeys where !foundUniques.contains(key.map(\.sqliteFolded)) {
            differences.append(.missingUniqueKey(table: name, columns: key))
        }
        for key in found.distinctUniqueKeys where !uniques.contains(key.map(\.sqliteFolded)) {
            differences.append(.extraUniqueKey(table: name, columns: key))
        }
        let foundKeys = Set(found.foreignKeys.map { $0.folded(in: other) })
        let keys = Set(foreignKeys.map { $0.folded(in: model) })
        for key in foreignKeys where !foundKeys.contains(key.folded(in: model)) {
            differences.append(.missingForeignKey(table: name, key))
        }
        for key in found.foreignKeys where !keys.contains(key.folded(in: other)) {
            differences.append(.extraForeignKey(table: name, key))
        }
        let foundIndexes = Set(found.indexes.map(\.folded))
        let indexes = Set(self.indexes.map(\.folded))
        for index in self.indexes where !foundIndexes.contains(index.folded) {
            differences.append(.missingIndex(table: name, index))
        }
        for index in found.indexes where !indexes.contains(index.folded) {
            differences.append(.extraIndex(table: name, index))
        }
        return differences
    }

    /// A declared type as SQLite compares nothing but we do: case and runs
    /// of spaces do not count (`varchar(20)` is `VARCHAR(20)`).
    static func normalizedType(_ type: String) -> String {
        type.asciiUppercased.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The same, for a column the model seals: it holds BLOB envelopes,
    /// which no affinity converts, and is declared `BLOB` (as `@Table`
    /// declares it) or with no type (the sealing guide allows both); `TEXT`,
    /// which `@Table` declared before, holds them alike. The three compare
    /// equal, so neither validation nor a diff asks to rebuild the table.
    static func normalizedType(_ type: String, sealed: Bool) -> String {
        let normalized = normalizedType(type)
        return sealed && ["BLOB", "", "TEXT"].contains(normalized) ? "BLOB" : normalized
    }

    /// A default as compared: the clause SQLite is given (``defaultClause(_:)``),
    /// without the parentheses it strips when it reports the default.
    static func normalizedDefault(_ sql: String) -> String {
        var text = defaultClause(sql)
        if text.hasPrefix("("), text.hasSuffix(")") { text = String(text.dropFirst().dropLast()) }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension ForeignKeyDefinition {
    struct Folded: Hashable {
        let columns: [FoldedName], table: FoldedName, referenced: [FoldedName], onDelete: ForeignKeyAction, onUpdate: ForeignKeyAction
    }

    /// The key as compared: names folded, and a key that names no column
    /// (`REFERENCES artist`) read as naming the referenced table's primary
    /// key in `schema`.
    func folded(in schema: DatabaseSchema) -> Folded {
        let referenced = referencedColumns.isEmpty ? (schema.table(table)?.primaryKey ?? []) : referencedColumns
        return Folded(columns: columns.map(\.sqliteFolded), table: table.sqliteFolded, referenced: referenced.map(\.sqliteFolded), onDelete: onDelete, onUpdate: onUpdate)
    }
}

extension IndexDefinition {
    struct Folded: Hashable {
        let name: FoldedName, columns: [FoldedName], unique: Bool, condition: [String]?
    }

    var folded: Folded {
        Folded(name: name.sqliteFolded, columns: columns.map(\.sqliteFolded), unique: unique, condition: whereSQL.map(Self.comparable))
    }

    /// A WHERE expression as compared: its tokens, words (keywords and
    /// names) in ASCII upper case, quoted names folded, literals as written;
    /// comments and white space gone.
    static func comparable(_ condition: String) -> [String] {
        SQLTokenizer.tokenize(condition).map { token in
            switch token.kind {
            case .word: return String(decoding: token.text.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
            case .quotedIdentifier: return String(decoding: (token.identifier ?? token.text).utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
            default: return token.text
            }
        }
    }
}
