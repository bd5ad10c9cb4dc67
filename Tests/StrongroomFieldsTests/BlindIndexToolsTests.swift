import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// The tools around blind indexes (issue 39, items 3 and 5): the registry
/// and its check, rebuilds that resume, rotation, retiring, and the planner.
@Suite("Blind indexes: registry, rebuild, rotation, planner")
struct BlindIndexToolsTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()
    static let rows = 1_000

    /// A customer table with a sealed e-mail (randomized) and a plain
    /// country, `rows` rows, the e-mails of 10 spellings per address.
    func seeded() throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: dir.file("tools.db"), configuration: Configuration(key: databaseKey))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT, country TEXT)")
            for n in 1...Self.rows {
                let email = n % 3 == 0 ? "Person\(n / 10)@Example.com" : "person\(n / 10)@example.com"
                try db.execute(sql: "INSERT INTO customer(id, email, country) VALUES (?, ?, ?)", arguments: [n, email, ["UK", "FR", "DE"][n % 3]])
            }
            try ColumnSealing.sealInPlace([.randomized("email", in: "customer")], keyring: keyring, in: db)
        }
        return queue
    }

    static let folded = BlindIndex("email_folded", on: "email", in: "customer", bits: 12, transformations: [.normalizedCaseFolded])

    /// Every row's stored index value, and the one computed afresh.
    func stale(_ index: BlindIndex, in queue: DatabaseQueue, keyring: FieldKeyring? = nil) throws -> Int {
        let keyring = keyring ?? self.keyring
        return try queue.read { db in
            let cipher = FieldCipher(keyring: keyring)
            var stale = 0
            for row in try db.fetchAll(sql: "SELECT id, email, country, \(SQLScript.quotedIdentifier(index.name)) AS stored FROM customer") {
                let id = try row.decode(DatabaseValue.self, column: "id")
                let email = try cipher.open(try row.decode(DatabaseValue.self, column: "email"), table: "customer", column: "email", rowKey: [id])
                let values = index.parts.map { $0.column == "email" ? email : (try? row.decode(DatabaseValue.self, column: $0.column)) ?? .null }
                if try cipher.blindIndex(of: values, for: index) != row.decode(DatabaseValue.self, column: "stored") { stale += 1 }
            }
            return stale
        }
    }

    @Test func addingAnIndexFillsEveryRowAndRecordsItVerified() throws {
        let queue = try seeded()
        var seen: [BlindIndexRebuild.Progress] = []
        let report = try BlindIndexRebuild.add(Self.folded, in: queue, keyring: keyring, batchSize: 300) { seen.append($0) }
        #expect(report.rows == Self.rows && report.batches == 4 && report.resumedAfter == nil)
        #expect(seen.map(\.rebuilt) == [300, 600, 900, 1000] && seen.allSatisfy { $0.total == Self.rows })
        #expect(try stale(Self.folded, in: queue) == 0)
        let entry = try #require(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0, keyring: keyring) })
        #expect(entry.index == Self.folded && entry.state == .ready && entry.verified)
        let statistics = try queue.read { try BlindIndexRegistry.statistics(of: Self.folded, in: $0) }
        #expect(statistics.rows == Self.rows && statistics.largestGroup >= 10 && statistics.distinctValues <= 101)
        // The SQL index exists, and a sealing connection finds rows through it.
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("email", in: "customer")], indexes: [Self.folded], keyring: keyring, rowKeys: ["customer": ["id"]])
        let app = try DatabaseQueue(path: dir.file("tools.db"), configuration: config)
        struct Customer: TableRecord {
            var id: Int64
            var email: String
            static let databaseTableName = "customer"
            static let databaseColumnNames = ["id", "email"]
            static let databaseSealedColumns = ["email"]
            init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
            func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
        }
        let found = try app.read { try $0.fetchAll(Customer.self, where: .index("email_folded", equals: "PERSON42@EXAMPLE.COM").ordered(by: "id")) }
        #expect(found.map(\.id) == Array(420...429))
    }

    /// Review of issue 51: the first insert records a declared index in the
    /// registry. When its transaction is rolled back afterwards (a closure
    /// that throws; with group commit, a later write's `OR ROLLBACK`), the
    /// record goes with it, and the next insert must record it again: the
    /// connection's memory of "recorded" may not outlive the record.
    @Test func aDeclaredIndexRecordRolledBackIsRecordedAgainByTheNextInsert() throws {
        var config = Configuration(key: databaseKey)
        config.seal([.randomized("email", in: "customer")], indexes: [Self.folded], keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: dir.file("rolled-back.db"), configuration: config)
        try queue.write { db in try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, country TEXT, email_folded BLOB)") }
        struct NewCustomer: Encodable { var email: String }
        struct Undo: Error {}
        #expect(throws: Undo.self) {
            try queue.write { db in
                try db.insert(NewCustomer(email: "a@example.com"), into: "customer")
                let recorded = try BlindIndexRegistry.entry("email_folded", of: "customer", in: db) != nil
                #expect(recorded, "recorded by the insert")
                throw Undo()
            }
        }
        #expect(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0) } == nil, "rolled back with it")
        try queue.write { db in try db.insert(NewCustomer(email: "b@example.com"), into: "customer") }
        #expect(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0) } != nil)
        // And from then on, inserts go on finding it.
        try queue.write { db in try db.insert(NewCustomer(email: "c@example.com"), into: "customer") }
        #expect(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0)?.state } == .ready)
    }

    /// A rebuild stopped after two batches (a failure, as a kill would)
    /// goes on from the rowid it recorded, and ends with no stale row.
    @Test func anInterruptedRebuildGoesOnWhereItStopped() throws {
        let queue = try seeded()
        try BlindIndexRebuild.add(Self.folded, in: queue, keyring: keyring, batchSize: 250)
        // Changed to 10 bits: every value changes.
        let shorter = BlindIndex("email_folded", on: "email", in: "customer", bits: 10, transformations: [.normalizedCaseFolded])
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            _ = try BlindIndexRebuild.add(shorter, in: queue, keyring: keyring, batchSize: 250) { progress in
                if progress.rebuilt == 500 { throw Stop() }
            }
        }
        let entry = try #require(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0, keyring: keyring) })
        #expect(entry.state == .building && entry.rebuiltThrough == 500 && entry.index == shorter)
        #expect(try stale(shorter, in: queue) == 500, "the rows past the cursor still hold the 12-bit values")
        let report = try BlindIndexRebuild.rebuild("email_folded", of: "customer", in: queue, keyring: keyring, batchSize: 250)
        #expect(report.resumedAfter == 500 && report.rows == 500)
        #expect(try stale(shorter, in: queue) == 0)
        #expect(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0)?.state } == .ready)
    }

    /// A database-key holder who rewrites a recorded definition (12 bits
    /// made 128, so that a rebuild would store exact equality) cannot
    /// forge its check, nor the registry's signature (issue 50): reading
    /// the registry with the keyring, the rebuild and the rotation refuse
    /// it, naming the index, and write nothing.
    @Test func aRewrittenDefinitionIsRefusedByTheToolsThatWrite() throws {
        let queue = try seeded()
        try BlindIndexRebuild.add(Self.folded, in: queue, keyring: keyring)
        let before = try queue.read { try $0.fetchAll(sql: "SELECT email_folded FROM customer ORDER BY id").map { try $0.decode(DatabaseValue.self, at: 0) } }
        try queue.write { db in
            try db.execute(sql: "UPDATE strongroom_blind_indexes SET definition = replace(definition, '\"bits\":12', '\"bits\":128')")
        }
        // Unverified, the entry says so.
        let entry = try #require(try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0) })
        #expect(entry.index.bits == 128 && !entry.verified)
        let named = "strongroom_blind_indexes (customer, email_folded) was changed"
        let read = #expect(throws: StrongroomError.self) { _ = try queue.read { try BlindIndexRegistry.entry("email_folded", of: "customer", in: $0, keyring: keyring) } }
        #expect(read?.code == .untrustedRegistry && read?.message.contains(named) == true, "\(String(describing: read))")
        let error = #expect(throws: StrongroomError.self) { try BlindIndexRebuild.rebuild("email_folded", of: "customer", in: queue, keyring: keyring) }
        #expect(error?.code == .untrustedRegistry && error?.message.contains(named) == true, "\(String(describing: error))")
        // A rotation, which rebuilds indexes under the new key, refuses it too.
        let (two, second) = keyring.addingKey()
        let rotation = #expect(throws: StrongroomError.self) {
            _ = try FieldRotation.rotate(queue, columns: [.randomized("email", in: "customer")], keyring: try two.activating(second))
        }
        #expect(rotation?.code == .untrustedRegistry, "\(String(describing: rotation))")
        let after = try queue.read { try $0.fetchAll(sql: "SELECT email_folded FROM customer ORDER BY id").map { try $0.decode(DatabaseValue.self, at: 0) } }
        #expect(after == before)
        // Another keyring is refused outright.
        #expect(throws: StrongroomError.self) { _ = try queue.read { try BlindIndexRegistry.entries(in: $0, keyring: FieldKeyring.generate()) } }
    }

    @Test func rotationMovesIndexValuesToTheActiveKeyAndRetireCountsThem() throws {
        let queue = try seeded()
        let compound = BlindIndex("email_country", in: "customer", bits: 9, parts: [.init("email", [.normalizedCaseFolded]), .init("country")])
        try BlindIndexRebuild.add(compound, in: queue, keyring: keyring)
        let (two, second) = keyring.addingKey()
        let rotated = try two.activating(second)
        // Key 1 still holds every index value: it cannot be retired yet.
        _ = try FieldRotation.rotate(queue, columns: [.randomized("email", in: "customer")], keyring: rotated)
        #expect(try stale(compound, in: queue, keyring: rotated) == 0)
        let keyIDs = try queue.read { try $0.fetchAll(sql: "SELECT DISTINCT hex(substr(email_country, 1, 4)) AS k FROM customer").map { try $0.decode(String.self, column: "k") } }
        #expect(keyIDs == ["00000002"])
        #expect(throws: Never.self) { _ = try queue.read { db in try FieldRotation.retire(1, from: rotated, in: db) } }
        // Put one value back under key 1: retiring refuses, naming the index.
        try queue.write { db in
            var bytes = try #require(try db.fetchOne([UInt8].self, sql: "SELECT email_country FROM customer WHERE id = 7"))
            bytes[3] = 1
            try db.execute(sql: "UPDATE customer SET email_country = ? WHERE id = 7", arguments: [bytes])
        }
        let error = #expect(throws: FieldError.self) { _ = try queue.read { db in try FieldRotation.retire(1, from: rotated, in: db) } }
        #expect(error?.message.contains("customer.email_country: 1 blind indexes") == true, "\(String(describing: error))")
    }

    @Test func droppingAnIndexLeavesNoValueAndNoRecord() throws {
        let queue = try seeded()
        try BlindIndexRebuild.add(Self.folded, in: queue, keyring: keyring)
        try BlindIndexRebuild.drop("email_folded", of: "customer", in: queue, keyring: keyring)
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE email_folded IS NOT NULL") } == 0)
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'customer_email_folded'") } == 0)
        #expect(try queue.read { try BlindIndexRegistry.entries(in: $0) }.isEmpty)
        #expect(throws: FieldError.self) { try BlindIndexRebuild.drop("email_folded", of: "customer", in: queue, keyring: keyring) }
    }

    /// The planner's figures are the counts of the index values computed
    /// one by one, at every length it reports.
    @Test func thePlannerCountsWhatTheIndexValuesShow() throws {
        let queue = try seeded()
        let plan = try queue.read { db in try BlindIndexPlanner.plan(Self.folded, in: db, keyring: keyring, k: 3) }
        #expect(plan.rows == Self.rows && plan.indexedRows == Self.rows && plan.distinctValues == 101)
        #expect(plan.candidates.map(\.bits) == Array(1...plan.candidates.count))
        #expect(plan.candidates.count >= 12, "to log2(R) + 2 at least")
        let cipher = FieldCipher(keyring: keyring)
        let emails = try queue.read { db in
            try db.fetchAll(sql: "SELECT id, email FROM customer").map { row in
                try cipher.open(try row.decode(DatabaseValue.self, column: "email"), table: "customer", column: "email", rowKey: [try row.decode(DatabaseValue.self, column: "id")])
            }
        }
        for candidate in plan.candidates + [plan.declared] {
            let index = BlindIndex("email_folded", on: "email", in: "customer", bits: candidate.bits, transformations: [.normalizedCaseFolded])
            var groups: [DatabaseValue: Int] = [:]
            for email in emails { groups[try cipher.blindIndex(of: [email], for: index), default: 0] += 1 }
            #expect(candidate.indexValues == groups.count, "\(candidate.bits) bits")
            #expect(candidate.largestGroup == groups.values.max() && candidate.smallestGroup == groups.values.min())
            #expect(candidate.rowsSingledOut == groups.values.filter { $0 < 3 }.reduce(0, +))
            #expect(abs(candidate.expectedRowsPerValue - Double(Self.rows) / pow(2, min(Double(candidate.bits), log2(101)))) < 1e-9)
        }
        let firstFailing = try #require(plan.candidates.first { $0.smallestGroup < 3 })
        #expect(plan.recommendedBits == firstFailing.bits - 1)
        #expect(plan.candidates.prefix(firstFailing.bits - 1).allSatisfy { $0.smallestGroup >= 3 })
        // One warning per fact: rows singled out at the declared length (whether
        // the one-row address shares its 12-bit value depends on the key), and
        // an input that repeats (101 addresses for 1,000 rows), always.
        #expect(plan.warnings.contains { $0.contains("singles out") } == (plan.declared.rowsSingledOut > 0), "\(plan.warnings)")
        #expect(plan.warnings.contains { $0.contains("input repeats: 1000 rows hold 101 distinct values") }, "\(plan.warnings)")
        #expect(plan.warnings.count == (plan.declared.rowsSingledOut > 0 ? 2 : 1))
        // Nothing in the plan holds a value.
        let encoded = String(decoding: try JSONEncoder().encode(plan), as: UTF8.self)
        #expect(!encoded.contains("example.com") && !encoded.contains("person"))
    }
}
