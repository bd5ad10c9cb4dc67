import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// The review of issue 39's change (a cryptographer's, a security
/// engineer's and a SQLite engineer's reading), each finding reproduced
/// here before it was fixed. Numbers are the review's.
@Suite("Blind indexes: the review's findings")
struct BlindIndexReviewTests {
    let dir = TemporaryDirectory()

    struct Item: TableRecord {
        var id: Int64
        var email: String
        var rank: Int64?
        var phone: String?
        static let databaseTableName = "item"
        static let databaseColumnNames = ["id", "email", "rank", "phone"]
        static let databaseSealedColumns = ["email"]
        init(id: Int64, email: String, rank: Int64?, phone: String?) { self.id = id; self.email = email; self.rank = rank; self.phone = phone }
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0); email = try row.decode(at: 1); rank = try row.decode(at: 2); phone = try row.decode(at: 3)
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0); try binder.bind(email, at: 1); try binder.bind(rank, at: 2); try binder.bind(phone, at: 3)
        }
    }
    static let columns: [SealedColumn] = [.randomized("email", in: "item")]
    static let schema = "CREATE TABLE item(id INTEGER PRIMARY KEY, email BLOB NOT NULL, rank INTEGER, phone TEXT, e1 BLOB, e16 BLOB); CREATE INDEX item_e1 ON item(e1); CREATE INDEX item_e16 ON item(e16);"

    func queue(_ name: String, indexes: [BlindIndex], keyring: FieldKeyring, key: DatabaseKey = .generate(), schema: String = schema) throws -> DatabaseQueue {
        var config = Configuration(key: key)
        config.seal(Self.columns, indexes: indexes, keyring: keyring, rowKeys: ["item": ["id"]])
        let queue = try DatabaseQueue(path: dir.file(name), configuration: config)
        try queue.write { db in
            try db.execute(sql: schema)
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
        }
        return queue
    }

    /// 1. Inside a read, no write: not one SQLite reports read-only either
    /// (an export run by a SELECT, after the body ended the transaction).
    @Test func aReadCannotWriteAPlaintextCopy() throws {
        let queue = try DatabaseQueue(path: dir.file("r.db"), configuration: Configuration(key: DatabaseKey.generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES ('secret')") }
        let plain = dir.file("plain.db")
        #expect(throws: StrongroomError.self) {
            try queue.read { db in
                try db.execute(sql: "COMMIT")
                try db.execute(sql: "ATTACH '\(plain)' AS p KEY ''")
                try db.execute(sql: "SELECT sqlcipher_export('p')")
            }
        }
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: plain))) ?? Data()
        #expect(bytes.range(of: Data("secret".utf8)) == nil, "a read wrote a plaintext copy")
        // The queue still works, for reads and writes.
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES ('more')") }
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 2)
    }

    /// 5. A false positive is dropped by the stored bytes, not by Swift's
    /// canonical equivalence: NFD and NFC are different values to the index.
    @Test func falsePositivesAreDroppedByBytes() throws {
        for attempt in 0..<8 {
            let queue = try queue("c\(attempt).db", indexes: [BlindIndex("e1", on: "email", in: "item", bits: 1)], keyring: FieldKeyring.generate())
            try queue.write { db in try db.insert(Item(id: 1, email: "Zoe\u{0308}", rank: 1, phone: nil)) }
            #expect(try queue.read { db in try db.fetchAll(Item.self, where: .index("e1", equals: "Zo\u{00EB}")) }.isEmpty)
            #expect(try queue.read { db in try db.fetchAll(Item.self, where: .index("e1", equals: "Zoe\u{0308}")) }.count == 1)
        }
        let folded = BlindIndex("f", on: "email", in: "item", bits: 8, transformations: [.trimmed])
        #expect(try folded.transformed([.text(" Zoe\u{0308}")]) != nil)
    }

    /// 2. An index named like a column that holds something else is refused,
    /// at open and when added, and nothing is overwritten.
    @Test func anIndexNamedLikeAnotherColumnIsRefused() throws {
        let keyring = FieldKeyring.generate()
        let phoneIndex = BlindIndex("phone", on: "email", in: "item", bits: 16)
        // The table made after the connection opened: the insert refuses.
        let app = try queue("p.db", indexes: [phoneIndex], keyring: keyring)
        let refused = #expect(throws: StrongroomError.self) { try app.write { db in try db.insert(Item(id: 1, email: "a@x.org", rank: 1, phone: "+44 20 7946 0018")) } }
        #expect(refused?.message.contains("phone") == true)
        try app.close()
        // Opened on the table as it is (phone TEXT): refused at open.
        let key = DatabaseKey.generate()
        try DatabaseQueue(path: dir.file("p2.db"), configuration: Configuration(key: key)).write { db in try db.execute(sql: Self.schema) }
        var config = Configuration(key: key)
        config.seal(Self.columns, indexes: [phoneIndex], keyring: keyring, rowKeys: ["item": ["id"]])
        #expect(throws: StrongroomError.self) { _ = try DatabaseQueue(path: dir.file("p2.db"), configuration: config) }
        let tools = try queue("q.db", indexes: [], keyring: keyring)
        try tools.write { db in try db.execute(sql: "INSERT INTO item(id, email, phone) VALUES (1, x'00', '+44 20 7946 0018')") }
        let error = #expect(throws: FieldError.self) { try BlindIndexRebuild.add(BlindIndex("phone", on: "email", in: "item", bits: 16), in: tools, keyring: keyring) }
        #expect(error?.message.contains("phone") == true)
        #expect(try tools.read { try $0.fetchOne(String.self, sql: "SELECT phone FROM item") } == "+44 20 7946 0018", "a plain column")
    }

    /// 3. The SQL index of `a.b_c` and of `a_b.c` would have one name: the
    /// second is refused, and dropping one leaves the other's alone.
    @Test func sqlIndexNamesThatCollideAreRefused() throws {
        let keyring = FieldKeyring.generate()
        let queue = try DatabaseQueue(path: dir.file("n.db"), configuration: Configuration(key: DatabaseKey.generate()))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY, email TEXT); CREATE TABLE a_b(id INTEGER PRIMARY KEY, email TEXT)")
            try db.execute(sql: "INSERT INTO a VALUES (1, 'x@y'); INSERT INTO a_b VALUES (1, 'x@y')")
            try ColumnSealing.sealInPlace([.randomized("email", in: "a"), .randomized("email", in: "a_b")], keyring: keyring, in: db)
        }
        try BlindIndexRebuild.add(BlindIndex("b_c", on: "email", in: "a", unique: true), in: queue, keyring: keyring)
        let error = #expect(throws: FieldError.self) { try BlindIndexRebuild.add(BlindIndex("c", on: "email", in: "a_b", bits: 16), in: queue, keyring: keyring) }
        #expect(error?.message.contains("a_b_c") == true, "\(String(describing: error))")
        #expect(throws: FieldError.self) { try BlindIndexRebuild.drop("c", of: "a_b", in: queue, keyring: keyring) }
        #expect(try queue.read { try $0.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'a_b_c'") }?.contains("UNIQUE") == true)
    }

    /// 4. A unique index refuses a duplicate whatever key its value is under.
    @Test func aUniqueIndexRefusesADuplicateUnderAnotherKey() throws {
        let k1 = FieldKeyring.generate()
        let key = DatabaseKey.generate()
        let index = BlindIndex("e16", on: "email", in: "item", unique: true)
        let schema = "CREATE TABLE item(id INTEGER PRIMARY KEY, email BLOB NOT NULL, rank INTEGER, phone TEXT, e16 BLOB); CREATE UNIQUE INDEX item_e16 ON item(e16);"
        let first = try queue("u.db", indexes: [index], keyring: k1, key: key, schema: schema)
        try first.write { db in try db.insert(Item(id: 1, email: "a@x.org", rank: 1, phone: nil)) }
        try first.close()
        let (two, second) = k1.addingKey()
        var config = Configuration(key: key)
        config.seal(Self.columns, indexes: [index], keyring: try two.activating(second), rowKeys: ["item": ["id"]])
        let queue = try DatabaseQueue(path: dir.file("u.db"), configuration: config)
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.insert(Item(id: 3, email: "a@x.org", rank: 1, phone: nil)) } }
        #expect(error?.code == .uniqueConstraint, "\(String(describing: error))")
        try queue.write { db in try db.insert(Item(id: 4, email: "b@x.org", rank: 1, phone: nil)) }
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM item") } == 2)
    }

    /// 6. The tools' library calls work on the application's own sealing queue.
    @Test func theToolsWorkOnASealingQueue() throws {
        let keyring = FieldKeyring.generate()
        let index = BlindIndex("e16", on: "email", in: "item", bits: 16)
        let queue = try queue("t.db", indexes: [index], keyring: keyring)
        try queue.write { db in for i in 1...3 { try db.insert(Item(id: Int64(i), email: "u\(i)@x.org", rank: nil, phone: nil)) } }
        try BlindIndexRebuild.add(index, in: queue, keyring: keyring)
        let plan = try queue.read { db in try BlindIndexPlanner.plan(index, in: db, keyring: keyring) }
        #expect(plan.distinctValues == 3)
        let (two, second) = keyring.addingKey()
        _ = try FieldRotation.rotate(queue, columns: Self.columns, keyring: try two.activating(second))
    }

    /// 7. An index declared in the configuration only is recorded by the
    /// first insert, so that rotation moves it and retiring its old key
    /// waits for that: lookups keep finding the row.
    @Test func anIndexDeclaredInTheConfigurationOnlyIsRotatedBeforeItsKeyRetires() throws {
        let k1 = FieldKeyring.generate()
        let key = DatabaseKey.generate()
        let index = BlindIndex("e16", on: "email", in: "item", bits: 16)
        func open(_ keyring: FieldKeyring) throws -> DatabaseQueue {
            var config = Configuration(key: key)
            config.seal(Self.columns, indexes: [index], keyring: keyring, rowKeys: ["item": ["id"]])
            return try DatabaseQueue(path: dir.file("rot.db"), configuration: config)
        }
        let first = try queue("rot.db", indexes: [index], keyring: k1, key: key)
        try first.write { db in try db.insert(Item(id: 1, email: "a@x.org", rank: 1, phone: nil)) }
        try first.close()
        let (two, second) = k1.addingKey()
        let k2 = try two.activating(second)
        let tools = try DatabaseQueue(path: dir.file("rot.db"), configuration: Configuration(key: key))
        _ = try FieldRotation.rotate(tools, columns: Self.columns, keyring: k2)
        #expect(try tools.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM item WHERE substr(e16, 1, 4) = x'00000001'") } == 0)
        let k3 = try tools.read { db in try FieldRotation.retire(1, from: k2, in: db) }
        try tools.close()
        #expect(try open(k3).read { db in try db.fetchAll(Item.self, where: .index("e16", equals: "a@x.org")) }.count == 1)
    }

    /// 8. Turning an index unique (or changing it while old values collide)
    /// rebuilds it first, then makes it unique; duplicates in the new values
    /// are a typed error naming the rows.
    @Test func turningAnIndexUniqueRebuildsBeforeItIsUnique() throws {
        let keyring = FieldKeyring.generate()
        let key = DatabaseKey.generate()
        let queue = try queue("x.db", indexes: [], keyring: keyring, key: key, schema: "CREATE TABLE item(id INTEGER PRIMARY KEY, email BLOB NOT NULL, rank INTEGER, phone TEXT)")
        var config = Configuration(key: key)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["item": ["id"]])
        let app = try DatabaseQueue(path: dir.file("x.db"), configuration: config)
        try app.write { db in for i in 1...40 { try db.insert(Item(id: Int64(i), email: "user\(i)@x.org", rank: nil, phone: nil)) } }
        // 1 bit: old values collide.
        try BlindIndexRebuild.add(BlindIndex("e", on: "email", in: "item", bits: 1), in: queue, keyring: keyring)
        try BlindIndexRebuild.add(BlindIndex("e", on: "email", in: "item", unique: true), in: queue, keyring: keyring)
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(DISTINCT e) FROM item") } == 40)
        // Folded, two addresses become one: refused, naming the rows.
        try app.write { db in try db.insert(Item(id: 41, email: "USER1@x.org", rank: nil, phone: nil)) }
        let error = #expect(throws: FieldError.self) {
            try BlindIndexRebuild.add(BlindIndex("e", on: "email", in: "item", transformations: [.normalizedCaseFolded], unique: true), in: queue, keyring: keyring)
        }
        #expect(error?.message.contains("1") == true && error?.message.contains("41") == true, "\(String(describing: error))")
    }

    /// 12. Keyset pagination by a column that may be NULL would skip rows: refused.
    @Test func keysetPaginationByANullableColumnIsRefused() throws {
        let queue = try queue("k.db", indexes: [BlindIndex("e16", on: "email", in: "item", bits: 16)], keyring: FieldKeyring.generate())
        try queue.write { db in for i in 1...6 { try db.insert(Item(id: Int64(i), email: "same@x.org", rank: i <= 3 ? nil : Int64(i), phone: nil)) } }
        let error = #expect(throws: FieldError.self) {
            _ = try queue.read { db in try db.fetchAll(Item.self, where: .index("e16", equals: "same@x.org").ordered(by: "rank", "id").after(5, 5).limit(2)) }
        }
        #expect(error?.message.contains("rank") == true)
        #expect(try queue.read { db in try db.fetchAll(Item.self, where: .index("e16", equals: "same@x.org").ordered(by: "id").after(2).limit(10)) }.map(\.id) == [3, 4, 5, 6])
    }

    /// 9. nfkc-casefold takes characters Unicode 14.0 assigns only: NFKC of a
    /// later one depends on the platform's Unicode data.
    @Test func nfkcCasefoldRefusesCharactersAssignedAfterUnicode14() throws {
        let index = BlindIndex("f", on: "email", in: "item", bits: 8, transformations: [.normalizedCaseFolded])
        #expect(throws: FieldError.self) { _ = try index.transformed([.text("a\u{1E030}")]) }
        #expect(try index.transformed([.text("Ａｄａ🙂")]) == [.text("ada🙂")])
    }

    /// 15. INTEGER seconds take whole days by integer division, as specified.
    @Test func integerDatesAreDividedExactly() throws {
        let year = BlindIndex("y", on: "d", in: "t", bits: 8, transformations: [.yearMonth])
        #expect(try year.transformed([.integer(17_280_000_019_007_999)]) == [.text("547583371-12")])
        #expect(try year.transformed([.integer(-1)]) == [.text("1969-12")])
        #expect(try year.transformed([.integer(Int64.min)]) != nil)
    }
}
