import Strongroom
import StrongroomCrypto
import StrongroomFields

/// The schema of a database as comparable text: every table, index, trigger
/// and view (except SQLite's own and the history table), with its SQL
/// normalized (comments removed, whitespace folded).
public struct SchemaSnapshot: Sendable, Equatable {
    /// `"type name"` → normalized SQL.
    public let objects: [String: String]

    init(_ db: Connection) throws(StrongroomError) {
        var objects: [String: String] = [:]
        for row in try db.fetchAll(sql: """
            SELECT type, name, sql FROM main.sqlite_master
            WHERE sql IS NOT NULL AND \(SQLScript.isUserObjectName()) AND name <> '\(MigrationHistory.table)'
            """) {
            // Any storage class: a row written with writable_schema may hold a BLOB.
            let key = "\(SQLScript.schemaText(row[0])) \(SQLScript.schemaText(row[1]).lowercased())"
            objects[key] = Self.canonicalQuoting(SQLScript.normalized(SQLScript.schemaText(row[2])))
        }
        self.objects = objects
    }

    /// `sql` with every quoted identifier written one way: bare when it is a
    /// plain name (`[Customer]`, `"Customer"` and `` `Customer` `` are all
    /// `Customer`), else in double quotes. How a name is quoted is not drift:
    /// SQLite's `ALTER TABLE … RENAME` writes the new name as `"Customer"`,
    /// so a table rebuilt on SQLite 3.15 (a dropped column) and the same
    /// migration replayed on SQLite 3.46 (a native DROP COLUMN, which keeps
    /// the text as written) differ only there. (A double-quoted word that
    /// SQLite reads as a string, where no column has that name, compares
    /// equal to the bare name: a difference this comparison does not see.)
    static func canonicalQuoting(_ sql: String) -> String {
        let scalars = Array(sql.unicodeScalars)
        var out = String.UnicodeScalarView()
        var position = 0
        for token in SQLTokenizer.tokenize(sql) where token.kind == .quotedIdentifier {
            guard let name = token.identifier, token.range.lowerBound >= position else { continue }
            out.append(contentsOf: scalars[position..<token.range.lowerBound])
            let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }
                && !("0"..."9").contains(name.unicodeScalars.first!)
            out.append(contentsOf: (plain ? name : SQLScript.quotedIdentifier(name)).unicodeScalars)
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
            case (.some(let live), .some(let wanted)) where live != wanted:
                lines.append("\(key) differs: database has `\(live)`, migrations give `\(wanted)`")
            default: break
            }
        }
        return lines
    }
}
