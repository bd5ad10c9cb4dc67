import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 50, item 4: the review's first two attacks, as the operator meets
/// them (the tools a database-key holder steers through the registry and
/// the key checks), on the Chinook sample.
@Suite("strongroom CLI: the registry a database-key holder rewrites")
struct RegistryAttackCLITests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    var key: [String] { ["--database", "c.db", "--key-file", "db.key"] }

    func bare() throws -> Connection {
        try Connection(path: dir.file("c.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
    }

    /// Chinook with `Customer.Phone` randomized (and `Customer.Email` indexed).
    func importSealed() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key", "--field-keys", "fields.keyring",
                                      "--seal", "Customer.Email:indexed", "--seal", "Customer.Phone"])
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    /// `UPDATE strongroom_sealed_columns SET mode='indexed', index_column='leak'`
    /// on the randomized `Phone`, and a BLOB column `leak`: the routine
    /// `fields rotate`, and `fields index rebuild Customer.leak`, wrote a
    /// full, untransformed blind index of every phone number into `leak`.
    @Test func aRandomizedColumnMarkedIndexedGetsNoIndexFromTheTools() async throws {
        try await importSealed()
        let adversary = try bare()
        try adversary.execute(sql: """
            ALTER TABLE Customer ADD COLUMN leak BLOB;
            UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'leak' WHERE table_name = 'Customer' AND column_name = 'Phone';
            """)
        adversary.close()
        #expect(try await run(["fields", "add-key", "--field-keys", "fields.keyring"]).status == 0)
        #expect(try await run(["fields", "activate", "--field-keys", "fields.keyring", "--key-id", "2"]).status == 0)
        for command in [["fields", "rotate"], ["fields", "index", "rebuild", "Customer.leak"]] {
            let result = try await run(command + key + ["--field-keys", "fields.keyring"])
            #expect(result.status == 65, "\(command): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("strongroom_sealed_columns (Customer, Phone)"), "\(command) names the row: \(result.stderr)")
            let db = try bare()
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(leak) FROM Customer") == 0, "\(command) wrote no index")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM Customer WHERE substr(Phone, 3, 4) = x'00000002'") == 0, "\(command) re-sealed nothing")
            db.close()
        }
    }

    /// The keyring's check and the registry deleted: an app started with
    /// another keyring that also has a key 1 sealed new rows under it and
    /// recorded its own check, after which the right keyring was refused.
    @Test func anotherKeyringIsNotTakenOnceTheChecksAreDeleted() async throws {
        try await importSealed()
        let adversary = try bare()
        try adversary.execute(sql: "DELETE FROM strongroom_field_keys; DELETE FROM strongroom_sealed_columns")
        adversary.close()
        var config = Configuration(key: try KeyFile.read(at: dir.file("db.key")))
        config.seal([.indexed("Email", in: "Customer", indexColumn: "Email_blind_index"), .randomized("Phone", in: "Customer")], keyring: FieldKeyring.generate(), rowKeys: ["Customer": ["CustomerId"]])
        let app = try DatabaseQueue(path: dir.file("c.db"), configuration: config)
        let error = #expect(throws: StrongroomError.self) {
            try app.write { db in
                struct Customer: Codable { var CustomerId: Int64; var FirstName: String; var LastName: String; var Email: String; var Phone: String? }
                try db.insert(Customer(CustomerId: 101, FirstName: "Eve", LastName: "E", Email: "eve@example.com", Phone: "+1"), into: "Customer")
            }
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        let db = try bare()
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM Customer WHERE CustomerId > 59") == 0)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM strongroom_field_keys") == 0)
        db.close()
        // The right keyring is still the database's.
        var rightConfig = Configuration(key: try KeyFile.read(at: dir.file("db.key")))
        rightConfig.seal([.indexed("Email", in: "Customer", indexColumn: "Email_blind_index"), .randomized("Phone", in: "Customer")],
                         keyring: try FieldKeyring.load(from: dir.file("fields.keyring")), rowKeys: ["Customer": ["CustomerId"]])
        let owner = try DatabaseQueue(path: dir.file("c.db"), configuration: rightConfig)
        #expect(try owner.read { db in
            try db.fetchOne(String.self, sql: "SELECT Email, CustomerId FROM Customer WHERE CustomerId = 1", opening: SealedProperty("Email", of: "Customer"))
        } == "luisg@embraer.com.br")
    }

    /// `verify --field-keys` lists a registry that does not verify as one
    /// finding among the others (review of item 4: it stopped at it, exit
    /// 65, and listed nothing else).
    @Test func verifyListsAnUnsignedRegistryBesideTheOtherFindings() async throws {
        try await importSealed()
        let adversary = try bare()
        try adversary.execute(sql: """
            UPDATE strongroom_sealed_columns SET mode = 'deterministic' WHERE column_name = 'Phone';
            UPDATE Customer SET Email = (SELECT Email FROM Customer WHERE CustomerId = 2) WHERE CustomerId = 1;
            """)
        adversary.close()
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        let verify = try await run(["verify"] + key + ["--migrations", dir.file("Migrations"), "--field-keys", "fields.keyring"])
        #expect(verify.status == 1, "\(verify.status) \(verify.stdout) \(verify.stderr)")
        #expect(verify.stdout.contains("[sealed_untrusted_registry]") && verify.stdout.contains("strongroom_sealed_columns (Customer, Phone) was changed"), "\(verify.stdout)")
        #expect(verify.stdout.contains("[sealed_tampered] Customer.Email, row 1"), "\(verify.stdout)")
    }
}
