import Strongroom
import StrongroomTestSupport
import Testing

/// Review of 1143784 (issue 38, item 5): BEGIN DEFERRED, COMMIT, SAVEPOINT
/// and RELEASE are prepared once per connection, apart from the statement
/// cache; BEGIN IMMEDIATE and EXCLUSIVE every time.
@Suite("Review: cached transaction statements")
struct CachedTransactionStatementTests {
    let dir = TemporaryDirectory()
    let key = DatabaseKey.generate()
    let archiveKey = DatabaseKey.generate()

    func makeArchive() throws {
        let archive = try Connection(path: dir.file("archive.db"), configuration: Configuration(key: archiveKey))
        try archive.execute(sql: "CREATE TABLE invoice(id INTEGER PRIMARY KEY, total REAL)")
        archive.close()
    }

    /// Another connection to archive.db that does not wait for locks.
    func otherWriter() throws -> Connection {
        var config = Configuration(key: archiveKey)
        config.busyTimeout = .zero
        return try Connection(path: dir.file("archive.db"), configuration: config)
    }

    /// Called inside `db`'s transaction: archive.db's write lock must be
    /// held already (BEGIN IMMEDIATE or EXCLUSIVE locks every database of
    /// the connection), so `other` cannot take it.
    func expectArchiveLocked(against other: Connection) {
        let error = #expect(throws: StrongroomError.self, "archive.db is not locked by the open transaction") {
            try other.execute(sql: "BEGIN IMMEDIATE")
        }
        #expect(error?.code == .busy)
        if other.isInsideTransaction { try? other.execute(sql: "ROLLBACK") }
    }

    /// Control: the database is attached before the connection's first
    /// BEGIN IMMEDIATE is prepared. Passes before and after the change.
    @Test(arguments: [Connection.TransactionKind.immediate, .exclusive])
    func aTransactionLocksADatabaseAttachedBeforeItsFirstBegin(kind: Connection.TransactionKind) throws {
        try makeArchive()
        let db = try Connection(path: dir.file("app.db"), configuration: Configuration(key: key))
        try db.attach(dir.file("archive.db"), as: "archive", key: archiveKey)
        let other = try otherWriter()
        try db.inTransaction(kind) { _ in expectArchiveLocked(against: other) }
    }

    /// The defect: `BEGIN IMMEDIATE TRANSACTION` was prepared (and cached)
    /// by an earlier transaction, when only main and temp existed.
    /// sqlite3BeginTransaction emits OP_Transaction for each of db->nDb
    /// databases at prepare time, and ATTACH expires only its own statement
    /// (OP_Expire P1=1, src/attach.c), so the cached BEGIN never locks the
    /// attached database. Failed at 1143784.
    @Test(arguments: [Connection.TransactionKind.immediate, .exclusive])
    func aTransactionLocksADatabaseAttachedAfterAnEarlierTransaction(kind: Connection.TransactionKind) throws {
        try makeArchive()
        let db = try Connection(path: dir.file("app.db"), configuration: Configuration(key: key))
        try db.inTransaction(kind) { _ in }
        try db.attach(dir.file("archive.db"), as: "archive", key: archiveKey)
        let other = try otherWriter()
        try db.inTransaction(kind) { _ in expectArchiveLocked(against: other) }
    }

    /// Performance, not safety: transaction statements kept in the cache
    /// the application's statements use would take its slots, and the cache
    /// drops everything when full. The capacity is the smallest that holds
    /// the application's two statements beside what the connection caches
    /// as it opens; a transaction and a savepoint must then evict neither.
    @Test func aTransactionKeepsTheApplicationsCachedStatements() throws {
        for capacity in 2...12 {
            var config = Configuration(key: key)
            config.statementCacheCapacity = capacity
            let db = try Connection(path: dir.file("cache\(capacity).db"), configuration: config)
            defer { db.close() }
            let one = try db.cachedStatement(sql: "SELECT 1")
            let two = try db.cachedStatement(sql: "SELECT 2")
            guard try db.cachedStatement(sql: "SELECT 1") === one, try db.cachedStatement(sql: "SELECT 2") === two else { continue }
            try db.inTransaction(.deferred) { db in try db.inSavepoint { _ in } }
            try db.inTransaction(.immediate) { db in try db.inSavepoint { _ in } }
            #expect(try db.cachedStatement(sql: "SELECT 1") === one, "capacity \(capacity)")
            #expect(try db.cachedStatement(sql: "SELECT 2") === two, "capacity \(capacity)")
            return
        }
        Issue.record("no capacity up to 12 holds two statements")
    }
}
