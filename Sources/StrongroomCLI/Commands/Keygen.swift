import ArgumentParser
import Strongroom

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a new random 256-bit database key file (mode 0600, never overwrites)."
    )

    @Option(help: ArgumentHelp("Where to write the key file.", valueName: "path"))
    var out: String

    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            try KeyFile.write(DatabaseKey.generate(), to: out)
            if output.json {
                Output.json(["key_file": out])
            } else {
                print("Wrote a new database key to \(out) (mode 0600). Keep it out of version control and back it up: without it the database cannot be read.")
            }
        }
    }
}
