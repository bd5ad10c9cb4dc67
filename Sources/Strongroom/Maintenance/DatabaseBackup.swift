internal import CSQLCipher
import Foundation

/// A consistent copy of a live encrypted database, with SQLite's online
/// backup API, under the same key or re-encrypted under a new one.
///
/// The copy is one snapshot of the source: a writer and readers may go on
/// while it is taken (in WAL mode writers are never blocked; in rollback
/// journal mode a writer cannot commit until the copy is done, and fails
/// with `busy` once its busy timeout has passed). It is
/// written under a temporary owner-only name beside the destination, checked
/// (`PRAGMA integrity_check`, and every table's row count against the
/// snapshot's), and only then given its name, never over an existing file.
///
/// ```swift
/// let report = try DatabaseBackup.copy(from: "app.db", configuration: Configuration(key: key),
///                                      to: "backups/app-2026-11-22.db")
/// print(report)   // "11 tables, 15607 rows, 412 pages copied and verified"
/// ```
public enum DatabaseBackup {
    /// What a backup copied.
    public struct Report: Sendable, Codable {
        /// Every table of the copy, with its row count (equal to the source's
        /// in the snapshot copied).
        public let tables: [DatabaseStatus.Table]
        /// The number of pages copied.
        public let pageCount: Int
        /// True when the copy is encrypted under a new key.
        public let reencrypted: Bool
    }

    /// How far a backup has come.
    public struct Progress: Sendable {
        /// Pages copied so far.
        public let copiedPages: Int
        /// Pages in the source.
        public let totalPages: Int
    }

    /// Copies the database at `source`, opened with `configuration`, to a
    /// new file at `destination`, encrypted under `newKey` or, by default,
    /// the source's own key.
    ///
    /// - Parameters:
    ///   - source: The database file to copy.
    ///   - configuration: How to open it: its key and cipher settings.
    ///   - destination: Where the copy goes; it must not exist.
    ///   - newKey: The copy's key; by default the source's.
    ///   - pagesPerStep: Pages copied between two progress reports.
    ///   - progress: Called after each step, on the calling thread.
    /// - Throws: ``StrongroomError`` with ``StrongroomError/Code/outputExists``
    ///   when `destination` exists, ``StrongroomError/Code/wrongKey`` and the
    ///   other opening errors for the source, and
    ///   ``StrongroomError/Code/verificationFailed`` when the copy does not
    ///   check out (it is then removed).
    public static func copy(from source: String, configuration: Configuration, to destination: String, newKey: DatabaseKey? = nil,
                            pagesPerStep: Int = 1024, progress: (@Sendable (Progress) -> Void)? = nil) throws(StrongroomError) -> Report {
        try copy(from: source, configuration: configuration, to: destination, newKey: newKey, pagesPerStep: pagesPerStep, progress: progress, shouldStop: nil)
    }

    /// Asynchronous ``copy(from:configuration:to:newKey:pagesPerStep:progress:)``:
    /// the copy runs on a thread of its own, not on the cooperative thread
    /// pool, and `progress` is called there. Cancelling the task stops the
    /// copy between two steps, removes the partial copy and throws
    /// `CancellationError`; the source is untouched.
    ///
    /// ```swift
    /// let report = try await DatabaseBackup.asyncCopy(from: "app.db", configuration: Configuration(key: key), to: "app-backup.db")
    /// ```
    public static func asyncCopy(from source: String, configuration: Configuration, to destination: String, newKey: DatabaseKey? = nil,
                                 pagesPerStep: Int = 1024, progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Report {
        let stop = StopRequest()
        return try await withTaskCancellationHandler {
            do {
                return try await onThreadOfItsOwn("strongroom-b") {
                    try copy(from: source, configuration: configuration, to: destination, newKey: newKey, pagesPerStep: pagesPerStep, progress: progress, shouldStop: { stop.isRequested })
                }
            } catch let error as StrongroomError where error.code == .interrupted && stop.isRequested {
                throw CancellationError()
            }
        } onCancel: {
            stop.request()
        }
    }

    /// A request to stop, made from any thread.
    private final class StopRequest: @unchecked Sendable {
        // Sendable: `requested` is guarded by `lock`.
        private let lock = NSLock()
        private var requested = false
        func request() { lock.lock(); requested = true; lock.unlock() }
        var isRequested: Bool { lock.lock(); defer { lock.unlock() }; return requested }
    }

    private static func copy(from source: String, configuration: Configuration, to destination: String, newKey: DatabaseKey?,
                             pagesPerStep: Int, progress: (@Sendable (Progress) -> Void)?, shouldStop: (@Sendable () -> Bool)?) throws(StrongroomError) -> Report {
        var status = stat()
        if lstat(destination, &status) == 0 {
            throw StrongroomError(.outputExists, "\(destination) already exists; a backup never replaces a file. Choose a new path.", path: destination)
        }
        var sourceConfiguration = configuration
        sourceConfiguration.readOnly = true
        sourceConfiguration.createIfMissing = false
        sourceConfiguration.keepsJournalMode = true
        let sourceConnection = try Connection(path: source, configuration: sourceConfiguration)
        defer { sourceConnection.close() }
        guard let sourceKey = configuration.key else {
            throw StrongroomError(.misuse, "A backup copies an encrypted database under a key; \(source) was opened without one.", path: source)
        }
        var copyConfiguration = configuration
        copyConfiguration.encryption = .encrypted(newKey ?? sourceKey)
        copyConfiguration.readOnly = false
        copyConfiguration.createIfMissing = true
        copyConfiguration.journalMode = .delete

        let temporary = try OutputFile.createTemporary(beside: destination)
        do throws(StrongroomError) {
            // One snapshot for the copy and for the row counts it is checked against.
            let expected: [DatabaseStatus.Table]
            let pages: Int
            try sourceConnection.execute(sql: "BEGIN")
            do throws(StrongroomError) {
                expected = try sourceConnection.tableRowCounts()
                let copy = try Connection(path: temporary, configuration: copyConfiguration)
                defer { copy.close() }
                pages = try runBackup(from: sourceConnection, to: copy, pagesPerStep: max(1, pagesPerStep), progress: progress, shouldStop: shouldStop, destination: destination)
                try sourceConnection.execute(sql: "COMMIT")
            } catch {
                sourceConnection.rollbackQuietly()
                throw error
            }

            // Read back under the copy's own key, by a new connection.
            var checkConfiguration = copyConfiguration
            checkConfiguration.createIfMissing = false
            checkConfiguration.keepsJournalMode = true
            let check = try Connection(path: temporary, configuration: checkConfiguration)
            defer { check.close() }
            let integrity = try check.fetchAll(String.self, sql: "PRAGMA integrity_check")
            let copied = try check.tableRowCounts()
            guard integrity == ["ok"], copied == expected else {
                let differing = Set(expected).symmetricDifference(copied).map(\.name).sorted()
                throw StrongroomError(.verificationFailed, "The backup of \(source) does not check out (integrity: \(integrity.prefix(3).joined(separator: "; ")); tables differing: \(differing.joined(separator: ", "))); it was removed.", path: destination)
            }
            // A WAL copy leaves no -wal beside it.
            _ = try? check.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            check.close()
            try OutputFile.publish(temporary, at: destination)
            OutputFile.removeDatabaseFiles(temporary)
            sourceConnection.logger.info("backed up database", metadata: ["source": "\(source)", "destination": "\(destination)", "pages": "\(pages)"])
            return Report(tables: expected, pageCount: pages, reencrypted: newKey != nil)
        } catch {
            OutputFile.removeDatabaseFiles(temporary)
            throw error
        }
    }

    /// Copies every page with `sqlite3_backup_step`, inside the source's
    /// open read transaction (so the snapshot cannot change under it).
    private static func runBackup(from source: Connection, to copy: Connection, pagesPerStep: Int,
                                  progress: (@Sendable (Progress) -> Void)?, shouldStop: (@Sendable () -> Bool)?, destination: String) throws(StrongroomError) -> Int {
        guard let backup = sqlite3_backup_init(copy.handle, "main", source.handle, "main") else {
            throw copy.lastError(sqlite3_errcode(copy.handle), sql: nil)
        }
        var finished = false
        defer { if !finished { sqlite3_backup_finish(backup) } }
        let deadline = ContinuousClock.now + source.configuration.busyTimeout
        while true {
            if shouldStop?() == true {
                throw StrongroomError(.interrupted, "The backup was stopped before its end; the partial copy was removed.", path: destination)
            }
            let status = sqlite3_backup_step(backup, Int32(pagesPerStep))
            let total = Int(sqlite3_backup_pagecount(backup)), remaining = Int(sqlite3_backup_remaining(backup))
            switch status {
            case SQLITE_OK, SQLITE_DONE:
                progress?(Progress(copiedPages: total - remaining, totalPages: total))
                if status == SQLITE_DONE {
                    finished = true
                    let result = sqlite3_backup_finish(backup)
                    guard result == SQLITE_OK else { throw copy.lastError(result, sql: nil) }
                    return total
                }
            case SQLITE_BUSY, SQLITE_LOCKED:
                guard ContinuousClock.now < deadline else {
                    throw StrongroomError(.busy, "The backup waited \(source.configuration.busyTimeout) for a lock on the copy; try again.", path: destination)
                }
                usleep(10_000)
            default:
                finished = true
                sqlite3_backup_finish(backup)
                throw copy.lastError(status, sql: nil)
            }
        }
    }
}

extension DatabaseBackup.Report: CustomStringConvertible {
    /// "11 tables, 15607 rows, 412 pages copied and verified (under a new key)".
    public var description: String {
        "\(tables.count) tables, \(tables.reduce(0) { $0 + $1.rowCount }) rows, \(pageCount) pages copied and verified" + (reencrypted ? " (under a new key)" : "")
    }
}

extension DatabaseBackup.Progress: CustomStringConvertible {
    /// "copied 512 of 1024 pages".
    public var description: String { "copied \(copiedPages) of \(totalPages) pages" }
}
