import Foundation

/// An exclusive lock between migration runners on one database file: `flock`
/// on `<database>-migrate.lock`. The operating system releases it when the
/// process ends, however it ends (SIGKILL included), so it is never stale.
final class MigrationLock {
    private let fd: Int32

    /// Waits up to `timeout` for the lock.
    init(databasePath: String, timeout: Duration) throws(MigrationError) {
        let path = databasePath + "-migrate.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw MigrationError(.lockTimeout, "Cannot open the migration lock file \(path): \(String(cString: strerror(errno))).")
        }
        let deadline = ContinuousClock.now + timeout
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                throw MigrationError(.lockTimeout, "Another migration runner holds the lock on \(databasePath) (\(path)); waited \(timeout). Try again when it has finished.")
            }
            usleep(20_000)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
