import Foundation
import Strongroom

// reliability-child async-serving pool|queue DB KEY
//   issue 37, item 1, in a process of its own so that no other test's
//   threads or load count: 8 async reads of 0.3 s while an unrelated task
//   sleeps 10 times 10 ms, then 10,000 concurrent async reads while a
//   sampler reads the process's thread count from /proc/self/status.
//   Prints one JSON line of counts and times.
extension ReliabilityChild {
    static func asyncServing(kind: String, database: String, keyFile: String) async throws {
        let key = try DatabaseKey.load(keyFile: keyFile)
        var configuration = Configuration(key: key)
        configuration.maximumReaderCount = 4
        let read: @Sendable (@escaping @Sendable (Connection) throws -> Int) async throws -> Int
        var write: (@Sendable (@escaping @Sendable (Connection) throws -> Int) async throws -> Int)?
        let readers: Int
        var firstWriterNice = -99, mayRaise = false
        switch kind {
        case "pool":
            let pool = try DatabasePool(path: database, configuration: configuration)
            // The first write, of more than 1,000 pages, from a thread 5
            // levels below the main thread: its commit starts the
            // checkpointer's thread there, which must still run at the main
            // thread's level (it took its creator's, helper-55).
            let lowered = try onThreadNiceBelowMain(by: 5) {
                try pool.write { db in
                    try db.execute(sql: "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1)")
                    try db.execute(sql: "CREATE TABLE early(b BLOB); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1100) INSERT INTO early SELECT randomblob(4000) FROM c")
                }
                for _ in 0..<2_000 where threadNiceValues()["strongroom-ckpt"] == nil { usleep(10_000) }
            }
            firstWriterNice = lowered.nice
            mayRaise = lowered.mayRaise
            read = { body in try await pool.asyncRead(body) }
            write = { body in try await pool.asyncWrite(body) }
            readers = 4
        default:
            let queue = try DatabaseQueue(path: database, configuration: configuration)
            try queue.write { db in try db.execute(sql: "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1)") }
            read = { body in try await queue.asyncRead(body) }
            readers = 0
        }
        let baselineThreads = threadCount()

        // 8 reads of 0.3 s, and an unrelated task's 10 sleeps of 10 ms.
        let running = Concurrency()
        let start = DispatchTime.now().uptimeNanoseconds
        async let sleeper: UInt64 = {
            for _ in 0..<10 { try? await Task.sleep(nanoseconds: 10_000_000) }
            return DispatchTime.now().uptimeNanoseconds
        }()
        let readsDone: UInt64 = try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    _ = try await read { db in
                        let begun = running.enter(thread: currentThreadName(), nice: currentThreadNice())
                        defer { running.leave(begun: begun) }
                        usleep(300_000)
                        return try db.fetchOne(Int.self, sql: "SELECT x FROM t") ?? 0
                    }
                }
            }
            try await group.waitForAll()
            return DispatchTime.now().uptimeNanoseconds
        }
        let sleeperDone = await sleeper
        let readSeconds = Double(readsDone - start) / 1e9
        let sleeperSeconds = Double(sleeperDone - start) / 1e9

        // 10,000 concurrent reads, and the most threads seen meanwhile.
        let sampling = Flag()
        let maximum = Maximum()
        let sampler = started {
            while !sampling.isSet {
                maximum.record(threadCount())
                usleep(2_000)
            }
        }
        let completed = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10_000 {
                group.addTask { try await read { db in try db.fetchOne(Int.self, sql: "SELECT x FROM t") ?? 0 } }
            }
            var sum = 0
            for try await one in group { sum += one }
            return sum
        }
        sampling.set()
        sampler.join()

        // A pool's writer and checkpointer: one async write of more than
        // 1,000 pages sets off a background checkpoint on a thread of its own.
        var threadNice: [String: [Int]] = [:]
        if let write {
            try await write { db in
                try db.execute(sql: "CREATE TABLE pages(b BLOB); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1100) INSERT INTO pages SELECT randomblob(4000) FROM c")
                return 0
            }
            for _ in 0..<2_000 where threadNiceValues()["strongroom-ckpt"] == nil { usleep(10_000) }
            threadNice = threadNiceValues().filter { $0.key.hasPrefix("strongroom") }
        }
        let figures: [String: Any] = [
            "thread_nice": threadNice,
            "first_writer_nice": firstWriterNice,
            "may_raise": mayRaise,
            "readers": readers,
            "baseline_threads": baselineThreads,
            "max_concurrent": running.maximum,
            "body_threads": running.threadNames.sorted(),
            "body_nice": running.niceValues.sorted(),
            "process_nice": currentThreadNice(),
            "main_nice": mainThreadNice(),
            "reads_seconds": readSeconds,
            "sleeper_seconds": sleeperSeconds,
            "sleeper_before_reads": sleeperDone < readsDone,
            "sleeper_before_first_read": sleeperDone < running.firstEnd,
            "read_body_seconds": Double(running.bodyNanoseconds) / 1e9,
            "completed": completed,
            "max_threads": maximum.value,
        ]
        FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: figures) + Data("\n".utf8))
    }

    /// The process's thread count, from `/proc/self/status`.
    static func threadCount() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return -1 }
        return Int(line.split(separator: "\t", omittingEmptySubsequences: true).last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
    }
}

/// The name the system gives the calling thread (`/proc/thread-self/comm`).
func currentThreadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
    return name.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Each thread name of the process and the nice values of its threads
/// (`/proc/self/task/*/stat`, field 19).
func threadNiceValues() -> [String: [Int]] {
    var values: [String: [Int]] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.range(of: ") ", options: .backwards) else { continue }
        let name = String(stat[stat.index(after: open)..<close.lowerBound])
        let fields = stat[close.upperBound...].split(separator: " ")
        if fields.count > 16, let nice = Int(fields[16]) { values[name, default: []].append(nice) }
    }
    return values.mapValues { Array(Set($0)).sorted() }
}

/// The process's main thread's nice value (`/proc/self/stat`, the thread
/// group leader's): the one a pool's background threads count their levels
/// from (a task's thread may differ: libdispatch sets its workers' by QoS).
func mainThreadNice() -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
          let afterName = stat.range(of: ") ", options: .backwards) else { return -99 }
    let fields = stat[afterName.upperBound...].split(separator: " ")
    return fields.count > 16 ? Int(fields[16]) ?? -99 : -99
}

/// Runs `body` on a new thread `levels` nice levels below the main thread
/// and waits for it; returns the nice value it ran at, and whether that
/// thread could then raise itself back (root, or CAP_SYS_NICE).
func onThreadNiceBelowMain(by levels: Int32, _ body: @escaping @Sendable () throws -> Void) throws -> (nice: Int, mayRaise: Bool) {
    final class Outcome: @unchecked Sendable { var nice = -99, mayRaise = false, error: (any Error)? }
    let outcome = Outcome(), done = DispatchSemaphore(value: 0)
    let thread = Thread {
        // Linux keeps a nice value per thread: setpriority(PRIO_PROCESS, 0)
        // (what nice(3) calls) sets the calling thread's.
        _ = nice(Int32(mainThreadNice()) + levels - Int32(currentThreadNice()))
        outcome.nice = currentThreadNice()
        do { try body() } catch { outcome.error = error }
        errno = 0
        _ = nice(-levels)
        outcome.mayRaise = errno == 0 && currentThreadNice() == mainThreadNice()
        done.signal()
    }
    thread.start()
    done.wait()
    if let error = outcome.error { throw error }
    return (outcome.nice, outcome.mayRaise)
}

/// The calling thread's nice value (`/proc/thread-self/stat`, field 19).
func currentThreadNice() -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
          let afterName = stat.range(of: ") ", options: .backwards) else { return -99 }
    // Fields from the third on (state is field 3): nice is field 19.
    let fields = stat[afterName.upperBound...].split(separator: " ")
    return fields.count > 16 ? Int(fields[16]) ?? -99 : -99
}

/// How many bodies run at once, the most seen, the threads they ran on and their nice values.
final class Concurrency: @unchecked Sendable {
    // Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private var now = 0, most = 0, names: Set<String> = [], nices: Set<Int> = []
    private var ended: UInt64 = .max, inside: UInt64 = 0
    /// Counts a body begun on `thread`; returns when (uptime, ns).
    func enter(thread: String, nice: Int) -> UInt64 {
        lock.withLock { now += 1; most = max(most, now); names.insert(thread); nices.insert(nice) }
        return DispatchTime.now().uptimeNanoseconds
    }
    var niceValues: Set<Int> { lock.withLock { nices } }
    /// Counts a body begun at `begun` as ended now.
    func leave(begun: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { self.now -= 1; ended = min(ended, now); inside += now - begun }
    }
    /// When the first body ended (uptime, ns).
    var firstEnd: UInt64 { lock.withLock { ended } }
    /// The time spent inside bodies, added up.
    var bodyNanoseconds: UInt64 { lock.withLock { inside } }
    var maximum: Int { lock.withLock { most } }
    var threadNames: Set<String> { lock.withLock { names } }
}

/// The largest value recorded, from any thread.
final class Maximum: @unchecked Sendable {
    // Sendable: `largest` is guarded by `lock`.
    private let lock = NSLock()
    private var largest = 0
    func record(_ value: Int) { lock.withLock { largest = max(largest, value) } }
    var value: Int { lock.withLock { largest } }
}

// reliability-child dropped-after-async queue|pool COUNT DIR
//   the review of issue 37, finding 1: COUNT queues (or pools), each used
//   once from async code and dropped, as a request handler might; 2 s later,
//   prints how many of their threads are left (none may be).
extension ReliabilityChild {
    static func droppedAfterAsync(kind: String, count: Int, directory: String) async throws {
        for i in 0..<count {
            let path = "\(directory)/\(kind)\(i).db"
            if kind == "pool" {
                let pool = try DatabasePool(path: path, configuration: Configuration(key: .generate()))
                _ = try await pool.asyncRead { _ in i }
            } else {
                let queue = try DatabaseQueue(path: path, configuration: Configuration(key: .generate()))
                _ = try await queue.asyncRead { _ in i }
            }
        }
        try await Task.sleep(nanoseconds: 2_000_000_000)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let left = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .filter { $0.hasPrefix("strongroom") }.count
        FileHandle.standardOutput.write(Data("{\"left\": \(left)}\n".utf8))
    }
}
