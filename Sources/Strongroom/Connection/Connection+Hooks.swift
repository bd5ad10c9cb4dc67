internal import CSQLCipher

/// Commit observation, for the migration runner: a migration must not commit
/// the transaction the runner opened for it.
extension Connection {
    /// Calls `handler` each time a transaction commits on this connection
    /// (`sqlite3_commit_hook`; the commit always proceeds). `nil` stops it.
    package func observeCommits(_ handler: (@Sendable () -> Void)?) {
        guard let handler else {
            sqlite3_commit_hook(handle, nil, nil)
            commitBox = nil
            return
        }
        let box = CommitBox(handler)
        commitBox = box
        // Returning 0 lets the commit go on; non-zero would turn it into a rollback.
        sqlite3_commit_hook(handle, { context in
            guard let context else { return 0 }
            Unmanaged<CommitBox>.fromOpaque(context).takeUnretainedValue().handler()
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
    }
}

/// Keeps a commit handler alive for as long as SQLite may call it.
final class CommitBox {
    let handler: @Sendable () -> Void
    init(_ handler: @escaping @Sendable () -> Void) { self.handler = handler }
}
