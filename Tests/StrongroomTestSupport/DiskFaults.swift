import CFaultVFS
import Foundation

/// A full disk, or another process's lock, for one file, on demand: a VFS
/// wrapping the platform one (see `Tests/CFaultVFS`) fails writes to the
/// armed file with `SQLITE_FULL`, or lock requests with `SQLITE_BUSY`.
///
/// ```swift
/// DiskFaults.install()                      // before opening the connections under test
/// let pool = try DatabasePool(path: path, configuration: config)
/// try DiskFaults.whileFull(path + "-wal") { try pool.rekey(to: newKey) }
/// ```
public enum DiskFaults {
    /// One armed file at a time, process-wide.
    private static let lock = NSLock()

    /// Makes the fault VFS the default for connections opened from now on.
    /// Every other file goes through it untouched.
    public static func install() {
        let status = strongroom_fault_vfs_install()
        precondition(status == 0, "the fault VFS did not register (SQLite code \(status))")
    }

    /// Runs `body` while every write to `file` fails as on a full disk, and
    /// returns its result with the number of writes that failed.
    public static func whileFull<T>(_ file: String, _ body: () throws -> T) rethrows -> (result: T, failedWrites: Int) {
        lock.lock()
        defer { lock.unlock() }
        strongroom_fault_vfs_arm(file)
        defer { strongroom_fault_vfs_disarm() }
        let result = try body()
        return (result, Int(strongroom_fault_vfs_failed_writes()))
    }

    /// A fault an armed file shows.
    public enum Fault: Int32, CaseIterable, Sendable {
        /// Writes fail with `SQLITE_FULL`, as on a full disk.
        case full = 0
        /// Writes fail with `SQLITE_IOERR_WRITE`, as with `EIO`.
        case writeError = 1
        /// Reads fail with `SQLITE_IOERR_READ`.
        case readError = 2
        /// `fsync` fails with `SQLITE_IOERR_FSYNC`.
        case syncError = 3
        /// `fsync` waits until `body` returns, then syncs: a disk that is
        /// slow to sync, for as long as the test needs. Not an error.
        case syncHeld = 4
        /// Nothing fails: writes and `fsync`s are counted
        /// (``operationsAffected``, ``countedSyncs``).
        case counted = 5
    }

    /// Runs `body` while `file` shows `fault`, and returns its result with
    /// the number of operations that failed (or, for ``Fault/syncHeld``,
    /// that were held).
    public static func whileFailing<T>(_ file: String, with fault: Fault, _ body: () throws -> T) rethrows -> (result: T, failures: Int) {
        lock.lock()
        defer { lock.unlock() }
        strongroom_fault_vfs_arm_with(file, fault.rawValue)
        defer { strongroom_fault_vfs_disarm() }
        let result = try body()
        return (result, Int(strongroom_fault_vfs_failed_writes()))
    }

    /// How many operations the armed file failed (or held) so far, read
    /// while `body` runs.
    public static var operationsAffected: Int { Int(strongroom_fault_vfs_failed_writes()) }

    /// How many times the file armed with ``Fault/counted`` was synced so
    /// far, read while `body` runs (the next arm starts again at 0).
    public static var countedSyncs: Int { Int(strongroom_fault_vfs_counted_syncs()) }

    /// Runs `body` while connections that open `file` from now on cannot
    /// lock it (`SQLITE_BUSY`), as if another process held it; connections
    /// open already are not affected.
    public static func whileLockedOut<T>(_ file: String, _ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        strongroom_fault_vfs_keep_out(file)
        defer { strongroom_fault_vfs_let_in() }
        return try body()
    }
}
