import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Defects the security review of sealed columns found, each reproduced
/// here before its fix.
@Suite("Sealed columns: review findings")
struct ReviewFindingsTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let keyring = FieldKeyring.generate()

    func connection(_ name: String, sealing columns: [SealedColumn] = [], key: [String] = ["id"]) throws -> Connection {
        var config = Configuration(key: databaseKey)
        if columns.isEmpty { config.addFieldFunctionsForTools(keyring: keyring) } else { config.seal(columns, keyring: keyring, rowKeys: Dictionary(columns.map { ($0.table, key) }, uniquingKeysWith: { a, _ in a })) }
        return try Connection(path: dir.file(name), configuration: config)
    }

    /// A finishing step that fails (sealing a table without a primary key)
    /// must fail the import, not hang it, and leave no temporary copy.
    @Test(.timeLimit(.minutes(1))) func aFailingFinishingStepFailsTheImport() throws {
        let source = dir.file("plain.sqlite")
        let plain = try Connection(path: source, configuration: .plaintext)
        try plain.execute(sql: "CREATE TABLE n(a, b); INSERT INTO n VALUES (1, 'x')")
        plain.close()
        let out = dir.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let error = #expect(throws: StrongroomError.self) {
            _ = try PlaintextConversion.importPlaintext(from: source, to: out + "/sealed.db", key: databaseKey, finishing: { (db: Connection) throws(StrongroomError) -> Void in
                do {
                    try ColumnSealing.sealInPlace([.randomized("b", in: "n")], keyring: keyring, in: db)
                } catch {
                    throw StrongroomError(.misuse, "\(error)")
                }
            })
        }
        #expect(error?.message.contains("PRIMARY KEY") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
    }

    /// Rotation must reach rows by their real rowid even when a column is named `rowid`.
    @Test func rotationWithAColumnNamedRowid() throws {
        let db = try connection("rowid.db")
        try db.execute(sql: "CREATE TABLE r(pk TEXT PRIMARY KEY, rowid INTEGER, v BLOB)")
        try db.execute(sql: "INSERT INTO r VALUES ('a', 1, strongroom_seal('alpha', 'r', 'v', 'randomized', 'a')), ('b', 1, strongroom_seal('bravo', 'r', 'v', 'randomized', 'b'))")
        let columns: [SealedColumn] = [.randomized("v", in: "r")]
        try SealedColumnRegistry.record(columns, keyring: keyring, in: db)
        db.close()
        let (grown, id) = keyring.addingKey()
        let rotated = try grown.activating(id)
        let queue = try DatabaseQueue(path: dir.file("rowid.db"), configuration: Configuration(key: databaseKey))
        _ = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        let failures = try queue.read { db in try ColumnSealing.failures(keyring: rotated, in: db) }
        #expect(failures.isEmpty, "\(failures.map(\.message))")
        var config = Configuration(key: databaseKey)
        config.addFieldFunctionsForTools(keyring: rotated)
        let check = try Connection(path: dir.file("rowid.db"), configuration: config)
        #expect(try check.fetchAll(String.self, sql: "SELECT strongroom_open(v, 'r', 'v', pk) FROM r ORDER BY pk") == ["alpha", "bravo"])
    }

    /// Text that is not valid UTF-8 would be changed on its way into Swift
    /// (two different keys or values would seal alike): refused, never altered.
    @Test func textThatIsNotUTF8IsRefusedNotChanged() throws {
        let db = try connection("utf8.db")
        let error = #expect(throws: StrongroomError.self) {
            try db.fetchOne(sql: "SELECT strongroom_seal(CAST(x'41ff42' AS TEXT), 't', 'c', 'randomized', 1)")
        }
        #expect(error?.message.contains("UTF-8") == true)
        #expect(throws: StrongroomError.self) {
            try db.fetchOne(sql: "SELECT strongroom_seal('v', 't', 'c', 'randomized', CAST(x'61ff' AS TEXT))")
        }
    }

    /// A NULL in a row key would let two rows' values pass for each other.
    @Test func aRowKeyWithNullIsRefused() throws {
        let cipher = FieldCipher(keyring: keyring)
        let error = #expect(throws: FieldError.self) { try cipher.seal(.text("v"), table: "t", column: "c", rowKey: [.null], mode: .randomized) }
        #expect(error?.code == .misuse)
    }

    /// A primary-key column cannot be sealed: its values are what the others are bound to.
    @Test func aPrimaryKeyColumnCannotBeSealed() throws {
        let db = try connection("pk.db")
        try db.execute(sql: "CREATE TABLE p(code TEXT PRIMARY KEY, name TEXT); INSERT INTO p VALUES ('A1', 'x')")
        #expect(throws: FieldError.self) { try ColumnSealing.sealInPlace([.randomized("code", in: "p")], keyring: keyring, in: db) }
        // Declared as the row key and sealed: refused when the connection opens.
        let error = #expect(throws: StrongroomError.self) { try connection("pk2.db", sealing: [.randomized("code", in: "p")], key: ["code"]) }
        #expect(error?.message.contains("row key") == true, "\(error?.message ?? "")")
    }

    /// A key value SQLite would store converted (an integer into a TEXT key)
    /// is refused at insert, instead of sealing values no read could open.
    @Test func aKeyOfTheWrongTypeIsRefusedAtInsert() throws {
        let db = try connection("types.db", sealing: [.randomized("secret", in: "k")], key: ["code"])
        try db.execute(sql: "CREATE TABLE k(code TEXT PRIMARY KEY, secret BLOB)")
        struct K: Codable { let code: Int; let secret: String }
        let error = #expect(throws: StrongroomError.self) { try db.insert(K(code: 5, secret: "s"), into: "k") }
        #expect(error?.message.contains("code") == true)
        struct Good: Codable { let code: String; let secret: String }
        try db.insert(Good(code: "5", secret: "s"), into: "k")
        #expect(try db.fetchOne(String.self, sql: "SELECT secret, code FROM k", opening: SealedProperty("secret", of: "k")) == "s")
    }

    /// The same when the key's type is TEXT and a combining accent: SQLite
    /// reads TEXT in it (its affinity is TEXT), Swift's `contains` saw one
    /// Character `Ť` and no TEXT, took the affinity for NUMERIC, and sealed
    /// a value bound to the integer 5 in a row whose key is '5', which no
    /// read could open (review of e044ead).
    @Test func aKeyOfTheWrongTypeIsRefusedWhateverFollowsTheTypesLetters() throws {
        let db = try connection("accent.db", sealing: [.randomized("secret", in: "k")], key: ["code"])
        try db.execute(sql: "CREATE TABLE k(code TEXT\u{301} PRIMARY KEY, secret BLOB)")
        struct K: Codable { let code: Int; let secret: String }
        let error = #expect(throws: StrongroomError.self) { try db.insert(K(code: 5, secret: "s"), into: "k") }
        #expect(error?.message.contains("code") == true, "\(error?.message ?? "")")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM k") == 0)
    }

    /// AUTOINCREMENT never hands out an id again, whatever the spelling of the table name.
    @Test func autoincrementIdsAreNotReusedWhateverTheNameCase() throws {
        let db = try connection("auto.db", sealing: [.randomized("secret", in: "Customer")])
        try db.execute(sql: "CREATE TABLE Customer(id INTEGER PRIMARY KEY AUTOINCREMENT, secret BLOB)")
        struct C: Codable { let id: Int64?; let secret: String }
        for i in 0..<3 { try db.insert(C(id: nil, secret: "s\(i)"), into: "customer") }
        try db.execute(sql: "DELETE FROM Customer WHERE id > 1")
        try db.insert(C(id: nil, secret: "new"), into: "customer")
        #expect(try db.fetchAll(Int64.self, sql: "SELECT id FROM Customer ORDER BY id") == [1, 4])
    }

    /// A deterministic envelope (bound to no row) does not open in a randomized column.
    @Test func anEnvelopeOfAnotherModeDoesNotOpen() throws {
        let db = try connection("mode.db", sealing: [.randomized("secret", in: "t")])
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, secret BLOB)")
        let planted = try FieldCipher(keyring: keyring).seal(.text("planted"), table: "t", column: "secret", rowKey: [], mode: .deterministic)
        try db.execute(sql: "INSERT INTO t VALUES (1, ?)", arguments: [planted])
        let error = #expect(throws: StrongroomError.self) { try db.fetchOne(String.self, sql: "SELECT secret, id FROM t", opening: SealedProperty("secret", of: "t")) }
        #expect(error?.code == .sealedValue)
    }

    /// strongroom_open must not be usable in an index: the index would hold
    /// the plaintext, readable with the database key alone.
    @Test func openedValuesCannotBeIndexed() throws {
        let db = try connection("index.db")
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, secret BLOB)")
        #expect(throws: StrongroomError.self) { try db.execute(sql: "CREATE INDEX t_plain ON t(strongroom_open(secret, 't', 'secret', id))") }
    }

    /// Issue 25, item 3: a randomized value sealed with no row key (a
    /// table without a primary key) would open in any row it is copied to.
    @Test func aRandomizedValueWithoutARowKeyIsRefused() throws {
        let cipher = FieldCipher(keyring: keyring)
        for mode in [SealingMode.randomized, .indexed] {
            let error = #expect(throws: FieldError.self) { try cipher.seal(.text("v"), table: "note", column: "body", rowKey: [], mode: mode) }
            #expect(error?.code == .misuse && error?.message.contains("PRIMARY KEY") == true, "\(error?.message ?? "")")
        }
        #expect(try cipher.seal(.text("v"), table: "note", column: "body", rowKey: [], mode: .deterministic) != .null)
        let db = try connection("nokey.db")
        try db.execute(sql: "CREATE TABLE note(body)")
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "INSERT INTO note VALUES (strongroom_seal('a', 'note', 'body', 'randomized'))")
        }
        #expect(error?.message.contains("PRIMARY KEY") == true, "\(error?.message ?? "")")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") == 0)
    }

    /// Issue 25, item 8: one column named twice (another case, another
    /// mode) would be sealed twice and open under neither.
    @Test func sealingOneColumnTwiceIsRefused() throws {
        let db = try connection("twice.db")
        try db.execute(sql: "CREATE TABLE c(id INTEGER PRIMARY KEY, email TEXT); INSERT INTO c VALUES (1, 'ada@example.com')")
        let error = #expect(throws: FieldError.self) {
            try ColumnSealing.sealInPlace([.randomized("email", in: "c"), .deterministic("EMAIL", in: "C")], keyring: keyring, in: db)
        }
        #expect(error?.code == .misuse && error?.message.contains("twice") == true, "\(error?.message ?? "")")
        #expect(try db.fetchOne(String.self, sql: "SELECT email FROM c") == "ada@example.com", "nothing sealed")
    }
}

/// Keyring changes made at the same time by several processes all land:
/// none replaces the file with a keyring that lacks another's new key.
@Suite("Field keyring: concurrent changes")
struct KeyringConcurrencyTests {
    let dir = TemporaryDirectory()

    @Test func concurrentAddKeysAllLand() async throws {
        let path = dir.file("fields.keyring")
        try FieldKeyring.generate().write(to: path)
        let processes = (0..<8).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
            process.arguments = ["fields", "add-key", "--field-keys", path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }
        for process in processes { try process.run() }
        for process in processes { await process.ended() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        #expect(try FieldKeyring.load(from: path).keyIDs == Array(1...9))
    }
}
