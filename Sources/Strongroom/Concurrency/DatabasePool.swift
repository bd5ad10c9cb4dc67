import Foundation
import Logging
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
    // Sendable: `idleReaders`, `openReaderCount`, `readerKey` and `isRekeying`
    // are guarded by `condition`; the writer is a DatabaseQueue.
    private let writer: DatabaseQueue
    private let condition = NSCondition()
    private var idleReaders: [Connection] = []
    private var openReaderCount = 0
    private var checkedOutCount = 0
    private var isRekeying = false
    private var isClosed = false
    private var readerKey: DatabaseKey?
    /// Set when a rekey failed: the writer may reopen on either key, and
    /// readers must follow it (see `refreshReaderKeyIfNeeded`).
    private var readerKeyIsStale = false
    /// Set when the writer found its files moved or its `-wal` deleted:
    /// every later read and write throws it (readers close as they return).
    private var filesMoved: StrongroomError?
    private let readerConfiguration: Configuration
    private let logger: Logger
    /// The database path.
    public let path: String

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
        self.writer = DatabaseQueue(connection: writerConnection, configuration: writerConfiguration)
        self.path = path
        self.logger = configuration.logger
        var readers = configuration
        readers.readOnly = true
        readers.createIfMissing = false
        self.readerConfiguration = readers
        self.readerKey = try Self.readerKey(for: configuration.key, writer: writerConnection)
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
        condition.lock()
        if filesMoved == nil {
            filesMoved = StrongroomError(.fileMoved, error.message + " This pool is closed; open a new one.", path: path)
        }
        openReaderCount -= idleReaders.count
        idleReaders.removeAll()
        condition.broadcast()
        condition.unlock()
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
    ///
    /// ```swift
    /// try await pool.asyncWrite { db in try db.execute(sql: "UPDATE counter SET n = n + 1") }
    /// ```
    public func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try refuseIfClosed()
        do {
            return try await writer.asyncWrite(body)
        } catch let error as StrongroomError where error.code == .fileMoved {
            noteFilesMoved(error)
            throw error
        }
    }

    /// Runs `body` on a reader, in a transaction that sees one committed snapshot.
    /// Several reads run at once; a read never waits for the writer.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try refuseReentrance("read")
        try refreshReaderKeyIfNeeded()
        let reader = try checkOutReader()
        var healthy = true
        defer { checkIn(reader, healthy: healthy) }
        do {
            // This thread is now inside one of this pool's reads.
            return try readingMark.run {
                try reader.inTransaction(.deferred) { db in
                    // Start the snapshot now, as the block starts (a deferred
                    // transaction would take it at the block's first query).
                    _ = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE 0")
                    return try body(db)
                }
            }
        } catch let error as StrongroomError where error.code == .wrongKey || error.code == .notADatabase {
            healthy = false
            throw error
        } catch let error as StrongroomError {
            throw error.insideRead()
        }
    }

    /// Asynchronous ``read(_:)``, run off the cooperative thread pool.
    ///
    /// ```swift
    /// let n = try await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT n FROM counter") }
    /// ```
    public func asyncRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.read(body) })
            }
        }
    }

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
            condition.lock()
            isRekeying = true
            closeReadersWhenReturned()
            condition.unlock()
            defer {
                condition.lock()
                isRekeying = false
                condition.broadcast()
                condition.unlock()
            }
            let db: Connection
            do {
                db = try writer.rekeyOnQueue(to: newKey)
            } catch {
                // The writer is on one key or the other, or will reopen on
                // it at its next use: readers follow it then.
                condition.lock()
                readerKeyIsStale = true
                condition.unlock()
                throw error
            }
            let key = try Self.readerKey(for: newKey, writer: db)
            condition.lock()
            readerKey = key
            readerKeyIsStale = false
            condition.unlock()
        }
    }

    /// After a failed rekey, the key readers open with is the writer's,
    /// once the writer has (re)opened.
    private func refreshReaderKeyIfNeeded() throws {
        try refuseIfClosed()
        condition.lock()
        let stale = readerKeyIsStale
        condition.unlock()
        guard stale else { return }
        let key = try writer.inDatabase { db in try Self.readerKey(for: writer.currentKey, writer: db) }
        condition.lock()
        readerKey = key
        readerKeyIsStale = false
        condition.unlock()
    }

    /// Closes every connection once the reads and the write in progress are
    /// done. Every later use throws ``StrongroomError/Code/misuse``.
    /// Releasing the pool closes it too.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` when called from inside one
    ///   of the pool's own read or write closures (it would wait for itself).
    public func close() throws(StrongroomError) {
        try refuseReentrance("close")
        condition.lock()
        isClosed = true
        closeReadersWhenReturned()
        condition.broadcast()
        condition.unlock()
        try? writer.close()
    }

    /// Throws misuse once the pool is closed: nothing may reach the closed writer.
    private func refuseIfClosed() throws(StrongroomError) {
        condition.lock()
        defer { condition.unlock() }
        if isClosed { throw StrongroomError(.misuse, "The DatabasePool of \(path) is closed.", path: path) }
        if let filesMoved { throw filesMoved }
    }

    /// With `condition` locked: waits until every reader in use is back,
    /// then closes them all (new reads wait on `isRekeying` or fail on `isClosed`).
    private func closeReadersWhenReturned() {
        while checkedOutCount > 0 { condition.wait() }
        idleReaders.removeAll()
        openReaderCount = 0
    }

    /// The number of reader connections open now (for tests and diagnostics).
    public var readerCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return openReaderCount
    }

    /// Set on a thread while it runs one of this pool's reads.
    private let readingMark = ThreadMark("pool.read")

    /// A pool called again from inside one of its own closures would wait
    /// for itself (a reader it holds, a writer it is): a typed error instead.
    private func refuseReentrance(_ call: String) throws(StrongroomError) {
        if readingMark.isSet || writer.isRunningOnItsQueue {
            throw StrongroomError(.misuse, "DatabasePool.\(call) was called from inside one of the pool's own read or write closures; use the Connection you were given, or call it after the closure returns.", path: path)
        }
    }

    private func checkOutReader() throws(StrongroomError) -> Connection {
        condition.lock()
        while !isClosed && (isRekeying || (idleReaders.isEmpty && openReaderCount >= max(readerConfiguration.maximumReaderCount, 1))) {
            condition.wait()
        }
        if isClosed {
            condition.unlock()
            throw StrongroomError(.misuse, "The DatabasePool of \(path) is closed.", path: path)
        }
        if let filesMoved {
            condition.unlock()
            throw filesMoved
        }
        if let reader = idleReaders.popLast() {
            checkedOutCount += 1
            condition.unlock()
            return reader
        }
        openReaderCount += 1
        checkedOutCount += 1
        let key = readerKey
        condition.unlock()
        do {
            return try Connection(path: path, configuration: readerConfiguration, keyOverride: key)
        } catch {
            condition.lock()
            openReaderCount -= 1
            checkedOutCount -= 1
            condition.broadcast()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ reader: Connection, healthy: Bool) {
        condition.lock()
        checkedOutCount -= 1
        if healthy && !isRekeying && !isClosed && filesMoved == nil {
            idleReaders.append(reader)
        } else {
            openReaderCount -= 1
        }
        condition.broadcast()
        condition.unlock()
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
