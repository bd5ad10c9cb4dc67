import Foundation
import GRDB

/// `async-pool PATH ROWS MILLISECONDS TASKS`: the harness's async pool
/// workload (its Workloads/AsyncPoolLoad.swift) on GRDB's `DatabasePool`.
/// PATH must not exist: ROWS rows of `person` are inserted first (untimed);
/// then TASKS Swift tasks (a task group) loop for MILLISECONDS, each doing
/// the same operations as the harness's clients: client c's operation i is
/// a write when (c + i) % 10 == 9, its row ids from SplitMix64 (seed c + 1);
/// a read (`try await pool.read`) fetches one row by primary key into a
/// record, a write (`try await pool.write`) adds 1 to one row's score.
///
/// Prints one JSON line: {"run": {seconds, reads, writes, p50, p99,
/// readP50, readP99, writeP50, writeP99, errors, lostWrites, missingRows},
/// "rows", "tasks", "debug", "sqlite"}; latencies in microseconds, the
/// nearest-rank percentiles of the sorted latencies (whole microseconds,
/// as the harness records its own).
enum AsyncPoolWorkload {
    struct Run: Encodable {
        var seconds: Double
        var reads: Int
        var writes: Int
        var p50: Double
        var p99: Double
        var readP50: Double
        var readP99: Double
        var writeP50: Double
        var writeP99: Double
        var errors: Int
        var lostWrites: Int
        var missingRows: Int
    }

    struct Answer: Encodable {
        var run: Run
        var rows: Int
        var tasks: Int
        var debug: Bool
        var sqlite: String
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

    static let select = "SELECT id, name, email, score, active FROM person WHERE id = ?"
    static let update = "UPDATE person SET score = score + 1 WHERE id = ?"

    static func run(path: String, rows: Int, milliseconds: Int, tasks: Int, debug: Bool) throws -> String {
        var configuration = Configuration()
        // The harness's settings for its own connections, and the pool's
        // readers as many as Strongroom's (its default: 4).
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -65536; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY")
        }
        configuration.maximumReaderCount = 4
        // GRDB's default busy mode is an immediate error: in about 1 run in
        // 8 of this workload, one write's BEGIN IMMEDIATE met SQLITE_BUSY
        // ("database is locked") and the run was refused (issue 51). Waited
        // up to 5 s, as Strongroom's connections wait by default.
        configuration.busyMode = .timeout(5)
        let pool = try DatabasePool(path: path, configuration: configuration)
        let names = (0..<1000).map { "name-\(100_000 + $0)" }
        let emails = (0..<1000).map { "user\(100_000 + $0)@example.com" }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL NOT NULL, active INTEGER NOT NULL)")
            let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email, score, active) VALUES (?, ?, ?, ?, ?)")
            for i in 0..<rows {
                try insert.execute(arguments: [Int64(i + 1), names[i % 1000], emails[i % 1000], Double(i) * 0.5, i & 1 == 1])
            }
        }
        let before = try scores(pool)

        final class Outcome: @unchecked Sendable {
            var logs: [ClientLog] = []
            var seconds = 0.0
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let start = DispatchTime.now().uptimeNanoseconds
            let deadline = start + UInt64(milliseconds) * 1_000_000
            let logs = await withTaskGroup(of: ClientLog.self, returning: [ClientLog].self) { group in
                for client in 0..<tasks {
                    group.addTask {
                        var log = ClientLog()
                        var generator = SplitMix64(seed: UInt64(client + 1))
                        var operation = 0
                        while DispatchTime.now().uptimeNanoseconds < deadline {
                            let id = Int64(generator.next() % UInt64(rows)) + 1
                            if (client + operation) % 10 == 9 {
                                await log.record(write: true) {
                                    try await pool.write { db in try db.cachedStatement(sql: update).execute(arguments: [id]) }
                                    return true
                                }
                            } else {
                                await log.record(write: false) {
                                    try await pool.read { db in
                                        guard let person = try Person.fetchOne(db.cachedStatement(sql: select), arguments: [id]) else { return false }
                                        return person.id == id && !person.name.isEmpty
                                    }
                                }
                            }
                            operation += 1
                        }
                        return log
                    }
                }
                var logs: [ClientLog] = []
                for await log in group { logs.append(log) }
                return logs
            }
            // The semaphore orders these writes before the reads below.
            outcome.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            outcome.logs = logs
            done.signal()
        }
        done.wait()

        let logs = outcome.logs
        func percentiles(_ nanoseconds: [UInt64]) -> (Double, Double) {
            let sorted = nanoseconds.map { $0 / 1000 }.sorted()
            guard !sorted.isEmpty else { return (.nan, .nan) }
            func at(_ p: Double) -> Double { Double(sorted[max(Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1, 0)]) }
            return (at(50), at(99))
        }
        let reads = logs.flatMap(\.reads), writes = logs.flatMap(\.writes)
        let all = percentiles(reads + writes), read = percentiles(reads), write = percentiles(writes)
        let grown = try scores(pool) - before
        let sqlite = try pool.read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "?"
        let run = Run(seconds: outcome.seconds, reads: reads.count, writes: writes.count,
                      p50: all.0, p99: all.1, readP50: read.0, readP99: read.1, writeP50: write.0, writeP99: write.1,
                      errors: logs.reduce(0) { $0 + $1.errors },
                      lostWrites: grown.isFinite ? abs(writes.count - Int(grown)) : writes.count,
                      missingRows: logs.reduce(0) { $0 + $1.missingRows })
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let rowCount = try pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM person") } ?? 0
        let answer = Answer(run: run, rows: rowCount, tasks: tasks, debug: debug, sqlite: sqlite)
        return String(decoding: try encoder.encode(answer), as: UTF8.self)
    }

    static func scores(_ pool: DatabasePool) throws -> Double {
        try pool.read { try Double.fetchOne($0, sql: "SELECT sum(score) FROM person") } ?? .nan
    }
}
