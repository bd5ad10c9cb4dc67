import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Queue and pool concurrency")
struct PoolTests {
    let dir = TemporaryDirectory()

    @Test func queueIsSafeFromManyTasks() async throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try await queue.asyncWrite { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask { try await queue.asyncWrite { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) } }
            }
            try await group.waitForAll()
        }
        #expect(try await queue.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 50)
        #expect(throws: StrongroomError.self) { try queue.read { db in try db.execute(sql: "INSERT INTO t VALUES (0)") } }
        let reentrant = #expect(throws: StrongroomError.self) { try queue.inDatabase { _ in try queue.inDatabase { _ in } } }
        #expect(reentrant?.code == .misuse)
    }

    /// Calling the pool again from inside one of its closures is a typed
    /// error, never a hang (issue 7, item 9): every nesting of read, write
    /// and rekey, with a single reader.
    @Test(.timeLimit(.minutes(1))) func nestedPoolCallsAreMisuseNotDeadlocks() throws {
        var configuration = Configuration(key: .generate())
        configuration.maximumReaderCount = 1
        let pool = try DatabasePool(path: dir.file("n.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let newKey = DatabaseKey.generate()
        let inner: [(String, () throws -> Void)] = [
            ("read", { _ = try pool.read { _ in 0 } }),
            ("write", { _ = try pool.write { _ in 0 } }),
            ("rekey", { try pool.rekey(to: newKey) }),
        ]
        for (outerName, outer) in [("read", { (body: () throws -> Void) in _ = try pool.read { _ in try body() } }),
                                   ("write", { (body: () throws -> Void) in _ = try pool.write { _ in try body() } })] as [(String, (() throws -> Void) throws -> Void)] {
            for (innerName, call) in inner {
                let error = #expect(throws: StrongroomError.self, "\(innerName) inside \(outerName)") { try outer(call) }
                #expect(error?.code == .misuse, "\(innerName) inside \(outerName): \(String(describing: error))")
            }
        }
        // The pool still works, on its first key.
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 0)
    }

    /// Two pools (or queues) nested, then the first again: misuse, not a
    /// crash in DispatchQueue.sync (review of issue 7).
    @Test(.timeLimit(.minutes(1))) func nestingTwoPoolsOrQueuesAndTheFirstAgainIsMisuse() throws {
        let a = try DatabasePool(path: dir.file("a.db"), configuration: Configuration(key: .generate()))
        let b = try DatabasePool(path: dir.file("b.db"), configuration: Configuration(key: .generate()))
        let error = #expect(throws: StrongroomError.self) {
            try a.write { _ in try b.write { _ in try a.write { _ in } } }
        }
        #expect(error?.code == .misuse)
        let viaRead = #expect(throws: StrongroomError.self) {
            try a.read { _ in try b.write { _ in try a.write { _ in } } }
        }
        #expect(viaRead?.code == .misuse)
        let q1 = try DatabaseQueue(path: dir.file("q1.db"), configuration: Configuration(key: .generate()))
        let q2 = try DatabaseQueue(path: dir.file("q2.db"), configuration: Configuration(key: .generate()))
        let queues = #expect(throws: StrongroomError.self) {
            try q1.inDatabase { _ in try q2.inDatabase { _ in try q1.inDatabase { _ in } } }
        }
        #expect(queues?.code == .misuse)
    }

    /// A pool is WAL whatever `keepsJournalMode` says (review of issue 7).
    @Test func aClosedPoolRefusesWrites() throws {
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.file("closed.db"), configuration: Configuration(key: .generate()))
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        try pool.close()
        let error = #expect(throws: StrongroomError.self) { try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } }
        #expect(error?.code == .closed)
        #expect(throws: StrongroomError.self) { try pool.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } }
    }

    @Test func aPoolIsAlwaysWAL() throws {
        let key = DatabaseKey.generate()
        var plain = Configuration(key: key)
        plain.journalMode = .delete
        try Connection(path: dir.file("d.db"), configuration: plain).execute(sql: "CREATE TABLE t(x)")
        var configuration = Configuration(key: key)
        configuration.keepsJournalMode = true
        let pool = try DatabasePool(path: dir.file("d.db"), configuration: configuration)
        #expect(try pool.write { db in try db.fetchOne(String.self, sql: "PRAGMA journal_mode") } == "wal")
    }

    /// Issue 7, item 10: a read's snapshot starts when its block starts, as
    /// in GRDB, not at its first query.
    @Test func aReadSeesTheDatabaseAsItWasWhenTheBlockStarted() throws {
        let pool = try DatabasePool(path: dir.file("s.db"), configuration: Configuration(key: .generate()))
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let inside = DispatchSemaphore(value: 0), committed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            inside.wait()
            try? pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            committed.signal()
        }
        let count = try pool.read { db -> Int in
            inside.signal()
            committed.wait()
            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") ?? -1
        }
        #expect(count == 1)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 2)
    }

    /// Issue 7, item 10: a file made with other cipher settings (here a
    /// passphrase stretched 20,000 times, HMAC off) opens when the
    /// configuration says so, in a connection and in a pool, whose one-time
    /// derivation uses the writer's iterations.
    @Test func otherCipherSettingsOpenInConnectionsAndPools() async throws {
        let path = dir.file("k.db")
        var settings = Configuration(key: try .passphrase("settings pass"))
        settings.kdfIterations = 20_000
        settings.usesHMAC = false
        try Connection(path: path, configuration: settings).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        // The stock shell agrees on what the file is.
        // The linked engine's own shell (the 4.x one first on PATH when the tests run on SQLCipher 4).
        let shell = try await ProcessRunner.run(try #require(ProcessRunner.which("sqlcipher")), [path], input: "PRAGMA key = 'settings pass';\nPRAGMA kdf_iter = 20000;\nPRAGMA cipher_use_hmac = OFF;\nSELECT count(*) FROM t;\n")
        #expect(shell.stdout.contains("1"), "\(shell.stdout) \(shell.stderr)")
        // Without the settings the key does not open it.
        let plain = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: try .passphrase("settings pass"))) }
        #expect(plain?.code == .wrongKey)
        #expect(try Connection(path: path, configuration: settings).fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1)
        let pool = try DatabasePool(path: path, configuration: settings)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 1)
    }

    @Test func readersSeeCommittedSnapshotsWhileTheWriterCommits() async throws {
        let pool = try DatabasePool(path: dir.file("p.db"), configuration: Configuration(key: try .passphrase("pool pass")))
        try await pool.asyncWrite { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER)")
            try db.execute(sql: "INSERT INTO account VALUES (1, 500), (2, 500)")
        }
        // The writer moves money between two rows, 200 commits; readers check
        // that every snapshot they see keeps the total at 1000.
        let writer = Task.detached {
            for i in 0..<200 {
                try pool.write { db in
                    let (from, to) = i % 2 == 0 ? (1, 2) : (2, 1)
                    try db.execute(sql: "UPDATE account SET balance = balance - 7 WHERE id = ?", arguments: [from])
                    try db.execute(sql: "UPDATE account SET balance = balance + 7 WHERE id = ?", arguments: [to])
                }
            }
        }
        var snapshots = 0
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var seen = 0
                    for _ in 0..<60 {
                        let (a, total) = try await pool.asyncRead { db in
                            let a = try db.fetchOne(Int.self, sql: "SELECT balance FROM account WHERE id = 1") ?? 0
                            let b = try db.fetchOne(Int.self, sql: "SELECT balance FROM account WHERE id = 2") ?? 0
                            return (a, a + b)
                        }
                        #expect(total == 1000, "snapshot with a = \(a)")
                        seen += 1
                    }
                    return seen
                }
            }
            for try await seen in group { snapshots += seen }
        }
        try await writer.value
        #expect(snapshots == 180)
        #expect(pool.readerCount >= 1 && pool.readerCount <= 4)
        #expect(try await pool.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") } == 1000)
    }

    @Test func readersAreReadOnlyAndPoolNeedsAFile() throws {
        let pool = try DatabasePool(path: dir.file("r.db"), configuration: Configuration(key: .generate()))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        let error = #expect(throws: StrongroomError.self) { try pool.read { try $0.execute(sql: "INSERT INTO t VALUES (1)") } }
        #expect(error?.code == .readOnly)
        #expect(throws: StrongroomError.self) { try DatabasePool(path: ":memory:", configuration: .plaintext) }
    }

    @Test func passphrasePoolReadersOpenWithTheDerivedKey() throws {
        // If the derived key were wrong, the reader's validation at open would fail.
        let path = dir.file("d.db")
        let pool = try DatabasePool(path: path, configuration: Configuration(key: try .passphrase("derive me once")))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (42)") }
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT x FROM t") } == 42)
        // The file still opens with the passphrase alone, as any SQLCipher tool would.
        _ = try Connection(path: path, configuration: Configuration(key: try .passphrase("derive me once")))
        let wrong = #expect(throws: StrongroomError.self) { try DatabasePool(path: path, configuration: Configuration(key: try .passphrase("wrong"))) }
        #expect(wrong?.code == .wrongKey)
    }
}
