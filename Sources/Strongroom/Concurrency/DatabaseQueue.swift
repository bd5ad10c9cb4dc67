import Dispatch

/// One connection shared safely by any number of threads and tasks: every
/// access runs on a private serial queue, one at a time.
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
public final class DatabaseQueue: @unchecked Sendable {
    // Sendable: `connection` and `configuration` are touched only on
    // `dispatchQueue`, which is serial.
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
    private let dispatchQueue: DispatchQueue
    private let onQueueKey = DispatchSpecificKey<Bool>()
    /// The database path.
    public let path: String

    /// Opens the database at `path`. See ``Connection/init(path:configuration:)``
    /// for the errors.
    public convenience init(path: String, configuration: Configuration) throws(StrongroomError) {
        try self.init(connection: Connection(path: path, configuration: configuration), configuration: configuration)
    }

    init(connection: Connection, configuration: Configuration) {
        self.connection = connection
        self.configuration = configuration
        self.path = connection.path
        self.dispatchQueue = DispatchQueue(label: "strongroom.queue")
        dispatchQueue.setSpecific(key: onQueueKey, value: true)
    }

    /// Set on the thread that runs one of the queue's closures.
    private let mark = ThreadMark("queue")

    /// True inside one of the queue's closures, even through another queue
    /// or pool (`DispatchQueue.getSpecific` sees only the innermost queue).
    var isRunningOnItsQueue: Bool { DispatchQueue.getSpecific(key: onQueueKey) == true || mark.isSet }

    /// Runs `body` with exclusive access to the connection, outside any transaction.
    ///
    /// Calling the queue again from inside `body` would deadlock; it throws
    /// ``StrongroomError/Code/misuse`` instead. A transaction `body` leaves
    /// open is rolled back (and reported as ``StrongroomError/Code/misuse``
    /// when `body` returned normally).
    public func inDatabase<T>(_ body: (Connection) throws -> T) throws -> T {
        if isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabaseQueue was called again from inside one of its own closures; use the Connection you were given.", path: path)
        }
        return try dispatchQueue.sync { try runOnQueue("inDatabase", body) }
    }

    /// Runs `body` with the connection; call it on the queue only. A
    /// transaction the body left open would block the queue (and other
    /// connections) for good: it is rolled back, and reported.
    private func runOnQueue<T>(_ caller: String, _ body: (Connection) throws -> T) throws -> T {
        let result: T
        if let filesMoved { throw filesMoved }
        do {
            try reopenAfterRekeyIfNeeded()
            result = try mark.run { try body(connection) }
        } catch {
            connection.rollbackQuietly()
            if let error = error as? StrongroomError, error.code == .fileMoved {
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

    /// Closes the connection once the work in progress is done. Every later
    /// use throws ``StrongroomError/Code/misuse``. Releasing the queue closes
    /// it too.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` when called from inside one
    ///   of the queue's own closures (it would wait for itself).
    public func close() throws(StrongroomError) {
        if isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabaseQueue.close was called from inside one of the queue's own closures; close it after the closure returns.", path: path)
        }
        dispatchQueue.sync {
            keysToTry = []
            connection.close(because: "its DatabaseQueue was closed.")
        }
    }

    /// Runs `body` in a DEFERRED transaction with writes forbidden
    /// (`PRAGMA query_only`).
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try inDatabase { db in try Self.readOnlyTransaction(db, body) }
    }

    /// Asynchronous ``write(_:)``: waits for the queue without blocking a thread
    /// of the cooperative pool.
    ///
    /// ```swift
    /// try await queue.asyncWrite { db in try db.execute(sql: "DELETE FROM note") }
    /// ```
    public func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await onQueue("write") { db in try db.inTransaction(.immediate, body) }
    }

    /// Asynchronous ``read(_:)``.
    ///
    /// ```swift
    /// let count = try await queue.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") }
    /// ```
    public func asyncRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await onQueue("read") { db in try Self.readOnlyTransaction(db, body) }
    }

    /// Asynchronous ``inDatabase(_:)``: `body` runs on the queue, outside
    /// any transaction, while the caller waits without blocking a thread of
    /// the cooperative pool.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await onQueue("withConnection", body)
    }

    private static func readOnlyTransaction<T>(_ db: Connection, _ body: (Connection) throws -> T) throws -> T {
        try db.execute(sql: "PRAGMA query_only = 1")
        defer { try? db.execute(sql: "PRAGMA query_only = 0") }
        do {
            return try db.inTransaction(.deferred, body)
        } catch let error as StrongroomError {
            throw error.insideRead()
        }
    }

    private func onQueue<T: Sendable>(_ caller: String, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            dispatchQueue.async {
                continuation.resume(with: Result { try self.runOnQueue(caller, body) })
            }
        }
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
