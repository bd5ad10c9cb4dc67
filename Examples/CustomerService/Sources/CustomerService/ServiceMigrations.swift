import Foundation
import StrongroomMacros

/// The service's migrations: `Migrations/*.sql`, shipped in the binary's
/// resource bundle (SwiftPM copies them beside the executable), or a
/// directory given with `--migrations`.
enum ServiceMigrations {
    static func load(directory: String?) throws -> [Migration] {
        let path = directory ?? bundled
        guard let path, FileManager.default.fileExists(atPath: path) else {
            throw MigrationError(.directoryUnreadable, "The built-in migrations are missing (\(bundleName) beside the executable): install the bundle with the binary, or give --migrations DIR.")
        }
        return try Migrator(directory: path).migrations
    }

    private static let bundleName = "CustomerService_CustomerService.resources"

    /// `Migrations/` in the bundle SwiftPM builds beside the executable
    /// (looked up without `Bundle.module`, which stops the process when the
    /// bundle is missing).
    private static var bundled: String? {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            executable.appendingPathComponent(bundleName).appendingPathComponent("Migrations"),
            Bundle.main.bundleURL.appendingPathComponent(bundleName).appendingPathComponent("Migrations"),
        ]
        return candidates.map(\.path).first { FileManager.default.fileExists(atPath: $0) }
    }
}
