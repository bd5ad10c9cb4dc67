import ArgumentParser
import Strongroom

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

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard acknowledged else {
            throw ValidationError("Export writes every row UNENCRYPTED to \(to). Add --i-understand-the-output-is-plaintext to proceed.")
        }
    }

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let bar = ProgressBar()
            defer { bar.finish() }
            let report = try PlaintextConversion.exportPlaintext(from: database, key: try key.loadKey(), to: to, .outputIsUnprotectedPlaintext) { bar.handle($0) }
            bar.finish()
            if !output.json {
                Output.error("strongroom: warning: \(to) holds the data UNENCRYPTED; delete it when done.")
            }
            Conversion.print(report, verb: "Exported (plaintext)", from: database, to: to, json: output.json)
        }
    }
}
