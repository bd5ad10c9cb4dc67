import Foundation
import Histogram
import Strongroom

/// One writer and four readers on a `DatabasePool` for a fixed time. The
/// writer moves an amount between two of 100 accounts and counts the move
/// twice (account 0's balance and `moves.n`), in one transaction. Each
/// reader reads, in one read and three statements, the balances of
/// accounts 1…100 (they must sum to zero: a partial transaction would
/// show), account 0, and `moves.n`: the two counts must be equal (two
/// statements seeing different snapshots would show) and never go back in
/// time. At the end, the count of moves must equal the writes the
/// writer saw succeed (no lost write). Latencies are recorded in
/// HdrHistograms (microseconds).
enum PoolLoad {
    struct Figures {
        var writes = 0, reads = 0
        var write = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var read = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var lostWrites = 0, busyErrors = 0, otherErrors = 0, partialReads = 0

        /// Runs one transaction and records its latency (in `histogram`);
        /// a busy error, or any other, is counted instead.
        mutating func attempt(_ histogram: WritableKeyPath<Figures, Histogram<UInt64>>, _ body: () throws -> Void) -> Bool {
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                try body()
                _ = self[keyPath: histogram].record((DispatchTime.now().uptimeNanoseconds - start) / 1000)
                return true
            } catch let error as StrongroomError where error.code == .busy {
                busyErrors += 1
            } catch {
                otherErrors += 1
            }
            return false
        }
    }

    /// Results shared by the threads, under a lock.
    private final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var figures = Figures()
        func merge(_ body: (inout Figures) -> Void) { lock.lock(); body(&figures); lock.unlock() }
    }

    static func run(directory: String, key: DatabaseKey, seconds duration: Double, readers: Int = 4) throws -> Figures {
        let path = "\(directory)/pool-load.db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let pool = try DatabasePool(path: path, configuration: Configuration(key: key))
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
                CREATE TABLE moves(n INTEGER NOT NULL);
                INSERT INTO moves VALUES (0);
                """)
            for id in 0...100 { try db.execute(sql: "INSERT INTO account VALUES (?, 0)", arguments: [id]) }
        }
        let shared = Shared()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(duration * 1e9)
        let group = DispatchGroup()
        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread { body(); group.leave() }.start()
        }
        spawn {
            var local = Figures()
            var generator = SplitMix64(seed: 1)
            while DispatchTime.now().uptimeNanoseconds < deadline {
                let from = Int(generator.next() % 100) + 1, to = Int(generator.next() % 100) + 1, amount = Int(generator.next() % 1000)
                let moved = local.attempt(\.write) {
                    try pool.write { db in
                        try db.execute(sql: "UPDATE account SET balance = balance - ? WHERE id = ?", arguments: [amount, from])
                        try db.execute(sql: "UPDATE account SET balance = balance + ? WHERE id = ?", arguments: [amount, to])
                        try db.execute(sql: "UPDATE account SET balance = balance + 1 WHERE id = 0")
                        try db.execute(sql: "UPDATE moves SET n = n + 1")
                    }
                }
                if moved { local.writes += 1 }
            }
            shared.merge { f in
                f.writes = local.writes; f.write = local.write
                f.busyErrors += local.busyErrors; f.otherErrors += local.otherErrors
            }
        }
        for _ in 0..<readers {
            spawn {
                var local = Figures()
                var lastMoves = 0
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    var sum = 0, counted = 0, moves = 0
                    let read = local.attempt(\.read) {
                        (sum, counted, moves) = try pool.read { db in
                            (try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account WHERE id > 0") ?? -1,
                             try db.fetchOne(Int.self, sql: "SELECT balance FROM account WHERE id = 0") ?? -1,
                             try db.fetchOne(Int.self, sql: "SELECT n FROM moves") ?? -1)
                        }
                    }
                    guard read else { continue }
                    if sum != 0 || counted != moves || moves < lastMoves { local.partialReads += 1 }
                    lastMoves = moves
                    local.reads += 1
                }
                shared.merge { f in
                    f.reads += local.reads; f.read.add(local.read)
                    f.busyErrors += local.busyErrors; f.otherErrors += local.otherErrors; f.partialReads += local.partialReads
                }
            }
        }
        group.wait()
        var figures = shared.figures
        let counted = try pool.read { try $0.fetchOne(Int.self, sql: "SELECT n FROM moves") ?? -1 }
        figures.lostWrites = abs(figures.writes - counted)
        return figures
    }
}
