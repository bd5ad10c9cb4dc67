import ArgumentParser
import Strongroom

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt an existing plaintext SQLite database into a new encrypted file, verified table by table."
    )

    @Option(help: ArgumentHelp("The plaintext SQLite database (read, never modified).", valueName: "path"))
    var from: String

    @Option(help: ArgumentHelp("The new encrypted database (must not exist).", valueName: "path"))
    var database: String

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let bar = ProgressBar()
            defer { bar.finish() }
            let report = try PlaintextConversion.importPlaintext(from: from, to: database, key: try key.loadKey()) { bar.handle($0) }
            bar.finish()
            Conversion.print(report, verb: "Encrypted", from: from, to: database, json: output.json)
        }
    }
}
