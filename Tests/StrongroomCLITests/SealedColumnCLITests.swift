import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// `strongroom import --seal`, `status`, `verify --field-keys` and
/// `export --field-keys` on the Chinook sample (issue 8, CLI).
@Suite("strongroom CLI: sealed columns")
struct SealedColumnCLITests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    static let seals = ["Customer.Email:indexed", "Customer.Phone", "Customer.Address:deterministic", "Employee.BirthDate", "Employee.Email:randomized"]

    func importSealed() throws {
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        #expect(try run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let imported = try run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key", "--field-keys", "fields.keyring"]
                               + Self.seals.flatMap { ["--seal", $0] })
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    @Test func plaintextToSealedToPlaintextGivesBackIdenticalTables() throws {
        try importSealed()
        let status = try run(["status", "--database", "c.db", "--key-file", "db.key"])
        #expect(status.stdout.contains("Customer.Email (indexed, index in Email_blind_index)"), "\(status.stdout)")
        #expect(status.stdout.contains("Customer.Address (deterministic)"))

        // With the database key alone, the sealed values are envelopes.
        let bare = try Connection(path: dir.file("c.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        #expect(try bare.fetchAll(String.self, sql: "SELECT DISTINCT typeof(Email) || typeof(Address) FROM Customer") == ["blobblob"])
        #expect(try bare.fetchOne(Int.self, sql: "SELECT count(*) FROM Customer WHERE CAST(Email AS TEXT) LIKE '%@%'") == 0)
        bare.close()

        let verify = try run(["verify", "--database", "c.db", "--key-file", "db.key", "--migrations", dir.file("Migrations"), "--field-keys", "fields.keyring", "--json"])
        #expect(verify.stdout.contains("\"sealed_value_failures\" : [\n\n  ]") || verify.stdout.contains("\"sealed_value_failures\" : []"), "\(verify.stdout)")

        let exported = try run(["export", "--database", "c.db", "--key-file", "db.key", "--to", "back.sqlite", "--field-keys", "fields.keyring",
                                "--i-understand-the-output-is-plaintext"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let original = try Connection(path: Fixtures.chinook, configuration: { var c = Configuration.plaintext; c.readOnly = true; return c }())
        let back = try Connection(path: dir.file("back.sqlite"), configuration: { var c = Configuration.plaintext; c.readOnly = true; return c }())
        #expect(try back.tableDigests() == original.tableDigests())
        // The same columns, types, constraints and indexes (the rebuild that
        // drops the blind index column writes the CREATE TABLE header anew).
        for table in ["Customer", "Employee"] {
            #expect(try back.fetchAll(sql: "PRAGMA table_info(\(table))").map(\.values) == original.fetchAll(sql: "PRAGMA table_info(\(table))").map(\.values))
            #expect(try back.fetchAll(sql: "PRAGMA foreign_key_list(\(table))").map(\.values) == original.fetchAll(sql: "PRAGMA foreign_key_list(\(table))").map(\.values))
        }
        #expect(try back.fetchAll(String.self, sql: "SELECT type || ' ' || name || ' ' || tbl_name FROM sqlite_master ORDER BY 1")
                == original.fetchAll(String.self, sql: "SELECT type || ' ' || name || ' ' || tbl_name FROM sqlite_master ORDER BY 1"))
    }

    @Test func verifyReportsEverySealedValueThatDoesNotOpen() throws {
        try importSealed()
        let db = try Connection(path: dir.file("c.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        // Someone with the database key swaps two customers' sealed phones.
        try db.execute(sql: "UPDATE Customer SET Phone = (SELECT Phone FROM Customer WHERE CustomerId = 2) WHERE CustomerId = 1")
        db.close()
        let verify = try run(["verify", "--database", "c.db", "--key-file", "db.key", "--migrations", dir.file("Migrations"), "--field-keys", "fields.keyring"])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("[sealed_tampered] Customer.Phone, row 1"), "\(verify.stdout)")
        // Another keyring opens nothing.
        #expect(try run(["keygen", "--field", "--out", "other.keyring"]).status == 0)
        let other = try run(["verify", "--database", "c.db", "--key-file", "db.key", "--migrations", dir.file("Migrations"), "--field-keys", "other.keyring"])
        #expect(other.status == 1)
        #expect(other.stdout.contains("sealed_tampered"))
    }
}
