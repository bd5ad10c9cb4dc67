import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 51, item 2: a pool's automatic checkpoints run off the writer's
/// path. SQLite checkpoints from the connection that commits, so the commit
/// that takes the log past 1,000 pages used to copy them back before it
/// returned; now a connection and thread of the pool's own does it, and the
/// writer goes on. Shown with a database file whose `fsync` is held (the
/// fault VFS): a checkpoint cannot end while it is, commits still do.
@Suite("Serving: checkpoints off the writer's path")
struct BackgroundCheckpointTests {
    let dir = TemporaryDirectory()

    /// Writes 40 transactions of 200 rows of 1,000 random bytes (8 MB, over
    /// 1,000 pages on both engines) on its own thread.
    final class Writes: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        // Set before `done` is signalled, read after it.
        var error: (any Error)?

        /// Inserts `rows` rows of 1,000 random bytes in one transaction.
        static func insert(_ rows: Int, into pool: DatabasePool) throws {
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO t(b) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                      SELECT randomblob(1000) FROM n
                    """)
            }
        }

        /// Runs `body` (by default the 40 transactions) on a thread of its own.
        init(_ pool: DatabasePool, _ body: @escaping @Sendable (DatabasePool) throws -> Void = { pool in
            for _ in 0..<40 { try Writes.insert(200, into: pool) }
        }) {
            Thread.detachNewThread { [self] in
                do {
                    try body(pool)
                } catch {
                    self.error = error
                }
                done.signal()
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func aCommitDoesNotWaitForTheCheckpointItCalledFor() throws {
        DiskFaults.install()
        let path = dir.file("c.db")
        let pool = try DatabasePool(path: path, configuration: Configuration(key: .generate()))
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0

        var writes: Writes?
        let (finished, held) = DiskFaults.whileFailing(path, with: .syncHeld) {
            let started = Writes(pool)
            writes = started
            // Generous: the writes take about a second here; a writer held
            // by the checkpoint waits until the hold ends, however long.
            guard started.done.wait(timeout: .now() + 90) == .success else { return false }
            // The checkpoint they set off may reach its fsync after them.
            for _ in 0..<600 where DiskFaults.operationsAffected == 0 { Thread.sleep(forTimeInterval: 0.1) }
            return true
        }
        if !finished { writes?.done.wait() }
        #expect(finished, "the writes waited for a checkpoint's fsync of the database file")
        #expect(writes?.error == nil, "\(String(describing: writes?.error))")
        #expect(held > 0, "no checkpoint reached the database file's fsync while the writes ran")

        // Once the disk syncs again, the checkpoint copies the pages back,
        // with no further write to set it off.
        var size = sizeBefore
        for _ in 0..<600 where size <= sizeBefore + 4_000_000 {
            Thread.sleep(forTimeInterval: 0.1)
            size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        }
        #expect(size > sizeBefore + 4_000_000, "the database file holds \(size) bytes after the checkpoint, \(sizeBefore) before")
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 8_000)
        #expect(try pool.read { db in try db.fetchAll(String.self, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    /// Issue 51, item 2: under a steady stream of small commits, each
    /// background checkpoint used to end with the frames committed while it
    /// ran left over, and every commit then set off another, until one fell
    /// between two commits: about 11 checkpoints a cycle of the log, each
    /// with its `fsync`s, writing back 2.3 pages for each commit of one row.
    /// Now one that leaves a few leaves them to the writer's next commit.
    /// (Only on a disk that syncs a checkpoint in under 10 ms: on a slower
    /// one the writer leaves them to the background, as before, and this
    /// fails.)
    @Test(.timeLimit(.minutes(3))) func aSteadyStreamOfCommitsIsNotCheckpointedCommitByCommit() throws {
        DiskFaults.install()
        let path = dir.file("s.db")
        let pool = try DatabasePool(path: path, configuration: Configuration(key: .generate()))
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, b BLOB)")
        }
        let commits = 12_000
        // The database file is synced by a checkpoint that reaches the log's
        // end, once a cycle of the log. 12,000 commits log about 36,000
        // frames: 11,235-11,390 pages written back, about 36 cycles; before
        // (891b4c0), 27,920-28,516 pages, in 3 to 28 cycles.
        let (cycles, pagesWritten) = try DiskFaults.whileFailing(path, with: .counted) {
            for _ in 0..<commits {
                try pool.write { db in
                    try db.execute(sql: "INSERT INTO t(k, b) VALUES (hex(randomblob(16)), randomblob(100))")
                }
            }
            // Read while armed: the next test to arm a file starts its counts at 0.
            return DiskFaults.countedSyncs
        }
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == commits)
        #expect(cycles >= 2, "the log started again \(cycles) times in \(commits) commits")
        #expect(pagesWritten < commits * 3 / 2, "\(pagesWritten) pages written back for \(commits) commits, in \(cycles) cycles of the log")
    }

    /// The checkpoint connection opens at the first checkpoint, with the
    /// key the readers use at that moment: after a rekey, the new one.
    @Test(.timeLimit(.minutes(3))) func aCheckpointAfterARekeyOpensWithTheNewKey() throws {
        let path = dir.file("r.db")
        let (logger, lines) = CapturingLogHandler.logger()
        var configuration = Configuration(key: .generate())
        configuration.logger = logger
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }
        let newKey = DatabaseKey.generate()
        try pool.rekey(to: newKey)
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let writes = Writes(pool)
        writes.done.wait()
        #expect(writes.error == nil, "\(String(describing: writes.error))")

        var size = sizeBefore
        for _ in 0..<600 where size <= sizeBefore + 4_000_000 {
            Thread.sleep(forTimeInterval: 0.1)
            size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        }
        #expect(size > sizeBefore + 4_000_000, "the database file holds \(size) bytes after the checkpoint, \(sizeBefore) before")
        #expect(!lines.lines.contains { $0.contains("checkpoint") }, "\(lines.lines.filter { $0.contains("checkpoint") })")
        var reopened = Configuration(key: newKey)
        reopened.readOnly = true
        let db = try Connection(path: path, configuration: reopened)
        defer { db.close() }
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 8_000)
    }

    /// How many descriptors of this process are open on `path` (or on it
    /// deleted).
    static func descriptors(on path: String) -> Int {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? ""
            return target == real || target == real + " (deleted)"
        }.count
    }

    /// Waits up to a minute for the file at `path` to pass `bytes`; its size.
    static func size(of path: String, past bytes: Int) throws -> Int {
        var size = 0
        for _ in 0..<600 {
            size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            if size > bytes { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return size
    }

    /// Review of 16f6a47: the policy's truncation waited for a background
    /// checkpoint without bound, with every read of the pool paused.
    @Test(.timeLimit(.minutes(3))) func theTruncationGivesUpOnABackgroundCheckpointThatOutlastsItsWait() throws {
        DiskFaults.install()
        let path = dir.file("t.db")
        var configuration = Configuration(key: .generate())
        // The background checkpoint starts at 1,000 pages (about 1 MiB on
        // SQLCipher 3, 4 MiB on 4); the writes go slowly until it is in its
        // held fsync, then pass the 6 MiB limit. (Were the writer's own
        // truncation to come first, its own fsync would be held.)
        configuration.checkpointPolicy = CheckpointPolicy(walSizeLimit: 6 << 20, maximumWait: .milliseconds(50))
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }

        var writes: Writes?
        let (finished, held) = DiskFaults.whileFailing(path, with: .syncHeld) {
            let started = Writes(pool) { pool in
                var rows = 0
                while DiskFaults.operationsAffected == 0 {
                    try Writes.insert(20, into: pool)
                    rows += 20
                    Thread.sleep(forTimeInterval: 0.02)
                    if rows > 20_000 { throw StrongroomError(.misuse, "no checkpoint reached the held fsync") }
                }
                for _ in 0..<40 { try Writes.insert(200, into: pool) }
            }
            writes = started
            guard started.done.wait(timeout: .now() + 120) == .success else { return false }
            // Reads are not left paused either.
            return (try? pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") }) ?? 0 >= 8_000
        }
        if !finished { writes?.done.wait() }
        #expect(finished, "the writes or a read after them waited for the background checkpoint's fsync")
        #expect(writes?.error == nil, "\(String(describing: writes?.error))")
        #expect(held > 0)
        #expect(try pool.read { db in try db.fetchAll(String.self, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    /// Review of 16f6a47: a pool whose `-wal` was deleted closed its writer
    /// and readers but left the checkpoint connection holding the old one.
    @Test(.timeLimit(.minutes(3))) func aPoolThatFindsItsWALDeletedKeepsNoConnectionOpen() throws {
        let path = dir.file("m.db")
        let pool = try DatabasePool(path: path, configuration: Configuration(key: .generate()))
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }
        let writes = Writes(pool)
        writes.done.wait()
        #expect(writes.error == nil)
        _ = try Self.size(of: path, past: 4_000_000) // a background checkpoint has run: its connection is open
        #expect(Self.descriptors(on: path) == 2, "the writer and the checkpoint connection")

        try FileManager.default.removeItem(atPath: path + "-wal")
        let error = #expect(throws: StrongroomError.self) {
            try pool.write { db in try db.execute(sql: "INSERT INTO t(b) VALUES (x'00')") }
        }
        #expect(error?.code == .fileMoved)
        #expect(Self.descriptors(on: path) == 0)
        #expect(Self.descriptors(on: path + "-wal") == 0)
    }

    /// Review of 16f6a47: the pool's hook took the place of SQLite's for
    /// every database of the writer, and an attached WAL database was no
    /// longer checkpointed at all.
    @Test(.timeLimit(.minutes(3))) func anAttachedWALDatabaseIsStillCheckpointed() throws {
        let path = dir.file("main.db")
        let auxPath = dir.file("aux.db")
        let auxKey = DatabaseKey.generate()
        let pool = try DatabasePool(path: path, configuration: Configuration(key: .generate()))
        defer { try? pool.close() }
        try pool.writeWithoutTransaction { db in
            try db.attach(auxPath, as: "aux", key: auxKey)
            _ = try db.fetchOne(String.self, sql: "PRAGMA aux.journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE aux.t(id INTEGER PRIMARY KEY, b BLOB)")
            for _ in 0..<40 {
                try db.execute(sql: """
                    INSERT INTO aux.t(b) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                      SELECT randomblob(1000) FROM n
                    """)
            }
        }
        let size = try FileManager.default.attributesOfItem(atPath: auxPath)[.size] as? Int ?? 0
        #expect(size > 4_000_000, "aux.db holds \(size) bytes: its -wal was not checkpointed")
        try pool.writeWithoutTransaction { db in try db.detach("aux") }
    }
}
