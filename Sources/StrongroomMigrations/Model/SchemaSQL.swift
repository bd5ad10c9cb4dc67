import Strongroom
import StrongroomFields
import Foundation

extension TableDefinition {
    /// `CREATE TABLE` for this table. A single-column primary key is
    /// declared on its column, so that an `INTEGER PRIMARY KEY` is the rowid.
    public var createTableSQL: String {
        var lines = columns.map { column in
            "  " + column.sql(primaryKey: primaryKey.count == 1 && primaryKey[0].sqliteFolded == column.name.sqliteFolded)
        }
        if primaryKey.count > 1 { lines.append("  PRIMARY KEY (\(Self.list(primaryKey)))") }
        for unique in uniqueKeys { lines.append("  UNIQUE (\(Self.list(unique)))") }
        for key in foreignKeys {
            var line = "  FOREIGN KEY (\(Self.list(key.columns))) REFERENCES \(SQLScript.quotedIdentifier(key.table))"
            if !key.referencedColumns.isEmpty { line += " (\(Self.list(key.referencedColumns)))" }
            if key.onDelete != .noAction { line += " ON DELETE " + key.onDelete.rawValue }
            if key.onUpdate != .noAction { line += " ON UPDATE " + key.onUpdate.rawValue }
            lines.append(line)
        }
        return "CREATE TABLE \(SQLScript.quotedIdentifier(name)) (\n\(lines.joined(separator: ",\n"))\n)"
    }

    /// `CREATE INDEX` for each of the table's indexes.
    public var createIndexSQL: [String] {
        indexes.map { index in
            "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(SQLScript.quotedIdentifier(index.name)) ON \(SQLScript.quotedIdentifier(name)) (\(Self.list(index.columns)))"
                + (index.whereSQL.map { " WHERE " + $0 } ?? "")
        }
    }

    /// A declared type as SQLite reads it back: as written when it follows
    /// SQLite's grammar for a type (names, then perhaps one or two signed
    /// numbers in parentheses: `NUMERIC(10, 2)`); else quoted. SQLite keeps a
    /// type's text dequoted (`x "Mixed Case"` is the type Mixed Case, `x " INT "`
    /// the type " INT "): written bare, a keyword would end it (`Mixed Case`
    /// is the type Mixed, then CASE), and the spaces around it would go.
    static func typeClause(_ type: String) -> String {
        isBareType(type) ? type : SQLScript.quotedIdentifier(type)
    }

    /// Whether `type` is, byte for byte, in the part of SQLite's type grammar
    /// that reads back as written: ASCII names (letters, digits, `_`, not
    /// starting with a digit, none a keyword) one space apart, then perhaps
    /// `(n)` or `(n, m)` with n and m signed decimals (`+1`, `-2`, `10.5`).
    /// Anything else (comments, other whitespace, other numbers, other
    /// letters) is quoted: a quoted type reads back as its text.
    private static func isBareType(_ type: String) -> Bool {
        let bytes = Array(type.utf8)
        var i = 0
        func isLetter(_ b: UInt8) -> Bool { (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x5F }
        func isDigit(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) }
        func name() -> Bool {
            let start = i
            guard i < bytes.count, isLetter(bytes[i]) else { return false }
            while i < bytes.count, isLetter(bytes[i]) || isDigit(bytes[i]) { i += 1 }
            return !reservedWords.contains(String(decoding: bytes[start..<i], as: UTF8.self).uppercased())
        }
        func accept(_ byte: Character) -> Bool {
            guard i < bytes.count, bytes[i] == byte.asciiValue! else { return false }
            i += 1
            return true
        }
        func signedNumber() -> Bool {
            _ = accept("+") || accept("-")
            let start = i
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            guard i > start else { return false }
            if accept(".") {
                let fraction = i
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
                guard i > fraction else { return false }
            }
            return true
        }
        guard name() else { return false }
        while accept(" ") { guard name() else { return false } }
        if i == bytes.count { return true }
        guard accept("("), signedNumber() else { return false }
        if accept(",") {
            _ = accept(" ")
            guard signedNumber() else { return false }
        }
        return accept(")") && i == bytes.count
    }

    /// SQLite's keywords that cannot stand for a name in a type (those
    /// without its `%fallback ID`, in any version from 3.15: NOTHING came in
    /// 3.24), and a few more: quoting one too many is harmless.
    static let reservedWords: Set<String> = [
        "ADD", "ALL", "ALTER", "ALWAYS", "AND", "AS", "AUTOINCREMENT", "BETWEEN", "CASE", "CHECK", "COLLATE", "COMMIT",
        "CONSTRAINT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DEFAULT",
        "DEFERRABLE", "DELETE", "DISTINCT", "DROP", "ELSE", "ESCAPE", "EXCEPT", "EXISTS", "FILTER", "FOREIGN", "FROM",
        "FULL", "GENERATED", "GROUP", "HAVING", "IN", "INDEX", "INDEXED", "INNER", "INSERT", "INTERSECT", "INTO", "IS",
        "ISNULL", "JOIN", "LEFT", "LIMIT", "NATURAL", "NOT", "NOTHING", "NOTNULL", "NULL", "ON", "OR", "ORDER", "OUTER", "OVER",
        "PRIMARY", "REFERENCES", "RETURNING", "RIGHT", "SELECT", "SET", "TABLE", "THEN", "TO", "TRANSACTION", "UNION",
        "UNIQUE", "UPDATE", "USING", "VALUES", "WHEN", "WHERE", "WINDOW",
    ]

    static func list(_ names: [String]) -> String {
        names.map(SQLScript.quotedIdentifier).joined(separator: ", ")
    }

    /// A default as SQLite takes it after `DEFAULT`. `PRAGMA table_info`
    /// reports an expression without the parentheses it was given in, so
    /// anything but one literal (a string, a number, possibly signed, a blob,
    /// NULL, CURRENT_TIME/DATE/TIMESTAMP, a name) goes back in parentheses.
    /// TRUE and FALSE are 1 and 0 (before SQLite 3.23 they are identifiers,
    /// which a default reads as strings); any other name stays bare, where
    /// SQLite reads it as a string (in parentheses it is a column, which a
    /// default cannot use).
    static func defaultClause(_ sql: String) -> String {
        let trimmed = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        let tokens = SQLTokenizer.tokenize(trimmed)
        if tokens.count == 1 {
            let token = tokens[0]
            switch token.kind {
            case .string, .number, .blob: return trimmed
            case .word where token.isKeyword("TRUE"): return "1"
            case .word where token.isKeyword("FALSE"): return "0"
            case .word where ["NULL", "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP"].contains(token.text.asciiUppercased): return trimmed
            case .word, .quotedIdentifier: return trimmed
            default: break
            }
        }
        if tokens.count == 2, ["+", "-"].contains(tokens[0].text), tokens[1].kind == .number { return trimmed }
        return "(\(trimmed))"
    }
}

extension ColumnDefinition {
    /// The column as `CREATE TABLE` and `ADD COLUMN` declare it:
    /// `"name" TYPE [NOT NULL] [PRIMARY KEY] [DEFAULT …]`.
    func sql(primaryKey: Bool = false) -> String {
        var line = SQLScript.quotedIdentifier(name)
        if !type.isEmpty { line += " " + TableDefinition.typeClause(type) }
        if notNull { line += " NOT NULL" }
        if primaryKey { line += " PRIMARY KEY" }
        if let defaultSQL { line += " DEFAULT " + TableDefinition.defaultClause(defaultSQL) }
        return line
    }
}

extension DatabaseSchema {
    /// The schema as SQL: each table's `CREATE TABLE` and `CREATE INDEX`,
    /// then the sealed columns' registry, so that running the file gives a
    /// database whose ``read(from:)`` is this schema again.
    ///
    /// It is the file `strongroom diff` compares the migrations with
    /// (`Migrations/schema.sql`): regenerate it whenever the model changes,
    /// and let a test fail when the checked-in file is stale
    /// (``checkSchemaFile(at:)``).
    public var sql: String {
        var out = "-- The model's schema, written by Strongroom from the app's table definitions.\n"
        out += "-- Do not edit: regenerate it from the model. `strongroom diff` writes the next migration from it.\n"
        for table in tables {
            out += "\n" + table.createTableSQL + ";\n"
            for index in table.createIndexSQL { out += index + ";\n" }
        }
        let sealed = sealedColumns
        if !sealed.isEmpty {
            out += "\n-- Sealed columns (field encryption reads them from this table).\n"
            out += SealedColumnRegistry.createTableSQL + ";\n"
            for column in sealed {
                let index = column.indexColumn.map(Self.literal) ?? "NULL"
                out += "INSERT INTO main.\(SealedColumnRegistry.table) (table_name, column_name, mode, index_column) VALUES (\(Self.literal(column.table)), \(Self.literal(column.column)), \(Self.literal(column.mode.rawValue)), \(index));\n"
            }
        }
        let indexes = tables.flatMap(\.blindIndexes)
        if !indexes.isEmpty {
            out += "\n-- Blind indexes (`strongroom fields index add` confirms and fills them; see the Sealing columns article).\n"
            out += BlindIndexRegistry.createTableSQL + ";\n"
            for index in indexes { out += Self.recordingSQL(index, state: "ready") + ";\n" }
        }
        return out
    }

    /// Records `index` in the blind index registry, without a check (a
    /// migration has no keyring: `fields index add` confirms the definition).
    static func recordingSQL(_ index: BlindIndex, state: String) -> String {
        "INSERT OR REPLACE INTO main.\(BlindIndexRegistry.table) (table_name, name, definition, state, rebuilt_through, \"check\") VALUES (\(literal(index.table)), \(literal(index.name)), \(literal(BlindIndexRegistry.definitionJSON(index))), '\(state)', NULL, NULL)"
    }

    static func literal(_ text: String) -> String {
        SQLScript.quotedLiteral(text)
    }
}
