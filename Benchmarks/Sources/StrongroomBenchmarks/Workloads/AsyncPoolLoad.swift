import Foundation
import Histogram
import Strongroom

/// Issue 37, item 8: many clients on one `DatabasePool` at once, nine reads
/// to one write, for a fixed time: throughput, and the latency each client
/// sees (p50 and p99, all operations, and reads and writes apart).
///
/// The table is the harness's `person` (10,000 rows, id, name, email, score,
/// active). A read fetches one row by primary key into a record; a write
/// adds 1 to one row's score. Client `c`'s operations come from its own
/// SplitMix64 (seed `c + 1`, the row ids) and its own place in the cycle of
/// ten (operation `i` is a write when `(c + i) % 10 == 9`), so every run, and
/// GRDB's, issues the same operations in the same order client by client.
/// At the end the scores must have grown by the writes that succeeded (no
/// lost write), and every read must have found its row.
///
/// Four shapes of the same clients:
/// - "Strongroom async": 1,000 Swift tasks (a task group), each awaiting
///   `asyncRead` and `asyncWrite` in turn;
/// - "Strongroom async, group commit": the same, on a pool whose
///   `Configuration.groupsAsyncWrites` is on (as the example service's):
///   writes waiting together share one transaction. With 1,000 clients in a
///   closed loop, ours serves reads about three times as fast as GRDB, so
///   writes arrive three times as often, and one writer committing each
///   alone is where they queue (issue 51: writes p50 27 ms, p99 70 ms, while
///   GRDB's, arriving a third as often, never queue);
/// - "Strongroom sync, 4 threads": 4 OS threads, each calling `read` and
///   `write`: the synchronous API's best shape, as many threads as the pool
///   has readers. A thread per client is not one: in release on the 2-core
///   machine of issue 37 (2 s runs, ops/s), 4 threads made 72k to 80k, 5 to 8
///   threads 60k to 73k, 16 to 64 threads 68k to 72k, 128 threads 60k to 65k
///   and 256 threads 38k; every thread more only waits for a connection
///   (and its latency grows with the queue: about threads over throughput);
/// - "GRDB async": GRDB 7.10's `DatabasePool`, 1,000 tasks awaiting
///   `read` and `write`, in the peer's process (`async-pool`).
enum AsyncPoolLoad {
    static let name = "async pool, 9 reads to 1 write, concurrent clients"
    static let tasks = 1000
    /// See above: the count that gave the synchronous API its highest throughput.
    static let threads = 4
    static let rows = 10_000
    static let async = "Strongroom async"
    static let grouped = "Strongroom async, group commit"
    static let sync = "Strongroom sync, \(threads) threads"
    static let grdb = "GRDB async"

    static let select = "SELECT id, name, email, score, active FROM person WHERE id = ?"
    static let update = "UPDATE person SET score = score + 1 WHERE id = ?"

    /// Whether operation `operation` of client `client` is a write: one in ten.
    @inline(__always)
    static func isWrite(client: Int, operation: Int) -> Bool { (client + operation) % 10 == 9 }

    /// One run's figures (the peer prints the same fields in its JSON line):
    /// latencies in microseconds.
    struct Run: Codable, Sendable {
        var seconds: Double
        var reads: Int
        var writes: Int
        var p50: Double
        var p99: Double
        var readP50: Double
        var readP99: Double
        var writeP50: Double
        var writeP99: Double
        /// Errors that reached a client, writes the table does not show,
        /// reads that found no row: all must be zero.
        var errors: Int
        var lostWrites: Int
        var missingRows: Int

        var throughput: Double { Double(reads + writes) / seconds }
        var latencies: Latencies {
            Latencies(p50: p50, p99: p99, readP50: readP50, readP99: readP99, writeP50: writeP50, writeP99: writeP99)
        }
    }

    /// What one client saw: each operation's latency in nanoseconds.
    struct ClientLog: Sendable {
        var reads: [UInt64] = []
        var writes: [UInt64] = []
        var errors = 0
        var missingRows = 0

        init() {
            reads.reserveCapacity(256)
            writes.reserveCapacity(32)
        }

        /// One operation, timed; `body` returns whether a read found its row.
        mutating func record(write: Bool, _ body: () throws -> Bool) {
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                let found = try body()
                let elapsed = DispatchTime.now().uptimeNanoseconds - start
                if write { writes.append(elapsed) } else { reads.append(elapsed); if !found { missingRows += 1 } }
            } catch {
                errors += 1
            }
        }

        mutating func record(write: Bool, _ body: () async throws -> Bool) async {
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                let found = try await body()
                let elapsed = DispatchTime.now().uptimeNanoseconds - start
                if write { writes.append(elapsed) } else { reads.append(elapsed); if !found { missingRows += 1 } }
            } catch {
                errors += 1
            }
        }
    }

    /// A new file at `path` holding the table, in an encrypted pool
    /// (the default 4 readers), and the sum of its scores.
    static func prepare(path: String, key: DatabaseKey, data: SampleData, groupsWrites: Bool = false) throws -> (DatabasePool, Double) {
        var configuration = Configuration(key: key)
        configuration.groupsAsyncWrites = groupsWrites
        let pool = try DatabasePool(path: path, configuration: configuration)
        let poolSize = data.names.count
        try pool.write { db in
            try db.execute(sql: Scenarios.createTable)
            let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email, score, active) VALUES (?, ?, ?, ?, ?)")
            for i in 0..<rows {
                try insert.execute(Int64(i + 1), data.names[i % poolSize], data.emails[i % poolSize], Double(i) * 0.5, Int64(i & 1))
            }
        }
        return (pool, try scores(pool))
    }

    static func scores(_ pool: DatabasePool) throws -> Double {
        try pool.read { try $0.fetchOne(Double.self, sql: "SELECT sum(score) FROM person") ?? .nan }
    }

    /// A read: one row by primary key, as a record; true when it was there.
    static func read(_ db: Connection, id: Int64) throws -> Bool {
        guard let person = try db.cachedStatement(sql: select).fetchOne(PersonRecord.self, values: id) else { return false }
        return person.id == id && !person.name.isEmpty
    }

    static func write(_ db: Connection, id: Int64) throws {
        try db.cachedStatement(sql: update).execute(id)
    }

    /// `tasks` Swift tasks on `asyncRead` and `asyncWrite` for `duration`
    /// seconds (each finishes the operation it is in at the deadline).
    static func runAsync(directory: String, key: DatabaseKey, data: SampleData, seconds duration: Double, tasks: Int = tasks, groupsWrites: Bool = false) throws -> Run {
        let path = "\(directory)/async-pool.db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let (pool, before) = try prepare(path: path, key: key, data: data, groupsWrites: groupsWrites)
        let result = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let start = DispatchTime.now().uptimeNanoseconds
            let deadline = start + UInt64(duration * 1e9)
            let logs = await withTaskGroup(of: ClientLog.self, returning: [ClientLog].self) { group in
                for client in 0..<tasks {
                    group.addTask {
                        var log = ClientLog()
                        var generator = SplitMix64(seed: UInt64(client + 1))
                        var operation = 0
                        // At least one operation per client: on a loaded
                        // machine a task may start after the deadline.
                        repeat {
                            let id = Int64(generator.next() % UInt64(rows)) + 1
                            if isWrite(client: client, operation: operation) {
                                await log.record(write: true) {
                                    try await pool.asyncWrite { db in try write(db, id: id) }
                                    return true
                                }
                            } else {
                                await log.record(write: false) {
                                    try await pool.asyncRead { db in try read(db, id: id) }
                                }
                            }
                            operation += 1
                        } while DispatchTime.now().uptimeNanoseconds < deadline
                        return log
                    }
                }
                var logs: [ClientLog] = []
                for await log in group { logs.append(log) }
                return logs
            }
            result.set(logs, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            done.signal()
        }
        done.wait()
        return try result.run(pool: pool, before: before)
    }

    /// The same clients' operations from `threads` OS threads on `read`
    /// and `write` (thread `t` runs client `t`'s).
    static func runThreads(directory: String, key: DatabaseKey, data: SampleData, seconds duration: Double, threads: Int = threads) throws -> Run {
        let path = "\(directory)/sync-pool.db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let (pool, before) = try prepare(path: path, key: key, data: data)
        let result = Outcome()
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(duration * 1e9)
        for client in 0..<threads {
            group.enter()
            let thread = Thread {
                var log = ClientLog()
                var generator = SplitMix64(seed: UInt64(client + 1))
                var operation = 0
                repeat {
                    let id = Int64(generator.next() % UInt64(rows)) + 1
                    if isWrite(client: client, operation: operation) {
                        log.record(write: true) { try pool.write { db in try write(db, id: id) }; return true }
                    } else {
                        log.record(write: false) { try pool.read { db in try read(db, id: id) } }
                    }
                    operation += 1
                } while DispatchTime.now().uptimeNanoseconds < deadline
                result.append(log)
                group.leave()
            }
            thread.start()
        }
        group.wait()
        result.set(seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        return try result.run(pool: pool, before: before)
    }

    /// The clients' logs, gathered under a lock, made into a run's figures.
    private final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var logs: [ClientLog] = []
        private var seconds = 0.0

        func append(_ log: ClientLog) { lock.lock(); logs.append(log); lock.unlock() }
        func set(_ logs: [ClientLog] = [], seconds: Double) {
            lock.lock(); self.logs += logs; self.seconds = seconds; lock.unlock()
        }

        func run(pool: DatabasePool, before: Double) throws -> Run {
            lock.lock(); defer { lock.unlock() }
            func histogram(_ latencies: [KeyPath<ClientLog, [UInt64]>]) -> Histogram<UInt64> {
                var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
                for log in logs {
                    for path in latencies { for nanoseconds in log[keyPath: path] { _ = histogram.record(nanoseconds / 1000) } }
                }
                return histogram
            }
            let all = histogram([\.reads, \.writes]), reads = histogram([\.reads]), writes = histogram([\.writes])
            func at(_ h: Histogram<UInt64>, _ percentile: Double) -> Double { h.totalCount == 0 ? .nan : Double(h.valueAtPercentile(percentile)) }
            let writeCount = logs.reduce(0) { $0 + $1.writes.count }
            let grown = try AsyncPoolLoad.scores(pool) - before
            return Run(seconds: seconds, reads: logs.reduce(0) { $0 + $1.reads.count }, writes: writeCount,
                       p50: at(all, 50), p99: at(all, 99), readP50: at(reads, 50), readP99: at(reads, 99),
                       writeP50: at(writes, 50), writeP99: at(writes, 99),
                       errors: logs.reduce(0) { $0 + $1.errors },
                       lostWrites: grown.isFinite ? abs(writeCount - Int(grown)) : writeCount,
                       missingRows: logs.reduce(0) { $0 + $1.missingRows })
        }
    }
}

extension WorkloadContext {
    /// The async pool workload: Strongroom async (with and without group
    /// commit), Strongroom sync on threads, GRDB async (its own process),
    /// each run on a new file, in
    /// the runner's interleaved rounds; throughput is the sample, and the
    /// latencies are the medians of the rounds' percentiles.
    func asyncPoolLoad(_ runner: inout Runner, seconds duration: Double, rounds: Int) throws {
        let peer = try peer.orThrow()
        /// Each contender's runs, in the order they ran (the warm-up first).
        final class Runs { var runs: [String: [AsyncPoolLoad.Run]] = [:] }
        let log = Runs()
        func contender(_ name: String, _ role: Role, _ run: @escaping () throws -> AsyncPoolLoad.Run) -> Contender {
            Contender(name: name, role: role) {
                let figures = try run()
                log.runs[name, default: []].append(figures)
                return figures.throughput
            }
        }
        let directory = self.directory, key = self.key, data = self.data
        try runner.measure(AsyncPoolLoad.name, group: "pool", size: AsyncPoolLoad.tasks, unit: "ops/s", lowerIsBetter: false, targets: [
            .ratio(AsyncPoolLoad.async, to: AsyncPoolLoad.grdb, atLeast: 1),
            .p99(AsyncPoolLoad.async, to: AsyncPoolLoad.grdb, atMost: 1),
            .ratio(AsyncPoolLoad.grouped, to: AsyncPoolLoad.grdb, atLeast: 1),
            .p99(AsyncPoolLoad.grouped, to: AsyncPoolLoad.grdb, atMost: 1),
            .value("lost writes", atMost: 0), .value("errors reaching a client", atMost: 0), .value("reads that found no row", atMost: 0),
        ], notes: [
            "\(AsyncPoolLoad.tasks) clients for \(duration) s each run, on a new file of \(formattedSize(AsyncPoolLoad.rows)) rows (`person`); client c's operation i is a write when (c + i) % 10 = 9, its row ids from SplitMix64 (seed c + 1). A read fetches one row by primary key into a record (`asyncRead`/`read`: a transaction of its own on one of 4 readers); a write adds 1 to one row's score (`asyncWrite`/`write`: an IMMEDIATE transaction on the writer). Ours encrypted (raw key), GRDB 7.10 plaintext on the system's SQLite with 4 readers (`maximumReaderCount`) and the harness's pragmas.",
            "\(AsyncPoolLoad.async): \(AsyncPoolLoad.tasks) Swift tasks in a task group. \(AsyncPoolLoad.grouped): the same on a pool with `groupsAsyncWrites` on (as the example service runs): writes waiting together share one IMMEDIATE transaction, each in a savepoint. \(AsyncPoolLoad.sync): the same clients' operations from \(AsyncPoolLoad.threads) OS threads (clients 0 to \(AsyncPoolLoad.threads - 1)), as many as the pool has readers: the synchronous API's best shape (more threads only queue for a connection, and made fewer ops/s: AsyncPoolLoad.swift). With \(AsyncPoolLoad.threads) clients in flight instead of \(AsyncPoolLoad.tasks), its latencies are those of a short queue (a client's latency grows with the clients waiting: about clients over throughput); it compares with the others through its throughput. \(AsyncPoolLoad.grdb): \(AsyncPoolLoad.tasks) tasks on GRDB's `DatabasePool` (`try await read`/`write`), in the peer's process.",
            "Throughput: operations completed over the time from the first client's start to the last one's end. Latencies: each operation from the call to its return, in microseconds (ours: HdrHistogram, 3 significant digits; GRDB's: its sorted latencies); each figure is the median of the rounds' percentiles. Rounds: one warm-up, then \(rounds), interleaved.",
        ], rounds: rounds, [
            contender(AsyncPoolLoad.async, .ours) { try AsyncPoolLoad.runAsync(directory: directory, key: key, data: data, seconds: duration) },
            contender(AsyncPoolLoad.grouped, .ours) { try AsyncPoolLoad.runAsync(directory: directory, key: key, data: data, seconds: duration, groupsWrites: true) },
            contender(AsyncPoolLoad.sync, .ours) { try AsyncPoolLoad.runThreads(directory: directory, key: key, data: data, seconds: duration) },
            contender(AsyncPoolLoad.grdb, .peer) {
                let path = fresh("grdb-async-pool")
                defer { remove(path) }
                return try peer.asyncPool(path: path, rows: AsyncPoolLoad.rows, seconds: duration, tasks: AsyncPoolLoad.tasks)
            },
        ]) { w in
            var latencies: [String: Latencies] = [:]
            var ours: [AsyncPoolLoad.Run] = []
            for c in w.contenders {
                // The recorded rounds: the last runs (the first was the warm-up).
                let runs = Array((log.runs[c.name] ?? []).suffix(c.samples.values.count))
                if c.role == .ours { ours += log.runs[c.name] ?? [] }
                latencies[c.name] = Latencies(medianOf: runs.map(\.latencies))
                let reads = runs.reduce(0) { $0 + $1.reads }, writes = runs.reduce(0) { $0 + $1.writes }
                w.figures["reads per write, \(c.name)"] = writes > 0 ? (Double(reads) / Double(writes) * 100).rounded() / 100 : .nan
            }
            w.latencies = latencies
            // Ours, every run (the peer refuses a run with any).
            w.figures["lost writes"] = Double(ours.reduce(0) { $0 + $1.lostWrites })
            w.figures["errors reaching a client"] = Double(ours.reduce(0) { $0 + $1.errors })
            w.figures["reads that found no row"] = Double(ours.reduce(0) { $0 + $1.missingRows })
        }
    }
}
