public import CoreMetrics
public import Tracing
public import Logging

/// How a ``Connection`` (or every connection of a ``DatabaseQueue`` or
/// ``DatabasePool``) is opened.
///
/// The defaults are chosen for encrypted databases; each is documented with its
/// reason. The measured effects are in the package README.
///
/// ```swift
/// var config = Configuration(key: try DatabaseKey.load(keyFile: "Keys/app.key"))
/// config.logger = logger
/// let queue = try DatabaseQueue(path: "app.db", configuration: config)
/// ```
public struct Configuration: Sendable {
    /// Whether the database is encrypted, and with which key.
    public enum Encryption: Sendable {
        /// Encrypted with SQLCipher under this key.
        case encrypted(DatabaseKey)
        /// Deliberately plaintext. Opening an encrypted file this way fails with
        /// ``StrongroomError/Code/keyRequired``.
        case plaintext
    }

    /// The journal mode (`PRAGMA journal_mode`).
    public enum JournalMode: String, Sendable {
        /// Write-ahead log: readers do not block the writer. The default for files.
        case wal = "WAL"
        /// Rollback journal deleted after each transaction.
        case delete = "DELETE"
        /// Rollback journal truncated after each transaction.
        case truncate = "TRUNCATE"
        /// Rollback journal kept, its header zeroed, after each transaction.
        case persist = "PERSIST"
    }

    /// `PRAGMA synchronous`.
    public enum Synchronous: String, Sendable {
        /// `OFF` (no fsync), `NORMAL` (fsync at checkpoints in WAL mode) or `FULL` (fsync at every commit).
        case off = "OFF", normal = "NORMAL", full = "FULL"
    }

    /// Encrypted with a key, or deliberately plaintext. There is no default.
    public var encryption: Encryption

    /// Open read-only. Default `false`.
    public var readOnly = false

    /// Create the file when it does not exist. Default `true`; commands that
    /// only read a database set it to `false`.
    public var createIfMissing = true

    /// The permission bits of a database file this configuration creates
    /// (SQLite gives its `-wal`, `-shm` and `-journal` the database file's
    /// mode). Default `0o600`: the owner alone reads and writes it, as a
    /// key file. Set `0o640` (say) to share with a group, or `nil` for
    /// SQLite's own default (`0o644` less the umask). An existing file keeps
    /// its mode.
    public var newFileMode: Int? = 0o600

    /// Default ``JournalMode/wal``: readers see committed snapshots while one
    /// writer works, and each commit appends encrypted pages to the `-wal` file
    /// instead of rewriting the journal. Ignored for read-only and in-memory
    /// connections.
    public var journalMode: JournalMode = .wal

    /// Leave the file's journal mode as it is instead of applying
    /// ``journalMode`` (which persists in the file for WAL). Default `false`;
    /// tools that open databases they do not own (the `strongroom` command)
    /// set it, so a DELETE-journal database stays one.
    public var keepsJournalMode = false

    /// Default ``Synchronous/normal``: in WAL mode a commit survives an
    /// application crash and loses at most the last transactions on power loss,
    /// without an fsync per commit. With a rollback journal (DELETE, TRUNCATE,
    /// PERSIST), where NORMAL could corrupt the file on power loss, NORMAL
    /// means FULL.
    public var synchronous: Synchronous = .normal

    /// Page cache per connection, in KiB (`PRAGMA cache_size = -N`).
    ///
    /// Default 65,536 (64 MiB): every page read from disk must be decrypted and
    /// its HMAC checked, so a page kept in cache saves real work. SQLite's own
    /// default (2 MiB) costs encrypted scans and inserts dearly on large tables.
    public var cacheSizeKiB = 65_536

    /// SQLCipher page size (`PRAGMA cipher_page_size`), applied after the key.
    ///
    /// Default `nil`: the linked SQLCipher's default (1024 on 3.x, 4096 on 4.x),
    /// so the file opens in any SQLCipher tool with the key alone. Set 4096 on
    /// SQLCipher 3 for faster bulk work; then every tool that opens the file must
    /// also be given `PRAGMA cipher_page_size = 4096` after the key.
    public var cipherPageSize: Int?

    /// PBKDF2 iterations for a passphrase (`PRAGMA kdf_iter`), applied after
    /// the key. Default `nil`: the linked SQLCipher's default (64,000 on 3.x,
    /// 256,000 on 4.x). Set it to open a file made with another count.
    public var kdfIterations: Int?

    /// Whether pages carry an HMAC (`PRAGMA cipher_use_hmac`), applied after
    /// the key. Default `nil`: SQLCipher's default (on). Set `false` only to
    /// open a file made without HMAC: without it, page tampering goes unnoticed.
    public var usesHMAC: Bool?

    /// Open a file written with an older SQLCipher's default settings
    /// (`PRAGMA cipher_compatibility`, applied after the key).
    ///
    /// Default `nil`: the linked SQLCipher's own format. On SQLCipher 4, a
    /// file written by SQLCipher 3 then fails to open with
    /// ``StrongroomError/Code/legacyCipherFormat``; set ``CipherFormat/sqlcipher3``
    /// to open it as it is (every connection, and every tool given
    /// `PRAGMA cipher_compatibility = 3`), until it is upgraded once with
    /// ``DatabaseUpgrade``. A format newer than the linked SQLCipher's
    /// (``CipherFormat/sqlcipher4`` on SQLCipher 3) cannot be opened and fails
    /// with ``StrongroomError/Code/sqlcipherUnavailable``. ``cipherPageSize``,
    /// ``kdfIterations`` and ``usesHMAC`` still apply on top.
    public var cipherCompatibility: CipherFormat?

    /// The page HMAC (`PRAGMA cipher_hmac_algorithm`), applied after the key.
    /// Default `nil`: the format's own (SHA-512 on SQLCipher 4, SHA-1 on 3).
    /// Set it to open a file made with another; every tool that opens the
    /// file must be given the same pragma. SQLCipher 3 has HMAC-SHA1 only: any
    /// other fails there with ``StrongroomError/Code/sqlcipherUnavailable``.
    public var hmacAlgorithm: HMACAlgorithm?

    /// The passphrase KDF (`PRAGMA cipher_kdf_algorithm`), applied after the
    /// key. Default `nil`: the format's own (PBKDF2-HMAC-SHA512 on SQLCipher
    /// 4, PBKDF2-HMAC-SHA1 on 3). SQLCipher 3 has PBKDF2-HMAC-SHA1 only: any
    /// other fails there with ``StrongroomError/Code/sqlcipherUnavailable``.
    public var kdfAlgorithm: KDFAlgorithm?

    /// SQLCipher 4's plaintext header (`PRAGMA cipher_plaintext_header_size`
    /// and `cipher_salt`, applied after the key): the file's first bytes stay
    /// SQLite's own header, and the salt is kept with the key instead of in
    /// the file. Default `nil`: the whole file is encrypted, the salt first.
    /// A file made with one opens only when given the same size and salt; see
    /// ``PlaintextHeader``. SQLCipher 3 has none: setting it fails there with
    /// ``StrongroomError/Code/sqlcipherUnavailable``.
    public var plaintextHeader: PlaintextHeader?

    /// Enforce foreign keys (`PRAGMA foreign_keys = ON`). Default `true`.
    public var foreignKeys = true

    /// How long to wait for another connection's lock before failing with
    /// ``StrongroomError/Code/busy``. Default 5 seconds.
    public var busyTimeout: Duration = .seconds(5)

    /// How many prepared statements each connection keeps. Default 64.
    public var statementCacheCapacity = 64

    /// The most readers a ``DatabasePool`` opens at once. Default 4.
    public var maximumReaderCount = 4

    /// The most callers that may wait for a connection of a
    /// ``DatabaseQueue``, or for a reader (or the writer) of a
    /// ``DatabasePool``; one more is refused at once with
    /// ``StrongroomError/Code/connectionUnavailable``, so that a service
    /// answers 503 instead of queueing without limit. Default `nil`:
    /// unbounded.
    ///
    /// ```swift
    /// var configuration = Configuration(key: key)
    /// configuration.maximumWaiters = 256
    /// configuration.maximumWait = .seconds(2)
    /// ```
    public var maximumWaiters: Int?

    /// Group commit: async writes (``DatabaseQueue/asyncWrite(_:)``,
    /// ``DatabasePool/asyncWrite(_:)``) that wait for the connection
    /// together are run together, in one `IMMEDIATE` transaction, each in a
    /// savepoint of its own (or none: ``groupedWriteUndo``). Default `false`.
    ///
    /// Under concurrent writes (a service's requests), most of a small
    /// write's cost is its transaction's: taking the locks, SQLCipher
    /// encrypting the pages it changed, writing them to the `-wal`. Writes
    /// that share a transaction share that cost: a page two of them change
    /// is encrypted and written once. What each caller sees stays the same:
    ///
    /// - Its closure runs alone on the connection, after the writes that
    ///   waited before it, and sees theirs.
    /// - A closure that throws is undone alone (its savepoint is rolled
    ///   back, or with ``GroupedWriteUndo/runningTheOthersAgain`` the
    ///   transaction, and the writes before it run again), and only its
    ///   caller gets the error.
    /// - Each caller gets its result once the transaction has committed,
    ///   never before: a result is a durable write (as durable as
    ///   ``synchronous`` makes it), and a crash before the COMMIT loses
    ///   only writes no caller was told about.
    /// - A write that leaves a deferred foreign key unresolved is rolled
    ///   back and gets ``StrongroomError/Code/foreignKeyConstraint`` (alone,
    ///   its COMMIT would have failed the same way).
    ///
    /// What changes:
    ///
    /// - A statement error after which SQLite rolls back the whole
    ///   transaction (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_NOMEM`, an `OR
    ///   ROLLBACK` conflict clause) fails the writes run before it in the
    ///   same transaction too: nothing of them was committed, and their
    ///   callers get the error (run them again). The writes after it run in
    ///   a transaction of their own, without the failed ones, which their
    ///   callers may run again later. A COMMIT that fails fails every write
    ///   of its transaction.
    /// - A write is granted the connection with its group: the writes before
    ///   it in the group run first, and ``maximumWait`` no longer applies
    ///   to it. Cancelled meanwhile, it gives up at once.
    /// - Cancelling the task of a write whose closure is running does not
    ///   interrupt its SQL (an interrupt would roll back the writes before
    ///   it): the closure runs to its end, then it is undone as a closure
    ///   that throws (see ``groupedWriteUndo``) and the call throws
    ///   `CancellationError`. A write cancelled while it
    ///   waits leaves the queue at once, as without grouping.
    /// - A closure must not end the transaction itself (a `COMMIT`, a
    ///   `ROLLBACK`), as with any ``DatabaseQueue/asyncWrite(_:)``.
    ///
    /// Blocking writes, ``DatabaseQueue/withConnection(_:)`` and
    /// ``DatabasePool/asyncWriteWithoutTransaction(_:)`` are never grouped;
    /// they keep their place in the one queue of callers.
    ///
    /// ```swift
    /// var configuration = Configuration(key: key)
    /// configuration.groupsAsyncWrites = true
    /// let pool = try DatabasePool(path: "app.db", configuration: configuration)
    /// ```
    public var groupsAsyncWrites = false

    /// How a group of async writes (``groupsAsyncWrites``) takes back the
    /// one write of it that fails. Default ``GroupedWriteUndo/savepoints``.
    ///
    /// SQLCipher encrypts every page a savepoint may have to restore, once
    /// per savepoint: on SQLCipher 3's 1 KiB pages, the savepoint each
    /// small write of a group runs in costs about as much as the page
    /// cipher's whole share of the write. With
    /// ``GroupedWriteUndo/runningTheOthersAgain`` no write has one; a write
    /// that fails takes the group's transaction back instead, and the
    /// writes before it run again.
    ///
    /// ```swift
    /// var configuration = Configuration(key: key)
    /// configuration.groupsAsyncWrites = true
    /// // The app's write closures touch nothing but the database.
    /// configuration.groupedWriteUndo = .runningTheOthersAgain
    /// ```
    public var groupedWriteUndo = GroupedWriteUndo.savepoints

    /// How a group of async writes takes back the one write of it that
    /// fails: see ``Configuration/groupedWriteUndo``.
    public enum GroupedWriteUndo: Sendable, Hashable {
        /// Each write runs in a savepoint of its own, which is rolled back
        /// when its closure throws: the other writes of the group are not
        /// touched. Each closure runs once.
        case savepoints
        /// The writes run without savepoints. When a closure throws (or
        /// its task was cancelled meanwhile, or it leaves a deferred foreign
        /// key unresolved), the group's transaction is rolled back, its
        /// caller gets its error, and the writes before it run again, each
        /// in a savepoint, in a new transaction with the writes after it.
        ///
        /// What the callers see is what ``savepoints`` gives them (each
        /// write after those before it, and seeing theirs; a failed write
        /// undone alone; results once committed; a write whose closure has
        /// returned is not taken back by its task's cancellation), with one
        /// difference: the closure of a write that shared its transaction
        /// with a failed one may run twice, and its caller gets the second
        /// run's result. A closure must then have no effect outside the
        /// database (it counts nothing, sends nothing), or one that may
        /// happen twice. Metrics and traces count both runs. A group has at
        /// most one such rollback: after it, its writes run in savepoints,
        /// so no closure runs more than twice.
        ///
        /// A statement after which SQLite itself rolls back the transaction
        /// (`SQLITE_FULL`, `SQLITE_IOERR`, an `OR ROLLBACK` conflict) fails
        /// the writes before it as with ``savepoints``: they are not run
        /// again, and their callers are told to run them again (see
        /// ``Configuration/groupsAsyncWrites``).
        case runningTheOthersAgain
    }

    /// The longest a caller waits for a connection before it is refused
    /// with ``StrongroomError/Code/connectionUnavailable`` (nothing run).
    /// Counts the wait for a connection only, not the time the access then
    /// takes, nor SQLite's ``busyTimeout`` for another process's lock.
    /// Default `nil`: unbounded.
    public var maximumWait: Duration?

    /// How a ``DatabasePool`` keeps its `-wal` from growing without bound
    /// while readers always overlap. Default ``CheckpointPolicy/default``:
    /// the writer truncates the log past 16 MiB.
    public var checkpointPolicy: CheckpointPolicy = .default

    /// Where a queue's or pool's metrics go (swift-metrics): accesses,
    /// time waiting for a connection, time inside the access, refusals by
    /// the bounds, interrupted statements, checkpoints and the WAL's size.
    /// Default `nil`: the factory the app bootstrapped with
    /// `MetricsSystem.bootstrap` (which records nothing until then), read
    /// when the queue or pool opens.
    public var metricsFactory: (any MetricsFactory)?

    /// Where a queue's or pool's spans go (swift-distributed-tracing): one
    /// per access, a child of the task's `ServiceContext`. Default `nil`:
    /// `InstrumentationSystem.tracer`, which records nothing until the app
    /// bootstraps one.
    public var tracer: (any Tracer)?

    /// Adds the text of each statement an access runs to its span, as
    /// written (`?` where arguments go, never their values). Default
    /// `false`: spans name the database and the kind of access only.
    public var tracesStatementText = false

    /// How values read convert to Swift types: ``ValueConversion/strict``
    /// (the default) or ``ValueConversion/lossless``.
    public var valueConversion: ValueConversion = .strict

    /// Where the library logs what it does (never key material, never bound
    /// values). Default: a logger that discards everything.
    public var logger = Logger(label: "strongroom", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Work run on every connection opened with this configuration, after
    /// its key is checked and its settings applied, before anyone uses it:
    /// adding SQL functions, per-connection state. A queue runs it on its
    /// connection, a pool on its writer and on each reader. An error fails
    /// the open.
    ///
    /// ```swift
    /// var config = Configuration(key: key)
    /// config.prepareConnection { db in try db.add(function: reverse) }
    /// ```
    public mutating func prepareConnection(_ body: @escaping @Sendable (Connection) throws(StrongroomError) -> Void) {
        connectionPreparations.append(body)
    }

    /// See ``prepareConnection(_:)``.
    var connectionPreparations: [@Sendable (Connection) throws(StrongroomError) -> Void] = []

    /// A configuration for an encrypted database.
    public init(key: DatabaseKey) {
        self.encryption = .encrypted(key)
    }

    /// A configuration for the given encryption (or deliberate plaintext).
    public init(encryption: Encryption) {
        self.encryption = encryption
    }

    /// A configuration for a deliberately plaintext database.
    public static var plaintext: Configuration { Configuration(encryption: .plaintext) }

    /// Opens the main database read-only through a `mode=ro` URI, so that the
    /// connection can still ATTACH and create other files (import and export).
    var readOnlyMainAllowingAttach = false

    var key: DatabaseKey? {
        if case .encrypted(let key) = encryption { return key }
        return nil
    }
}
