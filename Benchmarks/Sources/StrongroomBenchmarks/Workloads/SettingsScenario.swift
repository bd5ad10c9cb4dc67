import Foundation
import Strongroom

/// The measured effect of each default Strongroom chooses for encrypted
/// databases: every variant changes one setting from the defaults and runs the
/// same three workloads on a fresh file.
enum SettingsScenario {
    struct Variant: Sendable {
        let name: String
        let configure: @Sendable (inout Configuration) -> Void
    }

    static let variants: [Variant] = [
        Variant(name: "defaults (64 MiB cache, WAL, NORMAL)") { _ in },
        Variant(name: "cipher_page_size 4096") { $0.cipherPageSize = 4096 },
        Variant(name: "SQLite's default cache (2 MiB)") { $0.cacheSizeKiB = 2000 },
        Variant(name: "journal_mode DELETE") { $0.journalMode = .delete },
        Variant(name: "synchronous FULL") { $0.synchronous = .full },
    ]

    static func run(directory: String, key: DatabaseKey, rows: Int, commits: Int, lookups: Int, rounds: Int, data: SampleData) throws -> String {
        var lines = ["setting (one change from the defaults)        bulk insert          \(commits) commits       full scan            \(lookups) lookups",
                     "                                              \(rows) rows"]
        var baseline: (Double, Double, Double, Double)?
        for (n, variant) in variants.enumerated() {
            let path = "\(directory)/settings-\(n).db"
            var configuration = Configuration(key: key)
            variant.configure(&configuration)
            var bulk = Double.infinity, small = Double.infinity, scan = Double.infinity, random = Double.infinity
            for _ in 0..<max(rounds, 1) {
                sync()
                bulk = min(bulk, try Scenarios.statementInsert(path: path, configuration: configuration, rows: rows, data: data))
                small = min(small, try smallCommits(path: path, configuration: configuration, commits: commits))
                scan = min(scan, try fullScan(path: path, configuration: configuration, rows: rows))
                random = min(random, try randomLookups(path: path, configuration: configuration, rows: rows, lookups: lookups))
                for extra in ["", "-wal", "-shm", "-journal"] { unlink(path + extra) }
            }
            let base = baseline ?? (bulk, small, scan, random)
            baseline = base
            func cell(_ value: Double, _ reference: Double) -> String {
                String(format: "%7.3f s (%4.2fx)", value, value / reference)
            }
            lines.append("\(variant.name.padding(toLength: 44, withPad: " ", startingAt: 0))  \(cell(bulk, base.0))  \(cell(small, base.1))  \(cell(scan, base.2))  \(cell(random, base.3))")
        }
        return lines.joined(separator: "\n")
    }

    static func smallCommits(path: String, configuration: Configuration, commits: Int) throws -> Double {
        let db = try Connection(path: path, configuration: configuration)
        return try seconds {
            for i in 0..<commits {
                try db.inTransaction(.immediate) { db in
                    try db.execute(sql: "UPDATE person SET score = score + 1 WHERE id = ?", arguments: [i * 97 % 1000 + 1])
                }
            }
        }
    }

    /// Point reads by random id on one warm connection: with a cache smaller
    /// than the table, most reads decrypt (and HMAC-check) a page again.
    static func randomLookups(path: String, configuration: Configuration, rows: Int, lookups: Int) throws -> Double {
        let db = try Connection(path: path, configuration: configuration)
        let select = try db.cachedStatement(sql: "SELECT name FROM person WHERE id = ?")
        var generator = SplitMix64(seed: 42)
        for _ in 0..<lookups { _ = try select.fetchOne(String.self, arguments: [Int(generator.next() % UInt64(rows)) + 1]) }
        generator = SplitMix64(seed: 7)
        return try seconds {
            for _ in 0..<lookups {
                _ = try select.fetchOne(String.self, arguments: [Int(generator.next() % UInt64(rows)) + 1])
            }
        }
    }

    static func fullScan(path: String, configuration: Configuration, rows: Int) throws -> Double {
        let db = try Connection(path: path, configuration: configuration)
        var count = 0
        let elapsed = try seconds {
            try db.cachedStatement(sql: Scenarios.selectAll).forEach(Person.self) { _ in count += 1 }
        }
        guard count == rows else { throw BenchmarkError("scanned \(count) rows, expected \(rows)") }
        return elapsed
    }
}

/// A small deterministic generator, so every variant reads the same ids.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
