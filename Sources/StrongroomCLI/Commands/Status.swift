import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a database's encryption, size, tables and schema version (read-only)."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @OptionGroup var migrationOptions: MigrationOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let db = try key.open(database, readOnly: true)
            let status = try db.status()
            // The schema version, and what is pending when the migrations directory exists.
            var isDirectory: ObjCBool = false
            let hasDirectory = FileManager.default.fileExists(atPath: migrationOptions.migrations, isDirectory: &isDirectory) && isDirectory.boolValue
            // Without Migrations/ the schema version is shown alone; a
            // directory given with --migrations must be there.
            if !hasDirectory && migrationOptions.givenDirectory != nil { _ = try migrationOptions.migrator() }
            let migrator = hasDirectory ? try migrationOptions.migrator() : try Migrator(migrations: [])
            let migrations = MigrationState(
                currentVersion: try migrator.currentVersion(db),
                pending: hasDirectory ? try migrator.plan(db) : nil)
            let sealed = try SealedColumnRegistry.columns(in: db)
            if output.json {
                Output.json(WithField(base: WithField(base: status, key: "migrations", value: migrations), key: "sealed_columns", value: sealed))
            } else {
                print(Self.describe(status))
                print("schema        version \(migrations.currentVersion)" + (migrations.pending.map { pending in
                    pending.isEmpty ? ", up to date with \(migrationOptions.migrations)"
                        : ", \(pending.count) pending in \(migrationOptions.migrations): " + pending.map { "\($0.version) \($0.description)" }.joined(separator: ", ")
                } ?? ""))
                print("sealed        " + (sealed.isEmpty ? "no column" : sealed.map { column in
                    "\(column.table).\(column.column) (\(column.mode.rawValue)\(column.indexColumn.map { ", index in \($0)" } ?? ""))"
                }.joined(separator: ", ")))
            }
        }
    }

    struct MigrationState: Encodable {
        let currentVersion: Int
        /// nil when there is no migrations directory to compare with.
        let pending: [PlannedMigration]?
    }

    static func describe(_ s: DatabaseStatus) -> String {
        var lines = [
            "database      \(s.path)",
            "encrypted     \(s.encrypted ? "yes" : "no")",
            "sqlcipher     \(s.cipherVersion)",
        ]
        if let source = s.keySource { lines.append("key source    \(source)") }
        if s.encrypted {
            let hmac = s.hmac == true ? "on" + (s.hmacAlgorithm.map { " (\($0))" } ?? "") : "off"
            lines.append("cipher        \(s.cipher ?? "?") via \(s.cipherProvider ?? "?"), page \(s.cipherPageSize ?? 0) bytes, HMAC \(hmac), KDF \(s.kdfIterations ?? 0) iterations\(s.kdfAlgorithm.map { " (\($0))" } ?? "")\(s.plaintextHeaderSize.map { $0 > 0 ? ", \($0)-byte plaintext header" : "" } ?? "")")
            if let format = s.format {
                lines.append("format        \(format)" + (s.compatibilityMode ? " (compatibility mode: `strongroom upgrade` converts it to the linked SQLCipher's format)" : ""))
            }
        }
        lines += [
            s.walSize > 0
                ? "size          \(s.fileSize) bytes in the file and \(s.walSize) bytes in its -wal (\(s.pageCount) pages of \(s.pageSize) bytes; a checkpoint moves the -wal's pages into the file)"
                : "size          \(s.fileSize) bytes (\(s.pageCount) pages of \(s.pageSize) bytes)",
            "journal       \(s.journalMode)",
            "user_version  \(s.userVersion)",
            "tables        \(s.tables.count)",
        ]
        let width = s.tables.map(\.name.count).max() ?? 0
        for table in s.tables {
            lines.append("  \(table.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(table.rowCount) rows")
        }
        return lines.joined(separator: "\n")
    }
}
