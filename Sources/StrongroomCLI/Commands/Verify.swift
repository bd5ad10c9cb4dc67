import ArgumentParser
import Strongroom
import StrongroomMigrations

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare a database with the migrations: changed files, unknown or pending versions, schema drift, integrity.",
        discussion: "Exit 0 when everything holds, 1 when there is any finding (every finding is listed)."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @OptionGroup var migrationOptions: MigrationOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let migrator = try migrationOptions.migrator()
            let report = try migrator.verify(try key.open(database, readOnly: true))
            if output.json {
                Output.json(report)
            } else if report.isClean {
                print("\(database) is at version \(report.currentVersion) and matches \(migrationOptions.migrations): no finding.")
            } else {
                print("\(database) is at version \(report.currentVersion); \(report.findings.count) finding(s):")
                for finding in report.findings {
                    print("  [\(finding.code.rawValue)] \(finding.message)")
                }
            }
            if !report.isClean { throw ExitCode(1) }
        }
    }
}
