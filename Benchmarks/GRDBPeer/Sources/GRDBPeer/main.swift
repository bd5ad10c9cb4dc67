import CPlaintextLoops
import Foundation
import GRDB

// grdb-peer WORKLOAD PATH ROWS [LOOKUPS]
// Runs one workload on a plaintext database at PATH with GRDB, the way its
// documentation recommends, and prints one JSON line:
// {"seconds": S, "checksum": N, "rows": R, "debug": B, "sqlite": V}: R is the
// rows inserted, decoded or found (the harness refuses a short count), B
// whether this is a debug build, V the SQLite library GRDB runs on. The rows are those of the Strongroom
// harness: id, name (11 bytes), email (22 bytes), score, active.
//
// Workloads: insert-statement, insert-codable, insert-record (rows are
// created; PATH must not exist), decode-statement, decode-codable,
// decode-record, lookups (PATH holds ROWS rows); c-decode and c-lookups
// are the harness's C loops on this same system SQLite (CPlaintextLoops).
// async-pool PATH ROWS MILLISECONDS TASKS: TASKS tasks on a DatabasePool
// for MILLISECONDS, nine reads to one write (AsyncPool.swift), its own JSON line.

/// The columns of a row of `person`, for the checksum of a decode.
protocol PersonColumns {
    var id: Int64 { get }
    var name: String { get }
    var email: String? { get }
    var score: Double { get }
    var active: Bool { get }
}

/// Reads every row of `person` into a `T` through a cursor, and returns a
/// checksum of them (the harness's own reads add up the same) and their count.
func decodeAll<T: FetchableRecord & PersonColumns>(_ type: T.Type, _ db: Database) throws -> (checksum: Int, rows: Int) {
    var checksum = 0, rows = 0
    let cursor = try T.fetchCursor(db, sql: "SELECT id, name, email, score, active FROM person")
    while let p = try cursor.next() {
        checksum &+= Int(p.id) + p.name.utf8.count + (p.email?.utf8.count ?? 0) + Int(p.score) + (p.active ? 1 : 0)
        rows += 1
    }
    return (checksum, rows)
}

/// A `Codable` record: GRDB synthesizes its coding.
struct CodablePerson: Codable, FetchableRecord, PersistableRecord, PersonColumns {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var email: String?
    var score: Double
    var active: Bool
}

/// GRDB's fast path: `init(row:)` and `encode(to:)` written by hand.
struct Person: FetchableRecord, PersistableRecord, PersonColumns {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var email: String?
    var score: Double
    var active: Bool

    init(id: Int64, name: String, email: String?, score: Double, active: Bool) {
        (self.id, self.name, self.email, self.score, self.active) = (id, name, email, score, active)
    }

    init(row: Row) throws {
        id = row[0]
        name = row[1]
        email = row[2]
        score = row[3]
        active = row[4]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
        container["email"] = email
        container["score"] = score
        container["active"] = active
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let rows = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: grdb-peer WORKLOAD PATH ROWS [LOOKUPS]\n".utf8))
    exit(2)
}
let workload = arguments[1], path = arguments[2]
let lookups = arguments.count > 4 ? Int(arguments[4]) ?? 0 : 0
#if DEBUG
let isDebugBuild = true
#else
let isDebugBuild = false
#endif

if workload == "async-pool" {
    guard arguments.count > 5, let milliseconds = Int(arguments[4]), let tasks = Int(arguments[5]), milliseconds > 0, tasks > 0 else {
        FileHandle.standardError.write(Data("usage: grdb-peer async-pool PATH ROWS MILLISECONDS TASKS\n".utf8))
        exit(2)
    }
    do {
        print(try AsyncPoolWorkload.run(path: path, rows: rows, milliseconds: milliseconds, tasks: tasks, debug: isDebugBuild))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("grdb-peer: \(error)\n".utf8))
        exit(1)
    }
}

// The harness's settings for its own connections.
var configuration = Configuration()
configuration.prepareDatabase { db in
    try db.execute(sql: "PRAGMA cache_size = -65536; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY")
}
let names = (0..<1000).map { "name-\(100_000 + $0)" }
let emails = (0..<1000).map { "user\(100_000 + $0)@example.com" }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

do {
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
    var checksum = 0, counted = 0
    var elapsed = 0.0
    switch workload {
    case "insert-statement", "insert-codable", "insert-record":
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL NOT NULL, active INTEGER NOT NULL)")
        }
        elapsed = try seconds {
            try queue.write { db in
                switch workload {
                case "insert-statement":
                    let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, email, score, active) VALUES (?, ?, ?, ?, ?)")
                    for i in 0..<rows {
                        try insert.execute(arguments: [Int64(i + 1), names[i % 1000], emails[i % 1000], Double(i) * 0.5, i & 1 == 1])
                    }
                case "insert-codable":
                    for i in 0..<rows {
                        try CodablePerson(id: Int64(i + 1), name: names[i % 1000], email: emails[i % 1000], score: Double(i) * 0.5, active: i & 1 == 1).insert(db)
                    }
                default:
                    for i in 0..<rows {
                        try Person(id: Int64(i + 1), name: names[i % 1000], email: emails[i % 1000], score: Double(i) * 0.5, active: i & 1 == 1).insert(db)
                    }
                }
            }
        }
        counted = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM person") ?? 0 }
        checksum = counted
    case "decode-statement":
        elapsed = try seconds {
            try queue.read { db in
                let cursor = try Row.fetchCursor(db, sql: "SELECT id, name, email, score, active FROM person")
                while let row = try cursor.next() {
                    let id: Int64 = row[0]
                    let name: String = row[1]
                    let email: String? = row[2]
                    let score: Double = row[3]
                    let active: Bool = row[4]
                    checksum &+= Int(id) + name.utf8.count + (email?.utf8.count ?? 0) + Int(score) + (active ? 1 : 0)
                    counted += 1
                }
            }
        }
    case "decode-codable":
        elapsed = try seconds { (checksum, counted) = try queue.read { try decodeAll(CodablePerson.self, $0) } }
    case "decode-record":
        elapsed = try seconds { (checksum, counted) = try queue.read { try decodeAll(Person.self, $0) } }
    case "lookups":
        // As the C loop and ours: the ids of seed 7 drawn inside the loop,
        // one statement prepared before the timer, each lookup its own
        // autocommit read (`inDatabase`, not a `read` transaction around all).
        var generator = SplitMix64(seed: 7)
        try queue.inDatabase { db in
            let select = try db.cachedStatement(sql: "SELECT id, name, email, score, active FROM person WHERE id = ?")
            elapsed = try seconds {
                for _ in 0..<lookups {
                    if let p = try Person.fetchOne(select, arguments: [Int64(generator.next() % UInt64(rows)) + 1]) {
                        checksum &+= p.name.utf8.count
                        counted += 1
                    }
                }
            }
        }
    case "c-decode", "c-lookups":
        // GRDB's engine without GRDB: the harness's C loops on the same SQLite.
        var sum: Int64 = 0, read: Int64 = 0
        elapsed = workload == "c-decode" ? c_plain_read_rows(path, &sum, &read) : c_plain_point_lookups(path, Int64(rows), Int64(lookups), 7, &sum)
        guard elapsed >= 0 else { throw DatabaseError(message: "the C loop failed") }
        checksum = Int(sum)
        counted = workload == "c-decode" ? Int(read) : lookups
    default:
        FileHandle.standardError.write(Data("grdb-peer: unknown workload \(workload)\n".utf8))
        exit(2)
    }
    let debug = isDebugBuild
    let sqlite = try queue.read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "?"
    print("{\"seconds\": \(elapsed), \"checksum\": \(checksum), \"rows\": \(counted), \"debug\": \(debug), \"sqlite\": \"\(sqlite)\"}")
} catch {
    FileHandle.standardError.write(Data("grdb-peer: \(error)\n".utf8))
    exit(1)
}

/// The same random ids as the harness's lookups (seeded SplitMix64). A
/// copy of the harness's own: this package must not depend on the
/// harness, which links SQLCipher.
struct SplitMix64 {
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
