import Foundation
import MetricsTestKit
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 51, item 2: a pool's writer copies, at most once a cycle of the
/// log, the few frames a background checkpoint left behind, so that the log
/// starts again; the checkpoints it runs are counted
/// (`strongroom.checkpoints.passive`, `connection` `writer`).
@Suite("Checkpoints: what the writer copies itself")
struct CheckpointCatchUpTests {
    let dir = TemporaryDirectory()

    /// Set once, read by the reader threads.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false
        var isRaised: Bool { lock.withLock { raised } }
        func raise() { lock.withLock { raised = true } }
    }

    static func insert(_ pool: DatabasePool) throws {
        try pool.write { db in
            try db.execute(sql: "INSERT INTO t(k, b) VALUES (hex(randomblob(16)), randomblob(100))")
        }
    }

    /// Review of 17d5cbe (helper-30): with reads always overlapping, a
    /// background checkpoint stopped at a reader left a few frames, the
    /// writer's copy stopped at the same reader, the next background one
    /// left a few again, and the writer ran a checkpoint at every commit.
    @Test(.timeLimit(.minutes(3))) func readsThatAlwaysOverlapDoNotMakeTheWriterCheckpointEveryCommit() throws {
        let metrics = TestMetrics()
        var configuration = Configuration(key: .generate())
        configuration.metricsFactory = metrics
        let name = "overlapped.db"
        let pool = try DatabasePool(path: dir.file(name), configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, b BLOB)") }
        let writer = [("database", name), ("connection", "writer")]
        // Without readers, until the writer has copied what a background
        // checkpoint left (once the database file is known to sync quickly,
        // as it does here: on a disk slower to sync, this fails).
        var warmUp = 0
        while metrics.counterTotal(label: "strongroom.checkpoints.passive", dimensions: writer) == 0 && warmUp < 40_000 {
            try Self.insert(pool)
            warmUp += 1
        }
        try #require(metrics.counterTotal(label: "strongroom.checkpoints.passive", dimensions: writer) > 0,
                     "the writer copied nothing in \(warmUp) commits: the database file's timed fsync never took under 10 ms")

        // Two readers that always hold a snapshot, then 3,000 commits.
        let stop = Flag()
        let readers = DispatchGroup()
        for _ in 0..<2 {
            readers.enter()
            Thread.detachNewThread {
                while !stop.isRaised { _ = try? pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } }
                readers.leave()
            }
        }
        let before = metrics.counterTotal(label: "strongroom.checkpoints.passive", dimensions: writer)
        let commits = 3_000
        for _ in 0..<commits { try Self.insert(pool) }
        stop.raise()
        readers.wait()
        let byTheWriter = metrics.counterTotal(label: "strongroom.checkpoints.passive", dimensions: writer) - before
        // About 9,000 frames: 9 cycles of the log at most, one copy each.
        #expect(byTheWriter <= 20, "the writer ran \(byTheWriter) checkpoints in \(commits) commits")
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == warmUp + commits)
    }
}
