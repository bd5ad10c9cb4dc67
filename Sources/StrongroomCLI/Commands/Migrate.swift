import ArgumentParser
import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending migrations, each in its own transaction (a glob migrates a fleet).",
        discussion: """
            A database path that does not exist is created, encrypted with the given key, and every migration \
            is applied to it (its directory must exist); --dry-run and globs never create. Exit 0 when every \
            database is migrated; with several databases, 1 when any failed (the summary says which and why).
            """
    )

    @Option(help: ArgumentHelp("The database file (created when missing), or a glob such as 'tenants/*.db' for a fleet.", valueName: "path"))
    var database: String

    @OptionGroup var migrationOptions: MigrationOptions

    @Option(help: ArgumentHelp("Migrate up to this version only.", valueName: "version"))
    var to: Int?

    @Flag(name: .customLong("dry-run"), help: "Print the plan and change nothing.")
    var dryRun = false

    @Option(help: ArgumentHelp("How many databases of a fleet to migrate at once.", valueName: "n"))
    var jobs = 1

    @OptionGroup var fieldKeys: FieldKeyOptions
    @OptionGroup var key: KeyOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1.") }
        guard !database.isEmpty, database != ":memory:" else {
            throw ValidationError("--database needs the path of a database file.")
        }
    }

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            var migrator = try migrationOptions.migrator()
            let paths = Glob.expand(database)
            guard !paths.isEmpty else {
                throw StrongroomError(.notFound, "No database matches \(database).")
            }
            let databaseKey = try key.loadKey()
            let keyring = try fieldKeys.load(key: key)
            // Registry rows its migrations write are signed with it.
            migrator.fieldKeyring = keyring
            if paths.count > 1 {
                try runFleet(paths, migrator: migrator, key: databaseKey, keyring: keyring)
                return
            }
            // A single path that does not exist is a new app's first run:
            // create it encrypted. A dry run changes no byte, so never creates.
            // stat follows symlinks: a link to a file not made yet creates it.
            var info = stat()
            let exists = stat(database, &info) == 0
            let isEmptyFile = exists && (info.st_mode & S_IFMT) == S_IFREG && info.st_size == 0
            let creates = !dryRun && paths[0] == database && (!exists || isEmptyFile)
            // An existing file keeps its journal mode; a new one gets WAL.
            var configuration = self.key.existing(databaseKey, readOnly: dryRun)
            configuration.createIfMissing = creates
            configuration.keepsJournalMode = !creates
            // The migrator lends the functions (migrator.fieldKeyring) once it
            // has checked the schema against the migrations, for its run only.
            if creates {
                let directory = FileSystem.directory(of: database)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw StrongroomError(.notFound, "Cannot create \(database): the directory \(directory) does not exist; create it first.", path: database)
                }
            }
            let db = try Connection(path: paths[0], configuration: configuration)
            if dryRun {
                let plan = try migrator.plan(db, to: to)
                let current = try migrator.currentVersion(db)
                if output.json {
                    Output.json(DryRun(database: paths[0], currentVersion: current, plan: plan))
                } else if plan.isEmpty {
                    print("\(paths[0]) is at version \(current); nothing to migrate.")
                } else {
                    print("\(paths[0]) is at version \(current); a migration would apply, in order:")
                    for step in plan {
                        print("  \(step.version)  \(step.description)  (\(step.file ?? "Swift"), \(step.statementCount) statement(s)\(step.rebuildsTables ? ", rebuilds tables" : ""))")
                    }
                    print("Dry run: nothing was changed.")
                }
                return
            }
            let bar = ProgressBar()
            var progress: (@Sendable (MigrationEvent) -> Void)?
            if !output.json {
                progress = { event in bar.handle(event) }
            }
            let report: MigrationReport
            do {
                report = try migrator.migrate(db, to: to, progress: progress)
            } catch let error as MigrationError {
                // The database this run created stays (another runner may
                // already be waiting on it): say so, and what it holds.
                if creates, (try? migrator.currentVersion(db)) == 0 {
                    throw MigrationError(error.code, error.message + " \(database) was created, encrypted with the given key, and holds no migration yet; fix the migration and run again (with the same key), or delete it to start over.",
                                         version: error.version, file: error.file, statement: error.statement, underlying: error.underlying)
                }
                throw error
            }
            if creates && !output.json {
                print("Created \(database), encrypted with the given key.")
            }
            if output.json {
                Output.json(WithField(base: report, key: "created", value: creates))
            } else if report.applied.isEmpty {
                print("\(paths[0]) is at version \(report.toVersion); nothing to migrate.")
            } else {
                for entry in report.applied {
                    print("  applied \(entry.version)  \(entry.description)  (\(entry.durationMs) ms)")
                }
                print("\(paths[0]) migrated from version \(report.fromVersion) to \(report.toVersion).")
            }
        }
    }

    private func runFleet(_ paths: [String], migrator: Migrator, key: DatabaseKey, keyring: FieldKeyring?) throws {
        guard !dryRun else {
            throw StrongroomError(.misuse, "--dry-run takes a single database, not a glob.")
        }
        let results = MigrationFleet.migrate(paths, with: migrator, to: to, jobs: jobs) { _ in
            self.key.existing(key)
        }
        let failed = results.filter { !$0.succeeded }
        if output.json {
            Output.json(FleetSummary(databases: results.count, failed: failed.count, results: results))
        } else {
            for result in results {
                let version = result.toVersion.map(String.init) ?? "?"
                if let error = result.error {
                    print("  FAILED  \(result.path)  at version \(version): \(error)")
                } else {
                    print("  ok      \(result.path)  version \(result.fromVersion ?? 0) → \(version)")
                }
            }
            print("\(results.count - failed.count) of \(results.count) databases migrated\(failed.isEmpty ? "." : "; \(failed.count) failed (listed above).")")
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }

    struct DryRun: Encodable {
        let database: String
        let currentVersion: Int
        let plan: [PlannedMigration]
    }

    struct FleetSummary: Encodable {
        let databases: Int
        let failed: Int
        let results: [MigrationFleet.Result]
    }
}
