import ArgumentParser
import Strongroom
import StrongroomMigrations

struct Baseline: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Adopt an existing database: record a version as applied without running it."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @Option(help: ArgumentHelp("The version the database's schema already matches.", valueName: "n"))
    var version: Int

    @OptionGroup var migrationOptions: MigrationOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let migrator = try migrationOptions.migrator()
            try migrator.baseline(try key.open(database, readOnly: false), version: version)
            if output.json {
                Output.json(["database": database, "baseline_version": String(version)])
            } else {
                print("\(database) is now recorded at version \(version) (baseline; nothing was run).")
            }
        }
    }
}
