import ArgumentParser
import Foundation
import StrongroomMigrations

/// `--migrations DIR` and `--lock-timeout`, shared by the commands that read migrations.
struct MigrationOptions: ParsableArguments {
    @Option(name: .customLong("migrations"), help: ArgumentHelp("The migrations directory (NNNN_description.sql files); default: Migrations.", valueName: "dir"))
    var givenDirectory: String?

    /// The migrations directory: as given, or `Migrations`.
    var migrations: String { givenDirectory ?? "Migrations" }

    /// Whether the directory is the default one and is not there (a
    /// database made by `import` beside no migrations, say).
    var defaultDirectoryIsMissing: Bool {
        givenDirectory == nil && !FileManager.default.fileExists(atPath: migrations)
    }

    @Option(name: .customLong("lock-timeout"), help: ArgumentHelp("Seconds to wait for another runner's lock before exiting with 75.", valueName: "seconds"))
    var lockTimeout: Double = 30

    func validate() throws {
        guard lockTimeout >= 0 else { throw ValidationError("--lock-timeout must be 0 or more seconds.") }
    }

    /// The migrator for the directory, with the lock timeout applied.
    func migrator() throws(MigrationError) -> Migrator {
        var migrator = try Migrator(directory: migrations)
        migrator.lockTimeout = .milliseconds(Int(lockTimeout * 1000))
        return migrator
    }
}
