import Foundation
public import Logging

/// Encrypting an existing plaintext database into a new file, and exporting an
/// encrypted database to plaintext on explicit request.
///
/// Both use SQLCipher's `sqlcipher_export` (the backup API cannot convert
/// between plaintext and encrypted; ``DatabaseBackup`` uses it between keyed
/// databases), copy `user_version` and `application_id` (which
/// `sqlcipher_export` leaves behind), and then prove the copy: every table's
/// row count and content hash must match the source, or the new file is
/// removed and ``StrongroomError/Code/verificationFailed`` is thrown.
/// The source is opened read-only and never modified; the output must not exist.
///
/// ```swift
/// let report = try PlaintextConversion.importPlaintext(from: "legacy.sqlite", to: "app.db", key: key)
/// print(report.tables.map { "\($0.name): \($0.rowCount)" })
/// ```
public enum PlaintextConversion {
    /// Your acknowledgement that an export writes every row unencrypted.
    public enum PlaintextAcknowledgement: Sendable {
        /// The output file will hold the data in plaintext; protecting it is up to you.
        case outputIsUnprotectedPlaintext
    }

    /// How far a conversion has come, for a progress display.
    public struct Progress: Sendable {
        /// What the conversion is doing.
        public enum Phase: Sendable {
            /// `sqlcipher_export` is writing the new file.
            case copying
            /// The new file's rows are being read back and hashed.
            case verifying
        }
        /// What the conversion is doing.
        public let phase: Phase
        /// Copying: bytes written to the new file so far. Verifying: rows
        /// of the new file hashed so far.
        public let completed: Int
        /// Copying: the size of the source file (the new file ends near it,
        /// not exactly at it). Verifying: nil.
        public let total: Int?
    }

    /// What a conversion copied, verified table by table.
    public struct Report: Sendable, Codable {
        /// Source and destination tables matched on these digests.
        public let tables: [TableDigest]
        /// The copied `PRAGMA user_version`.
        public let userVersion: Int
        /// The copied `PRAGMA application_id`.
        public let applicationID: Int
    }

    /// Encrypts the plaintext database at `source` into a new file at `destination`.
    ///
    /// `progress`, when given, is called now and then (from any thread, one
    /// call at a time) while the copy is written and verified.
    ///
    /// - Throws: ``StrongroomError/Code/keyRequired`` when `source` is not plaintext;
    ///   ``StrongroomError/Code/outputExists`` when `destination` exists;
    ///   ``StrongroomError/Code/verificationFailed`` when the copy differs.
    ///
    /// `finishing`, when given, runs on the new file once it is verified and
    /// before it takes its name (sealing columns, for one): if it throws,
    /// the new file is removed. The file is vacuumed after it. `finishing`
    /// and the VACUUM run with `PRAGMA synchronous = OFF` (the file has no
    /// name yet: a crash leaves nothing at `destination`); the file is
    /// synced once before it is named.
    public static func importPlaintext(from source: String, to destination: String, key: DatabaseKey, logger: Logger? = nil,
                                       progress: (@Sendable (Progress) -> Void)? = nil,
                                       finishing: ((Connection) throws(StrongroomError) -> Void)? = nil) throws(StrongroomError) -> Report {
        if try FileHeader.size(of: source) == 0 {
            throw StrongroomError(.notADatabase, "\(source) is an empty file, not a database.", path: source)
        }
        return try convert(source, from: .plaintext, to: destination, as: .encrypted(key), logger: logger, progress: progress, finishing: finishing)
    }

    /// Writes a **plaintext** copy of the encrypted database at `source` to `destination`.
    ///
    /// ```swift
    /// try PlaintextConversion.exportPlaintext(from: "app.db", key: key, to: "debug.sqlite",
    ///                                         .outputIsUnprotectedPlaintext)
    /// ```
    ///
    /// `finishing` works as for ``importPlaintext(from:to:key:logger:progress:finishing:)``
    /// (opening sealed columns, for one).
    public static func exportPlaintext(from source: String, key: DatabaseKey, to destination: String, _ acknowledgement: PlaintextAcknowledgement,
                                       logger: Logger? = nil, progress: (@Sendable (Progress) -> Void)? = nil,
                                       finishing: ((Connection) throws(StrongroomError) -> Void)? = nil) throws(StrongroomError) -> Report {
        try convert(source, from: .encrypted(key), to: destination, as: .plaintext, logger: logger, progress: progress, finishing: finishing)
    }

    /// ``exportPlaintext(from:key:to:_:logger:progress:finishing:)`` of a
    /// source in an older SQLCipher's format (``Configuration/cipherCompatibility``).
    public static func exportPlaintext(from source: String, key: DatabaseKey, cipherCompatibility: CipherFormat?, to destination: String,
                                       _ acknowledgement: PlaintextAcknowledgement, logger: Logger? = nil,
                                       progress: (@Sendable (Progress) -> Void)? = nil,
                                       finishing: ((Connection) throws(StrongroomError) -> Void)? = nil) throws(StrongroomError) -> Report {
        try convert(source, from: .encrypted(key), compatibility: cipherCompatibility, to: destination, as: .plaintext, logger: logger,
                    progress: progress, finishing: finishing)
    }

    /// Page cache of each connection of a conversion: every page is read
    /// once, so a large cache would only cost memory (SQLite's default).
    private static let scanCacheKiB = 2048

    private static func convert(_ source: String, from sourceEncryption: Configuration.Encryption, compatibility: CipherFormat? = nil,
                                to destination: String, as destinationEncryption: Configuration.Encryption, logger: Logger?,
                                progress: (@Sendable (Progress) -> Void)?,
                                finishing: ((Connection) throws(StrongroomError) -> Void)?) throws(StrongroomError) -> Report {
        var sourceConfiguration = Configuration(encryption: sourceEncryption)
        sourceConfiguration.cipherCompatibility = compatibility
        sourceConfiguration.readOnlyMainAllowingAttach = true
        sourceConfiguration.createIfMissing = false
        sourceConfiguration.cacheSizeKiB = scanCacheKiB
        var destinationConfiguration = Configuration(encryption: destinationEncryption)
        destinationConfiguration.cacheSizeKiB = scanCacheKiB
        let destinationKey = destinationConfiguration.key
        if destinationKey == nil {
            // A plaintext export is meant to be handed over: one file, no -wal.
            destinationConfiguration.journalMode = .delete
        }
        if let logger {
            sourceConfiguration.logger = logger
            destinationConfiguration.logger = logger
        }
        // lstat: a symlink, dangling or not, counts as an existing path.
        var status = stat()
        if lstat(destination, &status) == 0 {
            throw StrongroomError(.outputExists, "\(destination) already exists; it will not be overwritten. Choose a new path.", path: destination)
        }
        let sourceConnection: Connection
        do {
            sourceConnection = try Connection(path: source, configuration: sourceConfiguration)
        } catch where error.code == .keyRequired {
            throw StrongroomError(.keyRequired, "\(source) is not a plaintext SQLite database (it is encrypted already, or not a database).", path: source)
        }
        let reporter = ProgressReporter(progress, sourceBytes: Int((try? FileHeader.size(of: source)).flatMap { $0 } ?? 0))
        // The copy is written to a new owner-only file beside the output and
        // appears at the output path only once verified, complete, and never
        // over an existing file (link(2)); a crash leaves no half-written
        // file there.
        let temporary = try OutputFile.createTemporary(beside: destination)
        // The source's digests, computed beside the copy when they can be.
        var sourceDigests: BackgroundWork<[TableDigest]>?
        do throws(StrongroomError) {
            // The key is bound, never pasted into the SQL text; no key
            // attaches a plaintext database.
            try sourceConnection.attach(temporary, as: "strongroom_target", key: destinationKey)
            let userVersion: Int, applicationID: Int, expected: [TableDigest]
            do throws(StrongroomError) {
                // One snapshot: the copy and the digests it is checked against
                // see the same rows, even with a writer at work. A second
                // connection hashes the source while the copy is written, on a
                // snapshot proved to be the copy's; without that proof, the
                // source is hashed afterwards in the copy's own transaction.
                var readOnlySource = sourceConfiguration
                readOnlySource.readOnlyMainAllowingAttach = false
                readOnlySource.readOnly = true
                if let second = try beginSharedSnapshot(sourceConnection, path: source, secondConfiguration: readOnlySource) {
                    let handoff = Handoff(second)
                    sourceDigests = BackgroundWork { () throws(StrongroomError) -> [TableDigest] in
                        let db = handoff.take()
                        defer { db.rollbackQuietly(); db.close() }
                        return try db.tableDigests()
                    }
                }
                userVersion = try sourceConnection.fetchOne(Int.self, sql: "PRAGMA main.user_version") ?? 0
                applicationID = try sourceConnection.fetchOne(Int.self, sql: "PRAGMA main.application_id") ?? 0
                try sourceConnection.withProgressHandler(every: 1_000_000, { reporter.copied(temporary) }) { () throws(StrongroomError) in
                    try sourceConnection.execute(sql: "SELECT sqlcipher_export('strongroom_target')")
                }
                reporter.copied(temporary)
                try sourceConnection.execute(sql: "PRAGMA strongroom_target.user_version = \(userVersion)")
                try sourceConnection.execute(sql: "PRAGMA strongroom_target.application_id = \(applicationID)")
                expected = try sourceDigests == nil ? sourceConnection.tableDigests() : []
                try sourceConnection.execute(sql: "COMMIT")
            } catch {
                sourceConnection.rollbackQuietly()
                try? sourceConnection.detach("strongroom_target")
                throw error
            }
            try sourceConnection.detach("strongroom_target")

            // The copy is read back by two connections at once, each table
            // split by rowid; the source's digests arrive meanwhile.
            let copyDigests = try ParallelDigest.digests(ofDatabaseAt: temporary, configuration: destinationConfiguration, workers: 2) { rows in
                reporter.verified(rows)
            }
            let sourceTables = try sourceDigests?.wait() ?? expected
            // Opened writable once, so the destination's journal mode applies.
            let copy = try Connection(path: temporary, configuration: destinationConfiguration)
            defer { copy.close() }
            let copiedVersion = try copy.fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
            let copiedApplicationID = try copy.fetchOne(Int.self, sql: "PRAGMA application_id") ?? 0
            guard copyDigests == sourceTables, copiedVersion == userVersion, copiedApplicationID == applicationID else {
                let differing = Set(sourceTables).symmetricDifference(copyDigests).map(\.name).sorted()
                throw StrongroomError(.verificationFailed, "The copy of \(source) differs from the source (tables: \(differing.joined(separator: ", ")); user_version \(copiedVersion) vs \(userVersion)); it was removed.", path: destination)
            }
            if let finishing {
                // The last change, on the verified copy before it has its
                // name; VACUUM then rewrites every page, so none of the copy's
                // freed pages keeps what the change replaced. Nothing needs
                // to reach the disk before the copy is whole (a crash leaves
                // it unnamed, to be removed): SQLite syncs nothing meanwhile,
                // and the file is synced once, below, before it is named.
                try copy.execute(sql: "PRAGMA synchronous = OFF")
                try finishing(copy)
                try copy.execute(sql: "VACUUM")
                // The sync below reaches only the file: every frame must be
                // in it (a connection `finishing` left reading would keep
                // the VACUUM's pages in the -wal, and the file named would
                // hold what the change replaced).
                let checkpoint = try copy.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)").first
                guard let checkpoint, case .integer(0) = checkpoint[0], checkpoint[1] == checkpoint[2] else {
                    throw StrongroomError(.busy, "Another connection still reads the new copy of \(source) (one that finishing opened and left open), so its last changes could not be moved into the file; it was removed. Close every connection finishing opens before it returns.", path: destination)
                }
            }
            copy.close()
            if finishing != nil, let failure = FileSystem.sync(temporary) {
                throw StrongroomError(.ioError, "Cannot sync the new copy of \(source): \(String(cString: strerror(failure))); it was removed.", path: destination)
            }
            try OutputFile.publish(temporary, at: destination)
            sourceConnection.logger.info("converted database", metadata: ["source": "\(source)", "destination": "\(destination)", "tables": "\(sourceTables.count)"])
            return Report(tables: sourceTables, userVersion: userVersion, applicationID: applicationID)
        } catch {
            // No thread is left reading the source once this returns.
            _ = try? sourceDigests?.wait()
            OutputFile.removeDatabaseFiles(temporary)
            throw error
        }
    }

    /// Begins a read transaction on `connection` and, when it can prove they
    /// see the same snapshot, on a second connection to the same file, which
    /// it returns (nil otherwise). The proof: `PRAGMA data_version` changes
    /// when another connection commits; read on `connection` before the
    /// second one starts reading and again once `connection` reads, equal
    /// values mean no commit came in between.
    private static func beginSharedSnapshot(_ connection: Connection, path: String, secondConfiguration: Configuration) throws(StrongroomError) -> Connection? {
        let before = try connection.fetchOne(Int.self, sql: "PRAGMA data_version")
        var second = try? Connection(path: path, configuration: secondConfiguration)
        if let started = second {
            do throws(StrongroomError) {
                try started.execute(sql: "BEGIN")
                _ = try started.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master")
            } catch {
                started.rollbackQuietly()
                started.close()
                second = nil
            }
        }
        try connection.execute(sql: "BEGIN")
        _ = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master")
        let after = try connection.fetchOne(Int.self, sql: "PRAGMA data_version")
        guard let second, before == after else {
            second?.rollbackQuietly()
            second?.close()
            return nil
        }
        return second
    }

    /// Turns SQLite's callbacks into ``Progress`` reports, one at a time.
    private final class ProgressReporter: @unchecked Sendable {
        // Sendable: `rows` is read and written under `lock`; the rest is immutable.
        private let lock = NSLock()
        private let report: (@Sendable (Progress) -> Void)?
        private let sourceBytes: Int
        private var rows = 0

        init(_ report: (@Sendable (Progress) -> Void)?, sourceBytes: Int) {
            self.report = report
            self.sourceBytes = sourceBytes
        }

        func copied(_ temporary: String) {
            guard let report else { return }
            var status = stat()
            guard stat(temporary, &status) == 0 else { return }
            lock.lock()
            defer { lock.unlock() }
            report(Progress(phase: .copying, completed: Int(status.st_size), total: sourceBytes))
        }

        func verified(_ more: Int) {
            guard let report else { return }
            lock.lock()
            defer { lock.unlock() }
            rows += more
            report(Progress(phase: .verifying, completed: rows, total: nil))
        }
    }
}

extension PlaintextConversion.Report: CustomStringConvertible {
    /// "11 tables, 15607 rows verified; user_version 0, application_id 0".
    public var description: String {
        "\(tables.count) tables, \(tables.reduce(0) { $0 + $1.rowCount }) rows verified; user_version \(userVersion), application_id \(applicationID)"
    }
}

extension PlaintextConversion.Progress: CustomStringConvertible {
    /// "copying: 1048576 of 4194304 bytes", "verifying: 12000 rows".
    public var description: String {
        switch phase {
        case .copying: "copying: \(completed)\(total.map { " of \($0)" } ?? "") bytes"
        case .verifying: "verifying: \(completed) rows"
        }
    }
}
