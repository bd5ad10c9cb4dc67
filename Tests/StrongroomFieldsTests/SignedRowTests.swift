import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 50, item 5: integrity beyond secrecy, opt in. A table's rows are
/// signed over declared plain columns and every sealed column's envelope,
/// bound to the declared row key: whoever holds the database key, and not
/// the field keyring, can no longer change a plain column, swap two rows'
/// envelopes (deterministic ones are bound to no row) or copy one row into
/// another, undetected. An older version of the same row put back whole is
/// out of reach, and a test shows that boundary.
@Suite("Signed rows")
struct SignedRowTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"),
                                          .deterministic("tier", in: "customer")]
    static let signed = [SignedRow("customer", columns: ["name", "country"], signatureColumn: "row_signature")]
    static let schema = """
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT, note TEXT,
                              email BLOB, email_index BLOB, tier BLOB, row_signature BLOB);
        """

    struct Customer: TableRecord, Equatable {
        var id: Int64
        var name: String
        var country: String?
        var note: String?
        var email: String
        var tier: String?
        static let databaseTableName = "customer"
        static let databaseColumnNames = ["id", "name", "country", "note", "email", "tier"]
        static let databaseSealedColumns = ["email", "tier"]
        static let databaseRowKey = ["id"]
        init(id: Int64, name: String, country: String?, note: String? = nil, email: String, tier: String?) {
            self.id = id; self.name = name; self.country = country; self.note = note; self.email = email; self.tier = tier
        }
        init(row: borrowing RowView) throws(StrongroomError) {
            id = try row.decode(at: 0); name = try row.decode(at: 1); country = try row.decode(at: 2)
            note = try row.decode(at: 3); email = try row.decode(at: 4); tier = try row.decode(at: 5)
        }
        func encode(to binder: inout RecordBinder) throws(StrongroomError) {
            try binder.bind(id, at: 0); try binder.bind(name, at: 1); try binder.bind(country, at: 2)
            try binder.bind(note, at: 3); try binder.bind(email, at: 4); try binder.bind(tier, at: 5)
        }
    }

    /// The same rows as a plain `Codable`.
    struct Contact: Codable, SealedRecord, Equatable {
        var id: Int64
        var name: String
        var country: String?
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    static let ada = Customer(id: 1, name: "Ada", country: "UK", email: "ada@example.com", tier: "gold")
    static let bob = Customer(id: 2, name: "Bob", country: "FR", email: "bob@example.com", tier: "silver")

    func configuration(_ keyring: FieldKeyring? = nil, signed: [SignedRow] = Self.signed) -> Configuration {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring ?? self.keyring, rowKeys: ["customer": ["id"]], signedRows: signed)
        return config
    }

    func database(_ name: String) throws -> (path: String, queue: DatabaseQueue) {
        let path = dir.file(name)
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: Self.schema)
            try db.insert(Self.ada)
            try db.insert(Self.bob)
        }
        return (path, queue)
    }

    /// The database `path` (its app queue closed) opened again with a
    /// keyring grown by a key, made active: what a rotation runs with.
    func reopenedWithANewKey(_ path: String, closing queue: DatabaseQueue) throws -> (queue: DatabaseQueue, keyring: FieldKeyring, newID: UInt32) {
        let (grown, newID) = keyring.addingKey()
        let second = try grown.activating(newID)
        try queue.close()
        return (try DatabaseQueue(path: path, configuration: configuration(second)), second, newID)
    }

    /// What the database-key holder does, with the database key alone.
    func adversary(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        try queue.write { db in try db.execute(sql: sql) }
    }

    /// Every read path of the app: a TableRecord (all rows, by SQL, a
    /// lookup), a plain Codable, a Row with opening.
    func readsFail(_ queue: DatabaseQueue, naming row: String) {
        let reads: [(String, (Connection) throws -> Void)] = [
            ("fetchAll(Customer.self)", { db in _ = try db.fetchAll(Customer.self) }),
            ("TableRecord by SQL", { db in _ = try db.fetchAll(Customer.self, sql: "SELECT * FROM customer") }),
            ("Codable", { db in _ = try db.fetchAll(Contact.self, sql: "SELECT * FROM customer") }),
            ("Row", { db in _ = try db.fetchAll(sql: "SELECT * FROM customer", opening: Contact.sealedProperties) }),
        ]
        for (name, read) in reads {
            let error = #expect(throws: StrongroomError.self, "\(name)") { try queue.read { db in try read(db) } }
            #expect(error?.code == .sealedValue && error?.message.contains("customer row \(row)") == true, "\(name): \(String(describing: error))")
        }
    }

    @Test func insertsSignEveryRowAndReadsCheckIt() throws {
        let (path, queue) = try database("signed.db")
        #expect(try queue.read { db in try db.fetchAll(Customer.self) } == [Self.ada, Self.bob])
        #expect(try queue.read { db in try db.fetchAll(Contact.self, sql: "SELECT * FROM customer ORDER BY id") }.map(\.country) == ["UK", "FR"])
        // The stored signature: version 1, kind 3, the active key's id, a 32-byte tag.
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let stored = try plain.read { db in try db.fetchAll([UInt8].self, sql: "SELECT row_signature FROM customer ORDER BY id") }
        let id = keyring.activeKeyID
        for signature in stored {
            #expect(signature.count == 38)
            #expect(Array(signature.prefix(6)) == [1, 3, UInt8(id >> 24 & 0xFF), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)])
        }
        #expect(stored[0] != stored[1])
    }

    @Test func aChangedPlainColumnFailsEveryReadAndNamesTheRow() throws {
        let (path, queue) = try database("country.db")
        try adversary(path, "UPDATE customer SET country = 'KP' WHERE id = 2")
        readsFail(queue, naming: "2")
        // The lookup by index too.
        let error = #expect(throws: StrongroomError.self) {
            try queue.read { db in _ = try db.fetchOne(Contact.self, where: .index("email_index", equals: "bob@example.com")) }
        }
        #expect(error?.code == .sealedValue, "\(String(describing: error))")
        // A column the signature does not cover is the app's to leave unsigned.
        try adversary(path, "UPDATE customer SET country = 'FR', note = 'edited' WHERE id = 2")
        #expect(try queue.read { db in try db.fetchAll(Customer.self) }.map(\.note) == [nil, "edited"])
    }

    @Test func swappedEnvelopesFailEvenDeterministicOnesBoundToNoRow() throws {
        let (path, queue) = try database("swap.db")
        // A deterministic envelope opens in any row: only the signature tells.
        try adversary(path, """
            CREATE TEMP TABLE tiers AS SELECT id, tier FROM customer;
            UPDATE customer SET tier = (SELECT tier FROM tiers WHERE tiers.id = 3 - customer.id);
            """)
        readsFail(queue, naming: "1")
        // Without signed rows, the swap goes through: the signature is what caught it.
        let unsigned = try DatabaseQueue(path: path, configuration: configuration(signed: []))
        #expect(try unsigned.read { db in try db.fetchAll(Customer.self) }.map(\.tier) == ["silver", "gold"])
    }

    @Test func aRowCopiedWholeIntoAnotherKeyFails() throws {
        let (path, queue) = try database("copy.db")
        try adversary(path, """
            UPDATE customer SET name = 'Ada', country = 'UK', tier = (SELECT tier FROM customer WHERE id = 1),
                                row_signature = (SELECT row_signature FROM customer WHERE id = 1) WHERE id = 2;
            """)
        readsFail(queue, naming: "2")
    }

    @Test func aMissingOrMalformedSignatureFails() throws {
        let (path, queue) = try database("missing.db")
        try adversary(path, "UPDATE customer SET row_signature = NULL WHERE id = 1")
        readsFail(queue, naming: "1")
        try adversary(path, "UPDATE customer SET row_signature = x'0103' WHERE id = 1")
        readsFail(queue, naming: "1")
    }

    @Test func anOlderVersionOfTheSameRowPutBackWholeStillReads() throws {
        // The stated boundary: a signature binds a row's columns to each other
        // and to its key, not to a point in time.
        let (path, queue) = try database("replay.db")
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let old = try #require(try plain.read { db in try db.fetchOne(sql: "SELECT country, email, email_index, tier, row_signature FROM customer WHERE id = 2") })
        var moved = Self.bob
        moved.country = "DE"
        try queue.write { db in try db.update(moved) }
        #expect(try queue.read { db in try db.fetchAll(Customer.self) }[1].country == "DE")
        try plain.write { db in
            try db.execute(sql: "UPDATE customer SET country = ?, email = ?, email_index = ?, tier = ?, row_signature = ? WHERE id = 2",
                           arguments: [old[0], old[1], old[2], old[3], old[4]])
        }
        #expect(try queue.read { db in try db.fetchAll(Customer.self) }[1].country == "FR")
    }

    @Test func updatesSignAgainAndAPartialUpdateIsRefused() throws {
        let (_, queue) = try database("update.db")
        var bob = Self.bob
        bob.country = "DE"
        bob.email = "bob@example.de"
        try queue.write { db in try db.update(bob) }
        #expect(try queue.read { db in try db.fetchAll(Customer.self) } == [Self.ada, bob])
        // Some of the covered columns: refused, nothing written.
        struct Move: Codable { var id: Int64; var country: String }
        let error = #expect(throws: StrongroomError.self) { try queue.write { db in try db.update(Move(id: 2, country: "IT"), in: "customer") } }
        #expect(error?.code == .sealedValue && error?.message.contains("row signature covers") == true, "\(String(describing: error))")
        // None of them: the signature still holds.
        struct Annotate: Codable { var id: Int64; var note: String }
        try queue.write { db in try db.update(Annotate(id: 2, note: "vip"), in: "customer") }
        #expect(try queue.read { db in try db.fetchAll(Customer.self) }.map(\.note) == [nil, "vip"])
        #expect(try queue.read { db in try db.fetchAll(Customer.self) }[1].country == "DE")
    }

    @Test func aValueSQLiteWouldStoreConvertedIsRefusedAtTheWrite() throws {
        let (_, queue) = try database("affinity.db")
        struct Odd: Codable { var id: Int64; var name: Int; var country: String?; var email: String; var tier: String? }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Odd(id: 3, name: 7, country: nil, email: "c@example.com", tier: nil), into: "customer") }
        }
        #expect(error?.code == .sealedValue && error?.message.contains("name, which its row signature covers") == true, "\(String(describing: error))")
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") } == 2)
    }

    @Test func anInsertThatLeavesOutACoveredColumnIsRefused() throws {
        let (_, queue) = try database("leaveout.db")
        struct Partial: Codable { var id: Int64; var name: String; var email: String }
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.insert(Partial(id: 3, name: "Cy", email: "cy@example.com"), into: "customer") }
        }
        #expect(error?.code == .sealedValue && error?.message.contains("leaves out country") == true, "\(String(describing: error))")
    }

    @Test func aReadWithoutTheCoveredColumnsIsRefused() throws {
        let (_, queue) = try database("select.db")
        struct Email: Codable, SealedRecord { var id: Int64; var email: String; static let sealedProperties = [SealedProperty("email", of: "customer")] }
        let error = #expect(throws: StrongroomError.self) {
            try queue.read { db in _ = try db.fetchAll(Email.self, sql: "SELECT id, email FROM customer") }
        }
        #expect(error?.code == .misuse && error?.message.contains("row_signature") == true, "\(String(describing: error))")
        // A join that holds a covered column's name twice.
        try queue.write { db in try db.execute(sql: "CREATE TABLE audit(id INTEGER PRIMARY KEY, country TEXT); INSERT INTO audit VALUES (1, 'KP')") }
        let joined = #expect(throws: StrongroomError.self) {
            try queue.read { db in _ = try db.fetchAll(Contact.self, sql: "SELECT * FROM customer JOIN audit USING (id)") }
        }
        #expect(joined?.code == .misuse && joined?.message.contains("country") == true, "\(String(describing: error))")
        // A record that declares the table's sealed property and selects
        // none of it still reads signed plain columns: checked too.
        struct Profile: Codable, SealedRecord {
            var id: Int64; var country: String?; var email: String?
            static let sealedProperties = [SealedProperty("email", of: "customer")]
        }
        let unopened = #expect(throws: StrongroomError.self) {
            try queue.read { db in _ = try db.fetchAll(Profile.self, sql: "SELECT id, country FROM customer") }
        }
        #expect(unopened?.code == .misuse && unopened?.message.contains("row_signature") == true, "\(String(describing: unopened))")
        #expect(try queue.read { db in try db.fetchAll(Profile.self, sql: "SELECT id, name, country, email, tier, row_signature FROM customer") }.map(\.country) == ["UK", "FR"])
        // Selected as the page says, it reads.
        #expect(try queue.read { db in try db.fetchAll(Email.self, sql: "SELECT id, email, name, country, tier, row_signature FROM customer") }.count == 2)
    }

    @Test func declarationsThatCannotBeSignedFailTheOpening() throws {
        for (row, word) in [(SignedRow("customer", columns: ["email"]), "sealed"), (SignedRow("customer", columns: ["id"]), "row key"),
                            (SignedRow("customer", columns: ["email_index"]), "blind index"), (SignedRow("orders", columns: ["total"]), "no sealed column"),
                            (SignedRow("customer", columns: ["name", "name"]), "twice")] {
            let error = #expect(throws: StrongroomError.self) { _ = try DatabaseQueue(path: dir.file("bad.db"), configuration: configuration(signed: [row])) }
            #expect(error?.code == .misuse && error?.message.contains(word) == true, "\(row): \(String(describing: error))")
        }
    }

    @Test func existingRowsAreSignedOnceAndACopiedEnvelopeIsRefused() throws {
        let path = dir.file("existing.db")
        // Written before rows were signed.
        let before = try DatabaseQueue(path: path, configuration: configuration(signed: []))
        try before.write { db in
            try db.execute(sql: Self.schema)
            try db.insert(Self.ada)
            try db.insert(Self.bob)
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration())
        readsFail(queue, naming: "1")
        #expect(try queue.write { db in try db.signUnsignedRows(of: "customer") } == 2)
        #expect(try queue.read { db in try db.fetchAll(Customer.self) } == [Self.ada, Self.bob])
        // Once signed, never again over what stands: a row without a signature is one to investigate.
        let again = #expect(throws: FieldError.self) { _ = try queue.write { db in try db.signUnsignedRows(of: "customer") } }
        #expect(again?.message.contains("signed already") == true, "\(String(describing: again))")
        // An unsigned row whose envelope came from another row: refused, none signed.
        try adversary(path, "UPDATE customer SET row_signature = NULL; UPDATE customer SET email = (SELECT email FROM customer WHERE id = 1) WHERE id = 2")
        #expect(throws: (any Error).self) { try queue.write { db in try db.signUnsignedRows(of: "customer") } }
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        #expect(try plain.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE row_signature IS NOT NULL") } == 0)
    }

    @Test func rotationSignsAgainAndRetiringCountsSignatures() throws {
        let (path, queue) = try database("rotate.db")
        let (rotating, second, newID) = try reopenedWithANewKey(path, closing: queue)
        // Rotation that does not know the rows are signed: refused before anything changes.
        let refused = #expect(throws: FieldError.self) { _ = try FieldRotation.rotate(rotating, columns: Self.columns, keyring: second) }
        #expect(refused?.message.contains("row_signature") == true, "\(String(describing: refused))")
        // A key signatures still use cannot retire.
        let inUse = #expect(throws: FieldError.self) { _ = try rotating.read { db in try FieldRotation.retire(1, from: second, in: db) } }
        #expect(inUse?.message.contains("row signatures") == true, "\(String(describing: inUse))")
        let report = try FieldRotation.rotate(rotating, columns: Self.columns, keyring: second, signedRows: Self.signed)
        #expect(report.resealed["customer.email"] == 2)
        #expect(try rotating.read { db in try db.fetchAll(Customer.self) } == [Self.ada, Self.bob])
        let plain = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let ids = try plain.read { db in try db.fetchAll([UInt8].self, sql: "SELECT substr(row_signature, 3, 4) FROM customer") }
        #expect(ids.allSatisfy { $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } == newID })
        let retired = try rotating.read { db in try FieldRotation.retire(1, from: second, in: db) }
        #expect(retired.keyIDs == [newID])
    }

    @Test func rotationRefusesARowSomeoneChangedRatherThanSignOverIt() throws {
        let (path, queue) = try database("rotate-changed.db")
        try adversary(path, "UPDATE customer SET country = 'KP' WHERE id = 2")
        let (rotating, second, _) = try reopenedWithANewKey(path, closing: queue)
        let error = #expect(throws: (any Error).self) { _ = try FieldRotation.rotate(rotating, columns: Self.columns, keyring: second, signedRows: Self.signed) }
        #expect("\(String(describing: error))".contains("customer row 2"))
    }
}
