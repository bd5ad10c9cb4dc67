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
            objects[key] = SQLScript.normalized(SQLScript.schemaText(row[2]))
        }
        self.objects = objects
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
