#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import Logging

/// Converts a database written by an older SQLCipher (SQLCipher 3's settings)
/// into the linked SQLCipher's own format, once, in place.
///
/// On SQLCipher 4 a SQLCipher 3 file opens only in compatibility mode
/// (``Configuration/cipherCompatibility``); opened with the defaults it fails
/// with ``StrongroomError/Code/legacyCipherFormat``. The upgrade writes a new
/// copy in the current format (4 KiB pages, PBKDF2-HMAC-SHA512 256,000,
/// HMAC-SHA512), under the same key or a new one, and keeps every row, the
/// schema, `user_version` and `application_id` (so the migration history
/// and the sealed-column registry, which are tables, come along).
///
/// ```swift
/// let key = try DatabaseKey.load(keyFile: "Keys/app.key")
/// if try DatabaseUpgrade.format(ofDatabaseAt: "app.db", key: key) != SQLCipherLibrary.nativeFormat {
///     let report = try DatabaseUpgrade.upgrade(databaseAt: "app.db", key: key)
///     print(report)   // "SQLCipher 3 → SQLCipher 4: 14 tables, 15725 rows verified; …"
/// }
/// ```
///
/// Safety: the copy is made beside the file under a temporary owner-only
/// name, while the original is locked (`BEGIN EXCLUSIVE` in exclusive locking
/// mode: no other connection reads or writes it meanwhile). The copy is
/// verified (a digest of every table against the original's, `user_version`,
/// `application_id`, `PRAGMA integrity_check`, and on SQLCipher 4
/// `PRAGMA cipher_integrity_check`), synced, and only then renamed over the
/// original, which rename(2) does atomically: at every instant the path holds
/// either the original, which the old key still opens in compatibility mode,
/// or the complete new file. A crash leaves at worst the temporary copy,
/// which the next upgrade, import, export or backup in that directory removes.
/// Stop the applications that use the file first: the upgrade refuses to
/// start while another connection holds it.
public enum DatabaseUpgrade {
    /// What an upgrade did.
    public struct Report: Sendable {
        /// The database path.
        public let path: String
        /// The format the file had.
        public let from: CipherFormat
        /// The format it has now (the linked SQLCipher's own).
        public let to: CipherFormat
        /// Every table, with its row count and digest, equal in both files.
        public let tables: [TableDigest]
        /// `PRAGMA user_version`, kept.
        public let userVersion: Int
        /// `PRAGMA application_id`, kept.
        public let applicationID: Int
        /// The journal mode, kept (`wal` or `delete`, …).
        public let journalMode: String
        /// True when the new file is under a new key.
        public let rekeyed: Bool
    }

    /// Where an upgrade is.
    public struct Progress: Sendable {
        /// The step.
        public enum Phase: String, Sendable {
            /// Writing the copy (bytes of the copy so far, of the original's size).
            case copying
            /// Reading the copy back (rows so far).
            case verifying
            /// Giving the copy the original's name.
            case replacing
        }
        /// The step.
        public let phase: Phase
        /// Bytes copied or rows verified so far.
        public let completed: Int
        /// The original's size in bytes while copying, else nil.
        public let total: Int?
    }

    /// The format of the database at `path` as `key` opens it: the linked
    /// SQLCipher's own, or ``CipherFormat/sqlcipher3`` for a SQLCipher 3 file
    /// on SQLCipher 4.
    ///
    /// - Throws: ``StrongroomError/Code/wrongKey`` when neither opens it, and
    ///   the other errors of opening a connection.
    public static func format(ofDatabaseAt path: String, key: DatabaseKey, logger: Logger? = nil) throws(StrongroomError) -> CipherFormat {
        guard let native = SQLCipherLibrary.nativeFormat else {
            throw StrongroomError(.sqlcipherUnavailable, "The SQLCipher linked into this program (\(SQLCipherLibrary.version)) is not one Strongroom knows; link SQLCipher 3 or 4.", path: path)
        }
        var configuration = existing(key, logger: logger)
        configuration.readOnly = false
        do {
            _ = try Connection(path: path, configuration: configuration)
            return native
        } catch where error.code == .legacyCipherFormat {
            return .sqlcipher3
        }
    }

    /// Converts the database at `path` to the linked SQLCipher's format,
    /// under `newKey` when given (else under `key`), verified before it
    /// replaces the original.
    ///
    /// - Throws: ``StrongroomError/Code/alreadyCurrent`` when the file is in
    ///   the linked SQLCipher's format already (nothing is written),
    ///   ``StrongroomError/Code/busy`` while another connection holds the file,
    ///   ``StrongroomError/Code/verificationFailed`` when the copy differs (it
    ///   is removed; the original is untouched), and the errors of opening it.
    @discardableResult
    public static func upgrade(databaseAt path: String, key: DatabaseKey, newKey: DatabaseKey? = nil, logger: Logger? = nil,
                               progress: (@Sendable (Progress) -> Void)? = nil) throws(StrongroomError) -> Report {
        // A symlink leads to the file to replace; its directory takes the copy.
        let target = FileSystem.resolved(path) ?? path
        let format = try Self.format(ofDatabaseAt: target, key: key, logger: logger)
        guard let native = SQLCipherLibrary.nativeFormat, format.rawValue < native.rawValue else {
            throw StrongroomError(.alreadyCurrent, "\(path) is in \(format)'s format already, the one SQLCipher \(SQLCipherLibrary.version) writes; there is nothing to upgrade, and nothing was changed.", path: path)
        }
        // rename(2) replaces one name: another name of the same file would
        // keep the old inode, and what is written through it would be lost.
        var status = stat()
        if stat(target, &status) == 0, status.st_nlink > 1 {
            throw StrongroomError(.misuse, "\(path) has \(status.st_nlink) hard links (names); the upgrade replaces one name, and writes through the others would go to the old file. Remove the other names (find / -samefile \(path)), or copy the file, then run the upgrade again. Nothing was changed.", path: path)
        }
        var sourceConfiguration = existing(key, logger: logger)
        sourceConfiguration.cipherCompatibility = format
        let source = try Connection(path: target, configuration: sourceConfiguration)
        defer { source.close() }
        let journalMode = try source.fetchOne(String.self, sql: "PRAGMA journal_mode") ?? "delete"
        do {
            return try upgrade(source, shownAs: path, target: target, journalMode: journalMode, from: format, to: native,
                               key: key, newKey: newKey, logger: logger, progress: progress)
        } catch {
            if journalMode.lowercased() == "wal" {
                // Back to how it was; in rollback-journal mode it opens all the same.
                source.rollbackQuietly()
                _ = try? source.fetchOne(String.self, sql: "PRAGMA locking_mode = NORMAL")
                _ = try? source.fetchOne(String.self, sql: "PRAGMA journal_mode = WAL")
            }
            throw error
        }
    }

    /// The upgrade of the file `source` holds, once it knows the file's
    /// format and journal mode; the caller puts the journal mode back when
    /// this throws.
    private static func upgrade(_ source: Connection, shownAs path: String, target: String, journalMode: String,
                                from format: CipherFormat, to native: CipherFormat, key: DatabaseKey, newKey: DatabaseKey?,
                                logger: Logger?, progress: (@Sendable (Progress) -> Void)?) throws(StrongroomError) -> Report {
        try lockExclusively(source, journalMode: journalMode, path: path)
        let userVersion = try source.fetchOne(Int.self, sql: "PRAGMA main.user_version") ?? 0
        let applicationID = try source.fetchOne(Int.self, sql: "PRAGMA main.application_id") ?? 0
        let sourceSize = Int((try? FileHeader.size(of: target)).flatMap { $0 } ?? 0)

        let temporary = try OutputFile.createTemporary(beside: target)
        let copyKey = newKey ?? key
        var copyConfiguration = Configuration(key: copyKey)
        copyConfiguration.createIfMissing = false
        copyConfiguration.journalMode = .delete
        if let logger { copyConfiguration.logger = logger }
        var tables: [TableDigest] = []
        do throws(StrongroomError) {
            // The copy: written in this connection's exclusive transaction
            // (ATTACH first: SQLite attaches outside transactions only).
            try source.attach(temporary, as: "strongroom_upgrade", key: copyKey)
            do throws(StrongroomError) {
                try source.execute(sql: "BEGIN EXCLUSIVE")
                try source.withProgressHandler(every: 1_000_000, { report(progress, .copying, fileSize(temporary), sourceSize) }) { () throws(StrongroomError) in
                    try source.execute(sql: "SELECT sqlcipher_export('strongroom_upgrade')")
                }
                try source.execute(sql: "PRAGMA strongroom_upgrade.user_version = \(userVersion)")
                try source.execute(sql: "PRAGMA strongroom_upgrade.application_id = \(applicationID)")
                try source.execute(sql: "COMMIT")
            } catch {
                source.rollbackQuietly()
                try? source.detach("strongroom_upgrade")
                throw error
            }
            try source.detach("strongroom_upgrade")
            report(progress, .copying, fileSize(temporary), sourceSize)

            // Verified against the original, which nobody can change meanwhile.
            let expected = try source.tableDigests()
            tables = expected
            let copied = ParallelRows()
            let digests = try ParallelDigest.digests(ofDatabaseAt: temporary, configuration: copyConfiguration, workers: 2) { rows in
                report(progress, .verifying, copied.add(rows), nil)
            }
            let copy = try Connection(path: temporary, configuration: copyConfiguration)
            let copiedVersion = try copy.fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
            let copiedApplicationID = try copy.fetchOne(Int.self, sql: "PRAGMA application_id") ?? 0
            let integrity = try copy.fetchAll(String.self, sql: "PRAGMA integrity_check")
            // SQLCipher 4 checks every page's HMAC; no row means none failed.
            // (SQLCipher 3 ignores the pragma and answers nothing.)
            let pages = try copy.fetchAll(sql: "PRAGMA cipher_integrity_check").count
            guard digests == expected, copiedVersion == userVersion, copiedApplicationID == applicationID,
                  integrity == ["ok"], pages == 0 else {
                copy.close()
                let differing = Set(expected).symmetricDifference(digests).map(\.name).sorted()
                throw StrongroomError(.verificationFailed, "The upgraded copy of \(path) does not match it (tables: \(differing.isEmpty ? "none differ" : differing.joined(separator: ", ")); user_version \(copiedVersion) vs \(userVersion); integrity_check \(integrity.prefix(3).joined(separator: "; ")); \(pages) pages failing cipher_integrity_check); it was removed, and \(path) is as it was.", path: path)
            }
            // The original's journal mode (the header's WAL flag).
            // (Its last close checkpoints and removes the copy's -wal.)
            if journalMode.lowercased() == "wal" {
                _ = try copy.fetchOne(String.self, sql: "PRAGMA journal_mode = WAL")
            }
            copy.close()
            if FileManager.default.fileExists(atPath: temporary + "-wal") {
                throw StrongroomError(.ioError, "The upgraded copy of \(path) kept its -wal file after closing; \(path) is as it was.", path: path)
            }
            try replace(target, with: temporary, shownAs: path)
            report(progress, .replacing, 1, 1)
        } catch {
            OutputFile.removeDatabaseFiles(temporary)
            throw error
        }
        source.close()
        // The new file opens in the linked SQLCipher's own format.
        var confirm = existing(copyKey, logger: logger)
        confirm.readOnly = false
        _ = try Connection(path: target, configuration: confirm)
        source.logger.info("upgraded database", metadata: ["path": "\(path)", "from": "\(format)", "to": "\(native)"])
        return Report(path: path, from: format, to: native, tables: tables, userVersion: userVersion,
                      applicationID: applicationID, journalMode: journalMode, rekeyed: newKey != nil)
    }

    /// How an existing file is opened here: never created, its journal mode kept.
    private static func existing(_ key: DatabaseKey, logger: Logger?) -> Configuration {
        var configuration = Configuration(key: key)
        configuration.createIfMissing = false
        configuration.keepsJournalMode = true
        if let logger { configuration.logger = logger }
        return configuration
    }

    /// Keeps every other connection out of the file until `connection`
    /// closes: a rollback journal (a WAL database is switched to DELETE,
    /// which SQLite does only when no other connection has the file open;
    /// its -wal is checkpointed and removed), then an exclusive lock held in
    /// exclusive locking mode.
    private static func lockExclusively(_ connection: Connection, journalMode mode: String, path: String) throws(StrongroomError) {
        let busy = StrongroomError(.busy, "Another connection or process has \(path) open; stop the applications that use it, then run the upgrade again. Nothing was changed.", path: path)
        if mode.lowercased() == "wal" {
            let switched: String?
            do {
                switched = try connection.fetchOne(String.self, sql: "PRAGMA journal_mode = DELETE")
            } catch where error.code == .busy {
                throw busy
            }
            guard switched?.lowercased() == "delete" else { throw busy }
        }
        _ = try connection.fetchOne(String.self, sql: "PRAGMA locking_mode = EXCLUSIVE")
        do {
            try connection.execute(sql: "BEGIN EXCLUSIVE")
            _ = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master")
            try connection.execute(sql: "COMMIT")
        } catch where error.code == .busy {
            connection.rollbackQuietly()
            throw busy
        }
    }

    /// Gives the verified copy the original's name: synced, given the
    /// original's mode and group (and owner, for root), renamed over it (atomic), and
    /// the directory synced. The original's -wal and -shm, if any remain
    /// (the file is in rollback-journal mode and locked by this process),
    /// are removed first: SQLite would otherwise apply the old file's WAL
    /// frames to the new file.
    private static func replace(_ original: String, with copy: String, shownAs path: String) throws(StrongroomError) {
        var status = stat()
        if stat(original, &status) == 0 {
            // The owner only for root; the group where this user may give it.
            _ = chown(copy, geteuid() == 0 ? status.st_uid : uid_t.max, status.st_gid)
            guard chmod(copy, status.st_mode & 0o7777) == 0 else {
                throw StrongroomError(.cannotCreate, "Cannot give the upgraded copy of \(path) the original's permissions: \(String(cString: strerror(errno))); \(path) is as it was.", path: path)
            }
        }
        if let failure = FileSystem.sync(copy) {
            throw StrongroomError(.ioError, "Cannot sync the upgraded copy of \(path): \(String(cString: strerror(failure))); \(path) is as it was.", path: path)
        }
        for suffix in ["-wal", "-shm"] { unlink(original + suffix) }
        guard rename(copy, original) == 0 else {
            throw StrongroomError(.cannotCreate, "Cannot put the upgraded copy in place of \(path): \(String(cString: strerror(errno))); \(path) is as it was.", path: path)
        }
        FileSystem.syncDirectory(of: original)
    }

    private static func fileSize(_ path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    private static func report(_ progress: (@Sendable (Progress) -> Void)?, _ phase: Progress.Phase, _ completed: Int, _ total: Int?) {
        progress?(Progress(phase: phase, completed: completed, total: total))
    }

    /// Rows verified so far, counted by the digest's workers.
    private final class ParallelRows: @unchecked Sendable {
        // Sendable: `rows` is read and written under `lock`.
        private let lock = NSLock()
        private var rows = 0
        func add(_ more: Int) -> Int {
            lock.lock()
            defer { lock.unlock() }
            rows += more
            return rows
        }
    }
}

extension DatabaseUpgrade.Report: CustomStringConvertible {
    /// "SQLCipher 3 → SQLCipher 4: 14 tables, 15725 rows verified; user_version 7, application_id 1398165071".
    public var description: String {
        "\(from) → \(to): \(tables.count) tables, \(tables.reduce(0) { $0 + $1.rowCount }) rows verified; user_version \(userVersion), application_id \(applicationID)"
    }
}

extension DatabaseUpgrade.Progress: CustomStringConvertible {
    /// "copying: 1048576 of 4194304 bytes", "verifying: 12000 rows", "replacing".
    public var description: String {
        switch phase {
        case .copying: "copying: \(completed)\(total.map { " of \($0)" } ?? "") bytes"
        case .verifying: "verifying: \(completed) rows"
        case .replacing: "replacing"
        }
    }
}
