import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Rekey")
struct RekeyTests {
    let dir = TemporaryDirectory()

    func seed(_ path: String, key: DatabaseKey, rows: Int = 100) throws {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        let insert = try db.cachedStatement(sql: "INSERT INTO t(v) VALUES (?)")
        try db.inTransaction { _ in for i in 0..<rows { try insert.execute("value \(i)") } }
    }

    func opens(_ path: String, with key: DatabaseKey) -> Bool {
        (try? Connection(path: path, configuration: Configuration(key: key)).fetchOne(Int.self, sql: "SELECT count(*) FROM t")) != nil
    }

    @Test(arguments: [false, true])
    func connectionRekeyIsConfirmedAndOldKeyStopsWorking(passphrase: Bool) throws {
        let path = dir.file("r.db")
        let old = DatabaseKey.generate()
        try seed(path, key: old)
        let new: DatabaseKey = passphrase ? try .passphrase("new passphrase") : .generate()
        let db = try Connection(path: path, configuration: Configuration(key: old))
        try db.rekey(to: new)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 100)
        db.close()
        #expect(opens(path, with: new))
        #expect(!opens(path, with: old))
    }

    /// The confirming reopen must use the connection's cipher settings: with
    /// a custom page size a successful rekey was reported as failed (issue 7, item 2).
    @Test func rekeyWithACustomCipherPageSizeIsConfirmed() throws {
        let path = dir.file("p.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        var configuration = Configuration(key: old)
        configuration.cipherPageSize = 4096
        let db = try Connection(path: path, configuration: configuration)
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a'), ('b')")
        try db.rekey(to: new)
        db.close()
        var reopen = Configuration(key: new)
        reopen.cipherPageSize = 4096
        #expect(try Connection(path: path, configuration: reopen).fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 2)
    }

    @Test func queueRekey() throws {
        let path = dir.file("q.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        try seed(path, key: old)
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: old))
        try queue.rekey(to: new)
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 100)
        #expect(opens(path, with: new))
        #expect(!opens(path, with: old))
    }

    @Test func poolRekeyReopensEveryReaderWithTheNewKey() async throws {
        let path = dir.file("p.db")
        let old = try DatabaseKey.passphrase("old pass")
        let new = try DatabaseKey.passphrase("new pass")
        try seed(path, key: old)
        let pool = try DatabasePool(path: path, configuration: Configuration(key: old))
        // Open several readers concurrently.
        try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<4 {
                group.addTask { try await pool.asyncRead { db in Thread.sleep(forTimeInterval: 0.02); return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } }
            }
            for try await count in group { #expect(count == 100) }
        }
        #expect(pool.readerCount > 0)
        try pool.rekey(to: new)
        #expect(pool.readerCount == 0)
        for _ in 0..<3 {
            #expect(try await pool.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 100)
        }
        try await pool.asyncWrite { try $0.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(try await pool.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 101)
        #expect(opens(path, with: new))
        #expect(!opens(path, with: old))
    }

    @Test func failedRekeyLeavesTheOldKeyWorking() throws {
        let path = dir.file("f.db")
        let old = DatabaseKey.generate()
        try seed(path, key: old)
        // Another connection holds the write lock, so the rewrite cannot start.
        var config = Configuration(key: old)
        config.busyTimeout = .milliseconds(50)
        let holder = try Connection(path: path, configuration: config)
        try holder.execute(sql: "BEGIN IMMEDIATE")
        let db = try Connection(path: path, configuration: config)
        let new = DatabaseKey.generate()
        let error = #expect(throws: StrongroomError.self) { try db.rekey(to: new) }
        #expect(error?.code == .busy)
        try holder.execute(sql: "ROLLBACK")
        holder.close()
        db.close()
        #expect(opens(path, with: old))
        #expect(!opens(path, with: new))
    }

    /// The file is sound and opens with `key`: every row, integrity_check ok.
    func expectSound(_ path: String, key: DatabaseKey, rows: Int) throws {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == rows)
    }

    // Issue 7, item 1: sqlite3_rekey_v2 switches the connection's write key
    // before the rewrite, keeps it after a rollback and returns SQLITE_OK.
    // The connection must not stay in service half-switched.

    /// The disk fills during the rewrite (rollback journal): the queue goes
    /// on with the old key, and its next write leaves a file the old key opens.
    @Test func rekeyOnAFullDiskLeavesTheQueueWorkingOnTheOldKey() throws {
        DiskFaults.install()
        let path = dir.file("full-queue.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        var config = Configuration(key: old)
        config.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
            for i in 0..<100 { try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["value \(i)"]) }
        }
        let (error, failedWrites) = DiskFaults.whileFull(path + "-journal") {
            #expect(throws: StrongroomError.self) { try queue.rekey(to: new) }
        }
        #expect(failedWrites > 0)
        #expect(error?.code.rawValue == "rekey_failed")
        #expect(error?.message.contains("still opens with the old key") == true)
        try queue.write { try $0.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 101)
        try expectSound(path, key: old, rows: 101)
        #expect(!opens(path, with: new))
    }

    /// The rekey takes effect, but another process's lock keeps every new
    /// connection out while it is confirmed: which key opens the file is
    /// not known then. That is a busy error, not "neither key opens it";
    /// once the lock is gone the queue reopens on the key that works.
    @Test func rekeyThatCannotBeConfirmedForALockIsBusyAndTheQueueRecovers() throws {
        DiskFaults.install()
        let path = dir.file("kept-out-queue.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        var config = Configuration(key: old)
        config.journalMode = .delete
        config.busyTimeout = .milliseconds(100)
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
            for i in 0..<100 { try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["value \(i)"]) }
        }
        let error = DiskFaults.whileLockedOut(path) {
            #expect(throws: StrongroomError.self) { try queue.rekey(to: new) }
        }
        #expect(error?.code == .busy)
        #expect(error?.message.contains("neither") == false)
        try queue.write { try $0.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 101)
        try expectSound(path, key: new, rows: 101)
        #expect(!opens(path, with: old))
    }

    /// The same under a pool: its writer and its readers go on, on the new key.
    @Test func rekeyThatCannotBeConfirmedForALockLeavesThePoolWorking() throws {
        DiskFaults.install()
        let path = dir.file("kept-out-pool.db")
        let old = try DatabaseKey.passphrase("old pass"), new = try DatabaseKey.passphrase("new pass")
        try seed(path, key: old)
        var config = Configuration(key: old)
        config.busyTimeout = .milliseconds(100)
        let pool = try DatabasePool(path: path, configuration: config)
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 100)
        let error = DiskFaults.whileLockedOut(path) {
            #expect(throws: StrongroomError.self) { try pool.rekey(to: new) }
        }
        #expect(error?.code == .busy)
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 100)
        try pool.write { try $0.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 101)
        try expectSound(path, key: new, rows: 101)
    }

    /// A statement the caller still holds would keep a failed rekey's
    /// transaction and locks alive after its connection closes: rekey
    /// refuses to start, and changes nothing.
    @Test func rekeyRefusesWhileAStatementIsHeld() throws {
        let path = dir.file("held.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        try seed(path, key: old)
        let db = try Connection(path: path, configuration: Configuration(key: old))
        var held: Statement? = try db.cachedStatement(sql: "INSERT INTO t(v) VALUES (?)")
        let error = #expect(throws: StrongroomError.self) { try db.rekey(to: new) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("statement") == true)
        try held?.execute("still works")
        held = nil
        try db.rekey(to: new)
        db.close()
        try expectSound(path, key: new, rows: 101)
    }

    /// A reader holds its lock (rollback journal): rekey is refused as busy
    /// before it starts, and leaves no transaction open behind it.
    @Test func rekeyRefusedAsBusyLeavesNoTransactionOpen() throws {
        let path = dir.file("locked.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        var config = Configuration(key: old)
        config.journalMode = .delete
        config.busyTimeout = .milliseconds(100)
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a')")
        let reader = try Connection(path: path, configuration: config)
        try reader.execute(sql: "BEGIN")
        #expect(try reader.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1)
        let error = #expect(throws: StrongroomError.self) { try db.rekey(to: new) }
        #expect(error?.code == .busy)
        #expect(!db.isInsideTransaction)
        try reader.execute(sql: "COMMIT")
        try db.rekey(to: new)
        db.close()
        try expectSound(path, key: new, rows: 1)
    }

    /// The disk fills during the rewrite (WAL): the pool's writer and
    /// readers go on with the old key.
    @Test func rekeyOnAFullDiskLeavesThePoolWorkingOnTheOldKey() throws {
        DiskFaults.install()
        let path = dir.file("full-pool.db")
        let old = try DatabaseKey.passphrase("old pass"), new = DatabaseKey.generate()
        try seed(path, key: old)
        let pool = try DatabasePool(path: path, configuration: Configuration(key: old))
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 100)
        let (error, failedWrites) = DiskFaults.whileFull(path + "-wal") {
            #expect(throws: StrongroomError.self) { try pool.rekey(to: new) }
        }
        #expect(failedWrites > 0)
        #expect(error?.code.rawValue == "rekey_failed")
        #expect(error?.message.contains("still opens with the old key") == true)
        try pool.write { try $0.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 101)
        try expectSound(path, key: old, rows: 101)
        #expect(!opens(path, with: new))
    }

    /// A bare connection cannot reopen itself: it is closed, and says so.
    @Test func rekeyOnAFullDiskClosesTheConnection() throws {
        DiskFaults.install()
        let path = dir.file("full.db")
        let old = DatabaseKey.generate(), new = DatabaseKey.generate()
        try seed(path, key: old)
        let db = try Connection(path: path, configuration: Configuration(key: old))
        let (error, _) = DiskFaults.whileFull(path + "-wal") {
            #expect(throws: StrongroomError.self) { try db.rekey(to: new) }
        }
        #expect(error?.code.rawValue == "rekey_failed")
        let later = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO t(v) VALUES ('after')") }
        #expect(later?.code == .misuse)
        #expect(later?.message.contains("rekey") == true)
        db.close()
        try expectSound(path, key: old, rows: 100)
        #expect(!opens(path, with: new))
    }

    @Test func rekeyRefusesWhatWouldSilentlyDoNothing() throws {
        let plain = try Connection(path: dir.file("plain.db"), configuration: .plaintext)
        #expect((#expect(throws: StrongroomError.self) { try plain.rekey(to: .generate()) })?.code == .misuse)
        let path = dir.file("ro.db")
        let key = DatabaseKey.generate()
        try seed(path, key: key)
        var readOnly = Configuration(key: key)
        readOnly.readOnly = true
        let ro = try Connection(path: path, configuration: readOnly)
        #expect((#expect(throws: StrongroomError.self) { try ro.rekey(to: .generate()) })?.code == .misuse)
        #expect(opens(path, with: key))
    }
}
