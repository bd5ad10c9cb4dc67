import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Key rotation (issue 8, item 6): new key, re-seal in batches, status per
/// key id, retire only what no value uses.
@Suite("Field key rotation")
struct RotationTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int64?
        var email: String
        var phone: String?
        var country: String
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer"),
                                       SealedProperty("country", of: "customer")]
    }

    static let columns: [SealedColumn] = [
        .indexed("email", in: "customer", indexColumn: "email_index"),
        .randomized("phone", in: "customer"),
        .deterministic("country", in: "customer"),
    ]

    static func people(_ count: Int) -> [Customer] {
        (0..<count).map { Customer(id: nil, email: "person\($0)@example.com", phone: $0 % 5 == 0 ? nil : "+1 555 \($0)", country: ["FR", "UK", "DE"][$0 % 3]) }
    }

    /// A database of `count` customers sealed under `keyring`, its columns recorded.
    func makeDatabase(_ path: String, keyring: FieldKeyring, count: Int) throws {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, email_index BLOB, phone BLOB, country BLOB)")
            try SealedColumnRegistry.record(Self.columns, keyring: keyring, in: db)
            for person in Self.people(count) { try db.insert(person, into: "customer") }
        }
    }

    func read(_ path: String, keyring: FieldKeyring) throws -> [Customer] {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        let db = try Connection(path: path, configuration: config)
        return try db.fetchAll(Customer.self, sql: "SELECT id, email, phone, country FROM customer ORDER BY id")
    }

    @Test func rotateResealsEverythingUnderTheNewKeyThenTheOldKeyRetires() throws {
        let path = dir.file("rotate.db")
        let first = FieldKeyring.generate()
        try makeDatabase(path, keyring: first, count: 250)
        let (grown, newID) = first.addingKey()
        let second = try grown.activating(newID)
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let before = try queue.read { db in try FieldRotation.status(of: Self.columns, in: db) }
        #expect(before.map(\.valuesByKeyID) == [[1: 250], [1: 200], [1: 250]].map { $0 })
        // A key in use cannot retire.
        #expect(throws: FieldError.self) { try queue.read { db in try FieldRotation.retire(1, from: second, in: db) } }

        var seen: [Int] = []
        let report = try FieldRotation.rotate(queue, columns: Self.columns, keyring: second, batchSize: 40) { seen.append($0) }
        #expect(report.resealed == ["customer.email": 250, "customer.phone": 200, "customer.country": 250])
        #expect(seen.last == 700 && seen.count == report.batches)
        let after = try queue.read { db in try FieldRotation.status(of: Self.columns, in: db) }
        #expect(after.map(\.valuesByKeyID) == [[2: 250], [2: 200], [2: 250]])
        #expect(after.allSatisfy { $0.unsealed == 0 })

        // Without key 1, everything still opens, blind indexes and deterministic lookups follow the new key.
        let retired = try queue.read { db in try FieldRotation.retire(1, from: second, in: db) }
        #expect(retired.keyIDs == [2])
        #expect(try read(path, keyring: retired).map(\.email) == Self.people(250).map(\.email))
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: retired, rowKeys: ["customer": ["id"]])
        let db = try Connection(path: path, configuration: config)
        #expect(try db.fetchOne(Customer.self, where: .index("email_index", equals: "person7@example.com"))?.id == 8)
        #expect(try db.fetchAll(Customer.self, where: .column("country", equals: "FR")).count == 84)
        // A second rotation finds nothing left to do.
        #expect(try FieldRotation.rotate(queue, columns: Self.columns, keyring: second).batches == 0)
    }

    /// `strongroom fields rotate` killed with SIGKILL mid-run loses nothing;
    /// a second run finishes the work (issue 8, item 6).
    @Test func rotationKilledMidwayResumes() async throws {
        let path = dir.file("killed.db")
        let keyringPath = dir.file("fields.keyring")
        let first = FieldKeyring.generate()
        try first.write(to: keyringPath)
        try makeDatabase(path, keyring: first, count: 5_000)
        try KeyFile.write(databaseKey, to: dir.file("db.key"))
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "add-key", "--field-keys", keyringPath]).status == 0)
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "activate", "--field-keys", keyringPath, "--key-id", "2"]).status == 0)
        let keyring = try FieldKeyring.load(from: keyringPath)
        #expect(keyring.activeKeyID == 2)

        let rotation = Process()
        rotation.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        rotation.arguments = ["fields", "rotate", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", keyringPath, "--batch-size", "10"]
        rotation.standardOutput = FileHandle.nullDevice
        rotation.standardError = FileHandle.nullDevice
        try rotation.run()
        // Kill it once some batches have committed.
        let watcher = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let moved = try watcher.read { db in try FieldRotation.status(of: Self.columns, in: db)[0].valuesByKeyID[2] ?? 0 }
            if moved > 0 { break }
            usleep(2_000)
        }
        kill(rotation.processIdentifier, SIGKILL)
        await rotation.ended()
        #expect(rotation.terminationReason == .uncaughtSignal)

        let midway = try watcher.read { db in try FieldRotation.status(of: Self.columns, in: db) }
        let remaining = midway.reduce(0) { $0 + ($1.valuesByKeyID[1] ?? 0) }
        #expect(remaining > 0, "the kill landed inside the rotation")
        #expect(try watcher.read { try $0.fetchOne(String.self, sql: "PRAGMA integrity_check") } == "ok")
        // Every value opens, under whichever key it is now.
        #expect(try read(path, keyring: keyring).map(\.email) == Self.people(5_000).map(\.email))

        let rerun = try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "rotate", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", keyringPath, "--json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let status = try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "status", "--database", path, "--key-file", dir.file("db.key")])
        #expect(status.stdout.contains("customer.email (indexed): key 2: 5000"), "\(status.stdout)")
        #expect(!status.stdout.contains("key 1"))
        let retire = try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "retire", "--database", path, "--key-file", dir.file("db.key"), "--field-keys", keyringPath, "--key-id", "1"])
        #expect(retire.status == 0, "\(retire.stderr)")
        #expect(try read(path, keyring: FieldKeyring.load(from: keyringPath)) == read(path, keyring: keyring))
    }
    /// Issue 36, item 6: an envelope's header names its key id in plain.
    /// Whoever holds the database key rewrites the key-1 headers to say key
    /// 2 (the values then open under neither), retire counts no key-1 value
    /// and deletes key 1, and putting the headers back no longer helps: the
    /// values are lost for good. Retire opens every value under the keys
    /// that stay first.
    @Test func retireRefusesWhileAValueDoesNotOpenUnderTheKeysThatStay() throws {
        let path = dir.file("forged-headers.db")
        let first = FieldKeyring.generate()
        try makeDatabase(path, keyring: first, count: 20)
        let (grown, newID) = first.addingKey()
        let second = try grown.activating(newID)
        // The adversary: every key-1 header now says key 2 (blind indexes too).
        let adversary = try Connection(path: path, configuration: Configuration(key: databaseKey))
        for column in ["email", "email_index", "phone", "country"] {
            let swap = column == "email_index" ? "CAST(x'00000002' || substr(\(column), 5) AS BLOB)" : "CAST(substr(\(column), 1, 2) || x'00000002' || substr(\(column), 7) AS BLOB)"
            try adversary.execute(sql: "UPDATE customer SET \(column) = \(swap) WHERE \(column) IS NOT NULL")
        }
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        #expect(try queue.read { db in try FieldRotation.status(of: Self.columns, in: db) }.allSatisfy { $0.valuesByKeyID[1] == nil })
        let error = #expect(throws: FieldError.self) { try queue.read { db in try FieldRotation.retire(1, from: second, in: db) } }
        #expect(error?.message.contains("customer.email") == true && error?.message.contains("do not open") == true, "\(error?.message ?? "")")
        // Put back, the values open again under the keyring that still has key 1.
        for column in ["email", "email_index", "phone", "country"] {
            let swap = column == "email_index" ? "CAST(x'00000001' || substr(\(column), 5) AS BLOB)" : "CAST(substr(\(column), 1, 2) || x'00000001' || substr(\(column), 7) AS BLOB)"
            try adversary.execute(sql: "UPDATE customer SET \(column) = \(swap) WHERE \(column) IS NOT NULL")
        }
        #expect(try read(path, keyring: second).map(\.email) == Self.people(20).map(\.email))
    }

    /// What retire deletes is gone from the keyring, not from backups: the
    /// command says so.
    @Test func retireWarnsThatBackupsMayStillNeedTheKey() async throws {
        let path = dir.file("retire-warning.db")
        let keyringPath = dir.file("warning.keyring")
        try KeyFile.write(databaseKey, to: dir.file("warning-db.key"))
        let first = FieldKeyring.generate()
        let (grown, newID) = first.addingKey()
        try grown.write(to: keyringPath)
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let retire = try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "retire", "--database", path, "--key-file", dir.file("warning-db.key"), "--field-keys", keyringPath, "--key-id", "\(newID)"])
        #expect(retire.status == 0, "\(retire.stderr)")
        #expect(retire.stderr.contains("backup"), "\(retire.stderr)")
    }
}
