import Strongroom
import StrongroomCrypto
import StrongroomFields

/// The schema of a database as comparable text: every table, index, trigger
/// and view (except SQLite's own and the history table), with its SQL
/// normalized (comments removed, whitespace folded).
public struct SchemaSnapshot: Sendable, Equatable {
    /// `"type name"` → normalized SQL.
    public let objects: [String: String]
    /// The objects' names, folded as SQLite folds them: the names whose
    /// quoting ``canonicalSQL(_:)`` drops.
    let names: Set<FoldedName>

    init(_ db: Connection) throws(StrongroomError) {
        var objects: [String: String] = [:]
        let rows = try db.fetchAll(sql: """
            SELECT type, name, sql FROM main.sqlite_master
            WHERE sql IS NOT NULL AND \(SQLScript.isUserObjectName()) AND name <> '\(MigrationHistory.table)'
              -- The field keys Strongroom records as it seals (FieldKeyCheck): no migration makes it.
              AND NOT (type = 'table' AND name IN ('strongroom_field_keys', '\(RegistrySignature.table)'))
            """)
        // Any storage class: a row written with writable_schema may hold a BLOB.
        let names = Set(rows.map { SQLScript.schemaText($0[1]).sqliteFolded })
        for row in rows {
            // Names as SQLite tells them apart: ASCII case folded, every
            // other scalar kept (`Kept` and KELVIN SIGN + `ept` are two
            // tables; `lowercased()` made them one key).
            let key = Self.key(type: SQLScript.schemaText(row[0]), name: SQLScript.schemaText(row[1]))
            objects[key] = Self.canonicalQuoting(SQLScript.normalized(SQLScript.schemaText(row[2])), names: names)
        }
        self.objects = objects
        self.names = names
    }

    /// The key of an object in ``objects``: its type and its name, ASCII
    /// letters folded and every other scalar written out
    /// (``Swift/String/asciiLowercased``), so that names SQLite keeps apart
    /// are never one key.
    static func key(type: String, name: String) -> String {
        "\(type) \(name.asciiLowercased)"
    }

    /// Whether two objects' SQL is the same text, scalar by scalar (Swift's
    /// `==` takes KELVIN SIGN for K, and é for e and a combining accent).
    static func sameSQL(_ a: String?, _ b: String?) -> Bool {
        a.map(ExactText.init) == b.map(ExactText.init)
    }

    /// `sql` as ``objects`` holds it: normalized, this schema's own names unquoted.
    func canonicalSQL(_ sql: String) -> String {
        Self.canonicalQuoting(SQLScript.normalized(sql), names: names)
    }

    /// `sql` with every quoted name of one of the schema's own objects
    /// (`names`, folded as SQLite folds them) written bare: `[Customer]`,
    /// `"Customer"` and `` `Customer` `` are all `Customer`. How a table's name
    /// is quoted is not drift: SQLite's `ALTER TABLE … RENAME` writes the new
    /// name, and every reference to it, as `"Customer"`, so a table rebuilt on
    /// SQLite 3.15 (a dropped column) and the same migration replayed on
    /// SQLite 3.46 (a native DROP COLUMN, which keeps the text as written)
    /// differ only there. Any other quoted word stays as written: SQLite reads
    /// `"NULL"` or `"CURRENT_TIMESTAMP"` where no column has that name as a
    /// string, which is not what the bare keyword means.
    static func canonicalQuoting(_ sql: String, names: Set<FoldedName>) -> String {
        let scalars = Array(sql.unicodeScalars)
        var out = String.UnicodeScalarView()
        var position = 0
        for token in SQLTokenizer.tokenize(sql) where token.kind == .quotedIdentifier {
            guard let name = token.identifier, token.range.lowerBound >= position, names.contains(name.sqliteFolded) else { continue }
            let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }
                && !("0"..."9").contains(name.unicodeScalars.first!)
            guard plain else { continue }
            out.append(contentsOf: scalars[position..<token.range.lowerBound])
            out.append(contentsOf: name.unicodeScalars)
            position = token.range.upperBound
        }
        out.append(contentsOf: scalars[position...])
        return String(out)
    }

    /// SHA-256 (hex) of the sorted objects.
    public var hash: String {
        var h = SHA256()
        for key in objects.keys.sorted() {
            h.update(Array("\(key)\n\(objects[key]!)\n".utf8))
        }
        return Hex.encode(h.finalize())
    }

    /// How `self` (the live schema) differs from `expected`, one line per object.
    func differences(from expected: SchemaSnapshot) -> [String] {
        var lines: [String] = []
        // Strongroom's own tables are never drift: the sealed columns'
        // registry is written by import --seal and sealInPlace as well as by
        // migrations.
        let own = "table \(SealedColumnRegistry.table)"
        for key in Set(objects.keys).union(expected.objects.keys).sorted() where key != own {
            switch (objects[key], expected.objects[key]) {
            case (nil, .some): lines.append("\(key) is missing from the database")
            case (.some, nil): lines.append("\(key) exists in the database but no migration creates it")
            case (.some(let live), .some(let wanted)) where !Self.sameSQL(live, wanted):
                lines.append("\(key) differs: database has `\(live)`, migrations give `\(wanted)`")
            default: break
            }
        }
        return lines
    }
}
