import ArgumentParser
import Strongroom
import StrongroomFields
import StrongroomMigrations

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare a database with the migrations: changed files, unknown or pending versions, schema drift, integrity.",
        discussion: "Exit 0 when everything holds, 1 when there is any finding (every finding is listed)."
    )

    @Option(help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String

    @OptionGroup var migrationOptions: MigrationOptions
    @OptionGroup var fieldKeys: FieldKeyOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            // Without the default Migrations/ directory, a database with no
            // migration history is checked for what needs no migrations
            // (as beside an empty directory); one with a history needs them.
            let withoutDirectory = migrationOptions.defaultDirectoryIsMissing
            let migrator = withoutDirectory ? try Migrator(migrations: []) : try migrationOptions.migrator()
            let db = try key.open(database, readOnly: true)
            if try withoutDirectory && !migrator.appliedMigrations(db).isEmpty {
                throw MigrationError(.directoryUnreadable, "Cannot read the migrations directory \(migrationOptions.migrations), and \(database) has a migration history to compare with it; run this where Migrations/ is, or give it with --migrations DIR.")
            }
            let report = try migrator.verify(db)
            let sealedFailures = try fieldKeys.load(key: key).map { keyring in try ColumnSealing.failures(keyring: keyring, in: db) } ?? []
            if output.json {
                Output.json(WithField(base: report, key: "sealed_value_failures", value: sealedFailures.map { SealedFailure(error: $0) }))
            } else if report.isClean && sealedFailures.isEmpty {
                print((report.driftChecked
                       ? "\(database) is at version \(report.currentVersion) and matches \(migrationOptions.migrations): no finding."
                       : "\(database) has no migration history\(withoutDirectory ? " (and there is no \(migrationOptions.migrations) directory)" : ""), so schema drift was not checked; integrity, foreign keys and triggers and views on sealed tables: no finding.")
                      + (fieldKeys.isGiven ? " Every sealed value opens with \(fieldKeys.name)." : ""))
            } else {
                print("\(database) is at version \(report.currentVersion)\(report.driftChecked ? "" : " (no migration history\(withoutDirectory ? ", no \(migrationOptions.migrations) directory" : ""): schema drift was not checked)"); \(report.findings.count + sealedFailures.count) finding(s):")
                for finding in report.findings {
                    print("  [\(finding.code.rawValue)] \(finding.message)")
                }
                for failure in sealedFailures {
                    print("  [sealed_\(failure.code.rawValue)] \(failure.message)")
                }
            }
            if !report.isClean || !sealedFailures.isEmpty { throw ExitCode(1) }
        }
    }
}

/// A sealed value that does not open, in `verify --json`.
struct SealedFailure: Encodable {
    let code: String
    let table: String?
    let column: String?
    let row: String?
    let message: String

    init(error: FieldError) {
        code = error.code.rawValue
        table = error.table
        column = error.column
        row = error.row
        message = error.message
    }
}
