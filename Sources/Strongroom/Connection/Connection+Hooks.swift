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
