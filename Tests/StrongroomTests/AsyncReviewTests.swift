import Foundation
import InMemoryTracing
import MetricsTestKit
import Strongroom
import StrongroomTestSupport
import Testing

/// The independent review of issue 37 (a Swift concurrency engineer and a
/// SQLite engineer): its reproductions, each failing on the code it
/// reviewed (commit 9befb7c), kept as regression tests.
@Suite("Review of issue 37: async access", .serialized)
struct AsyncReviewTests {
    let dir = TemporaryDirectory()

    // Finding 1 (a queue or pool released after an async access froze
    // its own thread) counts the process's threads: it runs in a process of
    // its own, `AsyncServingTests.queuesAndPoolsDroppedAfterAnAsyncReadLeaveNoThreads`.

    /// Finding 2. `asyncWriteWithoutTransaction` (and `withConnection`,
    /// `Migrator.asyncMigrate`): a body that committed its work and
    /// returned normally is reported as `CancellationError` when the task
    /// was cancelled before the body returned: the caller is told it failed
    /// although everything it did is in the file (and nothing of it was
    /// interrupted).
    @Test(.timeLimit(.minutes(1))) func aCommittedWriteWithoutTransactionIsNotReportedAsCancelled() async throws {
        let metrics = TestMetrics()
        var configuration = Configuration(key: .generate())
        configuration.metricsFactory = metrics
        let pool = try DatabasePool(path: dir.file("committed.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x INTEGER)") }
        let committed = Latch(), cancelled = Latch()
        let task = Task {
            try await pool.asyncWriteWithoutTransaction { db in
                try db.inTransaction(.immediate) { db in try db.execute(sql: "INSERT INTO t(x) VALUES (1)") }
                committed.open()
                cancelled.wait()
                return 1
            }
        }
        await committed.opened()
        task.cancel()
        cancelled.open()
        let outcome = await task.result
        let rows = try await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") ?? -1 }
        #expect(rows == 1)
        #expect((try? outcome.get()) == 1, "committed (\(rows) row) but the caller got: \(outcome)")
        let interruptions = metrics.counterTotal(label: "strongroom.interruptions", dimensions: [("database", "committed.db"), ("kind", "write")])
        #expect(interruptions == 0, "no statement ran when the task was cancelled, yet strongroom.interruptions = \(interruptions)")
    }

    /// Finding 3. The checkpoint policy makes every write wait
    /// `busyTimeout` while one read older than the log's last reset is
    /// open: each write's TRUNCATE checkpoint waits for that reader, gives
    /// up (the -wal stays past the limit), and the next write does the same.
    /// The caller of each write waits too (the checkpoint runs before its
    /// continuation resumes), and the checkpoint is counted although it
    /// did not happen.
    @Test(.timeLimit(.minutes(1))) func oneLongReadDoesNotMakeEveryWriteWaitTheBusyTimeout() async throws {
        let metrics = TestMetrics()
        var configuration = Configuration(key: .generate())
        configuration.metricsFactory = metrics
        // Waiting the busy timeout is 5 s a write; a loaded machine's slow write is far less.
        configuration.busyTimeout = .seconds(5)
        configuration.checkpointPolicy = CheckpointPolicy(walSizeLimit: 64 << 10)
        let path = dir.file("longread.db")
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(b BLOB)") }
        try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (zeroblob(1000))") }
        // One long read (an export, a report), begun now.
        let holding = Latch(), release = Latch()
        let reader = Task { try await pool.asyncRead { db in
            _ = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t")
            holding.open(); release.wait(); return 0
        } }
        await holding.opened()
        var durations: [Double] = []
        for _ in 0..<4 {
            let start = ContinuousClock.now
            try await pool.asyncWrite { db in try db.execute(sql: "INSERT INTO t VALUES (randomblob(100000))") }
            let elapsed = ContinuousClock.now - start
            durations.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        var status = stat()
        _ = stat(path + "-wal", &status)
        let walBytes = Int(status.st_size)
        release.open()
        _ = try await reader.value
        let truncations = metrics.counterTotal(label: "strongroom.checkpoints", dimensions: [("database", "longread.db"), ("mode", "truncate")])
        print("write durations (s): \(durations.map { String(format: "%.3f", $0) }), -wal after: \(walBytes) bytes, strongroom.checkpoints{truncate} = \(truncations)")
        #expect(durations.filter { $0 > 2.5 }.count <= 1, "writes waited the busy timeout each: \(durations)")
        #expect(walBytes > 64 << 10, "the -wal was not truncated (\(walBytes) bytes)")
        #expect(truncations == 0, "no TRUNCATE completed, yet strongroom.checkpoints{mode=truncate} = \(truncations)")
    }

    /// Finding 4. Waiters that left the queue (timed out by maximumWait,
    /// or cancelled) stay in AccessGate.order until the next release: while
    /// one access runs long, every caller turned away stays in memory,
    /// whatever maximumWaiters says.
    @Test(.timeLimit(.minutes(1))) func refusedWaitersAreNotKeptWhileTheConnectionIsBusy() async throws {
        var configuration = Configuration(key: .generate())
        configuration.maximumWaiters = 8
        configuration.maximumWait = .milliseconds(1)
        let queue = try DatabaseQueue(path: dir.file("kept.db"), configuration: configuration)
        let holding = Latch(), release = Latch()
        let holder = Task { try await queue.asyncRead { _ in holding.open(); release.wait(); return 0 } }
        await holding.opened()
        var refused = 0
        for _ in 0..<250 {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask { (try? await queue.asyncRead { _ in 1 }) == nil }
                }
                for try await wasRefused in group where wasRefused { refused += 1 }
            }
        }
        let gate = Mirror(reflecting: queue).descendant("gate")!
        let kept = (Mirror(reflecting: gate).descendant("order") as? [Any])?.count ?? -1
        print("refused: \(refused), waiting now: \(queue.waitingCount), waiters kept in AccessGate.order: \(kept)")
        release.open()
        _ = try await holder.value
        #expect(refused == 2_000)
        #expect(kept <= 8, "\(kept) refused waiters are still held")
    }

    /// Finding 5. A large maximumWait trapped (Int64 overflow) in
    /// AccessGate.acquireSuspending as soon as a caller had to wait (the
    /// whole test process crashed).
    @Test(.timeLimit(.minutes(1)))
    func aLargeMaximumWaitDoesNotCrash() async throws {
        var configuration = Configuration(key: .generate())
        configuration.maximumWait = .seconds(10_000_000_000)  // ~317 years: "practically forever"
        let queue = try DatabaseQueue(path: dir.file("forever.db"), configuration: configuration)
        let holding = Latch(), release = Latch()
        let holder = Task { try await queue.asyncRead { _ in holding.open(); release.wait(); return 0 } }
        await holding.opened()
        let waiter = Task { try await queue.asyncRead { _ in 1 } }
        try await Task.sleep(nanoseconds: 100_000_000)
        release.open()
        _ = try await holder.value
        #expect(try await waiter.value == 1)
    }
    /// Check: no passphrase reaches a span's statement text during an
    /// async rekey of a queue and a pool (tracesStatementText on).
    @Test(.timeLimit(.minutes(1))) func noKeyReachesSpansDuringRekey() async throws {
        let tracer = InMemoryTracer()
        var configuration = Configuration(key: try .passphrase("old-secret-pass-4711"))
        configuration.tracer = tracer
        configuration.tracesStatementText = true
        let queue = try DatabaseQueue(path: dir.file("rk-queue.db"), configuration: configuration)
        try await queue.asyncWrite { db in try db.execute(sql: "CREATE TABLE t(x)") }
        try await queue.asyncRekey(to: try .passphrase("new-secret-pass-0815"))
        let pool = try DatabasePool(path: dir.file("rk-pool.db"), configuration: configuration)
        try await pool.asyncWrite { db in try db.execute(sql: "CREATE TABLE t(x)") }
        try await pool.asyncRekey(to: try .passphrase("new-secret-pass-0815"))
        _ = try await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") }
        let dump = "\(tracer.finishedSpans)"
        #expect(!dump.contains("old-secret") && !dump.contains("new-secret"))
        #expect(tracer.finishedSpans.count >= 5)
        print("span events: \(tracer.finishedSpans.flatMap(\.events).count)")
    }

    /// Suspicion check: a write whose interrupted UPDATE was swallowed by
    /// its body (SQLite then rolled the transaction back by itself) and
    /// that went on: what is left in the file when the caller is told
    /// CancellationError.
    @Test(.timeLimit(.minutes(1))) func aCancelledWriteWhoseBodySwallowedTheInterruptCommitsNothing() async throws {
        let queue = try DatabaseQueue(path: dir.file("swallowed.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER)") }
        let started = Latch()
        let task = Task {
            try await queue.asyncWrite { db in
                try db.execute(sql: "INSERT INTO t(id, x) VALUES (1, 0)")
                started.open()
                _ = try? db.execute(sql: "UPDATE t SET x = (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c)")
                try db.execute(sql: "INSERT INTO t(id, x) VALUES (2, 0)")
                return 0
            }
        }
        await started.opened()
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        let outcome = await task.result
        let ids = try await queue.asyncRead { db in try db.fetchAll(Int.self, sql: "SELECT id FROM t") }
        print("outcome: \(outcome), rows: \(ids)")
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(ids.isEmpty, "the caller got \(outcome) but rows \(ids) are committed")
    }

    /// Check: permits are neither leaked nor doubled when grants race
    /// maximumWait timers and cancellations (thousands of short accesses).
    @Test(.timeLimit(.minutes(2))) func permitsSurviveTimeoutsAndCancellationsRacingGrants() async throws {
        var configuration = Configuration(key: .generate())
        configuration.maximumWait = .milliseconds(3)
        configuration.maximumReaderCount = 2
        let pool = try DatabasePool(path: dir.file("permits.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let inside = Counter(), most = Gathered<Int>()
        let active = Counter()
        _ = active
        let running = RunningCount()
        var generator = SplitMix64(seed: 37)
        // Blocking callers in the same FIFO, on threads of their own.
        let syncDone = Counter()
        for _ in 0..<2 {
            Thread.detachNewThread {
                for _ in 0..<1_000 { _ = try? pool.read { _ in running.enter(); defer { running.leave() }; usleep(50); return 1 } }
                syncDone.increment()
            }
        }
        for _ in 0..<500 {
          try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                let cancelAfter = generator.next() % 3 == 0 ? generator.next() % 400_000 : nil
                group.addTask {
                    let task = Task { () -> Int in
                        try await pool.asyncRead { _ in running.enter(); defer { running.leave() }; usleep(50); return 1 }
                    }
                    if let cancelAfter { try? await Task.sleep(nanoseconds: cancelAfter); task.cancel() }
                    if (try? await task.value) == 1 { inside.increment() }
                }
            }
            try await group.waitForAll()
          }
        }
        while syncDone.value < 2 { try await Task.sleep(nanoseconds: 1_000_000) }
        _ = most
        print("succeeded: \(inside.value), most readers at once: \(running.maximum), waiting: \(pool.waitingReadCount)")
        #expect(running.maximum <= 2, "more readers than permits at once")
        #expect(pool.waitingReadCount == 0)
        // Both permits are back: two reads can run at the same time, and a third after.
        let a = Latch(), b = Latch(), go = Latch()
        let first = Task { try await pool.asyncRead { _ in a.open(); go.wait(); return 1 } }
        let second = Task { try await pool.asyncRead { _ in b.open(); go.wait(); return 1 } }
        await a.opened(); await b.opened(); go.open()
        #expect(try await first.value + second.value == 2)
    }
    /// Finding 7. After a rekey that failed (here: another connection held
    /// the write lock, so `BEGIN IMMEDIATE` was busy), readers are marked
    /// stale. A read then takes a reader permit and waits for the writer
    /// (`refreshReaderKeyIfNeeded`, DatabasePool.swift:188 -> 310), while a
    /// rekey queued before it holds the writer and waits in
    /// `readerGate.pause()` (DatabasePool.swift:268) for that permit:
    /// neither ever ends. (Before this change the refresh ran before a
    /// reader was taken, and rekey did not wait for readers.)
    @Test(.timeLimit(.minutes(1))) func aReadAfterAFailedRekeyDoesNotDeadlockTheNextRekey() async throws {
        var configuration = Configuration(key: .generate())
        configuration.busyTimeout = .milliseconds(100)
        let path = dir.file("stale.db")
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        // A rekey that fails: another connection holds the write lock.
        let other = try Connection(path: path, configuration: configuration)
        try other.execute(sql: "BEGIN IMMEDIATE")
        let failed = #expect(throws: StrongroomError.self) { try pool.rekey(to: .generate()) }
        print("first rekey: \(failed?.code.rawValue ?? "-")")
        try other.execute(sql: "ROLLBACK")
        other.close()

        // Hold the writer; queue a rekey, then a read, behind it.
        let holding = Latch(), release = Latch()
        let holder = Task { try await pool.asyncWrite { _ in holding.open(); release.wait(); return 0 } }
        await holding.opened()
        let rekeyed = Latch(), readDone = Latch()
        Thread.detachNewThread { _ = try? pool.rekey(to: .generate()); rekeyed.open() }
        while pool.waitingWriteCount < 1 { try await Task.sleep(nanoseconds: 1_000_000) }
        Thread.detachNewThread { _ = try? pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") }; readDone.open() }
        while pool.waitingWriteCount < 2 { try await Task.sleep(nanoseconds: 1_000_000) }
        release.open()
        _ = try await holder.value
        for _ in 0..<3_000 where !(rekeyed.isOpen && readDone.isOpen) { try await Task.sleep(nanoseconds: 1_000_000) }
        print("after 3 s: rekey ended \(rekeyed.isOpen), read ended \(readDone.isOpen), waiting writers \(pool.waitingWriteCount)")
        #expect(rekeyed.isOpen && readDone.isOpen, "the rekey and the read are stuck on each other")
    }
}

/// The most threads inside a section at once.
final class RunningCount: @unchecked Sendable {
    private let lock = NSLock()
    private var now = 0, most = 0
    func enter() { lock.lock(); now += 1; most = max(most, now); lock.unlock() }
    func leave() { lock.lock(); now -= 1; lock.unlock() }
    var maximum: Int { lock.lock(); defer { lock.unlock() }; return most }
}
