import ArgumentParser
import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields

struct SQL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run SQL on an encrypted database and print the results (read-only unless --write).",
        discussion: """
        The SQL comes from the argument, or from standard input when there is none;
        several statements run in order, each in its own transaction. Results print
        as an aligned table on a terminal and as CSV otherwise, or as asked:

          --table  NULL prints as NULL, the text 'NULL' quoted; blobs as x'hex'
          --csv    NULL is an empty field, empty text is ""; blobs as x'hex'
          --json   one array of row objects per statement, a line each; NULL is
                   null, blobs are {"hex": "…"}

        Reals print in the shortest form that reads back as the same value; control
        characters and backslashes in text print escaped (\n, \t, \u{1b}, \\) in a table.
        With --field-keys, sealed columns are shown opened (the query must select
        the table's primary key, to which each value is bound); without it they
        show as the envelopes they are. --field-keys does not go with --write: SQL
        would store plaintext in a sealed column.

        Refused whatever the flags: ATTACH, sqlcipher_export, and the pragmas that
        change keys or let plaintext out (key, rekey, cipher_*, temp_store,
        writable_schema): use `strongroom rekey`, `export` and `backup`. A script
        that leaves a transaction open (BEGIN without COMMIT) is rolled back and
        fails.

        Examples:
          strongroom sql --database app.db --key-file Keys/app.key "SELECT * FROM customer LIMIT 5"
          strongroom sql --database app.db --key-file Keys/app.key --json < report.sql
        """
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @OptionGroup var key: KeyOptions

    @OptionGroup var fieldKeys: FieldKeyOptions

    @Flag(help: "Allow statements that change the database (without it, such a script is refused before anything runs).")
    var write = false

    @Flag(name: .customLong("table"), help: "Print an aligned table (the default on a terminal).")
    var table = false

    @Flag(help: "Print CSV (the default when standard output is not a terminal).")
    var csv = false

    @Flag(help: "Print one JSON array of row objects per statement.")
    var json = false

    @Argument(help: ArgumentHelp("The SQL to run; read from standard input when omitted.", valueName: "sql"))
    var sql: String?

    func validate() throws {
        guard [table, csv, json].filter({ $0 }).count <= 1 else {
            throw ValidationError("Give at most one of --table, --csv and --json.")
        }
        if write && fieldKeys.isGiven {
            throw ValidationError("--field-keys does not go with --write: SQL would store plaintext in a sealed column. Write without --field-keys (sealed values stay sealed), or through the app.")
        }
        if sql == nil && (key.readsStandardInput || fieldKeys.passphraseFromStandardInput) {
            throw ValidationError("With --passphrase-stdin, standard input holds the passphrase: give the SQL as an argument.")
        }
    }

    var format: ResultFormat {
        if json { return .json }
        if csv { return .csv }
        if table { return .table }
        return isatty(STDOUT_FILENO) != 0 ? .table : .csv
    }

    func run() throws {
        try CommandFailure.reporting(json: json, sqlIsInput: true) {
            let text = sql ?? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            // A bare ";" between two statements is not one. (SQLScript keeps
            // it: migration checksums are computed over its statements.)
            let statements = SQLScript.statements(in: text).filter { !SQLScript.normalized($0).allSatisfy { $0 == ";" } }
            guard !statements.isEmpty else {
                throw StrongroomError(.misuse, "No SQL to run: give it as the last argument or on standard input.")
            }
            let db = try open()
            defer { db.close() }
            if !write {
                // Every statement is checked before the first one runs.
                for statement in statements where !(try db.prepare(sql: statement).isReadOnly) {
                    throw StrongroomError(.misuse, "This SQL changes the database (\(Self.firstWords(of: statement))); run it again with --write to allow that.", path: database)
                }
            }
            var first = true
            for statement in statements {
                let prepared = try db.prepare(sql: statement)
                guard prepared.columnCount > 0 else {
                    try prepared.execute()
                    continue
                }
                let rows = try prepared.fetchAll()
                if !first && format != .json { print("") }
                first = false
                print(format.render(columns: prepared.columnNames, rows: rows), terminator: "")
            }
            if db.isInsideTransaction {
                try? db.execute(sql: "ROLLBACK")
                throw StrongroomError(.misuse, "The SQL left a transaction open (BEGIN without COMMIT); it was rolled back, and nothing of it was kept. End it with COMMIT.", path: database)
            }
        }
    }

    /// The connection: read-only unless --write, and opening the sealed
    /// columns the database records when a keyring is given.
    func open() throws -> Connection {
        var configuration = self.key.existing(try key.loadKey(), readOnly: !write)
        if let keyring = try fieldKeys.load(key: key) {
            // The blind indexes the database records, for strongroom_index(…),
            // once the registry verifies under the keyring.
            let (sealed, indexes, rowKeys) = try {
                let db = try Connection(path: database, configuration: configuration)
                defer { db.close() }
                let sealed = try SealedColumnRegistry.columns(in: db, keyring: keyring)
                // The tables' primary keys, for strongroom_seal and inserts
                // on this connection (the operator's own; its reads open
                // only through strongroom_open).
                var rowKeys: [String: [String]] = [:]
                for table in Set(sealed.filter { $0.mode != .deterministic }.map(\.table)) {
                    let key = try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))")
                        .filter { try $0.decode(Int.self, column: "pk") > 0 }
                        .sorted { try $0.decode(Int.self, column: "pk") < $1.decode(Int.self, column: "pk") }
                        .map { try $0.decode(String.self, column: "name") }
                    if !key.isEmpty { rowKeys[table] = key }
                }
                return (sealed, try BlindIndexRegistry.entries(in: db, keyring: keyring).map(\.index).filter { !$0.isIndexedColumnsOwn }, rowKeys)
            }()
            configuration.seal(sealed, indexes: indexes, keyring: keyring, rowKeys: rowKeys)
            // The operator's SQL opens and looks up with the functions,
            // which an app connection does not carry.
            configuration.addFieldFunctionsForTools(keyring: keyring, columns: sealed, indexes: indexes)
        }
        let db = try Connection(path: database, configuration: configuration)
        db.refuseKeyChangesAndPlaintextCopies()
        return db
    }

    static func firstWords(of statement: String) -> String {
        let words = statement.split(whereSeparator: \.isWhitespace).prefix(3).joined(separator: " ")
        return words.count > 40 ? String(words.prefix(40)) + "…" : words
    }
}

/// How `strongroom sql` prints a statement's rows.
enum ResultFormat {
    case table, csv, json

    func render(columns: [String], rows: [Row]) -> String {
        switch self {
        case .table: Self.table(columns: columns, rows: rows)
        case .csv: Self.csv(columns: columns, rows: rows)
        case .json: Self.json(columns: columns, rows: rows)
        }
    }

    /// The shortest decimal form that reads back as the same Double.
    static func real(_ value: Double) -> String { "\(value)" }


    // MARK: Table

    static func table(columns: [String], rows: [Row]) -> String {
        let cells = rows.map { row in row.values.map(tableCell) }
        var widths = columns.map { escapingControlCharacters($0).count }
        for line in cells {
            for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ fields: [String]) -> String {
            fields.enumerated().map { index, field in
                index == fields.count - 1 ? field : field.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ") + "\n"
        }
        return line(columns.map(escapingControlCharacters)) + line(widths.map { String(repeating: "-", count: $0) }) + cells.map(line).joined()
    }

    /// NULL as NULL; text that could be read as NULL or a blob, quoted as an
    /// SQL literal; control characters and backslashes escaped, so nothing
    /// from the database reaches the terminal as a control sequence.
    static func tableCell(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let n): return String(n)
        case .real(let d): return real(d)
        case .blob(let bytes): return "x'\(Hex.encode(bytes))'"
        case .text(let text):
            let shown = escapingControlCharacters(text)
            let bare = text.trimmingCharacters(in: .whitespaces)
            let ambiguous = bare.uppercased() == "NULL" || (bare.hasPrefix("x'") && bare.hasSuffix("'")) || (bare.hasPrefix("'") && bare.hasSuffix("'"))
            return ambiguous ? SQLScript.quotedLiteral(shown) : shown
        }
    }

    /// `\n`, `\r`, `\t`, `\\` and `\u{…}` for every other C0 or C1 control
    /// character and DEL.
    static func escapingControlCharacters(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: CSV (RFC 4180)

    static func csv(columns: [String], rows: [Row]) -> String {
        var out = columns.map(csvText).joined(separator: ",") + "\n"
        for row in rows {
            out += row.values.map(csvCell).joined(separator: ",") + "\n"
        }
        return out
    }

    /// NULL is an empty field; empty text is "" (quoted), so the two differ.
    static func csvCell(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return ""
        case .integer(let n): return String(n)
        case .real(let d): return real(d)
        case .blob(let bytes): return "x'\(Hex.encode(bytes))'"
        case .text(let text): return text.isEmpty ? "\"\"" : csvText(text)
        }
    }

    static func csvText(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + SQLScript.doubling("\"", in: text) + "\""
    }

    // MARK: JSON

    /// One line: the rows as objects, keys in column order.
    static func json(columns: [String], rows: [Row]) -> String {
        let objects = rows.map { row in
            "{" + zip(columns, row.values).map { jsonString($0) + ":" + jsonValue($1) }.joined(separator: ",") + "}"
        }
        return "[" + objects.joined(separator: ",") + "]\n"
    }

    static func jsonValue(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let n): return String(n)
        case .real(let d): return d.isFinite ? real(d) : jsonString(d > 0 ? "Infinity" : "-Infinity")
        case .text(let text): return jsonString(text)
        case .blob(let bytes): return "{\"hex\":\"\(Hex.encode(bytes))\"}"
        }
    }

    /// `text` as a JSON string, escaped by Foundation's encoder.
    static func jsonString(_ text: String) -> String {
        // Encoding a String cannot fail.
        String(decoding: try! stringEncoder.encode(text), as: UTF8.self)
    }

    private static let stringEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return encoder
    }()
}
