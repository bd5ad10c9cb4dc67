import CoreMetrics
import Foundation

/// One async access's link from its task to its connection: cancelling
/// the task interrupts the SQL the access runs (`sqlite3_interrupt`), and
/// only while it runs.
///
/// `run` records the connection while the caller's closure runs, and
/// forgets it when the closure ends, both under `lock`; `cancel` interrupts
/// only while it is recorded: so an interrupt reaches this access's
/// closure and never the statements around it (BEGIN, COMMIT, the queue's
/// `PRAGMA query_only`), nor those of the caller after it on the same
/// connection. While the closure runs, the connection's progress handler
/// stops any statement once the interrupt is requested (SQLite forgets an
/// interrupt that lands between two statements: the next one, starting
/// with none active, clears it). A write checks ``isCancelled`` after its closure, before its
/// COMMIT: a cancellation either rolls the transaction back (the caller
/// gets `CancellationError`) or comes too late to change anything (the
/// caller gets its result).
final class CancellableAccess: @unchecked Sendable {
    // Sendable: every stored property is guarded by `lock`.
    private let lock = NSLock()
    private var connection: Connection?
    private var cancelled = false
    private var ended = false
    private var interrupted = false
    /// While the access waits for its permit: where, to leave on cancel.
    private var waiting: (gate: AccessGate, ticket: AccessGate.Waiter)?
    /// A grouped write granted its group but not started yet: how it gives
    /// up at once when its task is cancelled meanwhile.
    private var cancelBeforeStart: (@Sendable () -> Void)?
    /// Counts the statements this access's cancellation interrupted.
    private let interruptions: Counter?

    init(counting interruptions: Counter? = nil) {
        self.interruptions = interruptions
    }

    /// The task was cancelled: leaves the queue when the access still
    /// waits; interrupts the statement running, if any.
    func cancel() {
        lock.lock()
        cancelled = true
        if let connection, !ended {
            connection.interrupt()
            interrupted = true
        }
        let waiting = self.waiting
        self.waiting = nil
        let cancelBeforeStart = self.cancelBeforeStart
        self.cancelBeforeStart = nil
        lock.unlock()
        if let waiting { waiting.gate.cancel(waiting.ticket) }
        cancelBeforeStart?()
    }

    /// A grouped write was granted its group: until it starts, cancelling
    /// its task runs `action` (at once when it was cancelled already).
    func onCancelBeforeStart(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        guard !cancelled else {
            lock.unlock()
            action()
            return
        }
        cancelBeforeStart = action
        lock.unlock()
    }

    /// The access waits in `gate` with `ticket` (nil: it did not have to
    /// wait); cancelled already, it leaves at once.
    func wait(in gate: AccessGate, with ticket: AccessGate.Waiter?) {
        guard let ticket else { return }
        lock.lock()
        if cancelled {
            lock.unlock()
            gate.cancel(ticket)
            return
        }
        waiting = (gate, ticket)
        lock.unlock()
    }

    /// The access starts running on `db`; throws `CancellationError` when
    /// the task was cancelled before.
    func begin(_ db: Connection) throws {
        lock.lock()
        defer { lock.unlock() }
        waiting = nil
        if cancelled { throw CancellationError() }
        db.prepareInterruptClearing()
        db.checkingInterruptRequests(true)
        connection = db
    }

    /// No interrupt reaches `db` from now on. Clears an interrupt that
    /// landed after the last statement ended, so it cannot stop the next
    /// one; throws `CancellationError` when the task was cancelled.
    private func end(_ db: Connection) throws {
        lock.lock()
        let first = !ended
        ended = true
        connection = nil
        let (wasCancelled, wasInterrupted) = (cancelled, interrupted)
        interrupted = false
        lock.unlock()
        db.checkingInterruptRequests(false)
        if wasInterrupted { db.clearInterrupt() }
        if first && wasCancelled { throw CancellationError() }
    }

    /// Runs `body` on `db`, the only time an interrupt may reach `db`. A
    /// body that threw after its task was cancelled (the interrupt, or what
    /// it caused) throws `CancellationError`; a body that returned keeps its
    /// result: what it did is done (a transaction that must not commit
    /// after a cancellation checks ``isCancelled`` before its COMMIT).
    func run<T>(_ db: Connection, _ body: (Connection) throws -> T) throws -> T {
        try begin(db)
        let value: T
        do {
            value = try body(db)
        } catch {
            if let error = error as? StrongroomError, error.code == .interrupted { interruptions?.increment() }
            try end(db)
            throw error
        }
        finish(db)
        return value
    }

    /// `end` for a body that returned: no interrupt reaches `db` from now
    /// on, and a cancellation changes nothing.
    private func finish(_ db: Connection) {
        lock.lock()
        ended = true
        connection = nil
        let wasInterrupted = interrupted
        interrupted = false
        lock.unlock()
        db.checkingInterruptRequests(false)
        if wasInterrupted { db.clearInterrupt() }
    }

    /// Whether the task was cancelled (for a caller that must tell a
    /// cancellation from the error it caused).
    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }
}
