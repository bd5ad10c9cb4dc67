import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Sealing from SQL: a migration encrypts a plaintext column in place, a
/// query finds a row by blind index or deterministic value.
@Suite("Sealed columns from SQL")
struct FieldFunctionTests {
    let dir = TemporaryDirectory()

    func database(keyring: FieldKeyring) throws -> Connection {
        var config = Configuration(key: .generate())
        config.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection(path: dir.file("sql.db"), configuration: config)
        try db.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT, email_index BLOB, phone TEXT, country TEXT);
            INSERT INTO customer(id, email, phone, country) VALUES
              (1, 'ada@example.com', '+44 1', 'UK'), (2, 'bob@example.com', NULL, 'FR'), (3, '', '+33 3', 'FR');
            """)
        return db
    }

    @Test func aMigrationSealsAColumnInPlaceAndQueriesStillFindRows() throws {
        let db = try database(keyring: .generate())
        try db.execute(sql: """
            UPDATE customer SET email_index = strongroom_blind_index(email, 'customer', 'email'),
                                email = strongroom_seal(email, 'customer', 'email', 'indexed', id),
                                phone = strongroom_seal(phone, 'customer', 'phone', 'randomized', id),
                                country = strongroom_seal(country, 'customer', 'country', 'deterministic');
            """)
        #expect(try db.fetchAll(String.self, sql: "SELECT DISTINCT typeof(email) FROM customer") == ["blob"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE phone IS NULL") == 1, "NULL stays NULL")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE CAST(email AS TEXT) LIKE '%example%'") == 0)
        #expect(try db.fetchAll(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer ORDER BY id")
                == ["ada@example.com", "bob@example.com", ""])
        // A lookup by blind index, and by deterministic value, without opening the table.
        #expect(try db.fetchOne(Int.self, sql: "SELECT id FROM customer WHERE email_index = strongroom_blind_index(?, 'customer', 'email')",
                                arguments: ["bob@example.com"]) == 2)
        #expect(try db.fetchAll(Int.self, sql: "SELECT id FROM customer WHERE country = strongroom_seal(?, 'customer', 'country', 'deterministic') ORDER BY id",
                                arguments: ["FR"]) == [2, 3])
        #expect(try db.fetchAll(Int.self, sql: "SELECT strongroom_key_id(email) FROM customer") == [1, 1, 1])
    }

    @Test func aTamperedOrMovedValueFailsItsStatementNamingTheRow() throws {
        let db = try database(keyring: .generate())
        try db.execute(sql: "UPDATE customer SET email = strongroom_seal(email, 'customer', 'email', 'randomized', id)")
        // Move Ada's sealed e-mail onto Bob's row.
        try db.execute(sql: "UPDATE customer SET email = (SELECT email FROM customer WHERE id = 1) WHERE id = 2")
        let error = #expect(throws: StrongroomError.self) {
            try db.fetchAll(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer ORDER BY id")
        }
        #expect(error?.message.contains("customer.email, row 2") == true)
        #expect(error?.message.contains("ada@") == false)
        // A plaintext value where an envelope is expected.
        try db.execute(sql: "UPDATE customer SET email = 'plain@example.com' WHERE id = 2")
        let plain = #expect(throws: StrongroomError.self) { try db.fetchOne(String.self, sql: "SELECT strongroom_open(email, 'customer', 'email', id) FROM customer WHERE id = 2") }
        #expect(plain?.message.contains("plain value") == true)
    }

    /// Issue 25, item 9: strongroom_open checks the envelope's mode: a
    /// deterministic envelope (bound to no row) in a column opened with its
    /// row key, the column's declared mode where it is declared.
    @Test func openChecksTheColumnsMode() throws {
        let keyring = FieldKeyring.generate()
        var config = Configuration.plaintext
        config.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection.inMemory(configuration: config)
        let deterministic = try #require(try db.fetchOne([UInt8].self, sql: "SELECT strongroom_seal('x', 't', 'c', 'deterministic')"))
        let error = #expect(throws: StrongroomError.self) {
            try db.fetchOne(String.self, sql: "SELECT strongroom_open(?, 't', 'c', 7)", arguments: [deterministic])
        }
        #expect(error?.message.contains("deterministic") == true, "\(error?.message ?? "")")
        #expect(try db.fetchOne(String.self, sql: "SELECT strongroom_open(?, 't', 'c')", arguments: [deterministic]) == "x")
        // Declared randomized on the configuration: refused even without a row key.
        var sealing = Configuration.plaintext
        sealing.seal([.randomized("c", in: "t")], keyring: keyring, rowKeys: ["t": ["id"]])
        let declared = try Connection.inMemory(configuration: sealing)
        #expect(throws: StrongroomError.self) {
            try declared.fetchOne(String.self, sql: "SELECT strongroom_open(?, 't', 'c')", arguments: [deterministic])
        }
    }
}
