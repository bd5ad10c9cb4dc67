import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 36, item 4: a wrong field keyring is refused when the connection
/// opens, as a wrong database key is, naming the key id; nothing is ever
/// sealed under a keyring the database does not know. Seen as a new user
/// would: a service started with another keyring that also has a key 1 opened,
/// its reads failed one by one, a lookup found nothing, and an insert sealed a
/// row under the wrong keyring.
@Suite("Sealed columns: the keyring the database knows")
struct KeyringCheckTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let right = FieldKeyring.generate()
    let wrong = FieldKeyring.generate()

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int64?
        var email: String
        static let sealedProperties = [SealedProperty("email", of: "customer")]
    }

    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index")]

    /// `tool`: with the sealed-column SQL functions, as the CLI's connections have them.
    func queue(_ path: String, keyring: FieldKeyring, readOnly: Bool = false, tool: Bool = false) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.readOnly = readOnly
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        if tool { config.addFieldFunctionsForTools(keyring: keyring, columns: Self.columns) }
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// Ada's database, sealed under `right`.
    func database(_ name: String) throws -> String {
        let path = dir.file(name)
        try queue(path, keyring: right).write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB)")
            try SealedColumnRegistry.record(Self.columns, keyring: right, in: db)
            try db.insert(Customer(id: 1, email: "ada@example.com"), into: "customer")
        }
        return path
    }

    func expectWrongKeyring(_ keyID: UInt32, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains("key \(keyID)") == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
    }

    @Test func aWrongKeyringIsRefusedAtOpenAndWritesNothing() throws {
        let path = try database("wrong.db")
        let before = try Connection(path: path, configuration: Configuration(key: databaseKey)).fetchAll(sql: "SELECT * FROM customer").map { "\($0)" }
        expectWrongKeyring(1) { _ = try queue(path, keyring: wrong) }
        expectWrongKeyring(1) { _ = try queue(path, keyring: wrong, readOnly: true) }
        expectWrongKeyring(1) {
            var config = Configuration(key: databaseKey)
            config.seal(Self.columns, keyring: wrong, rowKeys: ["customer": ["id"]])
            _ = try DatabasePool(path: path, configuration: config)
        }
        // Nothing changed, and the right keyring still reads Ada.
        #expect(try Connection(path: path, configuration: Configuration(key: databaseKey)).fetchAll(sql: "SELECT * FROM customer").map { "\($0)" } == before)
        #expect(try queue(path, keyring: right).read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email FROM customer") } == [Customer(id: 1, email: "ada@example.com")])
    }

    /// The tools take the keyring through the same check: verify, rotate, export.
    @Test func everyCommandRefusesAWrongKeyring() async throws {
        let path = try database("wrong-cli.db")
        try KeyFile.write(databaseKey, to: dir.file("db.key"))
        let wrongPath = dir.file("wrong.keyring")
        try wrong.write(to: wrongPath)
        for arguments in [["verify", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", wrongPath],
                          ["fields", "rotate", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", wrongPath],
                          ["export", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", wrongPath, "--to", dir.file("out.sqlite"), "--i-understand-the-output-is-plaintext"]] {
            let run = try await ProcessRunner.run(Fixtures.strongroomBinary, arguments)
            #expect(run.status == 65, "\(arguments[0]): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("key 1"), "\(arguments[0]): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.sqlite")))
    }

    /// A database sealed before the check existed records none: its first
    /// write through the library records the active key's, once a value
    /// sealed under that key id opens with it; a wrong keyring's insert is
    /// refused there, and writes nothing.
    @Test func aDatabaseWithoutChecksLearnsTheRightKeyringOnly() throws {
        let path = try database("legacy.db")
        let bare = try Connection(path: path, configuration: Configuration(key: databaseKey))
        try bare.execute(sql: "DROP TABLE strongroom_field_keys")
        expectWrongKeyring(1) { try queue(path, keyring: wrong).write { db in try db.insert(Customer(id: 2, email: "eve@example.com"), into: "customer") } }
        #expect(try bare.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") == 1)
        #expect(try bare.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'strongroom_field_keys'") == 0)
        try queue(path, keyring: right).write { db in try db.insert(Customer(id: 2, email: "bob@example.com"), into: "customer") }
        expectWrongKeyring(1) { _ = try queue(path, keyring: wrong, readOnly: true) }
    }

    /// A new key of the right keyring is learnt once it is active; a read-only
    /// connection whose active key the database does not know seals nothing.
    @Test func aNewActiveKeyIsRecordedAndAnUnknownOneSealsNothing() throws {
        let path = try database("new-key.db")
        let (grown, id) = right.addingKey()
        let rotated = try grown.activating(id)
        let readOnly = try queue(path, keyring: rotated, readOnly: true, tool: true)
        let error = #expect(throws: (any Error).self) {
            try readOnly.read { db in _ = try db.fetchOne(Data.self, sql: "SELECT strongroom_seal('x', 'customer', 'email', 'randomized', 1)") }
        }
        #expect("\(String(describing: error))".contains("key \(id)"), "\(String(describing: error))")
        try queue(path, keyring: rotated).write { db in try db.insert(Customer(id: 2, email: "bob@example.com"), into: "customer") }
        #expect(try Connection(path: path, configuration: Configuration(key: databaseKey)).fetchAll(Int.self, sql: "SELECT key_id FROM strongroom_field_keys ORDER BY 1") == [1, Int(id)])
        // The old keyring still opens what it knows (key 1), and is not refused.
        #expect(try queue(path, keyring: right).read { db in try db.fetchOne(String.self, sql: "SELECT email, id FROM customer WHERE id = 1", opening: SealedProperty("email", of: "customer")) } == "ada@example.com")
    }
}
