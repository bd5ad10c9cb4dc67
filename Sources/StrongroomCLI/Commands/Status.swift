import ArgumentParser
import Strongroom

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a database's encryption, size, tables and schema version (read-only)."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            var configuration = Configuration(key: try key.loadKey())
            configuration.readOnly = true
            configuration.createIfMissing = false
            let status = try Connection(path: database, configuration: configuration).status()
            if output.json {
                Output.json(status)
            } else {
                print(Self.describe(status))
            }
        }
    }

    static func describe(_ s: DatabaseStatus) -> String {
        var lines = [
            "database      \(s.path)",
            "encrypted     \(s.encrypted ? "yes" : "no")",
            "sqlcipher     \(s.cipherVersion)",
        ]
        if s.encrypted {
            lines.append("cipher        \(s.cipher ?? "?") via \(s.cipherProvider ?? "?"), page \(s.cipherPageSize ?? 0) bytes, HMAC \(s.hmac == true ? "on" : "off"), KDF \(s.kdfIterations ?? 0) iterations")
        }
        lines += [
            "size          \(s.fileSize) bytes (\(s.pageCount) pages of \(s.pageSize) bytes)",
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
