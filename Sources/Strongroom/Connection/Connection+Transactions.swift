internal import CSQLCipher

/// Transactions and savepoints.
extension Connection {
    /// How a transaction takes its locks (`BEGIN DEFERRED | IMMEDIATE | EXCLUSIVE`).
    public enum TransactionKind: String, Sendable {
        /// Locks on first read or write. Right for reads.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so the transaction cannot fail later
        /// with "database is locked" on its first write. Right for writes.
        case immediate = "IMMEDIATE"
        /// Like immediate; in rollback-journal mode it also keeps readers out.
        case exclusive = "EXCLUSIVE"

        /// The statement that opens such a transaction.
        var beginSQL: String {
            switch self {
            case .deferred: "BEGIN DEFERRED TRANSACTION"
            case .immediate: "BEGIN IMMEDIATE TRANSACTION"
            case .exclusive: "BEGIN EXCLUSIVE TRANSACTION"
            }
        }
    }

    /// Runs `BEGIN DEFERRED`, `COMMIT`, `SAVEPOINT` or `RELEASE`, each
    /// prepared once per connection and kept apart from the application's
    /// statement cache (they would take its slots, and a full cache empties
    /// itself). `BEGIN IMMEDIATE` and `EXCLUSIVE` are prepared every time:
    /// SQLite compiles into them a lock for each database attached at that
    /// moment, and an ATTACH does not make them stale.
    private func executeTransactionControl(_ sql: String) throws(StrongroomError) {
        try checkOpen(sql: sql)
        if let statement = transactionStatements[sql] {
            try statement.execute()
            return
        }
        let statement = try prepare(sql: sql)
        transactionStatements[sql] = statement
        try statement.execute()
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back
    /// when it throws (or when the commit fails). A transaction is never left open.
    ///
    /// ```swift
    /// try db.inTransaction(.immediate) { db in
    ///     try db.execute(sql: "UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute(sql: "UPDATE account SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    ///
    /// Inside an open transaction, use ``inSavepoint(_:)`` to nest.
    public func inTransaction<T>(_ kind: TransactionKind = .deferred, _ body: (Connection) throws -> T) throws -> T {
        if isInsideTransaction {
            throw StrongroomError(.misuse, "A transaction is already open on this connection; use inSavepoint to nest.", path: path)
        }
        if kind != .deferred { try refuseWritesToMovedFiles() }
        if kind == .deferred {
            try executeTransactionControl(kind.beginSQL)
        } else {
            try execute(sql: kind.beginSQL)
        }
        let result: T
        state.transactionBodies += 1
        do {
            result = try body(self)
        } catch {
            state.transactionBodies -= 1
            state.transactionLost = nil
            rollbackQuietly()
            throw error
        }
        state.transactionBodies -= 1
        if let lost = state.transactionLost {
            // The closure swallowed the failure that rolled its transaction back.
            state.transactionLost = nil
            throw StrongroomError(lost, "SQLite rolled this transaction back when one of its statements failed (\(lost.rawValue)), and the closure returned as if it had not: nothing of the transaction was committed.", path: path)
        }
        do {
            try executeTransactionControl("COMMIT TRANSACTION")
        } catch {
            rollbackQuietly()
            throw error
        }
        if kind != .deferred { recordWALIdentity() }
        return result
    }

    /// Runs `body` in a transaction that `body` may roll back without
    /// throwing, by setting its `rollback` flag, as in FMDB's
    /// `inTransaction { db, rollback in … }`. A throw rolls back too.
    ///
    /// ```swift
    /// try db.inTransaction(.immediate) { db, rollback in
    ///     try db.execute(sql: "UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     let balance = try db.fetchOne(Int.self, sql: "SELECT balance FROM account WHERE id = 1") ?? 0
    ///     if balance < 0 { rollback = true }
    /// }
    /// ```
    public func inTransaction(_ kind: TransactionKind = .deferred, _ body: (Connection, inout Bool) throws -> Void) throws {
        do {
            try inTransaction(kind) { db -> Void in
                var rollback = false
                try body(db, &rollback)
                if rollback { throw RollbackRequested() }
            }
        } catch is RollbackRequested {
            return
        }
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back
    /// to the savepoint when it throws. Opens a transaction when none is open;
    /// nests inside an open one.
    ///
    /// ```swift
    /// try db.inTransaction { db in
    ///     try db.execute(sql: "INSERT INTO log(msg) VALUES ('start')")
    ///     try? db.inSavepoint { db in
    ///         try db.execute(sql: "INSERT INTO person(id) VALUES (1)")  // may fail alone
    ///     }
    /// }
    /// ```
    public func inSavepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "strongroom_sp\(savepointDepth)"
        try executeTransactionControl("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body(self)
        } catch {
            // ROLLBACK TO keeps the savepoint open; RELEASE then closes it (and
            // the transaction, if the savepoint opened it).
            try? execute(sql: "ROLLBACK TO SAVEPOINT \(name)")
            try? execute(sql: "RELEASE SAVEPOINT \(name)")
            throw error
        }
        do {
            try executeTransactionControl("RELEASE SAVEPOINT \(name)")
        } catch {
            try? execute(sql: "ROLLBACK TO SAVEPOINT \(name)")
            try? execute(sql: "RELEASE SAVEPOINT \(name)")
            throw error
        }
        return result
    }

    package func rollbackQuietly() {
        // SQLite may already have rolled back (after SQLITE_FULL, SQLITE_IOERR...):
        // ROLLBACK then fails harmlessly with "no transaction is active".
        if isInsideTransaction {
            try? execute(sql: "ROLLBACK TRANSACTION")
        }
    }
}

/// Thrown inside to reach the rollback path; never escapes.
private struct RollbackRequested: Error {}

extension Connection {
    /// Stops the statement running on this connection, from any thread
    /// (`sqlite3_interrupt`). The queue or pool that holds the connection
    /// calls it only while the access it interrupts is running (see
    /// `CancellableAccess`).
    package func interrupt() {
        state.interruptRequested.store(true, ordering: .relaxed)
        sqlite3_interrupt(handle)
    }

    /// Prepares the statement ``clearInterrupt()`` steps, while no
    /// interrupt can be pending (SQLite refuses to compile SQL while one is).
    package func prepareInterruptClearing() {
        guard !isClosed, interruptClearing == nil else { return }
        var statement: OpaquePointer?
        if sqlite3_prepare_v2(handle, "SELECT 1", -1, &statement, nil) == SQLITE_OK {
            interruptClearing = statement
        }
    }

    /// Makes sure an interrupt that arrived after the last statement ended
    /// stops no later statement: resets every statement still stepping,
    /// then steps one prepared beforehand, whose first step clears SQLite's
    /// flag (SQLite clears it when a statement starts while none is
    /// active; compiling new SQL would fail on it instead).
    package func clearInterrupt() {
        state.interruptRequested.store(false, ordering: .relaxed)
        guard !isClosed else { return }
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            if sqlite3_stmt_busy(current) != 0 { sqlite3_reset(current) }
            statement = sqlite3_next_stmt(handle, current)
        }
        guard let clearing = interruptClearing else { return }
        _ = sqlite3_step(clearing)
        sqlite3_reset(clearing)
    }
}

extension Connection {
    /// Runs `body` with SQLite's busy timeout set to `timeout`, then sets it
    /// back to ``Configuration/busyTimeout``.
    package func withBusyTimeout<T>(_ timeout: Duration, _ body: () throws -> T) rethrows -> T {
        sqlite3_busy_timeout(handle, Self.milliseconds(timeout))
        defer { sqlite3_busy_timeout(handle, Self.milliseconds(configuration.busyTimeout)) }
        return try body()
    }

    /// `duration` in whole milliseconds, clamped to what SQLite takes.
    package static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflow || overflowAgain ? .max : Int32(clamping: total)
    }
}

extension Connection {
    /// Undoes a `PRAGMA defer_foreign_keys = ON`, which lasts until the
    /// transaction ends (a grouped write's, before the next write of the
    /// group).
    ///
    /// Only when it is on: setting a flag pragma, even to the value it has,
    /// expires every prepared statement of the connection (SQLite compiles
    /// it with `OP_Expire`), and each cached statement of the next write
    /// would be compiled again at its first step. The value is read with a
    /// statement prepared each time: SQLite compiles the value a flag
    /// pragma reads into the statement itself. Nothing is read while no
    /// SQL naming the pragma was ever compiled on this connection: SQLite
    /// sets a flag pragma as it compiles it (even a statement never run).
    package func turnOffDeferredForeignKeys() throws(StrongroomError) {
        guard state.mayDeferForeignKeys else { return }
        guard try prepare(sql: "PRAGMA defer_foreign_keys").fetchOne(Int.self) != 0 else { return }
        try executeTransactionControl("PRAGMA defer_foreign_keys = OFF")
    }

    /// Whether a deferred foreign key constraint is violated now
    /// (`SQLITE_DBSTATUS_DEFERRED_FKS`): the transaction's COMMIT would
    /// fail. Rolling back the savepoint that made the violation resolves it.
    package var hasUnresolvedForeignKeys: Bool {
        guard !isClosed else { return false }
        var current: Int32 = 0, highest: Int32 = 0
        return sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highest, 0) == SQLITE_OK && current > 0
    }
}
