import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 26, item 2: a SQLCipher 3 file on SQLCipher 4 is named as such, and
/// opens in compatibility mode. Each test asserts what each engine does.
@Suite("SQLCipher 3 files on either engine")
struct CipherFormatTests {
    let dir = TemporaryDirectory()
    let isSQLCipher4 = SQLCipherLibrary.nativeFormat == .sqlcipher4

    func counts(_ db: Connection) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
            counts[table] = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \"\(table)\"")
        }
        return counts
    }

    @Test func theLinkedLibraryIsKnown() {
        #expect(SQLCipherLibrary.nativeFormat != nil, "SQLCipher \(SQLCipherLibrary.version)")
        if isSQLCipher4 {
            #expect(SQLCipherLibrary.sqliteVersionNumber >= 3_040_000)
        } else {
            #expect(SQLCipherLibrary.version.hasPrefix("3."))
        }
    }

    /// The file the last release wrote: a typed legacy error on SQLCipher 4
    /// (never "wrong key"), an ordinary open on SQLCipher 3.
    @Test func aSQLCipher3FileFromTheLastReleaseIsNamedAsSuch() throws {
        let legacy = try Fixtures.legacyDatabase(in: dir)
        let key = try DatabaseKey.load(keyFile: legacy.keyFile)
        let made = Fixtures.bytes(of: legacy.database)
        if isSQLCipher4 {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: legacy.database, configuration: Configuration(key: key)) }
            #expect(error?.code == .legacyCipherFormat)
            #expect(error?.message.contains("SQLCipher 3") == true)
            #expect(error?.message.contains("strongroom upgrade") == true)
            #expect(error?.message.contains("compatibility") == true)
            // Nothing was written: the file is as it was made, byte for byte.
            #expect(Fixtures.bytes(of: legacy.database) == made)
        } else {
            let db = try Connection(path: legacy.database, configuration: Configuration(key: key))
            #expect(try counts(db) == Fixtures.legacyRowCounts)
        }
    }

    /// A wrong key on a SQLCipher 3 file is still a wrong key on both engines.
    @Test func aWrongKeyOnALegacyFileIsAWrongKey() throws {
        let legacy = try Fixtures.legacyDatabase(in: dir)
        for key in [DatabaseKey.generate(), try DatabaseKey.passphrase("not this one")] {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: legacy.database, configuration: Configuration(key: key)) }
            #expect(error?.code == .wrongKey)
        }
    }

    /// Compatibility mode opens the file in connections, queues and pools,
    /// read and write, on both engines, and leaves it a SQLCipher 3 file.
    @Test func compatibilityModeOpensItEverywhere() throws {
        let legacy = try Fixtures.legacyDatabase(in: dir)
        var config = Configuration(key: try DatabaseKey.load(keyFile: legacy.keyFile))
        config.cipherCompatibility = .sqlcipher3
        config.keepsJournalMode = true
        do {
            let db = try Connection(path: legacy.database, configuration: config)
            #expect(try counts(db) == Fixtures.legacyRowCounts)
            #expect(try db.fetchOne(Int.self, sql: "PRAGMA user_version") == 7)
            try db.execute(sql: "INSERT INTO Genre(Name) VALUES ('Compatible')")
        }
        let queue = try DatabaseQueue(path: legacy.database, configuration: config)
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM Genre") } == 26)
        let pool = try DatabasePool(path: legacy.database, configuration: config)
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM Track") } == 3503)
        try pool.write { try $0.execute(sql: "DELETE FROM Genre WHERE Name = 'Compatible'") }
        // Still a SQLCipher 3 file: the default settings of SQLCipher 4 do not open it.
        if isSQLCipher4 {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: legacy.database, configuration: Configuration(key: try DatabaseKey.load(keyFile: legacy.keyFile))) }
            #expect(error?.code == .legacyCipherFormat)
        }
    }

    /// A passphrase file in SQLCipher 3's format: named on SQLCipher 4, and a
    /// pool in compatibility mode derives its readers' key with SQLCipher 3's
    /// KDF (PBKDF2-HMAC-SHA1, 64,000).
    @Test func aLegacyPassphraseFileAndAPoolInCompatibilityMode() throws {
        let path = dir.file("passphrase-v3.db")
        var config = Configuration(key: try DatabaseKey.passphrase("legacy pass"))
        config.cipherCompatibility = .sqlcipher3
        do {
            let db = try Connection(path: path, configuration: config)
            try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")
        }
        // SQLCipher 3's page size and KDF, whichever engine wrote it.
        let db = try Connection(path: path, configuration: config)
        #expect(try db.fetchOne(String.self, sql: "PRAGMA cipher_page_size") == "1024")
        #expect(try db.fetchOne(String.self, sql: "PRAGMA kdf_iter") == "64000")
        db.close()
        let pool = try DatabasePool(path: path, configuration: config)
        let sums = try (0..<3).map { _ in try pool.read { try $0.fetchOne(Int.self, sql: "SELECT sum(x) FROM t") } }
        #expect(sums == [6, 6, 6])
        let plain = Configuration(key: try DatabaseKey.passphrase("legacy pass"))
        if isSQLCipher4 {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: plain) }
            #expect(error?.code == .legacyCipherFormat)
            let wrong = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: try DatabaseKey.passphrase("legacy pasS"))) }
            #expect(wrong?.code == .wrongKey)
        } else {
            #expect(try Connection(path: path, configuration: plain).fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 3)
        }
    }

    /// Asking SQLCipher 3 for SQLCipher 4's format is refused with what to
    /// do; on SQLCipher 4 it is the native format.
    @Test func aFormatNewerThanTheLinkedSQLCipherIsRefused() throws {
        var config = Configuration(key: .generate())
        config.cipherCompatibility = .sqlcipher4
        if isSQLCipher4 {
            let db = try Connection(path: dir.file("v4.db"), configuration: config)
            #expect(try db.fetchOne(String.self, sql: "PRAGMA cipher_page_size") == "4096")
        } else {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: dir.file("v4.db"), configuration: config) }
            #expect(error?.code == .sqlcipherUnavailable)
            #expect(error?.message.contains("SQLCipher 4 files cannot be opened with SQLCipher 3") == true)
        }
    }

    /// Item 6: other cipher settings open in connections and pools, whose
    /// readers get the key derived once with the file's own KDF (SHA-256
    /// here), and in the engine's own shell given the same pragmas; without
    /// them the key is wrong (not legacy). SQLCipher 3 has SHA-1 only.
    @Test func otherHMACAndKDFAlgorithmsOpenInConnectionsPoolsAndTheShell() async throws {
        let path = dir.file("algorithms.db")
        var config = Configuration(key: try .passphrase("algorithm pass"))
        config.hmacAlgorithm = .sha256
        config.kdfAlgorithm = .pbkdf2SHA256
        config.kdfIterations = 10_000
        config.cipherPageSize = 2048
        guard isSQLCipher4 else {
            let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: config) }
            #expect(error?.code == .sqlcipherUnavailable && error?.message.contains("HMAC-SHA1 only") == true, "\(error?.message ?? "")")
            // SHA-1, SQLCipher 3's own, is accepted.
            config.hmacAlgorithm = .sha1
            config.kdfAlgorithm = .pbkdf2SHA1
            try Connection(path: path, configuration: config).execute(sql: "CREATE TABLE t(x)")
            return
        }
        try Connection(path: path, configuration: config).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        let status = try Connection(path: path, configuration: config).status()
        #expect(status.hmacAlgorithm == "HMAC_SHA256" && status.kdfAlgorithm == "PBKDF2_HMAC_SHA256" && status.cipherPageSize == 2048)
        #expect(status.cipherSettings.contains { $0.contains("cipher_hmac_algorithm = HMAC_SHA256") }, "\(status.cipherSettings)")
        let (logger, lines) = CapturingLogHandler.logger()
        config.logger = logger
        let pool = try DatabasePool(path: path, configuration: config)
        let sums = try (0..<4).map { _ in try pool.read { try $0.fetchOne(Int.self, sql: "SELECT sum(x) FROM t") } }
        #expect(sums == [3, 3, 3, 3])
        #expect(!lines.lines.contains { $0.contains("stretch the passphrase") }, "\(lines.lines)")
        let shell = try await ProcessRunner.run(try #require(ProcessRunner.which("sqlcipher")), [path], input: """
            PRAGMA key = 'algorithm pass';
            PRAGMA cipher_page_size = 2048;
            PRAGMA kdf_iter = 10000;
            PRAGMA cipher_hmac_algorithm = HMAC_SHA256;
            PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256;
            SELECT sum(x) FROM t;

            """)
        #expect(shell.stdout.contains("3"), "\(shell.stdout) \(shell.stderr)")
        let plain = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: try .passphrase("algorithm pass"))) }
        #expect(plain?.code == .wrongKey)
    }

    /// A passphrase pool on the engine's own format derives its readers' key
    /// once (SHA-512 and 256,000 iterations on SQLCipher 4), as on SQLCipher 3
    /// in compatibility mode: no reader stretches it again.
    @Test(arguments: [false, true])
    func aPassphrasePoolDerivesOnceWithTheFilesKDF(_ compatibility: Bool) throws {
        var config = Configuration(key: try .passphrase("pool pass"))
        if compatibility { config.cipherCompatibility = .sqlcipher3 }
        let (logger, lines) = CapturingLogHandler.logger()
        config.logger = logger
        let pool = try DatabasePool(path: dir.file("pool.db"), configuration: config)
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (5)") }
        let values = try (0..<4).map { _ in try pool.read { try $0.fetchOne(Int.self, sql: "SELECT x FROM t") } }
        #expect(values == [5, 5, 5, 5])
        #expect(!lines.lines.contains { $0.contains("stretch the passphrase") }, "\(lines.lines)")
    }
}
