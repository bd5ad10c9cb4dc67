import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Several blind indexes per sealed column, compound and truncated, and
/// lookups that drop the false positives (issue 39, items 1, 2 and 4).
@Suite("Blind indexes: several per column, truncated, compound")
struct BlindIndexTests {
    let dir = TemporaryDirectory()
    let keyring = FieldKeyring.generate()

    struct Person: TableRecord, Equatable {
        var id: Int64
        var email: String
        var lastName: String
        var birthDate: String?

        static let databaseTableName = "person"
        static let databaseColumnNames = ["id", "email", "last_name", "birth_date"]
        static let databaseSealedColumns = ["email", "last_name"]

        init(id: Int64, email: String, lastName: String, birthDate: String?) {
            self.id = id
            self.email = email
            self.lastName = lastName
            self.birthDate = birthDate
        }

        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0)
            email = try row.decode(at: 1)
            lastName = try row.decode(at: 2)
            birthDate = try row.decode(at: 3)
        }

        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0)
            try binder.bind(email, at: 1)
            try binder.bind(lastName, at: 2)
            try binder.bind(birthDate, at: 3)
        }
    }

    static let schema = """
        CREATE TABLE person(id INTEGER PRIMARY KEY, email BLOB NOT NULL, email_index BLOB, email_folded BLOB,
                            last_name BLOB NOT NULL, birth_date TEXT, name_born BLOB, email_tiny BLOB);
        CREATE UNIQUE INDEX person_email_index ON person(email_index);
        CREATE INDEX person_email_folded ON person(email_folded);
        CREATE INDEX person_name_born ON person(name_born);
        CREATE INDEX person_email_tiny ON person(email_tiny);
        """

    static let columns: [SealedColumn] = [
        .indexed("email", in: "person", indexColumn: "email_index"),
        .randomized("last_name", in: "person"),
    ]

    static let indexes = [
        BlindIndex("email_folded", on: "email", in: "person", bits: 16, transformations: [.trimmed, .normalizedCaseFolded]),
        BlindIndex("name_born", in: "person", bits: 8, parts: [.init("last_name", [.normalizedCaseFolded]), .init("birth_date", [.year])]),
        // Two bits: four index values for every row, nearly all candidates false positives.
        BlindIndex("email_tiny", on: "email", in: "person", bits: 2),
    ]

    func queue(indexes: [BlindIndex] = indexes) throws -> DatabaseQueue {
        var config = Configuration(key: DatabaseKey.generate())
        config.seal(Self.columns, indexes: indexes, keyring: keyring, rowKeys: ["person": ["id"]])
        let queue = try DatabaseQueue(path: dir.file("people.db"), configuration: config)
        try queue.write { db in try db.execute(sql: Self.schema) }
        return queue
    }

    static let people: [Person] = (1...200).map { n in
        let names = ["Lovelace", "Hopper", "Turing", "Noether", "Straße"]
        let name = names[n % names.count]
        return Person(id: Int64(n), email: "user\(n)@example.com", lastName: n % 2 == 0 ? name.uppercased() : name,
                      birthDate: n % 7 == 0 ? nil : "19\(50 + n % 3)-0\(1 + n % 9)-1\(n % 10) 08:00:00.000")
    }

    @Test func everyIndexIsFilledAndFindsItsRowsWithoutFalsePositives() throws {
        let queue = try queue()
        try queue.write { db in for person in Self.people { try db.insert(person) } }
        try queue.read { db in
            // A folded, trimmed e-mail: any case, any surrounding space.
            let found = try db.fetchAll(Person.self, where: .index("email_folded", equals: "  USER17@Example.COM "))
            #expect(found.map(\.id) == [17])
            // The exact 128-bit index: only the exact value.
            #expect(try db.fetchOne(Person.self, where: .index("email_index", equals: "user18@example.com"))?.id == 18)
            #expect(try db.fetchOne(Person.self, where: .index("email_index", equals: "USER18@example.com")) == nil)
            // Two bits: about a quarter of the table shares each index value,
            // and only the one row is returned.
            let tiny = try db.fetchAll(Person.self, where: .index("email_tiny", equals: "user42@example.com"))
            #expect(tiny.map(\.id) == [42])
            // Compound: a last name in any case, and a birth year.
            let expected = Self.people.filter { $0.lastName.lowercased() == "hopper" && $0.birthDate?.hasPrefix("1951") == true }.map(\.id)
            #expect(!expected.isEmpty)
            let hoppers = try db.fetchAll(Person.self, where: .index("name_born", equals: "hOpPeR", "1951-06-01").ordered(by: "id"))
            #expect(hoppers.map(\.id) == expected)
            // NFKC and full case folding: STRASSE finds Straße.
            let strasse = try db.fetchAll(Person.self, where: .index("name_born", equals: "STRASSE", "1950-01-01").ordered(by: "id"))
            #expect(strasse.map(\.id) == Self.people.filter { $0.lastName.lowercased().hasPrefix("stra") && $0.birthDate?.hasPrefix("1950") == true }.map(\.id))
            // A row whose part is NULL has no index value, and no lookup of NULL finds one.
            let nulls = try db.fetchAll(sql: "SELECT count(*) AS n FROM person WHERE name_born IS NULL")[0]
            #expect(try nulls.decode(Int.self, column: "n") == Self.people.filter { $0.birthDate == nil }.count)
            // Index values are the key id and the bits, rounded up to bytes.
            let lengths = try db.fetchAll(sql: "SELECT DISTINCT length(email_index) AS a, length(email_folded) AS b, length(name_born) AS c, length(email_tiny) AS d FROM person WHERE name_born IS NOT NULL")
            #expect(lengths.count == 1)
            #expect(try ["a", "b", "c", "d"].map { try lengths[0].decode(Int.self, column: $0) } == [20, 6, 5, 5])
        }
    }

    /// LIMIT, ORDER BY and keyset pagination after the false positives are
    /// dropped: pages of 3 through a 2-bit index give exactly the matching
    /// rows, in order, none twice, none missed.
    @Test func limitOrderAndKeysetPagesHoldAfterFiltering() throws {
        let queue = try queue()
        // 60 rows share one e-mail (any case), 140 others do not.
        let shared = (1...200).map { (n: Int) -> Person in
            let spelling = n % 2 == 0 ? "Shared@Example.com" : "shared@example.com"
            let email = n % 10 < 3 ? spelling : "other\(n)@example.com"
            return Person(id: Int64(n), email: email, lastName: "X", birthDate: nil)
        }
        try queue.write { db in
            // Here many rows share an address: the exact index is not unique.
            try db.execute(sql: "DROP INDEX person_email_index; CREATE INDEX person_email_index ON person(email_index)")
            for person in shared { try db.insert(person) }
        }
        let matching = shared.filter { $0.email.lowercased() == "shared@example.com" }
        try queue.read { db in
            for descending in [false, true] {
                var pages: [[Int64]] = []
                var last: Int64?
                while true {
                    var lookup = BlindIndexLookup.index("email_folded", equals: "SHARED@example.com").ordered(by: "id", descending: descending).limit(7)
                    if let last { lookup = lookup.after(last) }
                    let page = try db.fetchAll(Person.self, where: lookup).map(\.id)
                    if page.isEmpty { break }
                    #expect(page.count <= 7)
                    pages.append(page)
                    last = page.last
                }
                let want = matching.map(\.id).sorted(by: descending ? (>) : (<))
                #expect(pages.flatMap { $0 } == want)
                #expect(pages.dropLast().allSatisfy { $0.count == 7 }, "every page but the last is full")
            }
            // Through the 2-bit index of exact values: the 30 of one spelling only.
            let exact = try db.fetchAll(Person.self, where: .index("email_tiny", equals: "shared@example.com").ordered(by: "id").limit(100))
            #expect(exact.map(\.id) == shared.filter { $0.email == "shared@example.com" }.map(\.id))
            let candidates = try db.fetchAll(sql: "SELECT count(*) AS n FROM person WHERE email_tiny = (SELECT email_tiny FROM person WHERE id = 1)")[0]
            #expect(try candidates.decode(Int.self, column: "n") > exact.count, "the 2-bit index gave false positives to drop")
            // A limit of 0 (or less) finds nothing, through fetchOne too: its
            // own limit of 1 must not replace the caller's.
            for limit in [0, -1] {
                let none = BlindIndexLookup.index("email_folded", equals: "shared@example.com").limit(limit)
                #expect(try db.fetchAll(Person.self, where: none).isEmpty, "limit \(limit)")
                #expect(try db.fetchOne(Person.self, where: none) == nil, "limit \(limit)")
            }
        }
    }

    @Test func theQueryPlanSearchesTheIndex() throws {
        let queue = try queue()
        try queue.write { db in for person in Self.people { try db.insert(person) } }
        try queue.read { db in
            for lookup in [BlindIndexLookup.index("email_folded", equals: "a@b"),
                           .index("name_born", equals: "x", "1950-01-01").ordered(by: "id").after(3).limit(2),
                           .index("email_index", equals: "a@b")] {
                let (sql, plan) = try db.queryPlan(Person.self, where: lookup)
                #expect(plan.contains { $0.contains("USING INDEX person_\(lookup.index) (\(lookup.index)=?") }, "\(sql): \(plan)")
                #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(sql): \(plan)")
            }
        }
    }

    @Test func aValueATransformationRefusesNamesTheColumnAndRowAndWritesNothing() throws {
        let queue = try queue()
        // An insert's errors are StrongroomError(.sealedValue), with the FieldError's message.
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Person(id: 5, email: "a@b", lastName: "Ng", birthDate: "next tuesday")) }
        }
        #expect(error?.code == .sealedValue)
        #expect(error?.message.hasPrefix("person.birth_date, row 5: blind index name_born cannot index the value: year takes a date") == true, "\(String(describing: error))")
        #expect(error?.message.contains("next tuesday") == false, "the message names no value")
        let direct = #expect(throws: FieldError.self) {
            _ = try FieldCipher(keyring: keyring).blindIndex(of: [.text("Ng"), .text("2023-02-29")], for: Self.indexes[1], row: "5")
        }
        #expect(direct?.code == .untransformable)
        #expect(direct?.column == "birth_date")
        #expect(direct?.row == "5")
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM person") } == 0)
        // digits: a value with none is refused, not indexed as empty.
        let digits = BlindIndex("phone_digits", on: "phone", in: "person", bits: 8, transformations: [.digitsOnly])
        #expect(throws: FieldError.self) { _ = try digits.transformed([.text("n/a")]) }
        #expect(try digits.transformed([.text("+44 (0)20 7946-0018")]) == [.text("4402079460018")])
    }

    @Test func definitionsThatCannotWorkAreRefusedWithTheReason() throws {
        let truncatedUnique = BlindIndex("email_folded", on: "email", in: "person", bits: 64, unique: true)
        let error = #expect(throws: FieldError.self) { try truncatedUnique.validate() }
        #expect(error?.message.contains("truncated") == true)
        #expect(throws: Never.self) { try BlindIndex("email_full", on: "email", in: "person", unique: true).validate() }
        for bits in [0, 129, -1] {
            #expect(throws: FieldError.self) { try BlindIndex("x", on: "email", in: "person", bits: bits).validate() }
        }
        #expect(throws: FieldError.self) { try BlindIndex("x", in: "person", parts: []).validate() }
        #expect(throws: FieldError.self) { try BlindIndex("x", in: "person", parts: [.init("email"), .init("EMAIL")]).validate() }
        // Of plain columns only, or named as an indexed column's own index: refused at open.
        for bad in [BlindIndex("b", on: "birth_date", in: "person"), BlindIndex("email_index", on: "last_name", in: "person")] {
            #expect(throws: FieldError.self) { try BlindIndex.validate([bad], of: Self.columns) }
            #expect(throws: StrongroomError.self) { _ = try queue(indexes: [bad]) }
        }
    }

    /// The first format's index of an `indexed` column is unchanged: old
    /// data needs no migration. Every other index's key binds its table,
    /// name, columns, transformations and length.
    @Test func columnIndexesKeepTheirValuesAndEveryDefinitionChangeChangesTheKey() throws {
        let cipher = FieldCipher(keyring: keyring)
        let column = try #require(SealedColumn.indexed("email", in: "person", indexColumn: "email_index").columnIndex)
        #expect(try cipher.blindIndex(of: [.text("ada@example.com")], for: column) == cipher.blindIndex(.text("ada@example.com"), table: "person", column: "email"))
        let base = BlindIndex("e", on: "email", in: "person", bits: 32)
        let variants = [
            base,
            BlindIndex("f", on: "email", in: "person", bits: 32),
            BlindIndex("e", on: "email", in: "people", bits: 32),
            BlindIndex("e", on: "mail", in: "person", bits: 32),
            BlindIndex("e", on: "email", in: "person", bits: 31),
            BlindIndex("e", on: "email", in: "person", bits: 32, transformations: [.trimmed]),
            BlindIndex("e", in: "person", bits: 32, parts: [.init("email"), .init("x")]),
        ]
        let values = try variants.map { index -> DatabaseValue in
            try cipher.blindIndex(of: Array(repeating: .text("ada@example.com"), count: index.parts.count), for: index)
        }
        #expect(Set(values).count == variants.count)
        #expect(Set(variants.map(\.derivationInfo)).count == variants.count)
        // Names compare as SQLite compares them: the same key whatever the ASCII case.
        #expect(try cipher.blindIndex(of: [.text("x")], for: BlindIndex("E", on: "EMAIL", in: "Person", bits: 32)) == cipher.blindIndex(of: [.text("x")], for: base))
        // Bits past the length are zero.
        for bits in 1...24 {
            guard case .blob(let bytes) = try cipher.blindIndex(of: [.text("ada")], for: BlindIndex("e", on: "email", in: "person", bits: bits)) else { Issue.record(); continue }
            #expect(bytes.count == 4 + (bits + 7) / 8)
            if bits % 8 != 0 { #expect(bytes.last! & UInt8(0xFF >> (bits % 8)) == 0) }
        }
    }

    @Test func lookupsThatCannotBeAnsweredSayWhy() throws {
        let queue = try queue()
        try queue.read { db in
            #expect(throws: FieldError.self) { _ = try db.fetchAll(Person.self, where: .index("nope", equals: "x")) }
            #expect(throws: FieldError.self) { _ = try db.fetchAll(Person.self, where: .index("name_born", equals: "x")) }
            #expect(throws: FieldError.self) { _ = try db.fetchAll(Person.self, where: .index("email_folded", equals: "x").ordered(by: "last_name")) }
            #expect(throws: FieldError.self) { _ = try db.fetchAll(Person.self, where: .index("email_folded", equals: "x").after(3)) }
        }
        let plain = try DatabaseQueue(path: dir.file("plain.db"), configuration: Configuration(key: DatabaseKey.generate()))
        try plain.write { db in try db.execute(sql: Self.schema) }
        let error = #expect(throws: FieldError.self) { try plain.read { db in _ = try db.fetchAll(Person.self, where: .index("email_folded", equals: "x")) } }
        #expect(error?.message.contains("seals no column") == true)
    }
}
