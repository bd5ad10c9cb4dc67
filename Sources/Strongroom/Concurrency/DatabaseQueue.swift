import Dispatch
import Foundation
import Tracing

/// One connection shared safely by any number of threads and tasks: one
/// access at a time, in the order the callers came.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "app.db", configuration: Configuration(key: key))
/// try queue.write { db in
///     try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["hi"])
/// }
/// let count = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
/// let later = try await queue.asyncRead { db in try db.fetchAll(String.self, sql: "SELECT body FROM note") }
/// ```
///
/// ## Sync or async
/// The blocking forms (``read(_:)``, ``write(_:)``, ``inDatabase(_:)``,
/// ``inTransaction(_:_:)``) and the async ones (``asyncRead(_:)``,
/// ``asyncWrite(_:)``, ``withConnection(_:)``) have different names, so a
/// call written inside an `async` function means what it says: `read` blocks
/// (and its closure may change local variables), `asyncRead` suspends (and
/// its closure is `@Sendable`).
///
/// A blocking access runs on its caller's thread. An async access waits
/// for the connection as a suspended task, in one FIFO with the blocking
/// callers, and runs its closure on the queue's own thread, never on the
/// cooperative thread pool; cancelling its task interrupts its SQL
/// (see <doc:ServingRequests>).
public final class DatabaseQueue: @unchecked Sendable {
    // Sendable: `connection`, `configuration`, `keysToTry` and `filesMoved`
    // are touched only by the holder of `gate`'s one permit.
    private var connection: Connection
    /// What `connection` was opened with; a failed rekey reopens with it.
    private var configuration: Configuration
    /// After a rekey whose outcome is not known (a lock kept the checks
    /// out): the keys to try, in order, when the queue is next used.
    private var keysToTry: [DatabaseKey] = []
    /// Set when the connection was closed because its files were deleted
    /// or moved under it (``StrongroomError/Code/fileMoved``): every later
    /// use throws it. The queue does not reopen by itself: a new `-wal`
    /// beside a connection still holding the old one could lose commits.
    private var filesMoved: StrongroomError?
    /// The one permit to use `connection`, first come, first served.
    private let gate: AccessGate
    /// Where async accesses run.
    private let thread: ConnectionThread
    /// Metrics and spans of the accesses.
    private let observer: AccessObserver
    /// A pool's writer: when it truncates the log.
    private let checkpointPolicy: CheckpointPolicy?
    /// After a checkpoint that gave up on a reader: not before then again.
    /// Touched only by the holder of the permit.
    private var nextCheckpoint: ContinuousClock.Instant?
    /// A pool's writer: the pool's readers, paused while the log is truncated.
    private let readersToPauseForCheckpoints: AccessGate?
    /// A pool's writer: where its automatic checkpoints run instead.
    private let checkpointer: WALCheckpointer?
    /// ``Configuration/groupsAsyncWrites``, as opened (read without the permit).
    private let groupsAsyncWrites: Bool
    /// ``Configuration/groupedWriteUndo``, as opened.
    private let groupedWriteUndo: Configuration.GroupedWriteUndo
    /// The database path.
    public let path: String

    /// Opens the database at `path`. See ``Connection/init(path:configuration:)``
    /// for the errors.
    public convenience init(path: String, configuration: Configuration) throws(StrongroomError) {
        try self.init(connection: Connection(path: path, configuration: configuration), configuration: configuration, role: "queue",
                      observer: AccessObserver(path: path, configuration: configuration))
    }

    init(connection: Connection, configuration: Configuration, role: String, observer: AccessObserver, readers: AccessGate? = nil,
         checkpointer: WALCheckpointer? = nil) {
        self.observer = observer
        self.checkpointer = checkpointer
        checkpointer?.watch(connection)
        self.readersToPauseForCheckpoints = readers
        self.checkpointPolicy = role == "writer" ? configuration.checkpointPolicy : nil
        self.groupsAsyncWrites = configuration.groupsAsyncWrites
        self.groupedWriteUndo = configuration.groupedWriteUndo
        self.connection = connection
        self.configuration = configuration
        self.path = connection.path
        let file = connection.path.split(separator: "/").last.map(String.init) ?? connection.path
        self.gate = AccessGate(capacity: 1, configuration: configuration, resource: role == "writer" ? "the writer of \(file)" : "the connection of \(file)", path: connection.path)
        self.thread = ConnectionThread(name: role == "writer" ? "strongroom-w" : "strongroom-q")
    }

    deinit { thread.stop() }

    /// Set on the thread that runs one of the queue's closures.
    private let mark = ThreadMark()

    /// True inside one of the queue's closures, even through another queue
    /// or pool.
    var isRunningOnItsQueue: Bool { mark.isSet }

    /// Callers waiting for the connection now (async and blocking).
    public var waitingCount: Int { gate.waiting }

    /// Runs `body` with exclusive access to the connection, outside any transaction.
    ///
    /// Calling the queue again from inside `body` would deadlock; it throws
    /// ``StrongroomError/Code/misuse`` instead. A transaction `body` leaves
    /// open is rolled back (and reported as ``StrongroomError/Code/misuse``
    /// when `body` returned normally).
    public func inDatabase<T>(_ body: (Connection) throws -> T) throws -> T {
        try access(.write, "inDatabase", body)
    }

    /// A blocking access: waits for the permit on this thread, and runs
    /// `body` here, in a span of its own.
    private func access<T>(_ kind: AccessObserver.AccessKind, _ caller: String, _ body: (Connection) throws -> T) throws -> T {
        try refuseCallsFromItsOwnClosures()
        let span = observer.startSpan(kind)
        do {
            try gate.acquire(for: observer.metrics(kind))
            var handedOn = false
            defer { if !handedOn { gate.release() } }
            let result = try runOnQueue(caller, reading: kind == .read) { db in try observer.observe(kind, span: span, on: db) { try body(db) } }
            if needsCheckpoint() {
                // The caller has its result; the checkpoint runs on the
                // writer's thread, which gives the permit back after it.
                handedOn = true
                thread.submit {
                    self.checkpoint()
                    self.gate.release()
                }
            }
            AccessObserver.end(span, error: nil)
            return result
        } catch {
            AccessObserver.end(span, error: error)
            throw error
        }
    }

    /// Calling the queue again from inside one of its closures would wait
    /// for itself: refused instead.
    private func refuseCallsFromItsOwnClosures() throws(StrongroomError) {
        if isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabaseQueue was called again from inside one of its own closures; use the Connection you were given.", path: path)
        }
    }

    /// Runs `body` with the connection; call it holding the permit only. A
    /// transaction the body left open would block the queue (and other
    /// connections) for good: it is rolled back, and reported.
    private func runOnQueue<T>(_ caller: String, reading: Bool, _ body: (Connection) throws -> T) throws -> T {
        let result: T
        if let filesMoved { throw filesMoved }
        do {
            try reopenAfterRekeyIfNeeded()
            // A read leaves `PRAGMA query_only` set, so that the reads after it
            // do not set it again (each set or clear expires every prepared
            // statement): any other access clears it first.
            if !reading { try Self.allowWrites(connection) }
            result = try mark.run { try body(connection) }
        } catch {
            connection.rollbackQuietly()
            if let error = error as? StrongroomError, error.code == .fileMoved {
                checkpointer?.close()
                connection.close(because: "its files were deleted or moved while open")
                filesMoved = StrongroomError(.fileMoved, error.message + " This queue is closed; open a new one.", path: path)
            }
            throw error
        }
        if connection.isInsideTransaction {
            connection.rollbackQuietly()
            throw StrongroomError(.misuse, "The closure given to \(caller) left a transaction open; it was rolled back, with everything done in it. End every transaction you begin, or use write.", path: path)
        }
        return result
    }

    /// Runs `body` in an IMMEDIATE transaction: committed when it returns,
    /// rolled back when it throws.
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try inDatabase { db in try db.inTransaction(.immediate, body) }
    }

    /// Runs `body` in an IMMEDIATE transaction that `body` may roll back
    /// without throwing, by setting `rollback`, like FMDB's
    /// `FMDatabaseQueue.inTransaction { db, rollback in … }`.
    ///
    /// ```swift
    /// try queue.inTransaction { db, rollback in
    ///     try db.execute(sql: "DELETE FROM movie WHERE year < 1950")
    ///     if db.changesCount > 100 { rollback = true }
    /// }
    /// ```
    public func inTransaction(_ kind: Connection.TransactionKind = .immediate, _ body: (Connection, inout Bool) throws -> Void) throws {
        try inDatabase { db in try db.inTransaction(kind, body) }
    }

    /// Closes the connection once the access in progress is done. Callers
    /// waiting, and every later use, get ``StrongroomError/Code/closed``.
    /// Releasing the queue closes it too.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` when called from inside one
    ///   of the queue's own closures (it would wait for itself).
    public func close() throws(StrongroomError) {
        if isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabaseQueue.close was called from inside one of the queue's own closures; close it after the closure returns.", path: path)
        }
        gate.close(StrongroomError(.closed, "The DatabaseQueue of \(path) is closed; open a new one.", path: path))
        // Every permit is back, none will be handed out: the queue's state
        // is this thread's now.
        keysToTry = []
        checkpointer?.close()
        connection.close(because: "its DatabaseQueue was closed.")
        thread.stop()
    }

    /// Asynchronous ``close()``: waits for the access in progress without
    /// holding a thread of the cooperative pool; refuses the callers
    /// waiting and every later one with ``StrongroomError/Code/closed``.
    ///
    /// ```swift
    /// try await queue.asyncClose()
    /// ```
    public func asyncClose() async throws {
        if isRunningOnItsQueue { try close() }
        try await onThreadOfItsOwn("strongroom-c") { try self.close() }
    }

    /// Runs `body` in a DEFERRED transaction with writes forbidden: a
    /// statement that would write fails with ``StrongroomError/Code/readOnly``.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try access(.read, "read") { db in try Self.readOnlyTransaction(db, body) }
    }

    /// Asynchronous ``write(_:)``: waits for the connection as a suspended
    /// task, and runs `body` on the queue's own thread. Cancelling the task
    /// interrupts `body`'s SQL and rolls the transaction back (the call then
    /// throws `CancellationError`); a cancellation that comes once `body`
    /// has returned changes nothing.
    ///
    /// ```swift
    /// try await queue.asyncWrite { db in try db.execute(sql: "DELETE FROM note") }
    /// ```
    public func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        if groupsAsyncWrites { return try await groupedWrite(body) }
        return try await onQueue(.write, "write") { db, access in
            try db.inTransaction(.immediate) { db in
                let result = try access.run(db, body)
                // Cancelled before the COMMIT: roll back.
                if access.isCancelled { throw CancellationError() }
                return result
            }
        }
    }

    /// Asynchronous ``read(_:)``: see ``asyncWrite(_:)``.
    ///
    /// ```swift
    /// let count = try await queue.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
    /// ```
    public func asyncRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await onQueue(.read, "read") { db, access in
            // Only `body` may be interrupted: never the BEGIN or the COMMIT
            // around it (SQLite refuses to compile SQL while an interrupt is
            // pending).
            try Self.readOnlyTransaction(db) { db in try access.run(db, body) }
        }
    }

    /// Asynchronous ``inDatabase(_:)``: `body` runs on the queue's own
    /// thread, outside any transaction, while the caller waits as a
    /// suspended task. Cancelling the task interrupts `body`'s SQL.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await onQueue(.write, "withConnection") { db, access in try access.run(db, body) }
    }

    /// Asynchronous ``inDatabase(_:)``, named as ``DatabasePool/asyncWriteWithoutTransaction(_:)``.
    ///
    /// ```swift
    /// try await queue.asyncWriteWithoutTransaction { db in try db.execute(sql: "VACUUM") }
    /// ```
    public func asyncWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withConnection(body)
    }

    static func readOnlyTransaction<T>(_ db: Connection, _ body: (Connection) throws -> T) throws -> T {
        // SQLite refuses every write while it is set, those SQL run by a
        // function of a statement included (an export, PRAGMA optimize);
        // it stays set for the next read (see runOnQueue).
        if !db.state.queryOnly {
            try db.execute(sql: "PRAGMA query_only = 1")
            db.state.queryOnly = true
        }
        do {
            return try db.inTransaction(.deferred, body)
        } catch let error as StrongroomError {
            throw error.insideRead()
        }
    }

    /// An async access: waits for the permit as a suspended task, then runs
    /// `body` on the queue's thread, with the task's cancellation turned
    /// into an interrupt of `body`'s SQL.
    private func onQueue<T: Sendable>(_ kind: AccessObserver.AccessKind, _ caller: String,
                                      _ body: @escaping @Sendable (Connection, CancellableAccess) throws -> T) async throws -> T {
        try refuseCallsFromItsOwnClosures()
        let span = observer.startSpan(kind)
        return try await AccessObserver.ending(span) {
            let access = CancellableAccess(counting: observer.metrics(kind).interruptions)
            return try await gate.run(for: observer.metrics(kind), access: access) { finish in
                // The permit is this caller's: run on the queue's thread.
                self.thread.submit {
                    let result = Result {
                        try self.runOnQueue(caller, reading: kind == .read) { db in
                            try self.observer.observe(kind, span: span, on: db) { try body(db, access) }
                        }
                    }
                    // The caller has its result before any checkpoint.
                    finish(result)
                    if self.needsCheckpoint() { self.checkpoint() }
                    self.gate.release()
                }
            }
        }
    }

    /// ``asyncWrite(_:)`` with ``Configuration/groupsAsyncWrites``: waits
    /// in the one queue of callers; granted the connection together with
    /// the async writes waiting right behind it, it runs in their
    /// transaction (see ``WriteGroup``).
    private func groupedWrite<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try refuseCallsFromItsOwnClosures()
        let span = observer.startSpan(.write)
        return try await AccessObserver.ending(span) {
            let access = CancellableAccess(counting: observer.write.interruptions)
            return try await gate.runGrouped(for: observer.metrics(.write), access: access) { group, finish in
                let outcome = GroupedOutcome<T>()
                // Granted with its group: the writes before it in the group
                // run first; cancelled meanwhile, it gives up at once.
                access.onCancelBeforeStart {
                    if outcome.claimForCancelling() { finish(.failure(CancellationError())) }
                }
                let member = WriteGroup.Member(run: { db, inSavepoint in
                    guard outcome.claimForRunning() else { return false }
                    // Run again after a rollback: its closure returned once,
                    // and a cancellation since changes nothing (with
                    // savepoints, it would commit).
                    let runAgain = outcome.result != nil
                    let result = Result {
                        try self.runGroupedClosure(body, on: db, inSavepoint: inSavepoint, access: runAgain ? nil : access, span: span)
                    }
                    outcome.result = result
                    if case .failure = result { return true }
                    return false
                }, deliver: { failure in
                    if let result = outcome.delivered(failure) { finish(result) }
                })
                guard let members = group.join(member) else { return }
                self.thread.submit { self.runGroup(members) }
            }
        }
    }

    /// One grouped write's closure, in the group's transaction, failing
    /// when it throws, when its task was cancelled meanwhile (its SQL is
    /// never interrupted: that would roll back the whole transaction), or
    /// when it leaves a deferred foreign key unresolved (the COMMIT would
    /// fail for every write of the group). In a savepoint of its own, rolled
    /// back when it fails; without one (``Configuration/GroupedWriteUndo/runningTheOthersAgain``),
    /// ``runGroup(_:)`` rolls back the transaction when it fails. `access`
    /// nil: cancellation is not looked at (the closure runs again).
    private func runGroupedClosure<T>(_ body: (Connection) throws -> T, on db: Connection, inSavepoint: Bool, access: CancellableAccess?,
                                      span: any Tracing.Span) throws -> T {
        if access?.isCancelled == true { throw CancellationError() }
        func write(_ db: Connection) throws -> T {
            let value = try body(db)
            if access?.isCancelled == true { throw CancellationError() }
            if db.hasUnresolvedForeignKeys {
                throw StrongroomError(.foreignKeyConstraint, "FOREIGN KEY constraint failed: this write left a deferred foreign key unresolved, so its COMMIT would fail; it was rolled back (the writes it shared a transaction with were not, or ran again).", path: db.path)
            }
            return value
        }
        return try observer.observe(.write, span: span, on: db) {
            inSavepoint ? try db.inSavepoint(write) : try write(db)
        }
    }

    /// Holding the permit, on the queue's thread: runs a group's writes in
    /// one `IMMEDIATE` transaction, then gives each caller its outcome,
    /// checkpoints when due and gives the permit back. A write after which
    /// the transaction is no longer open (SQLite rolled it back) ends it
    /// early: the writes before it get that failure (nothing of them was
    /// committed) and the writes after it run in a transaction of their own.
    ///
    /// Without savepoints (``Configuration/GroupedWriteUndo/runningTheOthersAgain``),
    /// a write that fails rolls the transaction back: its caller gets its
    /// error, and the group runs again without it, from its first write not
    /// yet committed, each write in a savepoint.
    private func runGroup(_ groupMembers: [WriteGroup.Member]) {
        // Leaves `inTransaction` after a write that ended the transaction
        // (it is rolled back already; inTransaction rolls back quietly).
        struct TransactionEnded: Error {}
        // Leaves `inTransaction` after a write that failed without a
        // savepoint, so that the transaction is rolled back.
        struct WriteFailed: Error {}
        var members = groupMembers
        var inSavepoints = groupedWriteUndo == .savepoints
        var first = 0
        while first < members.count {
            // The write after which the transaction was no longer open, and
            // the code of the failure that rolled it back (nil: the closure
            // ended the transaction itself).
            var ended: (index: Int, code: StrongroomError.Code?)?
            // The write that failed without a savepoint.
            var failed: Int?
            do {
                try runOnQueue("write", reading: false) { db in
                    try db.inTransaction(.immediate) { db in
                        for index in first..<members.count {
                            // Each write as alone: a PRAGMA defer_foreign_keys
                            // of the one before lasts until the transaction ends.
                            if index > first { try db.turnOffDeferredForeignKeys() }
                            let writeFailed = members[index].run(db, inSavepoints)
                            if !db.isInsideTransaction || db.state.transactionLost != nil {
                                ended = (index, db.state.transactionLost)
                                throw TransactionEnded()
                            }
                            if writeFailed && !inSavepoints {
                                failed = index
                                throw WriteFailed()
                            }
                        }
                    }
                }
                observer.writeGroupSizes.record(members.count - first)
                for member in members[first...] { member.deliver(nil) }
                first = members.count
            } catch {
                if let failed, ended == nil {
                    // Rolled back: the failed write's error is its caller's
                    // answer; the writes before it run again, each in a
                    // savepoint now, with those after it.
                    members.remove(at: failed).deliver(nil)
                    inSavepoints = true
                    continue
                }
                guard let ended else {
                    // BEGIN or COMMIT failed (or the files moved): no write of the group was committed.
                    for member in members[first...] { member.deliver(error) }
                    break
                }
                let (index, code) = ended
                let lost = code.map {
                    StrongroomError($0, "SQLite rolled back the transaction this write shared with other async writes (Configuration.groupsAsyncWrites) when a statement of a write after it failed (\($0.rawValue)): nothing of this write was committed. Run it again.", path: path)
                } ?? StrongroomError(.misuse, "Another async write's closure ended the transaction this write shared with it (Configuration.groupsAsyncWrites) with SQL of its own (a COMMIT or ROLLBACK), so whether this write was committed depends on that SQL. An asyncWrite closure must not end its transaction.", path: path)
                for member in members[first..<index] { member.deliver(lost) }
                // Its own error; or, when its closure returned anyway, what
                // inTransaction says of a closure that swallowed the failure.
                members[index].deliver(code.map {
                    StrongroomError($0, "SQLite rolled this write's transaction back when one of its statements failed (\($0.rawValue)), and the closure returned as if it had not: nothing of it was committed.", path: path)
                } ?? StrongroomError(.misuse, "The closure ended its transaction with SQL of its own (a COMMIT or ROLLBACK); an asyncWrite closure must not.", path: path))
                first = index + 1
            }
        }
        if needsCheckpoint() { checkpoint() }
        gate.release()
    }

    /// Asynchronous ``rekey(to:)``: runs on the queue's own thread. Once
    /// begun, a rekey runs to its end whatever happens to its task.
    ///
    /// ```swift
    /// try await queue.asyncRekey(to: .generate())
    /// ```
    public func asyncRekey(to newKey: DatabaseKey) async throws {
        _ = try await onQueue(.write, "rekey") { _, _ in _ = try self.rekeyOnQueue(to: newKey) }
    }

    /// A pool's writer, after an access, holding the permit: whether the
    /// `-wal` is past the checkpoint policy's limit (and no checkpoint gave
    /// up too recently). Reports the `-wal`'s size.
    private func needsCheckpoint() -> Bool {
        guard let limit = checkpointPolicy?.walSizeLimit, !connection.isClosed, filesMoved == nil else { return false }
        let size = connection.journalFileSize ?? 0
        observer.walSize.record(size)
        guard size > limit else { return false }
        if let nextCheckpoint, ContinuousClock.now < nextCheckpoint { return false }
        return true
    }

    /// Clears the `PRAGMA query_only` a read left set.
    static func allowWrites(_ db: Connection) throws(StrongroomError) {
        guard db.state.queryOnly else { return }
        try db.execute(sql: "PRAGMA query_only = 0")
        db.state.queryOnly = false
    }

    /// Holding the permit: truncates the log (see ``CheckpointPolicy``).
    /// New reads of the pool wait meanwhile, and the reads running are
    /// given up to the policy's `maximumWait` to end: readers that keep
    /// coming would otherwise keep the log's read locks forever.
    private func checkpoint() {
        guard let policy = checkpointPolicy, !connection.isClosed else { return }
        try? Self.allowWrites(connection)
        let before = connection.journalFileSize ?? 0
        let start = ContinuousClock.now
        // What is left of the policy's wait (at least 1 ms), for each wait in turn.
        func left() -> Duration { max(.milliseconds(1), policy.maximumWait - (ContinuousClock.now - start)) }
        // One checkpoint at a time (SQLite refuses a second without
        // waiting): the pool's background one ends first, within the wait.
        guard checkpointer?.claim(within: policy.maximumWait) ?? true else {
            gaveUp(policy, before: before, reason: "a background checkpoint outlasted the wait")
            return
        }
        defer { checkpointer?.endClaim() }
        let readers = readersToPauseForCheckpoints
        guard readers?.pause(within: left()) ?? true else {
            gaveUp(policy, before: before, reason: "reads outlasted the wait")
            return
        }
        defer { readers?.resume() }
        do {
            // Other processes' readers, if any: what is left of the wait.
            let busy = try connection.withBusyTimeout(left()) {
                try connection.fetchOne(Int.self, sql: "PRAGMA main.wal_checkpoint(TRUNCATE)") ?? 1
            }
            guard busy == 0 else {
                gaveUp(policy, before: before, reason: "another connection still read the log")
                return
            }
            let after = connection.journalFileSize ?? 0
            observer.walSize.record(after)
            nextCheckpoint = nil
            observer.checkpoints.increment()
            connection.logger.debug("truncated the write-ahead log", metadata: [
                "path": "\(path)", "wal_bytes_before": "\(before)", "wal_bytes_after": "\(after)",
            ])
        } catch {
            gaveUp(policy, before: before, reason: (error as? StrongroomError)?.code.rawValue ?? "error")
        }
    }

    /// A checkpoint that did not complete: not tried again for twice the wait.
    private func gaveUp(_ policy: CheckpointPolicy, before: Int, reason: String) {
        nextCheckpoint = ContinuousClock.now + policy.maximumWait * 2
        observer.incompleteCheckpoints.increment()
        connection.logger.notice("the write-ahead log could not be truncated; the writer tries again later", metadata: [
            "path": "\(path)", "wal_bytes": "\(before)", "reason": "\(reason)",
        ])
    }

    /// Changes the key of the database. See ``Connection/rekey(to:)``.
    ///
    /// When the rekey cannot be confirmed, SQLCipher may have left the
    /// connection between two keys: the queue closes it and reopens with the
    /// key that opens the file. With the old key it then throws
    /// ``StrongroomError/Code/rekeyFailed`` (nothing changed, the queue goes on
    /// working); with the new key it returns normally.
    public func rekey(to newKey: DatabaseKey) throws {
        try inDatabase { _ in _ = try rekeyOnQueue(to: newKey) }
    }

    /// The key the connection is (or will be reopened) on. Call only on the queue.
    var currentKey: DatabaseKey? { keysToTry.first ?? configuration.key }

    /// Rekeys the connection, reopening it when a failed rekey closed it;
    /// returns the connection now in use. Call only on the queue (inside
    /// `inDatabase`).
    func rekeyOnQueue(to newKey: DatabaseKey) throws -> Connection {
        switch try connection.rekeyOrClose(to: newKey) {
        case .rekeyed:
            configuration.encryption = .encrypted(newKey)
        case .closed(let failure):
            let oldKey = configuration.key
            switch failure.opensWith {
            case .newKey: keysToTry = [newKey]
            case .oldKey: keysToTry = oldKey.map { [$0] } ?? []
            case nil: keysToTry = [newKey] + (oldKey.map { [$0] } ?? [])
            }
            do {
                try reopenAfterRekeyIfNeeded()
            } catch {
                throw StrongroomError(failure.error.code, "\(failure.error.message) The queue could not reopen yet (\(error.code.rawValue)); it tries again at its next use.", path: path, sqliteCode: failure.error.sqliteCode)
            }
            if failure.opensWith != .newKey { throw failure.error }
        }
        return connection
    }

    /// After a rekey closed the connection: opens the file with the first
    /// of `keysToTry` that opens it. A key the file refuses is skipped; any
    /// other error (a lock) is thrown, and the next use tries again.
    private func reopenAfterRekeyIfNeeded() throws(StrongroomError) {
        guard connection.isClosed, !keysToTry.isEmpty else { return }
        var refusal: StrongroomError?
        for key in keysToTry {
            var reopened = configuration
            reopened.encryption = .encrypted(key)
            do {
                connection = try Connection(path: path, configuration: reopened)
                checkpointer?.watch(connection)
                configuration = reopened
                keysToTry = []
                return
            } catch where [.wrongKey, .notADatabase, .keyRequired, .corrupt].contains(error.code) {
                refusal = error
            }
        }
        throw refusal ?? StrongroomError(.misuse, "No key to reopen \(path) with.", path: path)
    }
}
