import ArgumentParser
import Strongroom
import StrongroomFields

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a new random 256-bit database key file, or with --field a new field keyring (mode 0600, never overwrites)."
    )

    @Flag(help: "Write a field keyring (for sealed columns) with one new key, id 1, active.")
    var field = false

    @Option(help: ArgumentHelp("Where to write the key file.", valueName: "path"))
    var out: String

    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            if field {
                try FieldKeyring.generate().write(to: out)
                if output.json {
                    Output.json(["field_keyring": out])
                } else {
                    print("Wrote a new field keyring to \(out) (mode 0600, key 1 active). Keep it apart from the database key, out of version control, and backed up: without it sealed values cannot be read.")
                }
                return
            }
            try KeyFile.write(DatabaseKey.generate(), to: out)
            if output.json {
                Output.json(["key_file": out])
            } else {
                print("Wrote a new database key to \(out) (mode 0600). Keep it out of version control and back it up: without it the database cannot be read.")
            }
        }
    }
}
