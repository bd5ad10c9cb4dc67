import CoreMetrics
import Foundation

/// One async access's link from its task to its connection: cancelling
/// the task interrupts the SQL the access runs (`sqlite3_interrupt`), and
/// only while it runs.
///
/// The connection is recorded by `begin` and forgotten by `end`, both under
/// `lock`, and `cancel` interrupts only while it is recorded: so an
/// interrupt reaches this access's statements and never those of the
/// caller after it on the same connection. `end` comes before a write's
/// `COMMIT`, so a commit is never interrupted halfway: a cancellation
/// either rolls the transaction back (the caller gets `CancellationError`)
/// or comes too late to change anything (the caller gets its result).
final class CancellableAccess: @unchecked Sendable {
    // Sendable: every stored property is guarded by `lock`.
    private let lock = NSLock()
    private var connection: Connection?
    private var cancelled = false
    private var ended = false
    private var interrupted = false
    /// Counts the statements this access's cancellation interrupted.
    private let interruptions: Counter?

    init(counting interruptions: Counter? = nil) {
        self.interruptions = interruptions
    }

    /// The task was cancelled: interrupts the statement running, if any.
    func cancel() {
        lock.lock()
        defer { lock.unlock() }
        cancelled = true
        if let connection, !ended {
            connection.interrupt()
            interrupted = true
            interruptions?.increment()
        }
    }

    /// The access starts running on `db`; throws `CancellationError` when
    /// the task was cancelled before.
    func begin(_ db: Connection) throws {
        lock.lock()
        defer { lock.unlock() }
        if cancelled { throw CancellationError() }
        connection = db
    }

    /// No interrupt reaches `db` from now on. Clears an interrupt that
    /// landed after the last statement ended, so it cannot stop the next
    /// one; throws `CancellationError` when the task was cancelled.
    func end(_ db: Connection) throws {
        lock.lock()
        let first = !ended
        ended = true
        connection = nil
        let (wasCancelled, wasInterrupted) = (cancelled, interrupted)
        interrupted = false
        lock.unlock()
        if wasInterrupted { db.clearInterrupt() }
        if first && wasCancelled { throw CancellationError() }
    }

    /// Runs `body` on `db` between `begin` and `end`. A body that failed
    /// because it was interrupted, or that returned after its task was
    /// cancelled, throws `CancellationError`.
    func run<T>(_ db: Connection, _ body: (Connection) throws -> T) throws -> T {
        try begin(db)
        let result: Result<T, any Error>
        do {
            result = .success(try body(db))
        } catch {
            result = .failure(error)
        }
        try end(db)
        return try result.get()
    }

    /// Whether the task was cancelled (for a caller that must tell a
    /// cancellation from the error it caused).
    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }
}
