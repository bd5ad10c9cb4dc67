import ArgumentParser
import Strongroom

struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-encrypt a database under the key in a new key file, and confirm it."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("The key file holding the new key: plain, or wrapped (its passphrase typed on the terminal or printed by --new-passphrase-command).", valueName: "path"))
    var newKeyFile: String

    @OptionGroup var newKeyOptions: NewKeyOptions

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let newKey = try newKeyOptions.load(newKeyFile, timeout: key.commandTimeout)
            let connection = try key.open(database, readOnly: false)
            try connection.rekey(to: newKey)
            if output.json {
                Output.json(["database": database, "new_key_file": newKeyFile, "verified": "true"])
            } else {
                print("Rekeyed \(database); it now opens with \(newKeyFile) only (confirmed by reopening).")
            }
        }
    }
}
