import Foundation
import Logging
import Tracing
import StrongroomCrypto

/// A WAL database shared by one writer and several concurrent readers.
///
/// Writes are serialized on one connection; reads run in parallel on up to
/// ``Configuration/maximumReaderCount`` read-only connections, each in its own
/// transaction, so a read sees one committed snapshot even while the writer
/// commits.
///
/// A passphrase is stretched **once per pool**: after the writer opens, the pool
/// derives the page key from the file's salt (SQLCipher's PBKDF2) and opens every
/// reader with that raw key, in about a millisecond instead of tens.
///
/// ```swift
/// let pool = try DatabasePool(path: "app.db", configuration: Configuration(key: .passphrase(secret)))
/// try pool.write { db in try db.execute(sql: "INSERT INTO note(body) VALUES ('x')") }
/// let notes = try pool.read { db in try db.fetchAll(String.self, sql: "SELECT body FROM note") }
/// ```
public final class DatabasePool: @unchecked Sendable {
    // Sendable: `idleReaders`, `openReaderCount`, `readerKey`,
    // `readerKeyIsStale` and `filesMoved` are guarded by `lock`; a
    // `Reader`'s connection is touched only by the holder of its permit
    // from `readerGate`; the writer is a DatabaseQueue.
    private let writer: DatabaseQueue
    private let lock = NSLock()
    /// The permits to use a reader, first come, first served.
    private let readerGate: AccessGate
    /// Readers not in use (each with its thread; its connection opens at
    /// its first use).
    private var idleReaders: [Reader] = []
    private var readerKey: DatabaseKey? {
        didSet { checkpointer.use(readerKey) }
    }
    /// The pool's automatic checkpoints, on a connection of their own.
    private let checkpointer: WALCheckpointer
    /// Set when a rekey failed: the writer may reopen on either key, and
    /// readers must follow it (see `refreshReaderKeyIfNeeded`).
    private var readerKeyIsStale = false
    /// Set when the writer found its files moved or its `-wal` deleted:
    /// every later read and write throws it (readers close as they return).
    private var filesMoved: StrongroomError?
    private let readerConfiguration: Configuration
    private let logger: Logger
    /// Metrics and spans of the accesses (the writer reports through the same).
    private let observer: AccessObserver
    /// The database path.
    public let path: String

    /// One reader: its connection (nil until first used, or after it was
    /// closed) and the thread its async reads run on.
    private final class Reader: @unchecked Sendable {
        // Sendable: `connection` is touched only by the holder of a reader permit.
        var connection: Connection?
        let thread = ConnectionThread(name: "strongroom-r", niceness: ConnectionThread.backgroundNiceness)
    }

    /// Opens the pool; the writer connection opens (and validates the key) at once.
    public init(path: String, configuration: Configuration) throws(StrongroomError) {
        guard path != ":memory:" && !path.isEmpty else {
            throw StrongroomError(.misuse, "A DatabasePool needs a file; use a DatabaseQueue for an in-memory database.")
        }
        var writerConfiguration = configuration
        // A pool needs WAL (readers beside the writer), whatever the file had.
        writerConfiguration.journalMode = .wal
        writerConfiguration.keepsJournalMode = false
        let writerConnection = try Connection(path: path, configuration: writerConfiguration)
        let observer = AccessObserver(path: path, configuration: configuration)
        self.observer = observer
        let readerCount = max(configuration.maximumReaderCount, 1)
        let readerGate = AccessGate(capacity: readerCount, configuration: configuration, resource: "a reader of \(path.split(separator: "/").last.map(String.init) ?? path)", path: path)
        self.readerGate = readerGate
        var readers = configuration
        readers.readOnly = true
        readers.createIfMissing = false
        let readerKey = try Self.readerKey(for: configuration.key, writer: writerConnection)
        let checkpointer = WALCheckpointer(path: path, configuration: readers, observer: observer)
        checkpointer.use(readerKey)
        self.checkpointer = checkpointer
        self.writer = DatabaseQueue(connection: writerConnection, configuration: writerConfiguration, role: "writer", observer: observer, readers: readerGate,
                                    checkpointer: checkpointer)
        self.path = path
        self.logger = configuration.logger
        self.readerConfiguration = readers
        self.idleReaders = (0..<readerCount).map { _ in Reader() }
        self.readerKey = readerKey
    }

    deinit {
        for reader in idleReaders { reader.thread.stop() }
    }

    /// Runs `body` on the writer in an IMMEDIATE transaction.
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try refuseReentrance("write")
        try refuseIfClosed()
        return try closingIfFilesMoved { try writer.write(body) }
    }

    /// Runs a write; when it finds the files moved or the `-wal` deleted
    /// (``StrongroomError/Code/fileMoved``), the writer has closed, and the
    /// pool closes its readers (each as it comes back) and refuses every
    /// later read and write: see `Connection.refuseWritesToMovedFiles`.
    private func closingIfFilesMoved<T>(_ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch let error as StrongroomError where error.code == .fileMoved {
            noteFilesMoved(error)
            throw error
        }
    }

    private func noteFilesMoved(_ error: StrongroomError) {
        lock.lock()
        if filesMoved == nil {
            filesMoved = StrongroomError(.fileMoved, error.message + " This pool is closed; open a new one.", path: path)
        }
        for reader in idleReaders { reader.connection = nil }
        lock.unlock()
    }

    /// Runs `body` on the writer outside any transaction, with the writer to
    /// itself: for work that manages its own transactions (migrations,
    /// `VACUUM`). Reads go on meanwhile.
    ///
    /// ```swift
    /// try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
    /// ```
    public func writeWithoutTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try refuseReentrance("writeWithoutTransaction")
        try refuseIfClosed()
        return try closingIfFilesMoved { try writer.inDatabase(body) }
    }

    /// Asynchronous ``write(_:)``: a name of its own, so that a `write` in an
    /// `async` function still blocks (see ``DatabaseQueue``, "Sync or async").
    /// Waits for the writer as a suspended task, in arrival order, and runs
    /// `body` on the writer's own thread; reads waiting for a reader never
    /// delay it. Cancelling the task interrupts `body`'s SQL and rolls the
    /// transaction back (the call throws `CancellationError`).
    ///
    /// ```swift
    /// try await pool.asyncWrite { db in try db.execute(sql: "UPDATE counter SET n = n + 1") }
    /// ```
    public func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try refuseIfClosed()
        return try await closingIfFilesMoved { try await writer.asyncWrite(body) }
    }

    /// ``closingIfFilesMoved(_:)`` for an async write.
    private func closingIfFilesMoved<T>(_ write: () async throws -> T) async throws -> T {
        do {
            return try await write()
        } catch let error as StrongroomError where error.code == .fileMoved {
            noteFilesMoved(error)
            throw error
        }
    }

    /// Asynchronous ``writeWithoutTransaction(_:)``: `body` runs on the
    /// writer's own thread, outside any transaction.
    ///
    /// ```swift
    /// try await pool.asyncWriteWithoutTransaction { db in try db.execute(sql: "VACUUM") }
    /// ```
    public func asyncWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try refuseIfClosed()
        return try await closingIfFilesMoved { try await writer.withConnection(body) }
    }

    /// Runs `body` on a reader, in a transaction that sees one committed snapshot.
    /// Several reads run at once; a read never waits for the writer.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try refuseReentrance("read")
        try refuseIfClosed()
        let span = observer.startSpan(.read)
        do {
            // Before taking a reader: a rekey holds the writer while it
            // waits for every reader to come back.
            try refreshReaderKeyIfNeeded()
            try readerGate.acquire(for: observer.read)
            let reader = takeIdleReader()
            var healthy = true
            defer { giveBack(reader, healthy: healthy) }
            let result = try read(on: reader, healthy: &healthy, access: nil, span: span, body)
            AccessObserver.end(span, error: nil)
            return result
        } catch {
            AccessObserver.end(span, error: error)
            throw error
        }
    }

    /// Runs a read on `reader`, whose permit the caller holds: opens its
    /// connection when needed, runs `body` in a snapshot, and notes when the
    /// connection is no good (a key that no longer opens the file).
    private func read<T>(on reader: Reader, healthy: inout Bool, access: CancellableAccess?, span: any Span, _ body: (Connection) throws -> T) throws -> T {
        do {
            let connection = try openedConnection(of: reader)
            // This thread is now inside one of this pool's reads.
            return try readingMark.run {
                try observer.observe(.read, span: span, on: connection) {
                  try connection.inTransaction(.deferred) { db in
                    // Start the snapshot now, as the block starts (a deferred
                    // transaction would take it at the block's first query).
                    _ = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE 0")
                    guard let access else { return try body(db) }
                    return try access.run(db, body)
                  }
                }
            }
        } catch let error as StrongroomError where error.code == .wrongKey || error.code == .notADatabase {
            healthy = false
            throw error
        } catch let error as StrongroomError {
            throw error.insideRead()
        }
    }

    /// Asynchronous ``read(_:)``: waits for a reader as a suspended task,
    /// first come, first served (no thread is held while it waits), and runs
    /// `body` on that reader's own thread, never on the cooperative thread
    /// pool. Cancelling the task while it waits removes it from the queue;
    /// while `body` runs, interrupts its SQL. Either way the call throws
    /// `CancellationError`, and the reader serves the next caller.
    ///
    /// ```swift
    /// let n = try await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT n FROM counter") }
    /// ```
    public func asyncRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try refuseReentrance("asyncRead")
        try refuseIfClosed()
        let span = observer.startSpan(.read)
        return try await AccessObserver.ending(span) {
            try await asyncRefreshReaderKeyIfNeeded()
            let access = CancellableAccess(counting: observer.read.interruptions)
            return try await readerGate.run(for: observer.read, access: access) { finish in
                // A reader is this caller's: run on its thread (when granted
                // by a reader coming back, that same reader, so its thread
                // goes on without sleeping).
                let reader = self.takeIdleReader()
                reader.thread.submit {
                    var healthy = true
                    let result = Result { try self.read(on: reader, healthy: &healthy, access: access, span: span, body) }
                    self.giveBack(reader, healthy: healthy)
                    finish(result)
                }
            }
        }
    }

    /// Callers waiting for a reader now (async and blocking).
    public var waitingReadCount: Int { readerGate.waiting }

    /// Callers waiting for the writer now (async and blocking).
    public var waitingWriteCount: Int { writer.waitingCount }

    /// Changes the key of the database for every connection of the pool.
    ///
    /// New reads wait; the pool waits for running reads to finish, closes every
    /// reader, rekeys through the writer and confirms with a fresh connection
    /// (see ``Connection/rekey(to:)``). Readers then reopen with the new key: no
    /// connection keeps using the old one.
    ///
    /// When the rekey does not take effect, the writer is reopened with the
    /// old key, readers reopen with it as before, and the pool throws
    /// ``StrongroomError/Code/rekeyFailed``: it goes on working.
    public func rekey(to newKey: DatabaseKey) throws {
        try refuseReentrance("rekey")
        try refuseIfClosed()
        try writer.inDatabase { _ in
            readerGate.pause()
            closeIdleReaders()
            defer { readerGate.resume() }
            let db: Connection
            do {
                // No checkpoint beside the rekey, and no checkpoint
                // connection left open on the old key after it.
                db = try checkpointer.rekeying { try writer.rekeyOnQueue(to: newKey) }
            } catch {
                // The writer is on one key or the other, or will reopen on
                // it at its next use: readers follow it then.
                lock.lock()
                readerKeyIsStale = true
                lock.unlock()
                throw error
            }
            let key = try Self.readerKey(for: newKey, writer: db)
            lock.lock()
            readerKey = key
            readerKeyIsStale = false
            lock.unlock()
        }
    }

    /// Asynchronous ``rekey(to:)``: waits on a thread of its own, not on
    /// the cooperative thread pool. Once begun, a rekey runs to its end
    /// whatever happens to its task.
    ///
    /// ```swift
    /// try await pool.asyncRekey(to: .generate())
    /// ```
    public func asyncRekey(to newKey: DatabaseKey) async throws {
        try refuseReentrance("asyncRekey")
        try await onThreadOfItsOwn("strongroom-k") { try self.rekey(to: newKey) }
    }

    /// After a failed rekey, the key readers open with is the writer's,
    /// once the writer has (re)opened.
    private func refreshReaderKeyIfNeeded() throws {
        try refuseIfClosed()
        lock.lock()
        let stale = readerKeyIsStale
        lock.unlock()
        guard stale else { return }
        let key = try writer.inDatabase { db in try Self.readerKey(for: writer.currentKey, writer: db) }
        lock.lock()
        readerKey = key
        readerKeyIsStale = false
        lock.unlock()
    }

    /// ``refreshReaderKeyIfNeeded()`` from async code: the writer is asked
    /// on its own thread.
    private func asyncRefreshReaderKeyIfNeeded() async throws {
        try refuseIfClosed()
        guard isReaderKeyStale else { return }
        let writer = self.writer
        let key = try await writer.withConnection { db in try Self.readerKey(for: writer.currentKey, writer: db) }
        setReaderKey(key)
    }

    private var isReaderKeyStale: Bool {
        lock.lock()
        defer { lock.unlock() }
        return readerKeyIsStale
    }

    private func setReaderKey(_ key: DatabaseKey?) {
        lock.lock()
        readerKey = key
        readerKeyIsStale = false
        lock.unlock()
    }

    /// Closes every connection once the reads and the write in progress are
    /// done. Callers waiting, and every later use, get
    /// ``StrongroomError/Code/closed``. Releasing the pool closes it too.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` when called from inside one
    ///   of the pool's own read or write closures (it would wait for itself).
    public func close() throws(StrongroomError) {
        try refuseReentrance("close")
        readerGate.close(StrongroomError(.closed, "The DatabasePool of \(path) is closed; open a new one.", path: path))
        closeIdleReaders()
        lock.lock()
        let readers = idleReaders
        lock.unlock()
        for reader in readers { reader.thread.stop() }
        try? writer.close()
    }

    /// Asynchronous ``close()``: waits for the reads and the write in
    /// progress without holding a thread of the cooperative pool; the
    /// callers waiting, and every later one, get ``StrongroomError/Code/closed``.
    ///
    /// ```swift
    /// try await pool.asyncClose()
    /// ```
    public func asyncClose() async throws {
        try refuseReentrance("asyncClose")
        try await onThreadOfItsOwn("strongroom-c") { try self.close() }
    }

    /// Throws once the pool is closed: nothing may reach the closed writer.
    private func refuseIfClosed() throws(StrongroomError) {
        if let closed = readerGate.closedError { throw closed }
        lock.lock()
        defer { lock.unlock() }
        if let filesMoved { throw filesMoved }
    }

    /// With every reader permit held (paused or closed gate): closes every reader's connection.
    private func closeIdleReaders() {
        lock.lock()
        for reader in idleReaders { reader.connection = nil }
        lock.unlock()
    }

    /// The number of reader connections open now (for tests and diagnostics).
    public var readerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return openReaders.count
    }

    /// Every reader whose connection is open (idle or not).
    private var openReaders: [Reader] { allReaders.filter { $0.connection != nil } }
    private var allReaders: [Reader] { idleReaders + checkedOut }
    /// Readers in use, so that `readerCount` counts them too.
    private var checkedOut: [Reader] = []

    /// Set on a thread while it runs one of this pool's reads.
    private let readingMark = ThreadMark()

    /// A pool called again from inside one of its own closures would wait
    /// for itself (a reader it holds, a writer it is): a typed error instead.
    private func refuseReentrance(_ call: String) throws(StrongroomError) {
        if readingMark.isSet || writer.isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabasePool.\(call) was called from inside one of the pool's own read or write closures; use the Connection you were given, or call it after the closure returns.", path: path)
        }
    }

    /// With a reader permit held: an idle reader, preferring one whose
    /// connection is open.
    private func takeIdleReader() -> Reader {
        lock.lock()
        defer { lock.unlock() }
        let index = idleReaders.lastIndex { $0.connection != nil } ?? idleReaders.count - 1
        let reader = idleReaders.remove(at: index)
        checkedOut.append(reader)
        return reader
    }

    /// The reader's connection, opened now when it has none.
    private func openedConnection(of reader: Reader) throws(StrongroomError) -> Connection {
        if let connection = reader.connection { return connection }
        lock.lock()
        let key = readerKey
        lock.unlock()
        let connection = try Connection(path: path, configuration: readerConfiguration, keyOverride: key)
        lock.lock()
        reader.connection = connection
        lock.unlock()
        return connection
    }

    /// Puts `reader` back and gives its permit to the next caller; closes
    /// its connection when it is no good or the files moved.
    private func giveBack(_ reader: Reader, healthy: Bool) {
        lock.lock()
        if !healthy || filesMoved != nil { reader.connection = nil }
        if let index = checkedOut.firstIndex(where: { $0 === reader }) { checkedOut.remove(at: index) }
        idleReaders.append(reader)
        lock.unlock()
        readerGate.release()
    }

    /// The key readers open with: for a passphrase, the page key SQLCipher
    /// would derive from it and the salt (`cipherSalt()`), plus that salt (`x'<key><salt>'`),
    /// so readers skip the derivation. Any other key is used as is.
    private static func readerKey(for key: DatabaseKey?, writer: Connection) throws(StrongroomError) -> DatabaseKey? {
        guard let key, case .passphrase(let passphrase) = key.material else { return key }
        guard let kdf = SQLCipherKDF(of: writer), let salt = writer.cipherSalt() else {
            writer.logger.notice("pool readers will stretch the passphrase themselves", metadata: ["cipher_version": "\(writer.cipherVersion)"])
            return key
        }
        let derived: SecureBytes
        do {
            derived = try PBKDF2.deriveKey(from: passphrase, salt: salt, hash: kdf.hash, iterations: kdf.iterations, byteCount: DatabaseKey.rawKeyByteCount)
        } catch {
            throw StrongroomError(.sqlite, "Key derivation failed: \(error.message)", path: writer.path)
        }
        let withSalt = derived.withUnsafeBytes { keyBytes in
            SecureBytes(count: keyBytes.count + salt.count) { out in
                out.copyMemory(from: keyBytes)
                for (i, byte) in salt.enumerated() { out[keyBytes.count + i] = byte }
            }
        }
        return DatabaseKey(material: .rawWithSalt(withSalt), source: key.source)
    }
}
