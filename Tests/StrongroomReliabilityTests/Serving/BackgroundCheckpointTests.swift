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

        init(_ pool: DatabasePool) {
            Thread.detachNewThread { [self] in
                do {
                    for _ in 0..<40 {
                        try pool.write { db in
                            try db.execute(sql: """
                                INSERT INTO t(b) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                                  SELECT randomblob(1000) FROM n
                                """)
                        }
                    }
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
            return started.done.wait(timeout: .now() + 90) == .success
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
}
