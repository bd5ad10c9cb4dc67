// The reliability tests' child process: work that a test kills with SIGKILL,
// loads for a while, or dumps the memory of. It takes keys from key files
// (never from its arguments) and prints only counts.
//
//   reliability-child pool-rekey DB OLD.key NEW.key
//       a pool with 4 readers reading while the pool rekeys the file from OLD to NEW
//   reliability-child load DB KEY SECONDS
//       a pool with 1 writer and 4 readers for SECONDS; prints one JSON line of counts
//   reliability-child release-keys DB KEY NEW.key FIELD.keyring MARKER
//       a pool that seals MARKER, reads it back and rekeys to NEW, then closes and
//       lets every key go; prints "released" and waits to be dumped and killed.
//       A key `command:CMD` is what CMD prints (KeyCommand); a wrapped key file or
//       keyring is unwrapped with what `cat passphrase.txt` prints
//   reliability-child async-serving pool|queue DB KEY
//       async reads off the cooperative pool: see AsyncServing.swift
//   reliability-child dropped-after-async queue|pool COUNT DIR
//       queues or pools used once from async code and dropped: threads left
//   reliability-child wal-load DB KEY SECONDS
//       1 writer and 8 overlapping readers; the -wal's size: see WALLoad.swift
//   reliability-child wal-load-async DB KEY SECONDS READERS
//       1 writer of batches and READERS async readers; see WALLoad.swift
//   reliability-child hold-keyring FIELD.keyring
//       loads the keyring and keeps it (its keys live in secure memory only);
//       prints "holding" and waits to be dumped and killed
import Foundation
import Strongroom
import StrongroomFields

@main
enum ReliabilityChild {
    /// Exits 65 when a key does not open the file (as `strongroom` does), 1 on any other error.
    static func main() {
        do {
            try run()
        } catch let error as StrongroomError {
            FileHandle.standardError.write(Data("reliability-child: \(error.code.rawValue): \(error.message)\n".utf8))
            exit(error.code == .wrongKey ? 65 : 1)
        } catch {
            FileHandle.standardError.write(Data("reliability-child: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch (arguments.first, arguments.count) {
        case ("pool-rekey", 4): try poolRekey(database: arguments[1], oldKeyFile: arguments[2], newKeyFile: arguments[3])
        case ("load", 4): try load(database: arguments[1], keyFile: arguments[2], seconds: Double(arguments[3]) ?? 5)
        case ("async-serving", 4):
            let (kind, database, keyFile) = (arguments[1], arguments[2], arguments[3])
            try waitFor { try await asyncServing(kind: kind, database: database, keyFile: keyFile) }
        case ("dropped-after-async", 4):
            let (kind, count, directory) = (arguments[1], Int(arguments[2]) ?? 100, arguments[3])
            try waitFor { try await droppedAfterAsync(kind: kind, count: count, directory: directory) }
        case ("wal-load", 4): try walLoad(database: arguments[1], keyFile: arguments[2], seconds: Double(arguments[3]) ?? 20)
        case ("wal-load-async", 5):
            try walLoadAsync(database: arguments[1], keyFile: arguments[2], seconds: Double(arguments[3]) ?? 30, readers: Int(arguments[4]) ?? 4)
        case ("hold-keyring", 2):
            let keyring = try FieldKeyring.load(from: arguments[1])
            FileHandle.standardOutput.write(Data("holding \(keyring.keyIDs.count)\n".utf8))
            while true { pause() }
        case ("release-keys", 6):
            try releaseKeys(database: arguments[1], keyFile: arguments[2], newKeyFile: arguments[3], keyring: arguments[4], marker: arguments[5])
        default:
            FileHandle.standardError.write(Data("usage: reliability-child pool-rekey|load|release-keys|async-serving|dropped-after-async|wal-load|wal-load-async|hold-keyring ...\n".utf8))
            exit(64)
        }
    }

    /// Runs `body` in a task and blocks until it ends.
    static func waitFor(_ body: @escaping @Sendable () async throws -> Void) throws {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await body() } catch { outcome.error = error }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }

    /// Rekeys through a pool while four readers keep reading.
    static func poolRekey(database: String, oldKeyFile: String, newKeyFile: String) throws {
        let pool = try DatabasePool(path: database, configuration: Configuration(key: DatabaseKey.load(keyFile: oldKeyFile)))
        let newKey = try DatabaseKey.load(keyFile: newKeyFile)
        let stop = Flag()
        let readers = (0..<4).map { _ in
            started {
                while !stop.isSet {
                    _ = try? pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") }
                }
            }
        }
        do {
            defer {
                stop.set()
                readers.forEach { $0.join() }
            }
            try pool.rekey(to: newKey)
        }
        try pool.close()
    }

    /// One writer moving money between accounts (the total never changes)
    /// and counting its commits, four readers checking that total and that
    /// the count only grows, for `seconds`. Prints the counts and the
    /// resident memory sampled every 100 ms as one JSON object.
    static func load(database: String, keyFile: String, seconds: Double) throws {
        let accounts = 1000, total = accounts * 100
        let pool = try DatabasePool(path: database, configuration: Configuration(key: DatabaseKey.load(keyFile: keyFile)))
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
                CREATE TABLE commits(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
                CREATE TABLE recent(n INTEGER PRIMARY KEY, moved INTEGER NOT NULL);
                INSERT INTO commits VALUES (1, 0);
                INSERT INTO account(id, balance) WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(accounts))
                  SELECT i, 100 FROM k;
                """)
        }
        let counts = Counts()
        let deadline = Date().addingTimeInterval(seconds)
        let writer = started {
            var n = 0
            while Date() < deadline {
                let from = Int.random(in: 1...accounts), to = Int.random(in: 1...accounts), amount = Int.random(in: 1...50)
                counts.counting {
                    try pool.write { db in
                        try db.execute(sql: "UPDATE account SET balance = balance - ? WHERE id = ?", arguments: [amount, from])
                        try db.execute(sql: "UPDATE account SET balance = balance + ? WHERE id = ?", arguments: [amount, to])
                        try db.execute(sql: "UPDATE commits SET n = n + 1")
                        // A bounded log: the commit's row in, the row 100 commits old out.
                        try db.execute(sql: "INSERT INTO recent(n, moved) VALUES (?, ?)", arguments: [n + 1, amount])
                        try db.execute(sql: "DELETE FROM recent WHERE n <= ?", arguments: [n + 1 - 100])
                    }
                    n += 1
                    counts.add(writes: 1)
                }
            }
        }
        let readers = (0..<4).map { _ in
            started {
                var seen = 0
                while Date() < deadline {
                    counts.counting {
                        let (sum, n, last) = try pool.read { db in
                            (try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") ?? -1,
                             try db.fetchOne(Int.self, sql: "SELECT n FROM commits") ?? -1,
                             try db.fetchOne(Int.self, sql: "SELECT coalesce(max(n), 0) FROM recent") ?? -1)
                        }
                        // A partial transaction shows as a total that moved, a
                        // count that went back, or a log out of step with the count.
                        if sum != total || n < seen || last != n { counts.add(partial: 1) }
                        seen = n
                        counts.add(reads: 1)
                    }
                }
            }
        }
        var residentKiB: [Int] = []
        while Date() < deadline {
            residentKiB.append(residentMemoryKiB())
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Let the threads see the deadline and end.
        writer.join()
        readers.forEach { $0.join() }
        try pool.close()
        let summary = counts.snapshot().merging(["resident_kib": residentKiB]) { $1 }
        let data = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Uses the database key and the field keys, then lets every copy go:
    /// what a process's memory holds after its keys are released.
    static func releaseKeys(database: String, keyFile: String, newKeyFile: String, keyring: String, marker: String) throws {
        do {
            // Asked only for a wrapped file.
            let passphrase = PassphraseSource.command(KeyCommand("cat passphrase.txt"))
            func key(_ source: String) throws -> DatabaseKey {
                source.hasPrefix("command:") ? try DatabaseKey.fromCommand(KeyCommand(String(source.dropFirst(8))))
                    : try DatabaseKey.load(keyFile: source, unwrappingWith: passphrase)
            }
            var configuration = Configuration(key: try key(keyFile))
            configuration.seal([.randomized("email", in: "customer")], keyring: try FieldKeyring.load(from: keyring, unwrappingWith: passphrase), rowKeys: ["customer": ["id"]])
            let pool = try DatabasePool(path: database, configuration: configuration)
            try pool.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS customer(id INTEGER PRIMARY KEY, email BLOB)")
                struct Customer: Encodable { var id: Int64; var email: String }
                try db.insert(Customer(id: 1, email: marker), into: "customer")
            }
            let opened = try pool.read { db in try db.fetchAll(sql: "SELECT id, email FROM customer") }
            guard opened.count == 1 else { exit(70) }
            try pool.rekey(to: key(newKeyFile))
            try pool.close()
        }
        FileHandle.standardOutput.write(Data("released\n".utf8))
        while true { pause() }
    }

    static func residentMemoryKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}

/// A thread of ours, joined before the process exits; a child that cannot
/// make one fails at once.
func started(_ body: @escaping @Sendable () -> Void) -> JoinableThread {
    guard let thread = JoinableThread(body) else {
        FileHandle.standardError.write(Data("reliability-child: no thread could be made\n".utf8))
        exit(70)
    }
    return thread
}

/// An error from a task, or the seconds it reported, read after it ends.
final class Outcome: @unchecked Sendable {
    // Sendable: written by the task before it signals, read after the wait.
    var error: (any Error)?
    var seconds: Double = -1
}

/// A flag set once, read from other threads.
final class Flag: @unchecked Sendable {
    // Sendable: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// The load's counts, added to from five threads.
final class Counts: @unchecked Sendable {
    // Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private var writes = 0, reads = 0, busy = 0, partial = 0, otherErrors = 0
    private var walPeak = 0

    func add(writes: Int = 0, reads: Int = 0, busy: Int = 0, partial: Int = 0, otherErrors: Int = 0) {
        lock.withLock {
            self.writes += writes; self.reads += reads; self.busy += busy
            self.partial += partial; self.otherErrors += otherErrors
        }
    }

    /// Runs one read or write, counting a busy error (which must never
    /// reach the caller) or any other error it throws.
    func counting(_ body: () throws -> Void) {
        do {
            try body()
        } catch let error as StrongroomError where error.code == .busy {
            add(busy: 1)
        } catch {
            add(otherErrors: 1)
        }
    }


    func snapshot() -> [String: Any] {
        lock.withLock { ["writes": writes, "reads": reads, "busy": busy, "partial": partial, "other_errors": otherErrors] }
    }

    /// Notes a size of the `-wal`, sampled.
    func noteWAL(bytes: Int) { lock.withLock { walPeak = max(walPeak, bytes) } }

    /// The largest `-wal` size noted so far.
    var peakWAL: Int { lock.withLock { walPeak } }

    /// Whether at least `writes` writes and `reads` reads have been
    /// counted, and a `-wal` of at least `walBytes` noted.
    func reached(writes: Int, reads: Int, walBytes: Int = 0) -> Bool {
        lock.withLock { self.writes >= writes && self.reads >= reads && walPeak >= walBytes }
    }
}

/// When a timed load stops: not before its seconds, then as soon as it has
/// made the writes and reads its test asks for (`WAL_MIN_WRITES`,
/// `WAL_MIN_READS`; none by default) and seen the `-wal` reach the size it
/// asks for (`WAL_MIN_PEAK_BYTES`), and at the latest at its cap: twice
/// its seconds and 30 more, and at most 120 more (a 300 s load in `make
/// stress` stops by 420 s, inside its test's 10-minute limit). A slow or
/// loaded machine runs longer instead of making a test fail on counts; a
/// load that makes no progress still stops, short of them, and its test
/// fails. Timed on the monotonic clock: a step of the wall clock neither
/// ends a load early nor stretches it.
struct LoadDeadline: Sendable {
    let start = ContinuousClock.now
    let seconds: Double
    let minimumWrites: Int
    let minimumReads: Int
    let minimumPeak: Int
    let counts: Counts

    init(seconds: Double, counts: Counts, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.seconds = seconds
        self.counts = counts
        minimumWrites = environment["WAL_MIN_WRITES"].flatMap(Int.init) ?? 0
        minimumReads = environment["WAL_MIN_READS"].flatMap(Int.init) ?? 0
        minimumPeak = environment["WAL_MIN_PEAK_BYTES"].flatMap(Int.init) ?? 0
    }

    /// The cap, in seconds from the start.
    var cap: Double { min(2 * seconds + 30, seconds + 120) }

    var isRunning: Bool {
        let elapsed = self.elapsed
        if elapsed < seconds { return true }
        if elapsed >= cap { return false }
        return !counts.reached(writes: minimumWrites, reads: minimumReads, walBytes: minimumPeak)
    }

    /// The seconds since the load started.
    var elapsed: Double {
        let duration = start.duration(to: .now)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
