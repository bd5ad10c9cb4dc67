import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 26, item 3: `DatabaseUpgrade` converts a SQLCipher 3 file to the
/// linked SQLCipher's format, verified, in place. On SQLCipher 3 every file
/// is current, and the upgrade is refused with nothing changed.
@Suite("Upgrading SQLCipher 3 files")
struct UpgradeTests {
    let dir = TemporaryDirectory()
    let isSQLCipher4 = SQLCipherLibrary.nativeFormat == .sqlcipher4

    func legacyConfiguration(_ key: DatabaseKey) -> Configuration {
        var config = Configuration(key: key)
        config.cipherCompatibility = .sqlcipher3
        config.keepsJournalMode = true
        config.createIfMissing = false
        return config
    }

    func digests(_ path: String, _ configuration: Configuration) throws -> [TableDigest] {
        try Connection(path: path, configuration: configuration).tableDigests()
    }

    /// The release's file: every table's digest, user_version,
    /// application_id and the journal mode are kept; it then opens with the
    /// defaults, in SQLCipher 4's format, and no longer in SQLCipher 3's.
    @Test func theLastReleasesFileUpgradesWithEveryRowAndDigest() throws {
        let legacy = try Fixtures.legacyDatabase(in: dir)
        let key = try DatabaseKey.load(keyFile: legacy.keyFile)
        let made = Fixtures.bytes(of: legacy.database)
        guard isSQLCipher4 else {
            let error = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: legacy.database, key: key) }
            #expect(error?.code == .alreadyCurrent && error?.message.contains("nothing was changed") == true, "\(error?.message ?? "")")
            #expect(try DatabaseUpgrade.format(ofDatabaseAt: legacy.database, key: key) == .sqlcipher3)
            #expect(Fixtures.bytes(of: legacy.database) == made)
            return
        }
        #expect(try DatabaseUpgrade.format(ofDatabaseAt: legacy.database, key: key) == .sqlcipher3)
        let before = try digests(legacy.database, legacyConfiguration(key))
        #expect(Dictionary(uniqueKeysWithValues: before.map { ($0.name, $0.rowCount) }) == Fixtures.legacyRowCounts)
        let phases = Collected()
        let report = try DatabaseUpgrade.upgrade(databaseAt: legacy.database, key: key, progress: { phases.append($0.phase.rawValue) })
        #expect(report.from == .sqlcipher3 && report.to == .sqlcipher4 && !report.rekeyed)
        #expect(report.tables == before)
        #expect(report.userVersion == 7 && report.applicationID == 1_398_165_071 && report.journalMode == "delete")
        #expect(Set(phases.lines) == ["copying", "verifying", "replacing"])
        var current = Configuration(key: key)
        current.keepsJournalMode = true
        let db = try Connection(path: legacy.database, configuration: current)
        #expect(try db.tableDigests() == before)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA user_version") == 7)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA application_id") == 1_398_165_071)
        #expect(try db.fetchOne(String.self, sql: "PRAGMA journal_mode") == "delete")
        #expect(try db.fetchOne(String.self, sql: "PRAGMA cipher_page_size") == "4096")
        #expect(try db.fetchAll(sql: "PRAGMA cipher_integrity_check").isEmpty)
        db.close()
        #expect(try DatabaseUpgrade.format(ofDatabaseAt: legacy.database, key: key) == .sqlcipher4)
        #expect(throws: StrongroomError.self) { try Connection(path: legacy.database, configuration: legacyConfiguration(key)) }
        // Nothing is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("legacy.db") || $0.hasPrefix(".strongroom") }
        #expect(left == ["legacy.db"], "\(left)")
        // A second run is refused and changes nothing.
        let bytes = Fixtures.bytes(of: legacy.database)
        let again = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: legacy.database, key: key) }
        #expect(again?.code == .alreadyCurrent)
        #expect(Fixtures.bytes(of: legacy.database) == bytes)
    }

    /// A WAL database under a passphrase, upgraded under a new passphrase:
    /// WAL it stays, the new key alone opens it, with SQLCipher 4's KDF.
    @Test func aWALPassphraseDatabaseUpgradesUnderANewKey() throws {
        let path = dir.file("wal.db")
        let old = try DatabaseKey.passphrase("old pass"), new = try DatabaseKey.passphrase("new pass")
        var create = Configuration(key: old)
        create.cipherCompatibility = .sqlcipher3
        do {
            let db = try Connection(path: path, configuration: create)
            try db.execute(sql: """
                CREATE TABLE ledger(id INTEGER PRIMARY KEY, memo TEXT NOT NULL, amount INTEGER NOT NULL);
                INSERT INTO ledger(memo, amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
                  SELECT 'memo ' || i, i FROM n;
                CREATE INDEX ledger_memo ON ledger(memo);
                PRAGMA user_version = 3;
                """)
        }
        guard isSQLCipher4 else {
            let error = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: path, key: old, newKey: new) }
            #expect(error?.code == .alreadyCurrent)
            #expect(try Connection(path: path, configuration: Configuration(key: old)).fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") == 5000)
            return
        }
        let before = try digests(path, legacyConfiguration(old))
        let report = try DatabaseUpgrade.upgrade(databaseAt: path, key: old, newKey: new)
        #expect(report.rekeyed && report.journalMode == "wal" && report.tables == before && report.userVersion == 3)
        let db = try Connection(path: path, configuration: Configuration(key: new))
        #expect(try db.tableDigests() == before)
        #expect(try db.fetchOne(String.self, sql: "PRAGMA journal_mode") == "wal")
        #expect(try db.fetchOne(String.self, sql: "PRAGMA kdf_iter") == "256000")
        db.close()
        for key in [old] {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: key)) }
            #expect(error?.code == .wrongKey)
        }
        // A pool derives its readers' key with SQLCipher 4's KDF.
        let pool = try DatabasePool(path: path, configuration: Configuration(key: new))
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger") } == 5000 * 5001 / 2)
    }

    /// While an application has the file open, the upgrade refuses to start
    /// and changes nothing; a wrong key is a wrong key.
    @Test func anOpenFileOrAWrongKeyIsRefusedAndNothingChanges() throws {
        let path = dir.file("held.db")
        let key = DatabaseKey.generate()
        var create = Configuration(key: key)
        create.cipherCompatibility = .sqlcipher3
        let app = try Connection(path: path, configuration: create)
        try app.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let bytes = Fixtures.bytes(of: path)
        let held = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: path, key: key) }
        #expect(held?.code == (isSQLCipher4 ? .busy : .alreadyCurrent), "\(held?.message ?? "")")
        if isSQLCipher4 { #expect(held?.message.contains("stop the applications") == true) }
        #expect(Fixtures.bytes(of: path) == bytes)
        #expect(try app.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1)
        try app.execute(sql: "INSERT INTO t VALUES (2)")
        app.close()
        let wrong = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: path, key: .generate()) }
        #expect(wrong?.code == .wrongKey)
        #expect(try Connection(path: path, configuration: create).fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 2)
    }

    /// A file in the linked SQLCipher's own format is refused on both engines.
    @Test func aCurrentFileIsRefused() throws {
        let path = dir.file("current.db")
        let key = DatabaseKey.generate()
        try Connection(path: path, configuration: Configuration(key: key)).execute(sql: "CREATE TABLE t(x)")
        let error = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: path, key: key) }
        #expect(error?.code == .alreadyCurrent)
        #expect(try DatabaseUpgrade.format(ofDatabaseAt: path, key: key) == SQLCipherLibrary.nativeFormat)
    }

    /// Review of issue 26: rename(2) replaces one name of a hard-linked file,
    /// and a write through the other name would be lost from the upgraded
    /// file: refused, nothing changed.
    @Test func aHardLinkedFileIsRefused() throws {
        let path = dir.file("linked.db")
        let key = DatabaseKey.generate()
        var create = Configuration(key: key)
        create.cipherCompatibility = .sqlcipher3
        try Connection(path: path, configuration: create).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        #expect(link(path, dir.file("other-name.db")) == 0)
        let bytes = Fixtures.bytes(of: path)
        let error = #expect(throws: StrongroomError.self) { try DatabaseUpgrade.upgrade(databaseAt: path, key: key) }
        if isSQLCipher4 {
            #expect(error?.code == .misuse && error?.message.contains("hard link") == true, "\(error?.message ?? "")")
        } else {
            #expect(error?.code == .alreadyCurrent)
        }
        #expect(Fixtures.bytes(of: path) == bytes)
    }
}
