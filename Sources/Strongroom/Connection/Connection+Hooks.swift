internal import CSQLCipher

/// Commit and rollback hooks, for the migration runner: a migration must not
/// end the transaction the runner opened for it.
extension Connection {
    /// While set, `onCommit` is called before each commit on this connection
    /// (`sqlite3_commit_hook`) and decides it: `true` lets it proceed,
    /// `false` turns the COMMIT into a rollback (the statement then fails).
    /// `onRollback` is called after each rollback of a whole transaction
    /// (`sqlite3_rollback_hook`; not for `ROLLBACK TO` a savepoint).
    /// Both `nil` removes the hooks.
    package func guardTransaction(onCommit: (@Sendable () -> Bool)?, onRollback: (@Sendable () -> Void)?) {
        guard let onCommit, let onRollback else {
            sqlite3_commit_hook(handle, nil, nil)
            sqlite3_rollback_hook(handle, nil, nil)
            transactionHooks = nil
            return
        }
        let hooks = TransactionHooks(onCommit: onCommit, onRollback: onRollback)
        transactionHooks = hooks
        let context = Unmanaged.passUnretained(hooks).toOpaque()
        // A non-zero return turns the commit into a rollback.
        sqlite3_commit_hook(handle, { context in
            guard let context else { return 0 }
            return Unmanaged<TransactionHooks>.fromOpaque(context).takeUnretainedValue().onCommit() ? 0 : 1
        }, context)
        sqlite3_rollback_hook(handle, { context in
            guard let context else { return }
            Unmanaged<TransactionHooks>.fromOpaque(context).takeUnretainedValue().onRollback()
        }, context)
    }
}

/// Keeps the hooks alive for as long as SQLite may call them.
final class TransactionHooks {
    let onCommit: @Sendable () -> Bool
    let onRollback: @Sendable () -> Void
    init(onCommit: @escaping @Sendable () -> Bool, onRollback: @escaping @Sendable () -> Void) {
        self.onCommit = onCommit
        self.onRollback = onRollback
    }
}

/// A progress handler, for long single statements (`sqlcipher_export`).
extension Connection {
    /// Runs `body` with `handler` called about every `instructions` virtual
    /// machine instructions of this connection (`sqlite3_progress_handler`).
    func withProgressHandler<T>(every instructions: Int32, _ handler: @escaping () -> Void,
                                _ body: () throws(StrongroomError) -> T) throws(StrongroomError) -> T {
        let box = ProgressHandler(handler)
        sqlite3_progress_handler(handle, instructions, { context in
            guard let context else { return 0 }
            Unmanaged<ProgressHandler>.fromOpaque(context).takeUnretainedValue().call()
            return 0 // go on
        }, Unmanaged.passUnretained(box).toOpaque())
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            withExtendedLifetime(box) {}
            if state.checksInterruptRequests { checkingInterruptRequests(true) }
        }
        return try body()
    }

    /// The number of virtual machine instructions between two looks at an
    /// interrupt request while an async access runs: about 10-50 µs of work.
    static let interruptCheckInstructions: Int32 = 1_000

    /// Turns on (or off) a progress handler that stops any statement of
    /// this connection, with `SQLITE_INTERRUPT`, while an interrupt is
    /// requested (``interrupt()``, until ``clearInterrupt()``). An async
    /// access turns it on while its closure runs: SQLite forgets an
    /// `sqlite3_interrupt` that lands while no statement is active (a
    /// statement that starts with none active clears it), so a task
    /// cancelled between two of its closure's statements would let the
    /// next one run to its end, however long. Call on the connection's
    /// own thread.
    func checkingInterruptRequests(_ on: Bool) {
        state.checksInterruptRequests = on
        guard !isClosed else { return }
        guard on else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            return
        }
        // The state lives as long as the handle (the connection holds it).
        sqlite3_progress_handler(handle, Self.interruptCheckInstructions, { context in
            guard let context else { return 0 }
            return Unmanaged<ConnectionState>.fromOpaque(context).takeUnretainedValue().interruptRequested.load(ordering: .relaxed) ? 1 : 0
        }, Unmanaged.passUnretained(state).toOpaque())
    }
}

/// Keeps a progress handler alive while SQLite may call it.
final class ProgressHandler {
    let call: () -> Void
    init(_ call: @escaping () -> Void) { self.call = call }
}
