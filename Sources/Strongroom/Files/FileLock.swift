import Foundation

/// An exclusive `flock` on a lock file beside a database. The operating
/// system releases it when the process ends, however it ends (SIGKILL
/// included), so it is never stale. `flock` is independent of the POSIX
/// locks SQLite takes, and the lock file is never the database itself:
/// closing a descriptor of the database would drop SQLite's locks.
package final class FileLock {
    /// Why a lock was not taken.
    package enum Failure: Error {
        /// The lock file could not be opened (the `errno`).
        case cannotOpen(Int32)
        /// Another holder kept it past the timeout.
        case timedOut
    }

    private let descriptor: Int32

    /// Waits up to `timeout` for the lock on `path` (created with mode 0600).
    package init(path: String, timeout: Duration) throws(Failure) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .cannotOpen(errno) }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(descriptor)
                throw .timedOut
            }
            usleep(5_000)
        }
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
