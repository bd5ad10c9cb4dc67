import CBenchmarkLoops
import Foundation
import StrongroomMacros

/// The benchmark's `person` table as a `@Table` struct (issue 10): read by
/// column position, bound without `Encodable`.
@Table("person")
struct PersonRecord {
    @PrimaryKey var id: Int64
    var name: String
    var email: String?
    var score: Double
    var active: Bool
}

/// `@Table` records and rows read in place, against the same loops in C.
enum RecordScenarios {
    static func cReadOwned(path: String, keyHex: String, expectedRows: Int) throws -> Double {
        var checksum: Int64 = 0, rows: Int64 = 0
        let elapsed = c_read_rows_owned(path, keyHex, &checksum, &rows)
        guard elapsed >= 0, checksum != 0, rows == expectedRows else { throw BenchmarkError("the C read loop (owned text) failed (\(rows) rows of \(expectedRows))") }
        return elapsed
    }

    static func recordInsert(path: String, key: DatabaseKey, rows: Int, data: SampleData) throws -> Double {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: Scenarios.createTable)
        let poolSize = data.names.count
        return try seconds {
            try db.inTransaction(.immediate) { db in
                for i in 0..<rows {
                    try db.insert(PersonRecord(id: Int64(i + 1), name: data.names[i % poolSize], email: data.emails[i % poolSize],
                                               score: Double(i) * 0.5, active: i & 1 == 1))
                }
            }
        }
    }

    static func recordRead(path: String, key: DatabaseKey, expectedRows: Int) throws -> Double {
        try Scenarios.timedRead(path: path, key: key, expectedRows: expectedRows) { select in
            var count = 0, checksum = 0.0
            try select.forEach(PersonRecord.self) { p in
                count += 1
                checksum += Scenarios.rowChecksum(p.id, p.name, p.email, p.score, p.active)
            }
            return (count, checksum)
        }
    }

    /// Rows by position, without a model: `forEachRow` and `RowView`.
    static func positionalRead(path: String, key: DatabaseKey, expectedRows: Int) throws -> Double {
        try Scenarios.timedRead(path: path, key: key, expectedRows: expectedRows) { select in
            var count = 0, checksum = 0.0
            try select.forEachRow { row in
                count += 1
                checksum += Scenarios.rowChecksum(try row.decode(at: 0), try row.decode(at: 1), try row.decode(at: 2),
                                                  try row.decode(at: 3), try row.decode(at: 4))
            }
            return (count, checksum)
        }
    }

    /// As `positionalRead`, the texts read in place as the C loop reads
    /// them (`withTextBytes`: no String made): the same work on both sides.
    static func positionalReadInPlace(path: String, key: DatabaseKey, expectedRows: Int) throws -> Double {
        try Scenarios.timedRead(path: path, key: key, expectedRows: expectedRows) { select in
            var count = 0, checksum = 0.0
            try select.forEachRow { row in
                count += 1
                let id: Int64 = try row.decode(at: 0)
                let nameBytes = try row.withTextBytes(at: 1) { Int($0?.count ?? 0) + Int($0?.first ?? 0) }
                let emailBytes = try row.withTextBytes(at: 2) { Int($0?.count ?? 0) + Int($0?.first ?? 0) }
                let score: Double = try row.decode(at: 3)
                let active: Bool = try row.decode(at: 4)
                checksum += Double(id) + score + Double(nameBytes + emailBytes) + (active ? 1 : 0)
            }
            return (count, checksum)
        }
    }

    /// What making a row's two Strings costs alone, with no SQLite: the
    /// same texts, made the way the library makes them (ASCII checked a word
    /// at a time: up to 15 bytes a small string made in place, longer a
    /// checked C string on the heap, as the 22-byte email is). The floor
    /// under any read into `String` properties, which the C loop does not pay.
    static func stringFloor(rows: Int, data: SampleData) throws -> Double {
        var total = 0
        let poolSize = data.cNames.count
        let lengths = data.names.map(\.utf8.count), emailLengths = data.emails.map(\.utf8.count)
        let elapsed = seconds {
            for i in 0..<rows {
                let name = makeString(data.cNames[i % poolSize]!, count: lengths[i % poolSize])
                let email = makeString(data.cEmails[i % poolSize]!, count: emailLengths[i % poolSize])
                total &+= (name?.utf8.count ?? 0) &+ (email?.utf8.count ?? 0)
            }
        }
        guard total > 0 else { throw BenchmarkError("made no strings") }
        return elapsed
    }

    /// The library's way (`Statement.text`), for ASCII text.
    @inline(__always)
    private static func makeString(_ cString: UnsafePointer<CChar>, count: Int) -> String? {
        cString.withMemoryRebound(to: UInt8.self, capacity: count + 1) { pointer in
            let raw = UnsafeRawPointer(pointer)
            if count <= 15, count >= 8 {
                let bits = raw.loadUnaligned(as: UInt64.self) | raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                if bits & 0x8080_8080_8080_8080 == 0 {
                    return String(unsafeUninitializedCapacity: count) { buffer in
                        buffer.baseAddress!.initialize(from: pointer, count: count)
                        return count
                    }
                }
            }
            return String(validatingCString: cString)
        }
    }

    /// `lookups` reads of one row by a random primary key in C (SplitMix64
    /// from seed 7), all 5 columns, on one connection.
    static func cPointLookups(path: String, keyHex: String, rows: Int, lookups: Int) throws -> Double {
        var checksum: Int64 = 0
        let elapsed = c_point_lookups(path, keyHex, Int64(rows), Int64(lookups), 7, &checksum)
        guard elapsed >= 0, checksum != 0 else { throw BenchmarkError("the C lookup loop failed") }
        return elapsed
    }

    /// `lookups` reads of one record by a random primary key (the C loop's
    /// ids: SplitMix64 from seed 7), on one connection.
    static func pointLookups(path: String, key: DatabaseKey, rows: Int, lookups: Int) throws -> Double {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        let select = try db.cachedStatement(sql: Scenarios.selectAll + " WHERE id = ?")
        var generator = SplitMix64(seed: 7)
        var checksum = 0, found = 0
        let elapsed = try seconds {
            for _ in 0..<lookups {
                let id = Int64(generator.next() % UInt64(rows)) + 1
                // The lookup by key an app makes: the value bound in place.
                if let person = try select.fetchOne(PersonRecord.self, values: id) {
                    checksum &+= person.name.utf8.count
                    found += 1
                }
            }
        }
        guard checksum > 0, found == lookups else { throw BenchmarkError("\(found) of \(lookups) lookups found their row") }
        return elapsed
    }
}
