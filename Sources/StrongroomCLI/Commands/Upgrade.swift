import ArgumentParser
import Foundation
import Strongroom

struct Upgrade: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a database written by SQLCipher 3 to the linked SQLCipher's format, verified, in place.",
        discussion: """
        SQLCipher 4 opens a file SQLCipher 3 wrote only in compatibility mode
        (--cipher-compatibility 3); `upgrade` converts it once. The copy is written
        beside the file while the file is locked, checked (a digest of every table,
        user_version, application_id, integrity_check, cipher_integrity_check),
        synced, and renamed over the original: at every instant the path holds the
        original or the complete new file. Stop the applications that use the file
        first. Refused, changing nothing, when the file is current already.

        Example:
          strongroom upgrade --database app.db --key-file Keys/app.key
          strongroom upgrade --database app.db --key-file Keys/app.key --new-key-file Keys/app-4.key
        """
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Encrypt the upgraded file under the key in this key file instead of the current key (plain or wrapped).", valueName: "path"))
    var newKeyFile: String?

    @OptionGroup var newKeyOptions: NewKeyOptions

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if key.cipherCompatibility != nil {
            throw ValidationError("--cipher-compatibility does not apply here: upgrade finds the file's format itself and writes the linked SQLCipher's own.")
        }
    }

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let newKey = try newKeyFile.map { path throws(StrongroomError) in try newKeyOptions.load(path, timeout: key.commandTimeout) }
            let bar = ProgressBar()
            defer { bar.finish() }
            let report = try DatabaseUpgrade.upgrade(databaseAt: database, key: try key.loadKey(), newKey: newKey, progress: { progress in
                bar.draw(line: "upgrade: \(progress)")
            })
            bar.finish()
            if output.json {
                Output.json(Summary(database: database, from: report.from.rawValue, to: report.to.rawValue, tables: report.tables,
                                    userVersion: report.userVersion, applicationId: report.applicationID,
                                    journalMode: report.journalMode, rekeyed: report.rekeyed, verified: true))
            } else {
                print("Upgraded \(database): \(report).")
                if report.rekeyed, let newKeyFile {
                    print("It now opens with \(newKeyFile) only.")
                }
            }
        }
    }

    struct Summary: Encodable {
        let database: String
        let from: Int
        let to: Int
        let tables: [TableDigest]
        let userVersion: Int
        let applicationId: Int
        let journalMode: String
        let rekeyed: Bool
        let verified: Bool
    }
}
