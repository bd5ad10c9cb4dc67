internal import CSQLCipher
import Foundation
import Logging
import StrongroomCrypto

/// One SQLCipher connection to a database file (or to memory).
///
/// A connection is opened, keyed and **validated** in its initializer: the key
/// is applied before anything touches the file, `PRAGMA cipher_version` must
/// answer (so a build that linked plain SQLite is refused instead of writing
/// plaintext), and the first page is read, so a wrong key fails here and not at
/// the first query.
///
/// ```swift
/// let db = try Connection(path: "app.db", configuration: Configuration(key: key))
/// try db.execute(sql: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, body TEXT)")
/// try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["hello"])
/// let count = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note")
/// ```
///
/// A connection is not `Sendable`: use it from one task or thread at a time,
/// or share it through a ``DatabaseQueue`` or ``DatabasePool``.
public final class Connection {
    let handle: OpaquePointer
    /// The file path, or `":memory:"`.
    public let path: String
    /// The SQLCipher version answering on this connection (`PRAGMA cipher_version`),
    /// e.g. `"3.4.1"`.
    public private(set) var cipherVersion: String
    /// True when the connection was opened with a key.
    public let isEncrypted: Bool
    /// True when the connection was opened read-only.
    public let isReadOnly: Bool
    /// What it was opened with, the key it used included, so that a reopen
    /// (rekey's confirmation, or its fallback to the old key) uses the same
    /// key and cipher settings.
    let configuration: Configuration
    let logger: Logger
    private var statementCache: [ExactText: Statement] = [:]
    private let statementCacheCapacity: Int
    /// Shared with the connection's statements, which check it on every
    /// step without retaining the connection.
    let state = ConnectionState()
    /// True once the handle is closed.
    var isClosed: Bool { state.isClosed }
    /// Why the connection was closed, when the library closed it.
    private var closedReason: String?
    var insertStatementCache: [InsertCacheKey: Statement] = [:]
    /// The encoding container of the last `Encodable` record inserted
    /// through `insertStatementCache`, for the next one. It holds that
    /// statement, and is forgotten whenever the caches are cleared (a
    /// close or rekey finds it released); a record whose `encode(to:)`
    /// clears them itself leaves the statement it inserts with here until
    /// the next clear, bound to nothing.
    let keptInsertContainer = KeptEncodingContainer()
    /// INSERT statements by table and column list: of transformed rows, and
    /// of `Encodable` records that encode other keys than the first record
    /// of their type.
    var insertStatementsByColumns: [[ExactText]: Statement] = [:]
    /// UPDATE statements by table, row key and column list (``update(_:)``).
    var updateStatementsByColumns: [[ExactText]: Statement] = [:]
    /// The primary keys ``update(_:in:rowKey:)`` read, by table, with the
    /// schema version they were read at.
    var primaryKeysByTable: [ExactText: (schemaVersion: Int64, columns: [String])] = [:]
    /// INSERT statements of ``TableRecord`` types, by type.
    var recordInsertCache: [ObjectIdentifier: Statement] = [:]
    /// The entry of `recordInsertCache` used last while no transform is
    /// installed, looked up without hashing or exclusivity checks on every
    /// insert of a loop.
    @exclusivity(unchecked) var lastRecordInsert: (type: ObjectIdentifier, statement: Statement)?
    /// The entry of `insertStatementCache` used last while no transform is
    /// installed (`insert(_:into:)`), looked up as `lastRecordInsert` is.
    @exclusivity(unchecked) var lastEncodableInsert: (type: ObjectIdentifier, table: String, statement: Statement)?
    /// The entry of `insertStatementsByColumns` used last (the inserts of
    /// transformed rows), compared before the cache's key is built.
    @exclusivity(unchecked) var lastInsertStatement: LastInsertStatement?
    var savepointDepth = 0
    /// `BEGIN DEFERRED`, `COMMIT`, `SAVEPOINT` and `RELEASE` statements, by
    /// text (see `executeTransactionControl`): at most a few.
    var transactionStatements: [String: Statement] = [:]
    /// The statement trace handler, if any (see `traceStatements`).
    var traceBox: TraceBox?
    /// A statement prepared for ``clearInterrupt()`` (see there), or nil.
    var interruptClearing: OpaquePointer?
    /// The commit and rollback hooks, if any (see `guardTransaction`).
    var transactionHooks: TransactionHooks?
    /// A pool's writer: what its `sqlite3_wal_hook` calls, kept alive for as
    /// long as the handle may call it.
    var walHookTarget: WALCheckpointer?
    /// The authorizer's policy, once one is installed (see `authorizer`).
    var authorizerPolicy: AuthorizerPolicy?
    /// The schema scan's query, per schema, and the schema texts it found
    /// clean (see `refuseSchemaCallingDirectOnlyFunctions`).
    var schemaScanStatements: [String: Statement] = [:]
    var schemaTextsWithoutDirectOnlyCalls: Set<ExactText> = []
    /// The `-wal` file this connection wrote last, to tell when it is
    /// deleted or replaced under it (see `refuseWritesToMovedFiles`).
    var walIdentity: FileSystem.Identity?
    /// The `-wal` path made absolute at open (a later `chdir` must not
    /// change it), nil for an in-memory database.
    var absoluteWALPath: String?

    /// The layer that stores some columns' values in another form (sealed
    /// columns), if any. See ``ColumnTransform``. Set it before preparing
    /// the statements that should see it, usually in
    /// ``Configuration/prepareConnection(_:)``.
    public var columnTransform: (any ColumnTransform)? {
        didSet { clearStatementCaches() }
    }

    /// Opens (or creates) the database at `path`.
    ///
    /// - Throws: ``StrongroomError`` with code ``StrongroomError/Code/wrongKey``,
    ///   ``StrongroomError/Code/keyRequired``, ``StrongroomError/Code/plaintextDatabase``,
    ///   ``StrongroomError/Code/notADatabase``, ``StrongroomError/Code/notFound``,
    ///   ``StrongroomError/Code/permissionDenied``, ``StrongroomError/Code/busy`` or
    ///   ``StrongroomError/Code/sqlcipherUnavailable``.
    public convenience init(path: String, configuration: Configuration) throws(StrongroomError) {
        try self.init(path: path, configuration: configuration, keyOverride: nil)
    }

    /// Opens a private in-memory database.
    public static func inMemory(configuration: Configuration = .plaintext) throws(StrongroomError) -> Connection {
        try Connection(path: ":memory:", configuration: configuration, keyOverride: nil)
    }

    /// `keyOverride` lets a pool open readers with a key it derived once.
    init(path: String, configuration: Configuration, keyOverride: DatabaseKey?) throws(StrongroomError) {
        let isMemory = path == ":memory:" || path.isEmpty
        let key = keyOverride ?? configuration.key
        try Self.checkPlaintextHeader(configuration, hasKey: key != nil, path: path)
        // A new (missing or empty) file: one creator at a time opens it and
        // writes its first page, with its salt; others wait, then open what
        // it made. Without this, two creators each pick a salt and one of
        // them later reads the other's page 1 as a wrong key.
        var size = isMemory ? 0 : try FileHeader.size(of: path)
        if size == nil && (configuration.readOnly || !configuration.createIfMissing) {
            throw StrongroomError(.notFound, "No database at \(path); check the path.", path: path)
        }
        let writable = !isMemory && !configuration.readOnly && !configuration.readOnlyMainAllowingAttach
        let creationLockPath = writable && (size ?? 0) == 0 ? Self.creationLockPath(path) : nil
        let creation = creationLockPath.flatMap { try? FileLock(path: $0, timeout: max(configuration.busyTimeout, .seconds(1))) }
        if creation != nil {
            // Another creator may have finished while this one waited.
            size = try FileHeader.size(of: path)
            // Then no creator takes the lock again, and this one may have
            // made the file anew, after the creator removed it (it read the
            // size before page 1 was written): it goes now.
            if (size ?? 0) > 0, let creationLockPath { unlink(creationLockPath) }
        }
        // SQLite creates a file 0644 (less the umask), and its -wal, -shm and
        // journal with the same mode: a new file is made first, with the mode asked for.
        if writable && size == nil && configuration.createIfMissing && !configuration.readOnly, let mode = configuration.newFileMode {
            Self.createEmptyFile(path, mode: mode_t(mode))
        }

        var flags = SQLITE_OPEN_NOMUTEX
        var filename = path
        if configuration.readOnlyMainAllowingAttach {
            // mode=ro applies to this file only; ATTACHed files may be created.
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI
            filename = "file:" + Self.uriEscaped(path) + "?mode=ro"
        } else if configuration.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if configuration.createIfMissing { flags |= SQLITE_OPEN_CREATE }
        }
        _ = Self.librarySetUp
        var db: OpaquePointer?
        // sqlite3_open_v2 may return a handle even on failure; it must be closed.
        let status = sqlite3_open_v2(filename, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            if status & 0xFF == SQLITE_IOERR {
                throw StrongroomError(.ioError, "Cannot open \(path): \(message) (the operating system failed a read or write). Check the disk and the file system; the file was not changed.", path: path, sqliteCode: status)
            }
            throw StrongroomError(.cannotCreate, "Cannot open \(path): \(message). Check that its directory exists and is writable.", path: path, sqliteCode: status)
        }
        self.handle = db
        self.path = path
        self.absoluteWALPath = path == ":memory:" || path.isEmpty || path.hasPrefix("file:") ? nil : FileSystem.absolute(path).map { $0 + "-wal" }
        self.isEncrypted = key != nil
        self.isReadOnly = configuration.readOnly || configuration.readOnlyMainAllowingAttach
        var opened = configuration
        if let key { opened.encryption = .encrypted(key) }
        self.configuration = opened
        self.logger = configuration.logger
        self.statementCacheCapacity = max(configuration.statementCacheCapacity, 1)

        // From here on, `deinit` closes the handle if validation throws.
        self.cipherVersion = ""
        let headerKind = FileHeader.kind(size: size, header: FileHeader.leadingBytes(of: db, size: size))
        try Self.checkBeforeReading(path: path, header: headerKind, hasKey: key != nil, configuration: configuration)
        // Extended codes tell UNIQUE from FOREIGN KEY violations.
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Self.milliseconds(configuration.busyTimeout))

        if let key {
            // The key goes in as bytes, before any statement touches the file.
            // SQLCipher documents that sqlite3_key_v2 always returns SQLITE_OK;
            // a wrong key shows only at the first read, done below.
            let keyBytes = key.sqlcipherKeyBytes()
            let rc = keyBytes.withUnsafeBytes { bytes in
                sqlite3_key_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
            }
            if rc != SQLITE_OK {
                throw StrongroomError(.sqlcipherUnavailable, "SQLCipher refused the key for \(path) (code \(rc)).", path: path, sqliteCode: rc)
            }
        }
        try validate(configuration: configuration)
        try applySettings(configuration, isMemory: isMemory)
        for prepare in configuration.connectionPreparations {
            try prepare(self)
        }
        if creation != nil && (size ?? 0) == 0 {
            try writeFirstPage()
            // Every later opener finds page 1 and takes no lock; one waiting
            // now re-reads the size under the lock. The lock file can go.
            if let creationLockPath { unlink(creationLockPath) }
        }
        withExtendedLifetime(creation) {}
        logger.debug("opened database", metadata: [
            "path": "\(path)", "encrypted": "\(isEncrypted)", "cipher_version": "\(cipherVersion)",
        ])
    }

    deinit {
        closeHandle()
    }

    /// Process-wide SQLite settings, applied once before the first connection.
    private static let librarySetUp: Void = {
        _ = strongroom_sqlite_disable_memstatus()
        SQLCipherLog.silence()
    }()

    /// `path` escaped for an SQLite URI filename: every byte outside the
    /// unreserved set becomes `%XX`.
    private static func uriEscaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += (hex.count == 1 ? "%0" : "%") + hex
            }
        }
        return out
    }

    /// A plaintext header needs a key and SQLCipher 4: refused before the
    /// file is made or read (SQLCipher 3 would ignore its pragmas and write
    /// the salt where the header was asked for).
    private static func checkPlaintextHeader(_ configuration: Configuration, hasKey: Bool, path: String) throws(StrongroomError) {
        guard configuration.plaintextHeader != nil else { return }
        guard hasKey else {
            throw StrongroomError(.misuse, "A plaintext header was asked for \(path) without a key: it applies to encrypted databases only; give the key, or leave Configuration.plaintextHeader unset.", path: path)
        }
        if SQLCipherLibrary.nativeFormat == .sqlcipher3 {
            throw StrongroomError(.sqlcipherUnavailable, "SQLCipher \(SQLCipherLibrary.version) has no plaintext header (it came with SQLCipher 4.0); open \(path) with SQLCipher 4.", path: path)
        }
    }

    /// Refuses the combinations that can be told from the file's first bytes,
    /// before SQLite reads a page.
    private static func checkBeforeReading(path: String, header: FileHeader.Kind, hasKey: Bool, configuration: Configuration) throws(StrongroomError) {
        switch header {
        case .missing:
            break
        case .empty:
            if configuration.readOnly {
                throw StrongroomError(.notADatabase, "\(path) is an empty file, not a database.", path: path)
            }
        case .plaintext:
            if hasKey {
                throw StrongroomError(.plaintextDatabase, "\(path) is a plaintext SQLite database, not an encrypted one; open it without a key, or encrypt it into a new file with `strongroom import`.", path: path)
            }
        case .plaintextHeader:
            if !hasKey {
                throw StrongroomError(.keyRequired, "\(path) is a SQLCipher database with a plaintext header (its first bytes are SQLite's header, the rest is encrypted); open it with its key and its plaintext header settings (Configuration.plaintextHeader).", path: path)
            }
            if configuration.plaintextHeader == nil {
                throw StrongroomError(.wrongKey, "\(path) is a SQLCipher database with a plaintext header, so its salt is not in the file: open it with Configuration.plaintextHeader, giving the header size and the salt kept with its key (PRAGMA cipher_plaintext_header_size and cipher_salt in other tools).", path: path)
            }
        case .opaque(let size):
            if !hasKey {
                throw StrongroomError(.keyRequired, "\(path) is encrypted or is not a database; open it with its key.", path: path)
            }
            // Every SQLCipher page size is a multiple of 512 bytes, and so is
            // every complete database file.
            if size % 512 != 0 {
                throw StrongroomError(.notADatabase, "\(path) is not a database, or is truncated ( \(size) bytes is not a whole number of pages); restore it from a backup.", path: path)
            }
        }
    }

    private func validate(configuration: Configuration) throws(StrongroomError) {
        // Guard against a build that sends sqlite3_* calls to plain SQLite:
        // only SQLCipher answers this pragma.
        let version: String?
        do {
            version = try fetchOne(String.self, sql: "PRAGMA cipher_version")
        } catch {
            version = nil
        }
        guard let version, !version.isEmpty else {
            throw StrongroomError(.sqlcipherUnavailable, "The SQLite library linked into this program is not SQLCipher (PRAGMA cipher_version gave no answer); nothing would be encrypted. Link libsqlcipher and not libsqlite3.", path: path)
        }
        cipherVersion = version

        if isEncrypted {
            // Cipher settings take effect only after the key and before the first read.
            if let format = configuration.cipherCompatibility {
                guard let native = CipherFormat.native(cipherVersion: version), format.rawValue <= native.rawValue else {
                    throw StrongroomError(.sqlcipherUnavailable, "\(format) files cannot be opened with SQLCipher \(version), the one linked into this program; link SQLCipher \(format.rawValue) or later.", path: path)
                }
                if format != native {
                    try execute(sql: "PRAGMA cipher_compatibility = \(format.rawValue)")
                }
            }
            // SQLCipher 3 has SHA-1 only (and ignores these pragmas): another is refused, not silently dropped.
            let native = CipherFormat.native(cipherVersion: version)
            for (pragma, value, sqlcipher3Has, name) in [
                ("cipher_hmac_algorithm", configuration.hmacAlgorithm?.rawValue, HMACAlgorithm.sha1.rawValue, "HMAC-SHA1"),
                ("cipher_kdf_algorithm", configuration.kdfAlgorithm?.rawValue, KDFAlgorithm.pbkdf2SHA1.rawValue, "PBKDF2-HMAC-SHA1"),
            ] {
                guard let value else { continue }
                if native != .sqlcipher3 {
                    try execute(sql: "PRAGMA \(pragma) = \(value)")
                } else if value != sqlcipher3Has {
                    throw StrongroomError(.sqlcipherUnavailable, "SQLCipher \(version) has \(name) only, not \(value); open this file with SQLCipher 4.", path: path)
                }
            }
            if let pageSize = configuration.cipherPageSize {
                try execute(sql: "PRAGMA cipher_page_size = \(pageSize)")
            }
            if let iterations = configuration.kdfIterations {
                try execute(sql: "PRAGMA kdf_iter = \(iterations)")
            }
            if let hmac = configuration.usesHMAC {
                try execute(sql: "PRAGMA cipher_use_hmac = \(hmac ? "ON" : "OFF")")
            }
            if let header = configuration.plaintextHeader {
                // Checked before the file was opened (checkPlaintextHeader).
                try execute(sql: "PRAGMA cipher_plaintext_header_size = \(header.size)")
                try execute(sql: "PRAGMA cipher_salt = \(header.saltLiteral)")
            }
        }

        // Read page 1 now, so that a wrong key fails at open.
        do {
            _ = try fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master")
        } catch let error where error.code == .notADatabase {
            if isEncrypted {
                if let legacy = try legacyFormatOpening(configuration: configuration) {
                    throw StrongroomError(.legacyCipherFormat, "\(path) was written by \(legacy) (its key opens it with \(legacy)'s settings), and this program links SQLCipher \(version): upgrade it once with `strongroom upgrade` (DatabaseUpgrade), or open it in compatibility mode (`--cipher-compatibility \(legacy.rawValue)`, Configuration.cipherCompatibility).", path: path, sqliteCode: error.sqliteCode)
                }
                throw StrongroomError(.wrongKey, "The key does not open \(path): the key is wrong, or the file is not a SQLCipher database, or it was written with other cipher settings (page size, KDF), or its first page is damaged (SQLCipher checks the key there and cannot tell these apart; check the key first).", path: path, sqliteCode: error.sqliteCode)
            }
            throw StrongroomError(.keyRequired, "\(path) is encrypted or is not a database; open it with its key.", path: path, sqliteCode: error.sqliteCode)
        } catch let error where error.sqliteCode == SQLITE_ERROR && isEncrypted && configuration.plaintextHeader != nil {
            // With a plaintext header SQLite accepts the header it reads, and
            // a page 1 that does not decrypt fails as a bare SQL error.
            throw StrongroomError(.wrongKey, "The key and salt do not open \(path): the key is wrong, or the salt or the plaintext header size is not the file's (both must be the ones it was made with), or its first page is damaged.", path: path, sqliteCode: error.sqliteCode)
        } catch let error where error.code == .corrupt {
            if error.message.hasPrefix("malformed database schema") {
                throw error
            }
            throw StrongroomError(.notADatabase, "\(path) is truncated or corrupt; restore it from a backup.", path: path, sqliteCode: error.sqliteCode)
        } catch let error where error.code == .cannotCreate && access(path, W_OK) != 0 {
            // This user may not write the file, and its -wal cannot be
            // opened: SQLite before 3.22 reads a WAL database only with
            // write access to it.
            throw StrongroomError(.readOnly, "\(path) is in WAL mode and this user may not write to it, and SQLite \(String(cString: sqlite3_libversion())) reads a WAL database only with write access (to the file, its -wal and -shm). Give this user write access, or have its owner switch it to rollback-journal mode (PRAGMA journal_mode = DELETE) before sharing it read-only.", path: path, sqliteCode: error.sqliteCode)
        }
    }

    /// The older format whose settings open this file with the same key,
    /// tried when the linked SQLCipher's own settings did not: a SQLCipher 3
    /// file on SQLCipher 4. Only when no format or cipher setting was chosen
    /// (those say what the file is). One more open of the file (which writes
    /// nothing: the journal mode is kept), and one key derivation under the old, cheaper KDF (PBKDF2-HMAC-SHA1,
    /// 64,000 iterations for a passphrase; none for a raw key).
    private func legacyFormatOpening(configuration: Configuration) throws(StrongroomError) -> CipherFormat? {
        guard path != ":memory:", !path.isEmpty,
              configuration.cipherCompatibility == nil, configuration.cipherPageSize == nil,
              configuration.kdfIterations == nil, configuration.usesHMAC == nil, configuration.plaintextHeader == nil,
              configuration.hmacAlgorithm == nil, configuration.kdfAlgorithm == nil,
              let native = CipherFormat.native(cipherVersion: cipherVersion), native != .sqlcipher3,
              let key = self.configuration.key else { return nil }
        if case .rawWithSalt = key.material { return nil }
        var probe = Configuration(key: key)
        probe.cipherCompatibility = .sqlcipher3
        probe.readOnly = configuration.readOnly || configuration.readOnlyMainAllowingAttach
        probe.createIfMissing = false
        probe.keepsJournalMode = true
        probe.cacheSizeKiB = 64
        probe.logger = logger
        // Any other failure than the key's (busy, an I/O error, a schema
        // SQLite refuses) is what the caller reports: it is not "wrong key".
        do {
            _ = try Connection(path: path, configuration: probe, keyOverride: nil)
            return .sqlcipher3
        } catch where [.wrongKey, .keyRequired, .notADatabase].contains(error.code) {
            return nil
        }
    }

    /// The lock creators of one file take in turn: `<file>-strongroom-create.lock`
    /// beside the file a path leads to (through symlinks), so two names of
    /// one file share it. If it cannot be had (no directory: opening fails
    /// anyway; a creator holding it past the busy timeout), the open goes on.
    private static func creationLockPath(_ path: String) -> String {
        let target = linkTarget(path)
        let directory = FileSystem.directory(of: target)
        return (FileSystem.resolved(directory) ?? directory) + "/" + (target as NSString).lastPathComponent + "-strongroom-create.lock"
    }

    /// The file `path` names, through symbolic links (a dangling one names
    /// the file it would create).
    private static func linkTarget(_ path: String) -> String {
        var target = path
        for _ in 0..<16 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: target) else { break }
            target = destination.hasPrefix("/") ? destination : FileSystem.directory(of: target) + "/" + destination
        }
        return target
    }

    /// Creates `path` (through links) empty with `mode` when nothing is
    /// there; otherwise, or when it cannot, leaves it to SQLite, whose error
    /// names the problem.
    private static func createEmptyFile(_ path: String, mode: mode_t) {
        FileSystem.createEmpty(linkTarget(path), mode: mode)
    }

    /// Writes page 1 of a new database now (its header, and for SQLCipher its
    /// salt), into the main file itself, so the next connection reads it.
    private func writeFirstPage() throws(StrongroomError) {
        try execute(sql: "BEGIN IMMEDIATE")
        do {
            let version = try fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
            try execute(sql: "PRAGMA user_version = \(version)")
            try execute(sql: "COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        // In WAL mode page 1 is in the -wal file: move it into the database.
        _ = try fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
    }

    private func applySettings(_ configuration: Configuration, isMemory: Bool) throws(StrongroomError) {
        // With temp_store = FILE, SQLCipher writes temporary tables and sort
        // spills as plaintext pages. Keep them in memory, always.
        try execute(sql: "PRAGMA temp_store = MEMORY")
        try execute(sql: "PRAGMA cache_size = -\(configuration.cacheSizeKiB)")
        try execute(sql: "PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
        if !isMemory && !isReadOnly {
            let mode: String?
            if configuration.keepsJournalMode {
                mode = try fetchOne(String.self, sql: "PRAGMA journal_mode")
            } else {
                mode = try fetchOne(String.self, sql: "PRAGMA journal_mode = \(configuration.journalMode.rawValue)")
                if mode?.uppercased() != configuration.journalMode.rawValue {
                    logger.warning("journal mode not applied", metadata: ["requested": "\(configuration.journalMode.rawValue)", "actual": "\(mode ?? "none")"])
                }
            }
            // NORMAL is safe against power loss only with WAL; a rollback
            // journal gets FULL.
            var synchronous = configuration.synchronous
            if synchronous == .normal && mode?.uppercased() != "WAL" { synchronous = .full }
            try execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
        }
    }

    /// Closes the connection. Further use throws ``StrongroomError/Code/misuse``.
    /// Called automatically when the connection is released.
    public func close() {
        closeHandle()
    }

    func clearStatementCaches() {
        statementCache.removeAll()
        insertStatementCache.removeAll()
        insertStatementsByColumns.removeAll()
        updateStatementsByColumns.removeAll()
        primaryKeysByTable.removeAll()
        recordInsertCache.removeAll()
        schemaScanStatements.removeAll()
        transactionStatements.removeAll()
        lastRecordInsert = nil
        lastEncodableInsert = nil
        lastInsertStatement = nil
        keptInsertContainer.forget()
    }

    /// Releases the statements this connection caches, and returns how many
    /// prepared statements are still alive (held elsewhere).
    func releaseCachedStatements() -> Int {
        clearStatementCaches()
        if let interruptClearing { sqlite3_finalize(interruptClearing) }
        interruptClearing = nil
        var count = 0
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(handle, current)
        }
        return count
    }

    /// Closes the handle, and makes every later use throw a misuse error
    /// that gives `reason`.
    func close(because reason: String) {
        if !isClosed { closedReason = reason }
        closeHandle()
    }

    private func closeHandle() {
        guard !isClosed else { return }
        state.isClosed = true
        clearStatementCaches()
        if let interruptClearing { sqlite3_finalize(interruptClearing) }
        interruptClearing = nil
        if traceBox != nil { sqlite3_trace_v2(handle, 0, nil, nil) }
        if authorizerPolicy != nil { sqlite3_set_authorizer(handle, nil, nil) }
        if transactionHooks != nil {
            sqlite3_commit_hook(handle, nil, nil)
            sqlite3_rollback_hook(handle, nil, nil)
        }
        // sqlite3_close_v2 defers the close until outstanding statements are
        // finalized, so a statement still held elsewhere cannot crash.
        sqlite3_close_v2(handle)
    }

    func checkOpen(sql: String? = nil) throws(StrongroomError) {
        if isClosed {
            throw StrongroomError(.misuse, "The connection to \(path) is closed\(closedReason.map { ": " + $0 } ?? ".")", path: path, sql: sql)
        }
    }

    /// The salt SQLCipher derives this connection's page key with: the
    /// configured one with a plaintext header (the file does not hold it),
    /// otherwise the first 16 bytes of the file, read through SQLite's own
    /// file handle.
    func cipherSalt() -> [UInt8]? {
        if let header = configuration.plaintextHeader { return header.salt }
        guard let bytes = FileHeader.firstBytes(of: handle, count: 16), bytes != FileHeader.plaintextMagic,
              bytes.contains(where: { $0 != 0 }) else { return nil }
        return bytes
    }

    /// The error SQLite reports for the last failed call on this connection.
    func lastError(_ resultCode: Int32, sql: String?) -> StrongroomError {
        if let refusal = state.refusal {
            // The authorizer, or a direct-only function, said why.
            state.refusal = nil
            return StrongroomError(refusal.code, refusal.message, path: path, sql: sql, sqliteCode: resultCode)
        }
        let message = String(cString: sqlite3_errmsg(handle))
        if resultCode & 0xFF == SQLITE_ERROR, let refusal = directOnlyRefusal(message, sql: sql, resultCode: resultCode) {
            return refusal
        }
        // SQLCipher 3 reports a page that fails to decrypt or its HMAC check
        // on some reads as a bare SQLITE_ERROR with the generic text, as some
        // SQL errors are (FTS commands, functions that give no text): say both.
        if isEncrypted, resultCode == SQLITE_ERROR, message == String(cString: sqlite3_errstr(SQLITE_ERROR)) {
            return StrongroomError(.sqlite, "\(message) (SQLCipher reports a page that fails to decrypt or fails its HMAC check this way too: if this SQL is valid, \(path) may be damaged; check it with PRAGMA integrity_check)", path: path, sql: sql, sqliteCode: resultCode)
        }
        return StrongroomError.sqlite(resultCode, message: message, path: path, sql: sql)
    }

    /// SQLite ≥ 3.30 refuses a direct-only function (``DatabaseFunction/isDirectOnly``)
    /// called from the schema itself, with "unsafe use of name()": the
    /// refusal the schema scan gives, naming the object that calls it.
    private func directOnlyRefusal(_ message: String, sql: String?, resultCode: Int32) -> StrongroomError? {
        let prefix = "unsafe use of "
        guard message.hasPrefix(prefix), let policy = authorizerPolicy else { return nil }
        let name = AuthorizerPolicy.asciiLowercased(String(message.dropFirst(prefix.count).prefix { $0 != "(" }))
        guard policy.directOnlyFunctions[name] != nil else { return nil }
        do {
            try refuseSchemaCallingDirectOnlyFunctions()
        } catch {
            return StrongroomError(error.code, error.message, path: path, sql: sql, sqliteCode: resultCode)
        }
        return StrongroomError(.untrustedSchema, "SQLite refused a call to \(name)() from SQL stored in the database's schema (a trigger, view, CHECK, DEFAULT, index or generated column): only the application's own statements may call it, and this is SQL the application did not write. Nothing was run; find the object that calls it, remove it, and find out who added it.", path: path, sql: sql, sqliteCode: resultCode)
    }

    // MARK: Statements

    /// Prepares a new statement. Prefer ``cachedStatement(sql:)`` for SQL that runs often.
    public func prepare(sql: String) throws(StrongroomError) -> Statement {
        try checkOpen(sql: sql)
        return try Statement(connection: self, sql: sql)
    }

    /// A prepared statement from this connection's cache, prepared on first use.
    public func cachedStatement(sql: String) throws(StrongroomError) -> Statement {
        if let statement = statementCache[ExactText(sql)] {
            return statement
        }
        let statement = try prepare(sql: sql)
        if statementCache.count >= statementCacheCapacity {
            statementCache.removeAll(keepingCapacity: true)
        }
        statementCache[ExactText(sql)] = statement
        return statement
    }

    /// Runs one or more statements separated by semicolons, with no arguments.
    public func execute(sql: String) throws(StrongroomError) {
        try checkOpen(sql: sql)
        var remaining = Substring(sql)
        while true {
            // SQLite's whitespace only: it refuses any other (a vertical tab, U+00A0).
            let trimmed = Substring(remaining.unicodeScalars.drop(while: { SQLScript.isSQLiteWhitespace($0) || $0 == ";" }))
            if trimmed.isEmpty { return }
            let (statement, tail) = try Statement.prepareFirst(connection: self, sql: String(trimmed))
            if let statement {
                try statement.execute()
            }
            remaining = tail
            if tail.isEmpty { return }
        }
    }

    /// Runs one statement with arguments.
    ///
    /// ```swift
    /// try db.execute(sql: "UPDATE note SET body = :body WHERE id = :id",
    ///                arguments: ["body": "new text", "id": 1])
    /// ```
    public func execute(sql: String, arguments: StatementArguments) throws(StrongroomError) {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int { isClosed ? 0 : Int(sqlite3_changes(handle)) }

    /// The rowid of the last inserted row.
    public var lastInsertedRowID: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(handle) }

    /// True while a transaction is open on this connection.
    public var isInsideTransaction: Bool { !isClosed && sqlite3_get_autocommit(handle) == 0 }
}

extension Connection {
    /// A key for the cache of generated INSERT statements.
    struct InsertCacheKey: Hashable {
        let type: ObjectIdentifier
        let table: ExactText
    }
}

/// An INSERT statement with the table and columns it was built for,
/// matched byte for byte (as ``ExactText`` compares).
struct LastInsertStatement {
    let table: ExactText
    let columns: [ExactText]
    let statement: Statement

    init(table: String, columns: [String], statement: Statement) {
        self.table = ExactText(table)
        self.columns = columns.map(ExactText.init)
        self.statement = statement
    }

    func matches(table: String, columns: [String]) -> Bool {
        guard columns.count == self.columns.count, self.table == ExactText(table) else { return false }
        for (name, own) in zip(columns, self.columns) where own != ExactText(name) { return false }
        return true
    }
}

/// A string compared and hashed by its UTF-8 bytes, as SQLite compares SQL
/// text and names. Swift's `==` on strings takes canonically equivalent
/// texts for one ("é" and "e" + U+0301): as cache keys they would hand one
/// table's statement to a query on the other.
package struct ExactText: Hashable, Sendable {
    package let text: String

    package init(_ text: String) { self.text = text }

    package static func == (a: ExactText, b: ExactText) -> Bool {
        // Identical representations hold identical bytes (the same small
        // string inline, or the same storage): the common case, a statement
        // passing its names again, needs no byte comparison.
        let same = withUnsafeBytes(of: a.text) { p in
            withUnsafeBytes(of: b.text) { q in
                p.count == 16 && q.count == 16
                    && p.loadUnaligned(as: UInt64.self) == q.loadUnaligned(as: UInt64.self)
                    && p.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == q.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
        if same { return true }
        var x = a.text, y = b.text
        return x.withUTF8 { p in
            y.withUTF8 { q in p.count == q.count && (p.isEmpty || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0) }
        }
    }

    package func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
