import Foundation
import MetricsTestKit
import Strongroom
import StrongroomTestSupport
import Synchronization
import Testing

/// Issue 51: group commit (`Configuration.groupsAsyncWrites`). Async writes
/// that wait for the writer together run in one transaction, each in its
/// own savepoint: each caller still gets its own outcome, only after the
/// COMMIT, and a failing write takes no other down with it (but for a
/// statement after which SQLite rolls back the whole transaction).
///
/// Each test holds the writer with a first write until the others wait
/// behind it, so that they are granted the writer together, as one group.
@Suite("Group commit: async writes sharing a transaction")
struct GroupCommitTests {
    let dir = TemporaryDirectory()

    /// A grouping pool, its metrics, and a table `t(id, v UNIQUE)`.
    func pool(_ name: String, grouping: Bool = true, undo: Configuration.GroupedWriteUndo = .savepoints) throws -> (DatabasePool, TestMetrics) {
        let metrics = TestMetrics()
        var configuration = Configuration(key: .generate())
        configuration.groupsAsyncWrites = grouping
        configuration.groupedWriteUndo = undo
        configuration.metricsFactory = metrics
        let pool = try DatabasePool(path: dir.file(name), configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);
                CREATE TABLE parent(id INTEGER PRIMARY KEY);
                CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                """)
        }
        return (pool, metrics)
    }

    /// Starts `writes` while a first write holds the writer, waits until
    /// they all wait for it, then lets the first one end: they are granted
    /// the writer together. Returns each write's outcome, in order.
    func together<T: Sendable>(_ pool: DatabasePool, _ writes: [@Sendable (Connection) throws -> T],
                               whileWaiting: @Sendable ([Task<T, any Error>]) async -> Void = { _ in }) async throws -> [Result<T, any Error>] {
        let holding = Latch(), release = Latch()
        let holder = Task { try await pool.asyncWrite { _ in holding.open(); release.wait() } }
        await holding.opened()
        var tasks: [Task<T, any Error>] = []
        for write in writes {
            tasks.append(Task { try await pool.asyncWrite(write) })
            // One at a time, so that they wait in this order.
            while pool.waitingWriteCount < tasks.count { try await Task.sleep(nanoseconds: 200_000) }
        }
        await whileWaiting(tasks)
        release.open()
        try await holder.value
        var results: [Result<T, any Error>] = []
        for task in tasks { results.append(await task.result) }
        return results
    }

    /// Both ways of taking back a failed write: what a caller sees is the same.
    static let undoModes: [Configuration.GroupedWriteUndo] = [.savepoints, .runningTheOthersAgain]

    func values(_ pool: DatabasePool) throws -> Set<String> {
        Set(try pool.read { db in try db.fetchAll(String.self, sql: "SELECT v FROM t") })
    }

    @Test(.timeLimit(.minutes(1)), arguments: Self.undoModes)
    func writesWaitingTogetherShareOneTransactionAndEachGetsItsOwnResult(undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, metrics) = try pool("together.db", undo: undo)
        let writes: [@Sendable (Connection) throws -> Int64] = (0..<20).map { i in
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                return db.lastInsertedRowID
            }
        }
        let results = try await together(pool, writes)
        let ids = try results.map { try $0.get() }
        #expect(Set(ids).count == 20)
        #expect(try values(pool) == Set((0..<20).map { "w\($0)" }))
        // Each write's id is the row it wrote, seen by the writes after it.
        let stored = try pool.read { db in try db.fetchAll(Int64.self, sql: "SELECT id FROM t ORDER BY v") }
        #expect(Set(stored) == Set(ids))
        let groups = try metrics.expectRecorder("strongroom.write.group.size", [("database", "together.db")]).values
        #expect(groups.contains(20), "the 20 writes that waited together ran in one transaction: \(groups)")
        try pool.close()
    }

    @Test(.timeLimit(.minutes(1)), arguments: Self.undoModes)
    func aWriteThatFailsRollsBackItselfAlone(undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, _) = try pool("alone.db", undo: undo)
        struct Refused: Error {}
        try pool.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('taken')") }
        let writes: [@Sendable (Connection) throws -> Void] = (0..<12).map { i in
            { db in
                switch i % 3 {
                case 0: try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                case 1:
                    try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                    throw Refused()
                default:
                    try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                    try db.execute(sql: "INSERT INTO t(v) VALUES ('taken')")  // UNIQUE
                }
            }
        }
        let results = try await together(pool, writes)
        for (i, result) in results.enumerated() {
            switch i % 3 {
            case 0: #expect(throws: Never.self) { try result.get() }
            case 1: #expect(result.error is Refused)
            default: #expect((result.error as? StrongroomError)?.code == .uniqueConstraint)
            }
        }
        #expect(try values(pool) == Set(["taken"] + stride(from: 0, to: 12, by: 3).map { "w\($0)" }))
        try pool.close()
    }

    /// Alone, a write that leaves a deferred foreign key unresolved fails at
    /// its COMMIT; in a group, it is rolled back with the same code, and the
    /// writes around it commit.
    @Test(.timeLimit(.minutes(1)), arguments: [(false, .savepoints), (true, .savepoints), (true, .runningTheOthersAgain)] as [(Bool, Configuration.GroupedWriteUndo)])
    func aWriteLeavingADeferredForeignKeyUnresolvedFailsAlone(grouping: Bool, undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, _) = try pool("deferred-\(grouping).db", grouping: grouping, undo: undo)
        let writes: [@Sendable (Connection) throws -> Void] = [
            { db in try db.execute(sql: "INSERT INTO parent(id) VALUES (1); INSERT INTO child(id, parent) VALUES (1, 1)") },
            { db in try db.execute(sql: "INSERT INTO child(id, parent) VALUES (2, 99)") },
            { db in try db.execute(sql: "INSERT INTO child(id, parent) VALUES (3, 1)") },
        ]
        let results = try await together(pool, writes)
        #expect(throws: Never.self) { try results[0].get() }
        #expect((results[1].error as? StrongroomError)?.code == .foreignKeyConstraint, "\(results[1])")
        #expect(throws: Never.self) { try results[2].get() }
        #expect(try pool.read { db in try db.fetchAll(Int.self, sql: "SELECT id FROM child ORDER BY id") } == [1, 3])
        try pool.close()
    }

    /// `INSERT OR ROLLBACK` rolls back the whole transaction: the writes run
    /// before it in the group were not committed, and are told so; the
    /// writes after it run in a transaction of their own. Whatever a caller
    /// was told, its row is there exactly when it succeeded.
    @Test(.timeLimit(.minutes(1)), arguments: Self.undoModes)
    func aStatementThatEndsTheTransactionFailsOnlyTheWritesBeforeIt(undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, _) = try pool("rollback.db", undo: undo)
        try pool.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('taken')") }
        let writes: [@Sendable (Connection) throws -> Void] = (0..<8).map { i in
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                if i == 3 { try db.execute(sql: "INSERT OR ROLLBACK INTO t(v) VALUES ('taken')") }
            }
        }
        let results = try await together(pool, writes)
        for i in 0..<3 {
            let error = results[i].error as? StrongroomError
            #expect(error?.code == .uniqueConstraint && error?.message.contains("Run it again") == true, "\(results[i])")
        }
        #expect((results[3].error as? StrongroomError)?.code == .uniqueConstraint)
        for i in 4..<8 { #expect(throws: Never.self) { try results[i].get() } }
        #expect(try values(pool) == Set(["taken"] + (4..<8).map { "w\($0)" }))
        try pool.close()
    }

    /// A write cancelled while it waits leaves the queue; one cancelled
    /// while its closure runs is not interrupted (that would roll back the
    /// group): its savepoint is rolled back after the closure returns.
    @Test(.timeLimit(.minutes(1)), arguments: Self.undoModes)
    func cancelledWritesLeaveNothingAndTakeNoOtherDown(undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, _) = try pool("cancelled.db", undo: undo)
        let running = Latch(), finish = Latch()
        let writes: [@Sendable (Connection) throws -> Void] = [
            { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('first')") },
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES ('cancelled while running')")
                running.open()
                finish.wait()
            },
            { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('cancelled while waiting')") },
            { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('last')") },
        ]
        let results = try await together(pool, writes) { tasks in
            tasks[2].cancel()
            // The writer's next group runs: cancel the second write while its closure runs.
            Task {
                await running.opened()
                tasks[1].cancel()
                finish.open()
            }
        }
        #expect(throws: Never.self) { try results[0].get() }
        #expect(results[1].error is CancellationError, "\(results[1])")
        #expect(results[2].error is CancellationError, "\(results[2])")
        #expect(throws: Never.self) { try results[3].get() }
        #expect(try values(pool) == ["first", "last"])
        try pool.close()
    }

    /// Review of group commit: a write granted with its group but cancelled
    /// before its closure starts gives up at once; it does not wait for the
    /// closures before it in the group.
    @Test(.timeLimit(.minutes(1)), arguments: Self.undoModes)
    func aWriteCancelledBeforeItsTurnInTheGroupGivesUpAtOnce(undo: Configuration.GroupedWriteUndo) async throws {
        let (pool, _) = try pool("cancelled-in-group.db", undo: undo)
        let running = Latch(), finish = Latch()
        let answered = Latch()
        let writes: [@Sendable (Connection) throws -> Void] = [
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES ('slow')")
                running.open()
                finish.wait()
            },
            { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('cancelled')") },
        ]
        let results = try await together(pool, writes) { tasks in
            Task {
                await running.opened()
                tasks[1].cancel()
                _ = await tasks[1].result
                answered.open()
            }
            Task {
                // The slow closure ends once the cancelled write has its answer, or after 5 s.
                await running.opened()
                for _ in 0..<500 where !answered.isOpen { try? await Task.sleep(nanoseconds: 10_000_000) }
                finish.open()
            }
        }
        #expect(answered.isOpen)
        #expect(throws: Never.self) { try results[0].get() }
        #expect(results[1].error is CancellationError, "\(results[1])")
        #expect(try values(pool) == ["slow"])
        try pool.close()
    }

    /// Review of group commit: `PRAGMA defer_foreign_keys` lasts until the
    /// transaction ends; one write's must not change how the next write's
    /// statements fail. Alone, the second write catches its immediate
    /// foreign key failure and commits the rest.
    @Test(.timeLimit(.minutes(1))) func oneWritesDeferredForeignKeysDoNotReachTheNext() async throws {
        try await expectTheNextWriteChecksItsForeignKeysAtOnce("defer.db") { db in
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON; INSERT INTO parent(id) VALUES (1)")
        }
    }

    /// Runs `first`, then a write whose insert breaks an immediate foreign
    /// key, as one group: the second write must catch that failure at
    /// once, whatever `first` deferred, and commit the rest of its work.
    func expectTheNextWriteChecksItsForeignKeysAtOnce(_ name: String, after first: @escaping @Sendable (Connection) throws -> Void) async throws {
        let (pool, _) = try pool(name)
        try pool.write { db in try db.execute(sql: "CREATE TABLE strict(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id))") }
        let writes: [@Sendable (Connection) throws -> Void] = [
            first,
            { db in
                _ = try? db.execute(sql: "INSERT INTO strict(id, parent) VALUES (1, 99)")
                try db.execute(sql: "INSERT INTO t(v) VALUES ('kept')")
            },
        ]
        let results = try await together(pool, writes)
        #expect(throws: Never.self) { try results[0].get() }
        #expect(throws: Never.self) { try results[1].get() }
        #expect(try values(pool) == ["kept"])
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM strict") } == 0)
        try pool.close()
    }

    /// Issue 51, the POST profile: each write of a group after the first
    /// set `PRAGMA defer_foreign_keys = OFF`, and setting a flag pragma
    /// expires every prepared statement of the connection, so that SQLite
    /// compiled each cached statement again at its next step (the service's
    /// key check, trigger check and rowid lookup: 376,665 times each in
    /// one benchmark run). The writes of a group reuse what they prepared.
    @Test(.timeLimit(.minutes(1))) func theWritesOfAGroupDoNotCompileTheirCachedStatementsAgain() async throws {
        let (pool, metrics) = try pool("reuse.db")
        let sql = "SELECT count(*) FROM t WHERE v IS NOT NULL"
        // Prepared and run once before the group, on the writer.
        try pool.write { db in _ = try db.cachedStatement(sql: sql).fetchOne(Int.self) }
        let writes: [@Sendable (Connection) throws -> Int] = (0..<10).map { i in
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                let statement = try db.cachedStatement(sql: sql)
                _ = try statement.fetchOne(Int.self)
                return statement.timesPreparedAgain
            }
        }
        let results = try await together(pool, writes)
        let prepared = try results.map { try $0.get() }
        let groups = try metrics.expectRecorder("strongroom.write.group.size", [("database", "reuse.db")]).values
        #expect(groups.contains(10), "the 10 writes ran as one group: \(groups)")
        #expect(prepared.allSatisfy { $0 == 0 }, "times SQLite compiled the cached statement again, after each write: \(prepared)")
        try pool.close()
    }

    /// SQLite sets a flag pragma as it compiles it: a write that only
    /// prepares `PRAGMA defer_foreign_keys = ON`, in any spelling SQLite
    /// takes, and never runs it, has turned deferral on all the same; the
    /// next write of the group must not inherit it.
    @Test(.timeLimit(.minutes(1)), arguments: ["PRAGMA defer_foreign_keys = ON", "pragma \"DEFER_Foreign_Keys\"=1", "PRAGMA main.defer_foreign_keys = yes"])
    func aDeferralOnlyCompiledDoesNotReachTheNextWrite(_ pragma: String) async throws {
        try await expectTheNextWriteChecksItsForeignKeysAtOnce("compiled.db") { db in
            _ = try db.cachedStatement(sql: pragma)
            try db.execute(sql: "INSERT INTO parent(id) VALUES (1)")
        }
    }
    /// The pragma as a later statement of a script: each statement is
    /// noted as SQLite compiles it, only its own text read.
    @Test(.timeLimit(.minutes(1))) func aDeferralLaterInAScriptDoesNotReachTheNextWrite() async throws {
        try await expectTheNextWriteChecksItsForeignKeysAtOnce("script.db") { db in
            try db.execute(sql: "INSERT INTO parent(id) VALUES (1);\n-- then\nPRAGMA defer_foreign_keys = ON;")
        }
    }

    /// Issue 51, ``Configuration/GroupedWriteUndo/runningTheOthersAgain``:
    /// no write of a group runs in a savepoint (SQLCipher encrypts every
    /// page a savepoint may restore) until one fails. Then the transaction
    /// is rolled back, the failed write's caller gets its error, and the
    /// writes before it run again, each in a savepoint now, their callers
    /// getting the second run's results; a later failure is taken back by
    /// its savepoint alone, so no closure runs more than twice.
    @Test(.timeLimit(.minutes(1))) func withoutSavepointsAFailedWriteRunsTheWritesBeforeItAgain() async throws {
        let (pool, _) = try pool("again.db", undo: .runningTheOthersAgain)
        struct Refused: Error {}
        let runs = Mutex([Int](repeating: 0, count: 8))
        let statements = Mutex([String]())
        try pool.write { db in db.traceStatements { sql in statements.withLock { $0.append(sql) } } }
        let writes: [@Sendable (Connection) throws -> Int] = (0..<8).map { i in
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["w\(i)"])
                if i == 3 || i == 5 { throw Refused() }
                return runs.withLock { $0[i] += 1; return $0[i] }
            }
        }
        let results = try await together(pool, writes)
        for i in [0, 1, 2] { #expect((try? results[i].get()) == 2, "write \(i), run again after write 3 failed: \(results[i])") }
        for i in [3, 5] { #expect(results[i].error is Refused, "\(results[i])") }
        for i in [4, 6, 7] { #expect((try? results[i].get()) == 1, "write \(i): \(results[i])") }
        #expect(try values(pool) == ["w0", "w1", "w2", "w4", "w6", "w7"])
        let log = statements.withLock { $0 }
        let rollback = try #require(log.firstIndex { $0.hasPrefix("ROLLBACK") }, "the failed write rolled the transaction back: \(log)")
        #expect(!log[..<rollback].contains { $0.hasPrefix("SAVEPOINT") }, "no savepoint before the first failure: \(log)")
        #expect(log[rollback...].filter { $0.hasPrefix("SAVEPOINT") }.count == 7, "then each write in its own: \(log)")
        #expect(log.filter { $0.hasPrefix("ROLLBACK") && !$0.hasPrefix("ROLLBACK TO") }.count == 1, "one rollback of the transaction: \(log)")
        try pool.close()
    }

    /// Review of `runningTheOthersAgain`: a write whose closure has returned
    /// once, cancelled before it runs again, is not taken down by the
    /// cancellation: with savepoints, a cancellation after its closure
    /// returned changes nothing, and it commits; so it does here.
    @Test(.timeLimit(.minutes(1))) func aWriteCancelledBetweenItsTwoRunsStillCommits() async throws {
        let (pool, _) = try pool("cancelled-between-runs.db", undo: .runningTheOthersAgain)
        struct Refused: Error {}
        let runs = Mutex(0)
        let secondRun = Latch(), finish = Latch()
        let writes: [@Sendable (Connection) throws -> Void] = [
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES ('a')")
                // Its second run waits until the next write's task is cancelled.
                if runs.withLock({ $0 += 1; return $0 }) == 2 {
                    secondRun.open()
                    finish.wait()
                }
            },
            { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('m')") },
            { db in
                try db.execute(sql: "INSERT INTO t(v) VALUES ('f')")
                throw Refused()
            },
        ]
        let results = try await together(pool, writes) { tasks in
            Task {
                await secondRun.opened()
                tasks[1].cancel()
                finish.open()
            }
        }
        #expect(throws: Never.self) { try results[0].get() }
        #expect(throws: Never.self) { try results[1].get() }
        #expect(results[2].error is Refused, "\(results[2])")
        #expect(try values(pool) == ["a", "m"])
        try pool.close()
    }
}
