import Foundation
import Strongroom
@testable import StrongroomMigrations

/// A comparable picture of a database: schema objects (SQL tokens with names
/// unquoted and folded), columns, indexes, foreign keys, every row with its
/// rowid, what each view returns, and the AUTOINCREMENT counters.
enum DatabasePicture {
    static func of(_ db: Connection) throws -> [String] {
        var lines: [String] = []
        let objects = try db.fetchAll(sql: """
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE name <> 'strongroom_migrations' AND sql IS NOT NULL ORDER BY type, lower(name)
            """)
        for object in objects {
            let type = try object.decode(String.self, at: 0), name = try object.decode(String.self, at: 1)
            lines.append("\(type) \(name.lowercased()) on \(try object.decode(String.self, at: 2).lowercased()): \(normalized(try object.decode(String.self, at: 3)))")
            guard type == "table" || type == "view" else { continue }
            let quoted = SQLScript.quotedIdentifier(name)
            for column in try db.fetchAll(sql: "PRAGMA table_info(\(quoted))") {
                lines.append("  column \(column.values.map(render).joined(separator: "|"))")
            }
            for index in try db.fetchAll(sql: "PRAGMA index_list(\(quoted))") {
                let indexName = try index.decode(String.self, column: "name")
                let columns = try db.fetchAll(sql: "PRAGMA index_info(\(SQLScript.quotedIdentifier(indexName)))").map { $0.values.map(render).joined(separator: ":") }
                lines.append("  index \(index.values.dropFirst().map(\.description).joined(separator: "|")) \(columns)")
            }
            for key in try db.fetchAll(sql: "PRAGMA foreign_key_list(\(quoted))") {
                lines.append("  foreign key \(key.values.map(render).joined(separator: "|"))")
            }
            if type == "table" && name != "sqlite_sequence" {
                let rows: [Row]
                if let withRowids = try? db.fetchAll(sql: "SELECT rowid, * FROM \(quoted) ORDER BY rowid") {
                    rows = withRowids
                } else {
                    rows = try db.fetchAll(sql: "SELECT * FROM \(quoted)")
                }
                lines += rows.map { "  row " + $0.values.map(render).joined(separator: "|") }.sorted()
            } else if type == "view" {
                do {
                    lines += try db.fetchAll(sql: "SELECT * FROM \(quoted)").map { "  view row " + $0.values.map(render).joined(separator: "|") }.sorted()
                } catch {
                    lines.append("  view error \(error.message)")
                }
            }
        }
        if try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") == 1 {
            lines += try db.fetchAll(sql: "SELECT name, seq FROM sqlite_sequence ORDER BY name").map { "sequence \($0.values.map(render).joined(separator: "|"))" }
        }
        return lines
    }

    /// A value with its type: text quoted, blobs in hex.
    static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let n): return String(n)
        case .real(let d): return String(d) + "r"
        case .text(let s): return "'" + s + "'"
        case .blob(let b): return "x'" + b.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// SQL tokens, names without quotes and case, literals as written. A
    /// table's name written as a 'string' (`CREATE TABLE 't'(…)`, which SQLite
    /// takes for the name) is a name too: SQLite keeps it as written when it
    /// alters the table in place, and writes `"t"` when a rebuild renames the
    /// new table to it.
    static func normalized(_ sql: String) -> String {
        let tokens = SQLTokenizer.tokenize(sql).filter { $0.text != ";" }
        let tableName = tableNameIndex(tokens)
        return tokens.indices.map { i in
            let name = i == tableName ? tokens[i].name : tokens[i].identifier
            return name.map { String(String.UnicodeScalarView($0.sqliteFolded.scalars)) } ?? tokens[i].text
        }.joined(separator: " ")
    }

    /// The position of the name in `CREATE [TEMP] TABLE [IF NOT EXISTS] [schema.]name (`, if it is one.
    private static func tableNameIndex(_ tokens: [SQLToken]) -> Int? {
        guard tokens.first?.isKeyword("CREATE") == true else { return nil }
        var i = 1
        while i < tokens.count, tokens[i].isKeyword("TEMP") || tokens[i].isKeyword("TEMPORARY") { i += 1 }
        guard i < tokens.count, tokens[i].isKeyword("TABLE") else { return nil }
        i += 1
        if i + 2 < tokens.count, tokens[i].isKeyword("IF"), tokens[i + 1].isKeyword("NOT"), tokens[i + 2].isKeyword("EXISTS") { i += 3 }
        if i + 2 < tokens.count, tokens[i + 1].text == "." { i += 2 }
        return i + 1 < tokens.count && tokens[i + 1].text == "(" ? i : nil
    }

    /// True when two pictures are the same to the unicode scalar (Swift's
    /// `==` on strings would take "é" and "e\u{301}" for one name; SQLite does not).
    static func same(_ a: [String], _ b: [String]) -> Bool {
        a.map { Array($0.unicodeScalars) } == b.map { Array($0.unicodeScalars) }
    }

    /// The first lines where two pictures differ.
    static func difference(_ ours: [String], _ other: [String], otherName: String = "native") -> String {
        let count = max(ours.count, other.count)
        for i in 0..<count where !same([i < ours.count ? ours[i] : ""], [i < other.count ? other[i] : ""]) {
            return "line \(i): ours `\(i < ours.count ? ours[i] : "(none)")`, \(otherName) `\(i < other.count ? other[i] : "(none)")`"
        }
        return "none"
    }

    static func openPlaintext(_ path: String) throws -> Connection {
        var configuration = Configuration.plaintext
        configuration.readOnly = true
        return try Connection(path: path, configuration: configuration)
    }
}
