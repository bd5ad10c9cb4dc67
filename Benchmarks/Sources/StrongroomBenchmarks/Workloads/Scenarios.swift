import CBenchmarkLoops
import Foundation
import Strongroom

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

/// The existing scenarios' runs are kept as samples too.
typealias Timing = Samples

extension Samples {
    var best: Double { minimum }
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

    static func cRead(path: String, keyHex: String, expectedRows: Int) throws -> Double {
        var checksum: Int64 = 0, rows: Int64 = 0
        let elapsed = c_read_rows(path, keyHex, &checksum, &rows)
        guard elapsed >= 0, checksum != 0, rows == expectedRows else { throw BenchmarkError("the C read loop failed (\(rows) rows of \(expectedRows))") }
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
        // `insert(_:into:)`, as GRDB's contender calls `record.insert(db)`:
        // the call an app makes, its statement found in the connection's cache.
        return try seconds {
            try db.inTransaction(.immediate) { db in
                for i in 0..<rows {
                    let person = Person(id: Int64(i + 1), name: data.names[i % poolSize], email: data.emails[i % poolSize], score: Double(i) * 0.5, active: i & 1 == 1)
                    try db.insert(person, into: "person")
                }
            }
        }
    }

    static func decodableRead(path: String, key: DatabaseKey, expectedRows: Int) throws -> Double {
        try timedRead(path: path, key: key, expectedRows: expectedRows) { select in
            var count = 0, checksum = 0.0
            try select.forEach(Person.self) { p in
                count += 1
                checksum += rowChecksum(p.id, p.name, p.email, p.score, p.active)
            }
            return (count, checksum)
        }
    }

    static let selectAll = "SELECT id, name, email, score, active FROM person"

    /// Opens `path` and times `read` on the statement that selects every
    /// row; `read` returns how many rows it read (must be `expectedRows`)
    /// and a checksum of them (so that nothing is optimized away).
    static func timedRead(path: String, key: DatabaseKey, expectedRows: Int,
                          _ read: (Statement) throws -> (rows: Int, checksum: Double)) throws -> Double {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        var result = (rows: 0, checksum: 0.0)
        let elapsed = try seconds { result = try read(try db.cachedStatement(sql: selectAll)) }
        guard result.rows == expectedRows, result.checksum > 0 else { throw BenchmarkError("read \(result.rows) rows, expected \(expectedRows)") }
        return elapsed
    }

    /// What every Swift read adds up per row.
    @inline(__always)
    static func rowChecksum(_ id: Int64, _ name: String, _ email: String?, _ score: Double, _ active: Bool) -> Double {
        Double(id) + score + Double(name.utf8.count + (email?.utf8.count ?? 0)) + (active ? 1 : 0)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
