import ArgumentParser
import Strongroom
import StrongroomFields
import StrongroomMigrations

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a PLAINTEXT copy of an encrypted database (requires --i-understand-the-output-is-plaintext)."
    )

    @Option(help: ArgumentHelp("The encrypted database (read, never modified).", valueName: "path"))
    var database: String

    @Option(help: ArgumentHelp("The new plaintext file (must not exist).", valueName: "path"))
    var to: String

    @Flag(name: .customLong("i-understand-the-output-is-plaintext"), help: "Acknowledge that every row is written unencrypted.")
    var acknowledged = false

    @OptionGroup var fieldKeys: FieldKeyOptions

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard acknowledged else {
            throw ValidationError("Export writes every row UNENCRYPTED to \(to). Add --i-understand-the-output-is-plaintext to proceed.")
        }
    }

    /// Opens every sealed column of the copy and drops the blind index
    /// columns (and their indexes), which mean nothing without the keyring.
    static func openSealedColumns(keyring: FieldKeyring, in db: Connection) throws {
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.inTransaction(.immediate) { db in
            // Every blind index's column: the indexed columns' own, and the recorded ones.
            // Only the definitions whose check this keyring verifies: a row
            // anyone with the database key wrote could name a column of data.
            let recorded = try BlindIndexRegistry.entries(in: db, keyring: keyring).filter(\.verified).map(\.index).filter { !$0.isIndexedColumnsOwn }
            let opened = try ColumnSealing.openInPlace(keyring: keyring, in: db)
            try db.execute(sql: "DROP TABLE IF EXISTS main.\(BlindIndexRegistry.table)")
            let indexColumns = opened.compactMap { column in column.indexColumn.map { (table: column.table, column: $0) } }
                + recorded.map { (table: $0.table, column: $0.name) }
            for (table, indexColumn) in indexColumns {
                let column = (table: table, indexColumn: indexColumn)
                // The indexes on exactly that column (PRAGMA index_info names each index's columns).
                for index in try db.fetchAll(String.self, sql: "SELECT name FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL",
                                             arguments: [column.table]) {
                    let indexed = try db.fetchAll(sql: "PRAGMA index_info(\(SQLScript.quotedIdentifier(index)))").map { try $0.decode(String?.self, column: "name") }
                    if indexed.count == 1, indexed[0]?.sqliteFolded == indexColumn.sqliteFolded {
                        try db.execute(sql: "DROP INDEX \(SQLScript.quotedIdentifier(index))")
                    }
                }
                try TableRebuild.dropColumn(db, table: column.table, column: indexColumn)
            }
        }
        try db.execute(sql: "PRAGMA foreign_keys = ON")
    }

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let bar = ProgressBar()
            defer { bar.finish() }
            var finishing: ((Connection) throws(StrongroomError) -> Void)?
            if let keyring = try fieldKeys.load(key: key) {
                let path = database
                finishing = { (db: Connection) throws(StrongroomError) -> Void in
                    try FieldErrors.asStrongroomErrors(path: path) { try Self.openSealedColumns(keyring: keyring, in: db) }
                }
            }
            let report = try PlaintextConversion.exportPlaintext(from: database, key: try key.loadKey(),
                                                                 cipherCompatibility: key.cipherCompatibility.flatMap(CipherFormat.init(rawValue:)),
                                                                 to: to, .outputIsUnprotectedPlaintext,
                                                                 progress: { bar.handle($0) }, finishing: finishing)
            bar.finish()
            if !output.json {
                Output.error("strongroom: warning: \(to) holds the data UNENCRYPTED; delete it when done.")
            }
            Conversion.print(report, verb: "Exported (plaintext)", from: database, to: to, json: output.json)
        }
    }
}
