import Foundation
import Strongroom

/// An exclusive lock between migration runners on one database file: a
/// ``FileLock`` on `<database>-migrate.lock`, released by the operating
/// system when the process ends, however it ends (SIGKILL included).
final class MigrationLock {
    private let lock: FileLock

    /// Waits up to `timeout` for the lock.
    init(databasePath: String, timeout: Duration) throws(MigrationError) {
        // One lock per database file, however it is reached (a symlink, `..`).
        let path = (FileSystem.resolved(databasePath) ?? databasePath) + "-migrate.lock"
        do {
            lock = try FileLock(path: path, timeout: timeout)
        } catch .cannotOpen(let code) {
            throw MigrationError(.lockTimeout, "Cannot open the migration lock file \(path): \(String(cString: strerror(code))).")
        } catch {
            throw MigrationError(.lockTimeout, "Another migration runner holds the lock on \(databasePath) (\(path)); waited \(timeout). Try again when it has finished.")
        }
    }
}
