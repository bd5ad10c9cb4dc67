import CBenchmarkLoops
import Foundation
import Strongroom

struct BenchmarkOptions {
    var rows = 1_000_000
    var rounds = 3
    var poolSamples = 20
    /// Also measure the effect of each default setting.
    var settings = false
    /// Also measure the migration runner (rebuild, fleet).
    var migrations = false
    var fleetSize = 1000
    /// Also measure import and export against the sqlcipher shell.
    var conversion = false
    var conversionRows = 2_000_000
    /// Also measure sealed columns.
    var fields = false
    var fieldRows = 100_000

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rows": rows = Int(iterator.next() ?? "") ?? rows
            case "--rounds": rounds = Int(iterator.next() ?? "") ?? rounds
            case "--pool-samples": poolSamples = Int(iterator.next() ?? "") ?? poolSamples
            case "--settings": settings = true
            case "--migrations": migrations = true
            case "--fleet-size": fleetSize = Int(iterator.next() ?? "") ?? fleetSize
            case "--conversion": conversion = true
            case "--fields": fields = true
            case "--field-rows": fieldRows = Int(iterator.next() ?? "") ?? fieldRows
            case "--conversion-rows": conversionRows = Int(iterator.next() ?? "") ?? conversionRows
            default: break
            }
        }
    }
}

/// The values inserted: a pool of distinct strings reused by row index, built
/// before any timing, identical for C and Swift.
struct SampleData {
    let names: [String]
    let emails: [String]
    let cNames: [UnsafePointer<CChar>?]
    let cEmails: [UnsafePointer<CChar>?]

    init(poolSize: Int) {
        names = (0..<poolSize).map { "name-\(100_000 + $0)" }
        emails = (0..<poolSize).map { "user\(100_000 + $0)@example.com" }
        cNames = names.map { UnsafePointer(strdup($0)) }
        cEmails = emails.map { UnsafePointer(strdup($0)) }
    }
}

struct Person: Codable {
    var id: Int64
    var name: String
    var email: String?
    var score: Double
    var active: Bool
}

/// Elapsed seconds of several runs of one scenario.
struct Timing {
    private(set) var samples: [Double] = []
    mutating func add(_ seconds: Double) { samples.append(seconds) }
    var best: Double { samples.min() ?? .nan }
    var median: Double {
        let sorted = samples.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

enum Scenarios {
    static let createTable = "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL NOT NULL, active INTEGER NOT NULL)"

    static func cInsert(path: String, keyHex: String, rows: Int, data: SampleData) throws -> Double {
        let elapsed = data.cNames.withUnsafeBufferPointer { names in
            data.cEmails.withUnsafeBufferPointer { emails in
                c_insert_rows(path, keyHex, Int64(rows), names.baseAddress, emails.baseAddress, Int32(data.names.count))
            }
        }
        guard elapsed >= 0 else { throw BenchmarkError("the C insert loop failed") }
        return elapsed
    }

    static func cRead(path: String, keyHex: String) throws -> Double {
        var checksum: Int64 = 0
        let elapsed = c_read_rows(path, keyHex, &checksum)
        guard elapsed >= 0, checksum != 0 else { throw BenchmarkError("the C read loop failed") }
        return elapsed
    }

    static func statementInsert(path: String, key: DatabaseKey, rows: Int, data: SampleData) throws -> Double {
        try statementInsert(path: path, configuration: Configuration(key: key), rows: rows, data: data)
    }

    static func statementInsert(path: String, configuration: Configuration, rows: Int, data: SampleData) throws -> Double {
        let db = try Connection(path: path, configuration: configuration)
        try db.execute(sql: createTable)
        let poolSize = data.names.count
        return try seconds {
            let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email, score, active) VALUES (?, ?, ?, ?, ?)")
            try db.inTransaction(.immediate) { _ in
                for i in 0..<rows {
                    try insert.execute(Int64(i + 1), data.names[i % poolSize], data.emails[i % poolSize], Double(i) * 0.5, Int64(i & 1))
                }
            }
        }
    }

    static func encodableInsert(path: String, key: DatabaseKey, rows: Int, data: SampleData) throws -> Double {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: createTable)
        let poolSize = data.names.count
        return try seconds {
            let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email, score, active) VALUES (:id, :name, :email, :score, :active)")
            try db.inTransaction(.immediate) { _ in
                for i in 0..<rows {
                    let person = Person(id: Int64(i + 1), name: data.names[i % poolSize], email: data.emails[i % poolSize], score: Double(i) * 0.5, active: i & 1 == 1)
                    try insert.execute(record: person)
                }
            }
        }
    }

    static func decodableRead(path: String, key: DatabaseKey, expectedRows: Int) throws -> Double {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        var count = 0
        var checksum = 0.0
        let elapsed = try seconds {
            let select = try db.cachedStatement(sql: "SELECT id, name, email, score, active FROM person")
            try select.forEach(Person.self) { person in
                count += 1
                checksum += Double(person.id) + person.score + Double(person.name.utf8.count + (person.email?.utf8.count ?? 0)) + (person.active ? 1 : 0)
            }
        }
        guard count == expectedRows, checksum > 0 else { throw BenchmarkError("decoded \(count) rows, expected \(expectedRows)") }
        return elapsed
    }

    /// Opening a reader in a passphrase-keyed pool (the pool derived the key
    /// once), against opening a connection with the passphrase.
    static func poolReaderOpen(directory: String, samples: Int) throws -> ScenarioResult {
        let path = "\(directory)/pool.db"
        let passphrase = try DatabaseKey.passphrase("benchmark passphrase")
        var readerOpen = Timing(), passphraseOpen = Timing()
        do {
            let pool = try DatabasePool(path: path, configuration: Configuration(key: passphrase))
            try pool.write { try $0.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        }
        for _ in 0..<samples {
            let pool = try DatabasePool(path: path, configuration: Configuration(key: passphrase))
            // The first read opens the pool's first reader.
            readerOpen.add(try seconds { _ = try pool.read { try $0.fetchOne(Int.self, sql: "SELECT x FROM t") } })
            passphraseOpen.add(try seconds {
                let db = try Connection(path: path, configuration: Configuration(key: passphrase))
                _ = try db.fetchOne(Int.self, sql: "SELECT x FROM t")
            })
        }
        return ScenarioResult(name: "open a reader, passphrase pool (median)", ours: readerOpen, baseline: passphraseOpen,
                              baselineName: "passphrase open", target: nil, absoluteTargetMilliseconds: 2, useMedian: true)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

struct ScenarioResult {
    let name: String
    let ours: Timing
    let baseline: Timing
    let baselineName: String
    let target: Double?
    var absoluteTargetMilliseconds: Double? = nil
    /// For a speed-up: baseline / ours must reach this.
    var speedupTarget: Double? = nil
    var useMedian = false

    var oursSeconds: Double { useMedian ? ours.median : ours.best }
    var baselineSeconds: Double { useMedian ? baseline.median : baseline.best }
    var ratio: Double { oursSeconds / baselineSeconds }

    var verdict: String {
        if let speedup = speedupTarget {
            let achieved = baselineSeconds / oursSeconds
            return String(format: "%@ (speed-up %.2fx, target ≥ %.1fx)", achieved >= speedup ? "ok" : "MISSED", achieved, speedup)
        }
        if let target { return ratio <= target ? "ok (target ≤ \(target)x)" : "MISSED (target ≤ \(target)x)" }
        if let limit = absoluteTargetMilliseconds { return oursSeconds * 1000 < limit ? "ok (target < \(limit) ms)" : "MISSED (target < \(limit) ms)" }
        return ""
    }

    static func table(_ results: [ScenarioResult]) -> String {
        func format(_ seconds: Double) -> String {
            seconds < 0.1 ? String(format: "%8.3f ms", seconds * 1000) : String(format: "%8.3f s ", seconds)
        }
        var lines = ["scenario                                    strongroom     baseline        ratio   vs          verdict"]
        for r in results {
            lines.append("\(r.name.padding(toLength: 42, withPad: " ", startingAt: 0))  \(format(r.oursSeconds))  \(format(r.baselineSeconds))  \(String(format: "%6.2fx", r.ratio))   \(r.baselineName.padding(toLength: 10, withPad: " ", startingAt: 0))  \(r.verdict)")
        }
        return lines.joined(separator: "\n")
    }
}
