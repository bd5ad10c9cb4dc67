import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Statements, binding, rows and Codable")
struct StatementTests {
    let db: Connection

    init() throws {
        db = try Connection.inMemory(configuration: Configuration(key: .generate()))
        try db.execute(sql: """
            CREATE TABLE person(
                id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL,
                active INTEGER, avatar BLOB, born TEXT);
            """)
    }

    struct Person: Codable, Equatable {
        var id: Int
        var name: String
        var email: String?
        var score: Double
        var active: Bool
        var avatar: Data?
        var born: Date?
    }

    /// SQLite compares SQL text and names by bytes; Swift's `==` on strings
    /// takes "é" and "e" + a combining accent for the same. The statement
    /// caches must not.
    @Test func cachedStatementsTellApartTextsThatDifferOnlyInUnicodeNormalization() throws {
        let db = try Connection.inMemory()
        let composed = "caf\u{e9}", decomposed = "cafe\u{301}"
        try db.execute(sql: "CREATE TABLE \"\(composed)\"(x TEXT); CREATE TABLE \"\(decomposed)\"(x TEXT)")
        try db.execute(sql: "INSERT INTO \"\(composed)\" VALUES (?)", arguments: ["composed"])
        try db.execute(sql: "INSERT INTO \"\(decomposed)\" VALUES (?)", arguments: ["decomposed"])
        struct Item: Codable { var x: String }
        try db.insert(Item(x: "composed 2"), into: composed)
        try db.insert(Item(x: "decomposed 2"), into: decomposed)
        #expect(try db.fetchAll(String.self, sql: "SELECT x FROM \"\(composed)\" ORDER BY rowid") == ["composed", "composed 2"])
        #expect(try db.fetchAll(String.self, sql: "SELECT x FROM \"\(decomposed)\" ORDER BY rowid") == ["decomposed", "decomposed 2"])
    }

    /// The caches' byte comparison takes a shortcut when two strings share
    /// one representation; strings with the same bytes in other storage must
    /// still be equal, and strings of one length with other bytes unequal.
    @Test func exactTextIsEqualByBytesWhateverTheStorage() {
        let long = String(repeating: "customer_email_", count: 3)
        let rebuilt = (0..<3).map { _ in "customer_email_" }.joined()
        let fromSubstring = String(("x" + long).dropFirst())
        for (a, b) in [("t", String("xt".dropFirst())), (long, rebuilt), (long, fromSubstring), ("caf\u{e9}", String(decoding: Array("caf\u{e9}".utf8), as: UTF8.self))] {
            #expect(ExactText(a) == ExactText(b))
            #expect(ExactText(a).hashValue == ExactText(b).hashValue)
        }
        let sameLength = String(repeating: "customer_email_", count: 2) + "customer_emaiL_"
        #expect(ExactText(long) != ExactText(sameLength))
        #expect(ExactText("ab") != ExactText("aB"))
        #expect(ExactText("caf\u{e9}") != ExactText("cafe\u{301}"))
    }

    /// Issue 7, item 15: coding keys that are not SQL parameter names, and
    /// a trailing comment after a statement's semicolon.
    @Test func insertsPropertiesWhoseKeysAreNotParameterNames() throws {
        struct Contact: Codable {
            var id: Int
            var firstName: String
            var lastName: String
            enum CodingKeys: String, CodingKey { case id, firstName = "first-name", lastName = "last name" }
        }
        let db = try Connection.inMemory()
        try db.execute(sql: #"CREATE TABLE contact(id INTEGER PRIMARY KEY, "first-name" TEXT, "last name" TEXT)"#)
        try db.insert(Contact(id: 1, firstName: "Ada", lastName: "Lovelace"), into: "contact")
        try db.insert(Contact(id: 2, firstName: "Grace", lastName: "Hopper"), into: "contact")
        #expect(try db.fetchAll(Contact.self, sql: "SELECT * FROM contact ORDER BY id").map(\.lastName) == ["Lovelace", "Hopper"])
    }

    @Test func aStatementMayEndWithACommentAfterItsSemicolon() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x)")
        try db.execute(sql: "INSERT INTO t VALUES (?); -- one value", arguments: [1])
        try db.execute(sql: "INSERT INTO t VALUES (?); /* another */", arguments: [2])
        #expect(try db.fetchAll(Int.self, sql: "SELECT x FROM t ORDER BY x; -- all of them") == [1, 2])
        // A second statement is still refused.
        #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO t VALUES (?); DELETE FROM t", arguments: [3]) }
    }

    /// Issue 7, item 8: a cached `SELECT *` follows a schema change (SQLite
    /// re-prepares it; its columns must be read again).
    @Test func cachedStatementsFollowASchemaChange() throws {
        struct Person: Codable, Equatable { var id: Int; var name: String; var email: String }
        let dir = TemporaryDirectory()
        let key = DatabaseKey.generate()
        let db = try Connection(path: dir.file("s.db"), configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, email TEXT); INSERT INTO person VALUES (1, 'Ada', 'ada@example.com')")
        let ada = Person(id: 1, name: "Ada", email: "ada@example.com")
        #expect(try db.fetchAll(Person.self, sql: "SELECT * FROM person") == [ada])
        #expect(try db.fetchOne(sql: "SELECT * FROM person")?.values.count == 3)
        // Another connection rebuilds the table with its columns in another order, and one more.
        let other = try Connection(path: dir.file("s.db"), configuration: Configuration(key: key))
        try other.execute(sql: """
            BEGIN;
            CREATE TABLE new_person(email TEXT, id INTEGER PRIMARY KEY, name TEXT, note TEXT);
            INSERT INTO new_person(email, id, name) SELECT email, id, name FROM person;
            DROP TABLE person;
            ALTER TABLE new_person RENAME TO person;
            COMMIT;
            """)
        #expect(try db.fetchAll(Person.self, sql: "SELECT * FROM person") == [ada])
        let row = try #require(try db.fetchOne(sql: "SELECT * FROM person"))
        #expect(row.values.count == 4)
        #expect(try row.decode(String.self, column: "name") == "Ada")
    }

    @Test func bindsEverySupportedTypePositionally() throws {
        let born = Date(timeIntervalSince1970: 1_700_000_000.25)
        let insert = try db.cachedStatement(sql: "INSERT INTO person VALUES (?, ?, ?, ?, ?, ?, ?)")
        try insert.execute(1, "Ada", nil as String?, 3.5, true, [UInt8]([0, 1, 2]), born)
        try insert.execute(Int64(2), "Bob", "bob@example.com", 1.0, false, Data(), nil as Date?)
        let row = try #require(try db.fetchOne(sql: "SELECT * FROM person WHERE id = 1"))
        #expect(row[0] == .integer(1))
        #expect(row["name"] == .text("Ada"))
        #expect(row["NAME"] == .text("Ada"))
        #expect(row["email"] == .null)
        #expect(try row.decode(Double.self, column: "score") == 3.5)
        #expect(try row.decode(Bool.self, column: "active") == true)
        #expect(try row.decode([UInt8].self, column: "avatar") == [0, 1, 2])
        #expect(try row.decode(String?.self, column: "email") == nil)
        // Dates are stored as UTC text SQLite's date functions understand.
        #expect(row["born"] == .text("2023-11-14 22:13:20.250"))
        #expect(try row.decode(Date.self, column: "born") == born)
        #expect(try db.fetchOne(String.self, sql: "SELECT date(born) FROM person WHERE id = 1") == "2023-11-14")
        let empty = try #require(try db.fetchOne(sql: "SELECT avatar FROM person WHERE id = 2"))
        #expect(empty[0] == .blob([]))
    }

    @Test func bindsNamedAndArrayArguments() throws {
        try db.execute(sql: "INSERT INTO person(id, name, score) VALUES (:id, :name, :score)", arguments: ["id": 7, "name": "Cy", "score": 2.0])
        try db.execute(sql: "INSERT INTO person(id, name, score) VALUES (?, ?, ?)", arguments: [8, "Di", nil])
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM person ORDER BY id") == ["Cy", "Di"])
        #expect(try db.fetchOne(Double?.self, sql: "SELECT score FROM person WHERE id = ?", arguments: [8]) == .some(nil))
    }

    @Test func wrongArgumentCountIsMisuse() throws {
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "INSERT INTO person(id, name) VALUES (?, ?)", arguments: [1])
        }
        #expect(error?.code == .misuse)
        let unknown = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "INSERT INTO person(id, name) VALUES (:id, :name)", arguments: ["id": 1, "nom": "x"])
        }
        #expect(unknown?.code == .misuse)
    }

    @Test func encodesAndDecodesRecords() throws {
        let people = [
            Person(id: 1, name: "Ada", email: nil, score: 1.5, active: true, avatar: Data([9]), born: Date(timeIntervalSince1970: 0)),
            Person(id: 2, name: "Bob", email: "b@example.com", score: -2, active: false, avatar: nil, born: nil),
        ]
        let insert = try db.cachedStatement(sql: "INSERT INTO person VALUES (:id, :name, :email, :score, :active, :avatar, :born)")
        for person in people { try insert.execute(record: person) }
        #expect(try db.fetchAll(Person.self, sql: "SELECT * FROM person ORDER BY id") == people)
        #expect(try db.fetchOne(Person.self, sql: "SELECT * FROM person WHERE id = 2") == people[1])
    }

    struct Tag: Codable, Equatable { var id: Int; var label: String }
    /// The same coding keys as `Tag`'s, in another order, another type.
    struct Label: Codable, Equatable {
        var label: String; var id: Int
        enum CodingKeys: String, CodingKey { case id, label }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(label, forKey: .label)
            try container.encode(id, forKey: .id)
        }
    }

    /// Two types that encode with one `CodingKey` type, in other orders.
    enum SharedKeys: String, CodingKey { case id, label }
    struct First: Encodable {
        var id: Int; var label: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: SharedKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(label, forKey: .label)
        }
    }
    struct Second: Encodable {
        var id: Int; var label: String?
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: SharedKeys.self)
            try container.encodeIfPresent(label, forKey: .label)
            try container.encode(id, forKey: .id)
        }
    }

    /// The kept container serves by statement and key type: two record
    /// types sharing one `CodingKey` type, one of them sometimes nil (stored
    /// as NULL), into one table and another, in turn.
    @Test func typesSharingCodingKeysInsertTheirOwnValues() throws {
        try db.execute(sql: "CREATE TABLE one(id INTEGER PRIMARY KEY, label TEXT DEFAULT 'default'); CREATE TABLE two(id INTEGER PRIMARY KEY, label TEXT DEFAULT 'default')")
        for i in 1...4 {
            try db.insert(First(id: i, label: "first \(i)"), into: "one")
            try db.insert(Second(id: 10 + i, label: i == 3 ? nil : "second \(i)"), into: "one")
            try db.insert(Second(id: 20 + i, label: "second in two \(i)"), into: "two")
            try db.insert(First(id: 30 + i, label: "first in two \(i)"), into: "two")
        }
        let one = try db.fetchAll(sql: "SELECT id, label FROM one ORDER BY id").map { "\(try $0.decode(Int.self, at: 0)) \(try $0.decode(String?.self, at: 1) ?? "NULL")" }
        let two = try db.fetchAll(sql: "SELECT id, label FROM two ORDER BY id").map { "\(try $0.decode(Int.self, at: 0)) \(try $0.decode(String?.self, at: 1) ?? "NULL")" }
        #expect(one == (1...4).map { "\($0) first \($0)" } + (1...4).map { "\(10 + $0) \($0 == 3 ? "NULL" : "second \($0)")" })
        #expect(two == (1...4).map { "\(20 + $0) second in two \($0)" } + (1...4).map { "\(30 + $0) first in two \($0)" })
    }

    /// `insert(_:into:)` keeps each statement's encoding container for the
    /// next record: records of other types, of the same type into other
    /// tables, and of a type with the same keys, each land where they belong.
    @Test func insertsOfManyTypesAndTablesInTurnLandEachInItsTable() throws {
        try db.execute(sql: "CREATE TABLE tag(id INTEGER PRIMARY KEY, label TEXT); CREATE TABLE label(id INTEGER PRIMARY KEY, label TEXT)")
        for i in 1...3 {
            try db.insert(Tag(id: i, label: "tag \(i)"), into: "tag")
            try db.insert(Tag(id: 10 + i, label: "tag in label \(i)"), into: "label")
            try db.insert(Person(id: i, name: "p\(i)", email: nil, score: Double(i), active: i == 2, avatar: nil, born: nil), into: "person")
            try db.insert(Label(label: "label \(i)", id: 20 + i), into: "label")
        }
        #expect(try db.fetchAll(Tag.self, sql: "SELECT id, label FROM tag ORDER BY id") == (1...3).map { Tag(id: $0, label: "tag \($0)") })
        #expect(try db.fetchAll(Tag.self, sql: "SELECT id, label FROM label ORDER BY id")
            == (1...3).map { Tag(id: 10 + $0, label: "tag in label \($0)") } + (1...3).map { Tag(id: 20 + $0, label: "label \($0)") })
        #expect(try db.fetchAll(sql: "SELECT name, active FROM person ORDER BY id").map { try $0.decode(String.self, at: 0) } == ["p1", "p2", "p3"])
    }

    /// The kept container holds its statement: the connection lets both go
    /// when it releases its statements, so a rekey (which needs every
    /// statement released) still runs after an insert.
    @Test func aKeptEncodingContainerHoldsNoStatementPastTheCaches() throws {
        let dir = TemporaryDirectory()
        let db = try Connection(path: dir.file("kept.db"), configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE TABLE tag(id INTEGER PRIMARY KEY, label TEXT)")
        try db.insert(Tag(id: 1, label: "one"), into: "tag")
        try db.rekey(to: .generate())
        try db.insert(Tag(id: 2, label: "two"), into: "tag")
        #expect(try db.fetchAll(Tag.self, sql: "SELECT id, label FROM tag ORDER BY id") == [Tag(id: 1, label: "one"), Tag(id: 2, label: "two")])
    }

    @Test func materializedRowsDecodeToo() throws {
        let person = Person(id: 5, name: "Row", email: "r@example.com", score: 2.5, active: false, avatar: Data([1, 2]), born: Date(timeIntervalSince1970: 86_400))
        try db.insert(person, into: "person")
        let row = try #require(try db.fetchOne(sql: "SELECT * FROM person"))
        #expect(try row.decode(Person.self) == person)
        #expect(row.columnNames == ["id", "name", "email", "score", "active", "avatar", "born"])
        let statement = try db.prepare(sql: "SELECT name, score FROM person")
        var seen: [String] = []
        try statement.forEachRow { row in seen.append(try row.decode(String.self, at: 0)) }
        #expect(seen == ["Row"])
        let conversion = #expect(throws: StrongroomError.self) { try row.decode(Int.self, column: "name") }
        #expect(conversion?.code == .conversion)
        #expect(conversion?.message.contains("Row") == false) // the value itself is never quoted
    }

    /// Decodes like a record, and keeps a weak reference to the column
    /// reader it was decoded from (the `source` of Strongroom's decoder).
    struct ReaderProbe: Decodable {
        var name: String
        var sawReader: Bool
        weak var reader: AnyObject?
        enum CodingKeys: String, CodingKey { case name }

        init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
            let source = Mirror(reflecting: decoder).descendant("source")
            sawReader = source.map { type(of: $0) is AnyClass } ?? false
            reader = source as AnyObject?
        }
    }

    /// `Row.decode(_:)` left its column reader alive for good: the keyed
    /// container the reader caches points back at it, and only a statement
    /// broke that cycle. Every decoded row leaked, with its values (opened
    /// sealed values included). Found by LeakSanitizer (`make sanitize`).
    @Test func decodingARowKeepsNothingAlive() throws {
        try db.insert(Person(id: 1, name: "Ada", email: nil, score: 1, active: true, avatar: nil, born: nil), into: "person")
        let row = try #require(try db.fetchOne(sql: "SELECT name FROM person"))
        let probe = try row.decode(ReaderProbe.self)
        #expect(probe.name == "Ada")
        #expect(probe.sawReader, "the probe found the decoder's reader")
        #expect(probe.reader == nil, "the reader outlived the decoding")
    }

    /// A record read through two `CodingKey` types in one row: its own keys,
    /// then a part decoded from the same decoder with keys of its own, then
    /// its own container again. The decoder keeps the container of the last
    /// key type for the next row; each container must still read its own
    /// columns, whichever was made last.
    struct Contact: Decodable, Equatable {
        struct Reach: Decodable, Equatable {
            var email: String?
            var score: Double
            enum CodingKeys: String, CodingKey { case email, score }
        }
        var id: Int
        var reach: Reach
        var name: String
        enum CodingKeys: String, CodingKey { case id, name }

        init(id: Int, reach: Reach, name: String) { (self.id, self.reach, self.name) = (id, reach, name) }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            reach = try Reach(from: decoder)
            name = try container.decode(String.self, forKey: .name)
        }
    }

    @Test func aRowReadThroughTwoKeyTypesReadsEachFromItsOwnColumns() throws {
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Ada', 'a@x', 1.5), (2, 'Bob', NULL, -2), (3, 'Cy', 'c@x', 0)")
        let expected = [
            Contact(id: 1, reach: .init(email: "a@x", score: 1.5), name: "Ada"),
            Contact(id: 2, reach: .init(email: nil, score: -2), name: "Bob"),
            Contact(id: 3, reach: .init(email: "c@x", score: 0), name: "Cy"),
        ]
        let sql = "SELECT id, name, email, score FROM person ORDER BY id"
        #expect(try db.fetchAll(Contact.self, sql: sql) == expected)
        // The same statement, one key type, then the other, then both.
        let select = try db.cachedStatement(sql: sql)
        #expect(try select.fetchAll(Contact.Reach.self) == expected.map(\.reach))
        #expect(try select.fetchAll(Contact.self) == expected)
        #expect(try select.fetchAll(Contact.Reach.self) == expected.map(\.reach))
        let rows = try db.fetchAll(sql: sql)
        #expect(try rows.map { try $0.decode(Contact.self) } == expected)
    }

    /// Opens `person.email` (as it is stored: the test looks at readers,
    /// not at sealing), so that rows are read through an opening reader.
    final class EmailOpening: ColumnTransform {
        func bindsToRowKey(_ column: String, of table: String) -> Bool? {
            table == "person" && column == "email" ? false : nil
        }
        func declaredRowKey(of table: String) -> [String]? { nil }
        func open(_ stored: DatabaseValue, column: String, table: String, context: [DatabaseValue]) throws -> DatabaseValue { stored }
        func transformsInserts(into table: String) -> Bool { false }
        func prepareInsert(into table: String, columns: inout [String], values: inout [DatabaseValue], connection: Connection) throws {}
    }

    /// A ``ReaderProbe`` that declares `person.email` sealed: its reads go
    /// through an opening reader.
    struct SealedReaderProbe: Decodable, SealedRecord {
        var name: String
        weak var reader: AnyObject?
        enum CodingKeys: String, CodingKey { case name }
        static let sealedProperties = [SealedProperty("email", of: "person")]

        init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
            reader = Mirror(reflecting: decoder).descendant("source") as AnyObject?
        }
    }

    /// Review of issue 28: a statement re-prepared after a schema change
    /// makes a new opening reader (sealed columns) and dropped the old one
    /// without breaking its cycle with the keyed container it kept, so the
    /// old reader, with the last row's opened values, stayed in memory for
    /// good.
    @Test func aStatementsReplacedOpeningReaderIsReleased() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Ada', 'a@x', 1)")
        let select = try db.prepare(sql: "SELECT * FROM person")
        let before = try select.fetchAll(SealedReaderProbe.self)
        #expect(before.first?.reader.map { String(describing: type(of: $0)) } == "OpeningColumnReader")
        // Another column: the statement is prepared again, with a new plan.
        try db.execute(sql: "ALTER TABLE person ADD COLUMN extra TEXT")
        let after = try select.fetchAll(SealedReaderProbe.self)
        #expect(after.map(\.name) == ["Ada"])
        #expect(after.first?.reader.map { String(describing: type(of: $0)) } == "OpeningColumnReader")
        #expect(before.first?.reader == nil, "the replaced opening reader is still alive")
    }

    /// Keeps the keyed container it was decoded with.
    struct ContainerKeeper: Decodable {
        nonisolated(unsafe) static var kept: KeyedDecodingContainer<CodingKeys>?
        var name: String
        enum CodingKeys: String, CodingKey { case name }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            Self.kept = container
            name = try container.decode(String.self, forKey: .name)
        }
    }

    /// Review of issue 28: a container kept past `init(from:)` read through
    /// its statement after the statement was gone (freed, its SQLite
    /// statement finalized): a use after free. It now fails with an error
    /// that says why.
    @Test func aContainerKeptPastItsStatementFailsClearly() throws {
        try db.execute(sql: "INSERT INTO person(id, name) VALUES (1, 'Ada')")
        weak var gone: Statement?
        do {
            let select = try db.prepare(sql: "SELECT name FROM person")
            gone = select
            #expect(try select.fetchAll(ContainerKeeper.self).map(\.name) == ["Ada"])
        }
        #expect(gone == nil, "the statement is released")
        let kept = try #require(ContainerKeeper.kept)
        ContainerKeeper.kept = nil
        let error = #expect(throws: DecodingError.self) { try kept.decode(String.self, forKey: .name) }
        let context: DecodingError.Context? = switch error {
        case .keyNotFound(_, let context)?, .valueNotFound(_, let context)?, .typeMismatch(_, let context)?, .dataCorrupted(let context)?: context
        default: nil
        }
        #expect(context?.debugDescription.contains("no longer") == true, "\(String(describing: error))")
        #expect(kept.allKeys.isEmpty)
        #expect(!kept.contains(.name))
    }

    /// Keeps the keyed container it was decoded with, and reads a column
    /// only a later version of the table has.
    struct ExtraKeeper: Decodable, SealedRecord {
        static let sealedProperties = [SealedProperty("email", of: "person")]
        nonisolated(unsafe) static var kept: KeyedDecodingContainer<CodingKeys>?
        var name: String
        enum CodingKeys: String, CodingKey { case name, email, extra }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            Self.kept = container
            name = try container.decode(String.self, forKey: .name)
        }
    }

    /// Second review of issue 28: a statement prepared again after a schema
    /// change dropped its opening plan but kept its opening reader when the
    /// next rows were read as `Row`s; a container kept from before then
    /// looked its keys up in the new layout and read past the old reader's
    /// opened values (index out of range). A container kept from an opening
    /// reader that is gone reads nothing, neither opened nor stored values.
    @Test func aContainerKeptFromAReplacedOpeningReaderReadsNothing() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Ada', 'a@x', 1)")
        let select = try db.prepare(sql: "SELECT * FROM person")
        #expect(try select.fetchAll(ExtraKeeper.self).map(\.name) == ["Ada"])
        try db.execute(sql: "ALTER TABLE person ADD COLUMN extra TEXT")
        #expect(try select.fetchAll().count == 1)
        let kept = try #require(ExtraKeeper.kept)
        ExtraKeeper.kept = nil
        #expect(throws: DecodingError.self) { try kept.decodeIfPresent(String.self, forKey: .extra) }
        #expect(throws: DecodingError.self) { try kept.decode(String.self, forKey: .email) }
    }

    /// Keeps its container, as `ExtraKeeper` does, for another test: tests
    /// run in parallel, and two sharing one keeper could take each other's.
    struct EmailKeeper: Decodable, SealedRecord {
        static let sealedProperties = [SealedProperty("email", of: "person")]
        nonisolated(unsafe) static var kept: KeyedDecodingContainer<CodingKeys>?
        nonisolated(unsafe) static var keptAfterReset: KeyedDecodingContainer<CodingKeys>?
        var name: String
        var resets = false
        enum CodingKeys: String, CodingKey { case name, email }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            if name == "Reset" { Self.keptAfterReset = container } else { Self.kept = container }
        }
    }

    /// The same with the statement gone: the opened values went with it.
    @Test func aContainerKeptFromAGoneOpeningReaderReadsNothing() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Ada', 'a@x', 1)")
        do {
            let select = try db.prepare(sql: "SELECT name, email FROM person")
            #expect(try select.fetchAll(EmailKeeper.self).map(\.name) == ["Ada"])
        }
        let kept = try #require(EmailKeeper.kept)
        EmailKeeper.kept = nil
        #expect(throws: DecodingError.self) { try kept.decodeIfPresent(String.self, forKey: .email) }
        #expect(throws: DecodingError.self) { try kept.decode(String.self, forKey: .email) }
        #expect(!kept.contains(.email))
    }

    /// Second review of issue 28: when a schema change leaves a statement
    /// no column to open, its old opening reader, with the last row's
    /// opened values, stayed in memory for the statement's life.
    @Test func anOpeningReaderWhosePlanGoesIsReleased() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Ada', 'a@x', 1)")
        let select = try db.prepare(sql: "SELECT * FROM person")
        let before = try select.fetchAll(SealedReaderProbe.self)
        #expect(before.first?.reader.map { String(describing: type(of: $0)) } == "OpeningColumnReader")
        // SQLite 3.15 (SQLCipher 3) has no RENAME COLUMN: a column added at
        // the front of a new table of the same name does as well here.
        try db.execute(sql: """
            CREATE TABLE person_new(id INTEGER PRIMARY KEY, name TEXT NOT NULL, mail TEXT, score REAL, active INTEGER, avatar BLOB, born TEXT);
            INSERT INTO person_new SELECT * FROM person;
            DROP TABLE person;
            ALTER TABLE person_new RENAME TO person;
            """)
        #expect(try select.fetchAll(ReaderProbe.self).map(\.name) == ["Ada"])
        #expect(before.first?.reader == nil, "the old opening reader is still alive")
    }

    /// Keeps the decoder it was given: one kept for each of two tests
    /// (tests run in parallel), by the row's name.
    struct DecoderKeeper: Decodable {
        nonisolated(unsafe) static var kept: (any Decoder)?
        nonisolated(unsafe) static var keptToReflect: (any Decoder)?
        var name: String
        enum CodingKeys: String, CodingKey { case name }
        init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
            if name == "Reflected" { Self.keptToReflect = decoder } else { Self.kept = decoder }
        }
    }

    /// Second review of issue 28: a decoder kept past its statement made and
    /// cached a new container on its detached reader, a cycle nothing broke.
    @Test func aKeptDecoderLeavesNothingAlive() throws {
        try db.execute(sql: "INSERT INTO person(id, name) VALUES (1, 'Ada')")
        do { _ = try db.prepare(sql: "SELECT name FROM person").fetchAll(DecoderKeeper.self) }
        weak var reader: AnyObject?
        do {
            let kept = try #require(DecoderKeeper.kept)
            DecoderKeeper.kept = nil
            reader = Mirror(reflecting: kept).descendant("source") as AnyObject?
            #expect(reader != nil)
            #expect(throws: DecodingError.self) { try kept.container(keyedBy: DecoderKeeper.CodingKeys.self).decode(String.self, forKey: .name) }
            #expect(throws: DecodingError.self) { try kept.singleValueContainer() }
        }
        #expect(reader == nil, "the detached reader keeps itself alive")
    }

    /// Keeps the single-value container it was decoded with.
    struct SingleKeeper: Decodable {
        nonisolated(unsafe) static var kept: (any SingleValueDecodingContainer)?
        var email: String?
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            Self.kept = container
            email = try container.decode(String?.self)
        }
    }

    /// Second review of issue 28: a single-value container kept past its
    /// statement read NULL (nil) instead of failing.
    @Test func aKeptSingleValueContainerFailsClearly() throws {
        try db.execute(sql: "INSERT INTO person(id, name, email) VALUES (1, 'Ada', 'a@x')")
        do { #expect(try db.prepare(sql: "SELECT email FROM person").fetchAll(SingleKeeper.self).map(\.email) == ["a@x"]) }
        let kept = try #require(SingleKeeper.kept)
        SingleKeeper.kept = nil
        #expect(!kept.decodeNil(), "NULL, which an optional would take for the value")
        #expect(throws: DecodingError.self) { try kept.decode(String?.self) }
        #expect(throws: DecodingError.self) { try kept.decode(Int?.self) }
        #expect(throws: DecodingError.self) { try kept.decode(String.self) }
    }

    /// Third review of issue 28: a statement's run ended (reset), its
    /// opening reader kept the last row's opened values until the next run,
    /// and a container kept from that row still read them.
    @Test func aRunsOpenedValuesGoWhenTheRunEnds() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email, score) VALUES (1, 'Reset', 'a@x', 1)")
        let select = try db.prepare(sql: "SELECT name, email FROM person")
        #expect(try select.fetchAll(EmailKeeper.self).map(\.name) == ["Reset"])
        let kept = try #require(EmailKeeper.keptAfterReset)
        EmailKeeper.keptAfterReset = nil
        #expect(throws: DecodingError.self) { try kept.decode(String.self, forKey: .email) }
        withExtendedLifetime(select) {}
    }

    /// Third review of issue 28: a row view whose opening reader a
    /// re-prepare replaced while the row was read (the statement used again
    /// from inside its own loop) opened the row into the replaced reader and
    /// read every column as NULL, silently.
    @Test func aRowReadThroughAReplacedOpeningReaderIsAnError() throws {
        db.columnTransform = EmailOpening()
        try db.execute(sql: "INSERT INTO person(id, name, email) VALUES (1, 'Ada', 'a@x'), (2, 'Bob', 'b@x')")
        let select = try db.prepare(sql: "SELECT * FROM person ORDER BY id")
        var emails: [String?] = [], changed = false
        let error = #expect(throws: StrongroomError.self) {
            // A record that declares email sealed reads its rows through an
            // opening reader, which the filter sees.
            try select.forEach(SealedPerson.self, filter: { row in
                if !changed {
                    changed = true
                    _ = try select.fetchAll()
                    try db.execute(sql: "ALTER TABLE person ADD COLUMN extra TEXT")
                    _ = try select.fetchAll()
                    return false
                }
                emails.append(try row.decode(String?.self, at: 2))
                return false
            }) { _ in true }
        }
        #expect(emails.isEmpty, "read as \(emails)")
        #expect(error?.code == .misuse)
    }

    /// A person whose e-mail the ``EmailOpening`` transform opens.
    struct SealedPerson: TableRecord {
        var id: Int64
        var email: String?
        static let databaseTableName = "person"
        static let databaseColumnNames = ["id", "email"]
        static let databaseSealedColumns = ["email"]
        init(row: borrowing RowView) throws(StrongroomError) { id = try row.decode(at: 0); email = try row.decode(at: 1) }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(email, at: 1) }
    }

    /// Third review of issue 28: reflecting a decoder kept past its
    /// statement (a `dump`, or a test library describing a value) followed
    /// the reader's reference to the freed statement.
    @Test func aKeptDecoderReflectsWithoutItsStatement() throws {
        try db.execute(sql: "INSERT INTO person(id, name) VALUES (1, 'Reflected')")
        do { _ = try db.prepare(sql: "SELECT name FROM person").fetchAll(DecoderKeeper.self) }
        let kept = try #require(DecoderKeeper.keptToReflect)
        DecoderKeeper.keptToReflect = nil
        var text = ""
        dump(kept, to: &text)
        #expect(text.contains("isDetached: true") && !text.contains("statement"), "\(text)")
    }

    /// Fourth review of issue 28: a row view read after its statement was
    /// prepared again into fewer columns (the statement used again from
    /// inside its own loop, across a schema change) trapped: the error's
    /// column name was looked up past the end of the new names.
    @Test func aRowReadAfterItsStatementLostColumnsIsAnError() throws {
        try db.execute(sql: "INSERT INTO person(id, name) VALUES (1, 'Ada')")
        let select = try db.prepare(sql: "SELECT * FROM person")
        var error: StrongroomError?, rounds = 0
        try select.forEachRow { row in
            // The nested run restarts the loop's: act on the first round only.
            rounds += 1
            guard rounds == 1 else { return }
            _ = try select.fetchAll()
            // DROP COLUMN, the way SQLite 3.15 (SQLCipher 3) can.
            try db.execute(sql: """
                CREATE TABLE person_new(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL, active INTEGER, avatar BLOB);
                INSERT INTO person_new SELECT id, name, email, score, active, avatar FROM person;
                DROP TABLE person;
                ALTER TABLE person_new RENAME TO person;
                """)
            #expect(try select.fetchAll().first?.columnNames.count == 6)
            error = #expect(throws: StrongroomError.self) { try row.decode(String.self, at: 6) }
        }
        #expect(error?.code == .misuse, "\(String(describing: error))")
    }

    /// `withTextBytes` reads TEXT in place, bytes as stored (a NUL inside
    /// included), nil for NULL, and anything else as `decode(String?)`
    /// would, under the same conversion policy.
    @Test func textBytesAreReadInPlace() throws {
        try db.execute(sql: "INSERT INTO person(id, name, email, score, avatar) VALUES (1, 'Zoë', NULL, 2.5, x'41'), (2, 'a' || char(0) || 'b', 'x@y', 1, NULL)")
        let select = try db.prepare(sql: "SELECT name, email, id, score, avatar FROM person ORDER BY id")
        var names: [[UInt8]] = [], emails: [[UInt8]?] = [], others: [[UInt8]?] = []
        var conversionErrors: [StrongroomError.Code] = []
        try select.forEachRow { row in
            names.append(try row.withTextBytes(at: 0) { Array(try #require($0)) })
            emails.append(try row.withTextBytes(at: 1) { $0.map(Array.init) })
            for column in 2...4 {
                let viaString: String?
                do { viaString = try row.decode(String?.self, at: column) } catch let error as StrongroomError {
                    let bytes = #expect(throws: StrongroomError.self) { try row.withTextBytes(at: column) { _ in } }
                    conversionErrors.append(try #require(bytes?.code))
                    #expect(bytes?.code == error.code)
                    continue
                }
                others.append(try row.withTextBytes(at: column) { $0.map(Array.init) })
                #expect(others.last! == viaString.map { Array($0.utf8) })
            }
        }
        #expect(names == [Array("Zoë".utf8), [0x61, 0, 0x62]])
        #expect(emails == [nil, Array("x@y".utf8)])
        #expect(others.count + conversionErrors.count == 6)
        #expect(throws: StrongroomError.self) { try select.forEachRow { row in try row.withTextBytes(at: 5) { _ in } } }
    }

    @Test func recordPropertiesTheStatementDoesNotNameAreIgnored() throws {
        let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, score) VALUES (:id, :name, :score)")
        for id in 1...3 {
            try insert.execute(record: Person(id: id, name: "P\(id)", email: "e", score: Double(id), active: true, avatar: nil, born: nil))
        }
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM person ORDER BY id") == ["P1", "P2", "P3"])
        struct Partial: Encodable { var id: Int; var name: String }
        let error = #expect(throws: StrongroomError.self) { try insert.execute(record: Partial(id: 9, name: "x")) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("fills 2 of the statement's 3 parameters") == true)
    }

    @Test func nilPropertiesAreBoundAsNullNotLeftOver() throws {
        let insert = try db.cachedStatement(sql: "INSERT INTO person VALUES (:id, :name, :email, :score, :active, :avatar, :born)")
        try insert.execute(record: Person(id: 1, name: "A", email: "a@example.com", score: 0, active: true, avatar: nil, born: nil))
        try insert.execute(record: Person(id: 2, name: "B", email: nil, score: 0, active: true, avatar: nil, born: nil))
        #expect(try db.fetchOne(String?.self, sql: "SELECT email FROM person WHERE id = 2") == .some(nil))
    }

    /// A record that encodes one key twice fills one parameter, not two:
    /// the statement's other parameter is unfilled, and the run refused.
    @Test func aKeyEncodedTwiceFillsOneParameter() throws {
        struct Twice: Encodable {
            enum Key: String, CodingKey { case id, name }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(7, forKey: .id)
                try container.encode(8, forKey: .id)
            }
        }
        let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name) VALUES (:id, :name)")
        try insert.execute(record: Person(id: 1, name: "A", email: nil, score: 0, active: true, avatar: nil, born: nil))
        let error = #expect(throws: StrongroomError.self) { try insert.execute(record: Twice()) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("fills 1 of the statement's 2 parameters") == true)
        #expect(try db.fetchAll(Int.self, sql: "SELECT id FROM person") == [1])
    }

    /// Records of one type that encode different keys, at 3 and at 70
    /// columns (above 64, the parameters a record filled are not tracked
    /// bit by bit): a column the later record leaves out gets its default,
    /// never the earlier record's value.
    @Test(arguments: [3, 70])
    func aKeyALaterRecordLeavesOutIsNeverTheEarlierRecordsValue(columns: Int) throws {
        struct Wide: Encodable {
            struct Key: CodingKey {
                var stringValue: String
                init(stringValue: String) { self.stringValue = stringValue }
                var intValue: Int? { nil }
                init?(intValue: Int) { nil }
            }
            let values: [Int?]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                for (column, value) in values.enumerated() {
                    if let value { try container.encode(value, forKey: Key(stringValue: "c\(column)")) }
                }
            }
        }
        let names = (0..<columns).map { "c\($0)" }
        try db.execute(sql: "CREATE TABLE wide (\(names.map { "\($0) INTEGER DEFAULT -1" }.joined(separator: ", ")))")
        let last = columns - 1
        try db.insert(Wide(values: (0..<columns).map { $0 }), into: "wide")
        try db.insert(Wide(values: (0..<columns).map { $0 == last ? nil : 100 + $0 }), into: "wide")
        try db.insert(Wide(values: (0..<columns).map { 200 + $0 }), into: "wide")
        #expect(try db.fetchAll(Int.self, sql: "SELECT c\(last) FROM wide ORDER BY rowid") == [last, -1, 200 + last])
        #expect(try db.fetchAll(Int.self, sql: "SELECT c0 FROM wide ORDER BY rowid") == [0, 100, 200])
    }

    @Test func insertIntoTableBuildsTheStatement() throws {
        let person = Person(id: 3, name: "Eve", email: nil, score: 9, active: true, avatar: nil, born: nil)
        try db.insert(person, into: "person")
        try db.insert(Person(id: 4, name: "Fay", email: "f@x", score: 1, active: false, avatar: nil, born: nil), into: "person")
        #expect(try db.fetchAll(Person.self, sql: "SELECT * FROM person ORDER BY id").first == person)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM person") == 2)
    }

    @Test func decodingNullIntoNonOptionalIsAClearError() throws {
        try db.execute(sql: "INSERT INTO person(id, name) VALUES (1, 'x')")
        let error = #expect(throws: StrongroomError.self) {
            try db.fetchAll(Person.self, sql: "SELECT * FROM person")
        }
        #expect(error?.code == .conversion)
        #expect(error?.message.contains("score") == true)
        let missing = #expect(throws: StrongroomError.self) {
            try db.fetchAll(Person.self, sql: "SELECT id FROM person")
        }
        #expect(missing?.message.contains("no column named name") == true)
    }

    @Test func nestedCodableValuesAreStoredAsJSON() throws {
        struct Tagged: Codable, Equatable { var id: Int; var name: String; var tags: [String] }
        try db.execute(sql: "CREATE TABLE tagged(id INTEGER PRIMARY KEY, name TEXT, tags TEXT)")
        let value = Tagged(id: 1, name: "n", tags: ["a", "b"])
        try db.insert(value, into: "tagged")
        #expect(try db.fetchOne(String.self, sql: "SELECT tags FROM tagged") == #"["a","b"]"#)
        #expect(try db.fetchOne(Tagged.self, sql: "SELECT * FROM tagged") == value)
    }

    @Test func recordsWithNestedContainersFailToEncode() throws {
        struct Nested: Encodable {
            var id: Int
            enum Keys: String, CodingKey { case id, address }
            enum AddressKeys: String, CodingKey { case city }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(id, forKey: .id)
                var address = container.nestedContainer(keyedBy: AddressKeys.self, forKey: .address)
                try address.encode("Paris", forKey: .city)
            }
        }
        try db.execute(sql: "CREATE TABLE place(id INTEGER PRIMARY KEY, city TEXT)")
        let error = #expect(throws: StrongroomError.self) { try db.insert(Nested(id: 1), into: "place") }
        #expect(error?.code == .conversion)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM place") == 0)
    }

    @Test func multipleStatementsAndErrorsCarrySQL() throws {
        try db.execute(sql: "CREATE TABLE a(x); INSERT INTO a VALUES (1); ; INSERT INTO a VALUES ('it''s; fine');")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM a") == 2)
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "SELEC nothing") }
        #expect(error?.code == .sqlite)
        #expect(error?.sql == "SELEC nothing")
        #expect(error?.message.contains("syntax error") == true)
    }

    @Test func statementCacheReusesPreparedStatements() throws {
        let a = try db.cachedStatement(sql: "SELECT 1")
        let b = try db.cachedStatement(sql: "SELECT 1")
        #expect(a === b)
        #expect(try db.prepare(sql: "SELECT 1") !== a)
    }

    @Test func dateTextFormatsParse() throws {
        #expect(Date.fromDatabaseValue(.text("2024-02-29")) == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(Date.fromDatabaseValue(.text("2024-02-29T01:02:03Z")) == Date(timeIntervalSince1970: 1_709_168_523))
        #expect(Date.fromDatabaseValue(.text("2024-02-29 01:02")) == Date(timeIntervalSince1970: 1_709_168_520))
        #expect(Date.fromDatabaseValue(.integer(86_400)) == Date(timeIntervalSince1970: 86_400))
        #expect(Date.fromDatabaseValue(.text("yesterday")) == nil)
        #expect(Date(timeIntervalSince1970: -1.5).databaseValue == .text("1969-12-31 23:59:58.500"))
    }
}

extension StatementTests {
    /// A record whose hand-written `encode(to:)` skips a nil email, as many
    /// do: its records encode different keys.
    struct SparsePerson: Encodable {
        var id: Int
        var name: String
        var email: String?
        enum CodingKeys: String, CodingKey { case id, name, email }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            if let email { try container.encode(email, forKey: .email) }
        }
    }

    /// Issue 25, item 6: the INSERT built from the first record's keys was
    /// reused for every record of the type, so a later record's email (a key
    /// the first did not encode) was dropped without an error.
    @Test func recordsThatEncodeOtherKeysThanTheFirstKeepEveryValue() throws {
        try db.insert(SparsePerson(id: 1, name: "A", email: nil), into: "person")
        try db.insert(SparsePerson(id: 2, name: "B", email: "b@example.com"), into: "person")
        try db.insert(SparsePerson(id: 3, name: "C", email: nil), into: "person")
        try db.insert(SparsePerson(id: 4, name: "D", email: "d@example.com"), into: "person")
        #expect(try db.fetchAll(String?.self, sql: "SELECT email FROM person ORDER BY id") == [nil, "b@example.com", nil, "d@example.com"])
        // And the other way round, on a connection whose first record
        // encodes more keys than the next.
        let other = try Connection.inMemory(configuration: Configuration(key: .generate()))
        try other.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT DEFAULT 'unset')")
        try other.insert(SparsePerson(id: 5, name: "E", email: "e@example.com"), into: "person")
        try other.insert(SparsePerson(id: 6, name: "F", email: nil), into: "person")
        // A key the record does not encode is a column the INSERT leaves out:
        // it gets its default, as it would in the first record.
        #expect(try other.fetchAll(String?.self, sql: "SELECT email FROM person ORDER BY id") == ["e@example.com", "unset"])
    }

    /// Issue 25, item 6: a later record's key that no column holds was
    /// dropped as silently; it is an error, and nothing is inserted.
    @Test func aLaterRecordsKeyThatNoColumnHoldsIsAnError() throws {
        struct Nicknamed: Encodable {
            var id: Int
            var name: String
            var nickname: String?
            enum CodingKeys: String, CodingKey { case id, name, nickname }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                try container.encode(name, forKey: .name)
                if let nickname { try container.encode(nickname, forKey: .nickname) }
            }
        }
        try db.insert(Nicknamed(id: 1, name: "A", nickname: nil), into: "person")
        let error = #expect(throws: StrongroomError.self) { try db.insert(Nicknamed(id: 2, name: "B", nickname: "Bee"), into: "person") }
        #expect(error?.message.contains("nickname") == true, "\(error?.message ?? "")")
        #expect(try db.fetchAll(Int.self, sql: "SELECT id FROM person ORDER BY id") == [1])
    }
}
