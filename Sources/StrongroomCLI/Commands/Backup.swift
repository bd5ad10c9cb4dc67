import ArgumentParser
import Foundation
import Strongroom

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a live database consistently, under the same key or a new one.",
        discussion: """
        Uses SQLite's online backup API on one snapshot of the database: a writer and
        readers may be running. The copy is checked (integrity_check, and every
        table's row count against the snapshot) under a temporary name beside the
        destination, made owner-only (0600), and only then given its name; an
        existing file is never replaced.

        Example:
          strongroom backup --database app.db --key-file Keys/app.key --to backups/app.db
        """
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @Option(help: ArgumentHelp("Where the copy goes (must not exist).", valueName: "path"))
    var to: String

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Encrypt the copy under the key in this key file instead (plain or wrapped).", valueName: "path"))
    var newKeyFile: String?

    @OptionGroup var newKeyOptions: NewKeyOptions

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let newKey = try newKeyFile.map { path throws(StrongroomError) in try newKeyOptions.load(path, timeout: key.commandTimeout) }
            let bar = ProgressBar()
            defer { bar.finish() }
            let report = try DatabaseBackup.copy(from: database, configuration: self.key.existing(try key.loadKey(), readOnly: true),
                                                 to: to, newKey: newKey, progress: { progress in
                let percent = progress.totalPages == 0 ? 100 : 100 * progress.copiedPages / progress.totalPages
                bar.draw(line: "backup: \(percent)% (\(progress))")
            })
            bar.finish()
            if output.json {
                Output.json(Summary(database: database, to: to, tables: report.tables, pageCount: report.pageCount, reencrypted: report.reencrypted))
            } else {
                print("Backed up \(database) to \(to): \(report).")
            }
        }
    }

    struct Summary: Encodable {
        let database: String
        let to: String
        let tables: [DatabaseStatus.Table]
        let pageCount: Int
        let reencrypted: Bool
    }
}
