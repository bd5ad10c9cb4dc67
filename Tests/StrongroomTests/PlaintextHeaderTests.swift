import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 26, item 6: SQLCipher 4's plaintext header. The first bytes of the
/// file stay SQLite's own header (what iOS reads to tell a WAL database in a
/// shared container); the salt then no longer lies in the file, and is given
/// with the key. It opens in connections and pools and in the engine's own
/// `sqlcipher` shell given the same pragmas; SQLCipher 3 has none, and says so.
@Suite("plaintext header (SQLCipher 4)")
struct PlaintextHeaderTests {
    let dir = TemporaryDirectory()
    let isSQLCipher4 = SQLCipherLibrary.nativeFormat == .sqlcipher4
    static let salt: [UInt8] = Array(0..<16).map { UInt8($0 * 17) }
    static let saltHex = salt.map { String(format: "%02x", $0) }.joined()

    func configuration(_ key: DatabaseKey, size: Int = 32, salt: [UInt8] = salt) throws -> Configuration {
        var configuration = Configuration(key: key)
        configuration.plaintextHeader = try PlaintextHeader(size: size, salt: salt)
        return configuration
    }

    @Test func itOpensInConnectionsPoolsAndTheShellGivenTheSamePragmas() async throws {
        for (name, key, shellKey) in [("passphrase", try DatabaseKey.passphrase("header pass"), "'header pass'"),
                                      ("raw", DatabaseKey.generate(), nil)] {
            let path = dir.file("\(name).db")
            let config = try configuration(key)
            guard isSQLCipher4 else {
                let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: config) }
                #expect(error?.code == .sqlcipherUnavailable && error?.message.contains("SQLCipher 4") == true, "\(error?.message ?? "")")
                // Refused before the file is touched: nothing is left behind.
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
                continue
            }
            do {
                let db = try Connection(path: path, configuration: config)
                try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES ('header-marker-\(name)')")
                let status = try db.status()
                #expect(status.plaintextHeaderSize == 32)
                db.close()
            }
            // The file starts with SQLite's own header; the rows stay encrypted.
            let bytes = Fixtures.bytes(of: path)
            #expect(Array(bytes.prefix(16)) == Array("SQLite format 3\0".utf8))
            #expect(bytes[20] > 0, "SQLCipher reserves bytes at the end of each page")
            #expect(!Fixtures.contains(bytes, "header-marker-\(name)"))
            #expect(try Connection(path: path, configuration: config).fetchOne(String.self, sql: "SELECT x FROM t") == "header-marker-\(name)")
            // The pool derives a passphrase's key once, with the configured salt: no reader stretches it again.
            var pooled = config
            let (logger, lines) = CapturingLogHandler.logger()
            pooled.logger = logger
            let pool = try DatabasePool(path: path, configuration: pooled)
            try pool.write { try $0.execute(sql: "INSERT INTO t VALUES ('second')") }
            #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 2)
            #expect(!lines.lines.contains { $0.contains("stretch the passphrase") }, "\(lines.lines)")
            try pool.close()
            if let shellKey {
                let shell = try await ProcessRunner.run(try #require(ProcessRunner.which("sqlcipher")), [path], input: """
                    PRAGMA key = \(shellKey);
                    PRAGMA cipher_plaintext_header_size = 32;
                    PRAGMA cipher_salt = "x'\(Self.saltHex)'";
                    SELECT count(*) FROM t;
                    """)
                #expect(shell.stdout.split(separator: "\n").last == "2", "\(shell.stdout) \(shell.stderr)")
            }
        }
    }

    /// Opened without its header settings, or with another salt, the file is
    /// named for what it is, never "a plaintext database" or "SQL logic error".
    @Test func withoutItsSettingsTheFileIsToldForWhatItIs() throws {
        let key = try DatabaseKey.passphrase("header pass")
        // A plaintext database is still one, on both engines.
        let plain = dir.file("plain.db")
        try Connection(path: plain, configuration: .plaintext).execute(sql: "CREATE TABLE t(x)")
        let plaintext = #expect(throws: StrongroomError.self) { try Connection(path: plain, configuration: Configuration(key: key)) }
        #expect(plaintext?.code == .plaintextDatabase)
        guard isSQLCipher4 else {
            // SQLCipher 3 makes no such file (itOpensInConnectionsPoolsAndTheShellGivenTheSamePragmas).
            let refused = #expect(throws: StrongroomError.self) { try Connection(path: dir.file("h.db"), configuration: try configuration(key)) }
            #expect(refused?.code == .sqlcipherUnavailable)
            return
        }
        let path = dir.file("h.db")
        try Connection(path: path, configuration: try configuration(key)).execute(sql: "CREATE TABLE t(x)")
        let before = Fixtures.bytes(of: path)

        let withKeyOnly = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: key)) }
        #expect(withKeyOnly?.code == .wrongKey && withKeyOnly?.message.contains("plaintext header") == true, "\(withKeyOnly?.message ?? "")")
        let withoutKey = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: .plaintext) }
        #expect(withoutKey?.code == .keyRequired && withoutKey?.message.contains("plaintext header") == true, "\(withoutKey?.message ?? "")")
        var otherSalt = Self.salt
        otherSalt[0] ^= 1
        let wrongSalt = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: try configuration(key, salt: otherSalt)) }
        #expect(wrongSalt?.code == .wrongKey && wrongSalt?.message.contains("salt") == true, "\(wrongSalt?.code.rawValue ?? "") \(wrongSalt?.message ?? "")")
        let wrongKey = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: try configuration(try .passphrase("other"))) }
        #expect(wrongKey?.code == .wrongKey, "\(wrongKey?.message ?? "")")
        #expect(Fixtures.bytes(of: path) == before)
    }

    /// Review: a plaintext database stays one when the header settings are
    /// given, and when a byte SQLite ignores (72 to 91, "reserved for
    /// expansion") is not zero; a file whose header covers all 96 bytes is
    /// still named as having one. SQLCipher reserves at least 16 bytes a page
    /// (its IV) and says so in the header's byte 20; SQLite writes 0 there.
    @Test func theFileIsToldByItsReservedBytesPerPage() throws {
        let key = try DatabaseKey.passphrase("header pass")
        for journal in ["delete", "wal"] {
            let plain = dir.file("plain-\(journal).db")
            try Connection(path: plain, configuration: .plaintext).execute(sql: "PRAGMA journal_mode = \(journal); CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            let error = #expect(throws: StrongroomError.self) { try Connection(path: plain, configuration: try configuration(key)) }
            #expect(error?.code == (isSQLCipher4 ? .plaintextDatabase : .sqlcipherUnavailable), "\(journal): \(error?.message ?? "")")
        }
        let marked = dir.file("marked.db")
        try Connection(path: marked, configuration: .plaintext).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let handle = try #require(FileHandle(forUpdatingAtPath: marked))
        try handle.seek(toOffset: 72)
        try handle.write(contentsOf: [1])
        try handle.close()
        #expect(try Connection(path: marked, configuration: .plaintext).fetchOne(Int.self, sql: "SELECT x FROM t") == 1)
        let markedWithKey = #expect(throws: StrongroomError.self) { try Connection(path: marked, configuration: Configuration(key: key)) }
        #expect(markedWithKey?.code == .plaintextDatabase, "\(markedWithKey?.message ?? "")")
        guard isSQLCipher4 else { return }
        let whole = dir.file("h96.db")
        try Connection(path: whole, configuration: try configuration(key, size: 96)).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let withKeyOnly = #expect(throws: StrongroomError.self) { try Connection(path: whole, configuration: Configuration(key: key)) }
        #expect(withKeyOnly?.code == .wrongKey && withKeyOnly?.message.contains("plaintext header") == true, "\(withKeyOnly?.message ?? "")")
        let withoutKey = #expect(throws: StrongroomError.self) { try Connection(path: whole, configuration: .plaintext) }
        #expect(withoutKey?.code == .keyRequired && withoutKey?.message.contains("plaintext header") == true, "\(withoutKey?.message ?? "")")
        #expect(try Connection(path: whole, configuration: try configuration(key, size: 96)).fetchOne(Int.self, sql: "SELECT x FROM t") == 1)
    }

    /// Review: a plaintext header without a key would leave every byte in
    /// the clear; it is a misuse, refused before any file is made.
    @Test func aPlaintextHeaderWithoutAKeyIsRefused() throws {
        var config = Configuration.plaintext
        config.plaintextHeader = try PlaintextHeader(size: 32, salt: Self.salt)
        let error = #expect(throws: StrongroomError.self) { try Connection(path: dir.file("nokey.db"), configuration: config) }
        #expect(error?.code == .misuse && error?.message.contains("key") == true, "\(error?.message ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// SQLCipher takes a multiple of 16 up to 96 bytes, and a 16-byte salt.
    @Test func aSizeOrSaltSQLCipherWouldRefuseIsAUsageError() throws {
        for size in [0, 20, 24, 100, 4096] {
            let error = #expect(throws: StrongroomError.self) { try PlaintextHeader(size: size, salt: Self.salt) }
            #expect(error?.code == .misuse && error?.message.contains("multiple of 16") == true, "\(size): \(error?.message ?? "")")
        }
        let short = #expect(throws: StrongroomError.self) { try PlaintextHeader(size: 32, salt: [1, 2, 3]) }
        #expect(short?.code == .misuse && short?.message.contains("16 bytes") == true, "\(short?.message ?? "")")
        #expect(try PlaintextHeader(size: 32, salt: PlaintextHeader.generateSalt()).salt.count == 16)
        #expect(PlaintextHeader.generateSalt() != PlaintextHeader.generateSalt())
    }
}
