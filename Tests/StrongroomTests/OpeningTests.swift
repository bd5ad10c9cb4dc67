import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Opening encrypted and plaintext databases")
struct OpeningTests {
    let dir = TemporaryDirectory()

    func makeDatabase(_ name: String, key: DatabaseKey) throws -> String {
        let path = dir.file(name)
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO note(body) VALUES ('hello')")
        db.close()
        return path
    }

    /// `synchronous = NORMAL` is safe with WAL only: a database kept in a
    /// rollback journal runs with FULL (review of issue 7).
    /// An open that must not create (a missing file, `createIfMissing` off)
    /// leaves nothing behind, not even a lock file.
    @Test func anOpenThatMayNotCreateLeavesNoFile() throws {
        let dir = TemporaryDirectory()
        var configuration = Configuration(key: .generate())
        configuration.createIfMissing = false
        let error = #expect(throws: StrongroomError.self) { try Connection(path: dir.file("missing.db"), configuration: configuration) }
        #expect(error?.code == .notFound)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// Issue 7, item 6: connections creating one new encrypted file at once
    /// (an app started twice, a pool opening writer and readers) all open it.
    @Test func concurrentCreatorsOfOneNewFileAllSucceed() throws {
        for round in 0..<20 {
            let dir = TemporaryDirectory()
            let path = dir.file("new-\(round).db")
            let key = DatabaseKey.generate()
            final class Failures: @unchecked Sendable {
                // Sendable: appended under `lock`.
                let lock = NSLock()
                var messages: [String] = []
                func add(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
            }
            let failures = Failures()
            // Half of them reach the file through a symlink.
            let link = dir.file("link-\(round).db")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                do {
                    let queue = try DatabaseQueue(path: worker % 2 == 0 ? path : link, configuration: Configuration(key: key))
                    try queue.write { db in
                        try db.execute(sql: "CREATE TABLE IF NOT EXISTS t(worker INTEGER)")
                        try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [worker])
                    }
                } catch {
                    failures.add("worker \(worker): \(error)")
                }
            }
            #expect(failures.messages.isEmpty, "round \(round): \(failures.messages)")
            let db = try Connection(path: path, configuration: Configuration(key: key))
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 4 - failures.messages.count)
            // The lock creators took turns on is gone once page 1 is written.
            #expect(!FileManager.default.fileExists(atPath: path + "-strongroom-create.lock"))
            #expect(!FileManager.default.fileExists(atPath: link + "-strongroom-create.lock"))
        }
        // A pool on a new file: its readers open at once.
        let dir = TemporaryDirectory()
        let pool = try DatabasePool(path: dir.file("pool.db"), configuration: Configuration(key: .generate()))
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master") } == 0)
    }

    @Test func aRollbackJournalDatabaseRunsWithSynchronousFull() throws {
        let dir = TemporaryDirectory()
        let key = DatabaseKey.generate()
        var delete = Configuration(key: key)
        delete.journalMode = .delete
        let first = try Connection(path: dir.file("d.db"), configuration: delete)
        #expect(try first.fetchOne(Int.self, sql: "PRAGMA synchronous") == 2)
        first.close()
        var keeping = Configuration(key: key)
        keeping.keepsJournalMode = true
        let kept = try Connection(path: dir.file("d.db"), configuration: keeping)
        #expect(try kept.fetchOne(String.self, sql: "PRAGMA journal_mode") == "delete")
        #expect(try kept.fetchOne(Int.self, sql: "PRAGMA synchronous") == 2)
        let wal = try Connection(path: dir.file("w.db"), configuration: Configuration(key: key))
        #expect(try wal.fetchOne(Int.self, sql: "PRAGMA synchronous") == 1)
    }

    @Test func createsAndReopensWithTheSameKey() throws {
        let key = DatabaseKey.generate()
        let path = try makeDatabase("a.db", key: key)
        let db = try Connection(path: path, configuration: Configuration(key: key))
        #expect(try db.fetchOne(String.self, sql: "SELECT body FROM note") == "hello")
        #expect(db.isEncrypted)
        #expect(db.cipherVersion.hasPrefix("3.") || db.cipherVersion.hasPrefix("4."))
        #expect(Fixtures.bytes(of: path).prefix(16).elementsEqual(Array("SQLite format 3\0".utf8)) == false)
    }

    @Test func wrongKeyFailsAtOpenWithTypedError() throws {
        let path = try makeDatabase("a.db", key: .generate())
        let error = #expect(throws: StrongroomError.self) {
            try Connection(path: path, configuration: Configuration(key: .generate()))
        }
        #expect(error?.code == .wrongKey)
        #expect(error?.message.contains("key") == true)
    }

    @Test func wrongPassphraseFailsAtOpen() throws {
        let path = try makeDatabase("p.db", key: try .passphrase("correct horse"))
        let error = #expect(throws: StrongroomError.self) {
            try Connection(path: path, configuration: Configuration(key: try .passphrase("battery staple")))
        }
        #expect(error?.code == .wrongKey)
        let db = try Connection(path: path, configuration: Configuration(key: try .passphrase("correct horse")))
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") == 1)
    }

    @Test func encryptedFileWithoutKeyIsReported() throws {
        let path = try makeDatabase("a.db", key: .generate())
        let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: .plaintext) }
        #expect(error?.code == .keyRequired)
    }

    @Test func keyGivenForPlaintextFileIsReportedAndFileUntouched() throws {
        let path = dir.file("plain.sqlite")
        try Fixtures.copy(Fixtures.chinook, to: path)
        let before = Fixtures.bytes(of: path)
        let error = #expect(throws: StrongroomError.self) {
            try Connection(path: path, configuration: Configuration(key: .generate()))
        }
        #expect(error?.code == .plaintextDatabase)
        #expect(Fixtures.bytes(of: path) == before)
        // Deliberately plaintext opens it.
        let db = try Connection(path: path, configuration: .plaintext)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM Customer") == 59)
        #expect(!db.isEncrypted)
    }

    @Test func truncatedFileIsNotADatabase() throws {
        let key = DatabaseKey.generate()
        let path = try makeDatabase("a.db", key: key)
        let bytes = Fixtures.bytes(of: path)
        let truncated = dir.file("truncated.db")
        try Data(bytes.prefix(1000)).write(to: URL(fileURLWithPath: truncated))
        let error = #expect(throws: StrongroomError.self) {
            try Connection(path: truncated, configuration: Configuration(key: key))
        }
        #expect(error?.code == .notADatabase)
        #expect(error?.message.contains("truncated") == true)
    }

    @Test func truncatedToAPageBoundaryFailsAtOpenOrRead() throws {
        let key = DatabaseKey.generate()
        let path = dir.file("big.db")
        var config = Configuration(key: key)
        config.journalMode = .delete
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "CREATE TABLE t(x TEXT)")
        let insert = try db.cachedStatement(sql: "INSERT INTO t VALUES (?)")
        try db.inTransaction { _ in for i in 0..<2000 { try insert.execute("row \(i) " + String(repeating: "x", count: 100)) } }
        db.close()
        let bytes = Fixtures.bytes(of: path)
        let truncated = dir.file("cut.db")
        try Data(bytes.prefix(bytes.count / 2 / 1024 * 1024)).write(to: URL(fileURLWithPath: truncated))
        let error = #expect(throws: StrongroomError.self) {
            let cut = try Connection(path: truncated, configuration: config)
            _ = try cut.fetchAll(String.self, sql: "SELECT x FROM t")
        }
        #expect(error?.code == .corrupt || error?.code == .notADatabase)
    }

    @Test func garbageFileIsRejectedWithOrWithoutKey() throws {
        let path = dir.file("garbage.db")
        try Data((0..<8192).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
        let withKey = #expect(throws: StrongroomError.self) {
            try Connection(path: path, configuration: Configuration(key: .generate()))
        }
        // SQLCipher cannot tell random bytes from a file under another key.
        #expect(withKey?.code == .wrongKey)
        let withoutKey = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: .plaintext) }
        #expect(withoutKey?.code == .keyRequired)
        let odd = dir.file("odd.db")
        try Data((0..<777).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: odd))
        let oddError = #expect(throws: StrongroomError.self) { try Connection(path: odd, configuration: Configuration(key: .generate())) }
        #expect(oddError?.code == .notADatabase)
    }

    @Test func missingFileIsNotCreatedWhenNotAsked() throws {
        let path = dir.file("missing.db")
        var config = Configuration(key: .generate())
        config.createIfMissing = false
        let error = #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: config) }
        #expect(error?.code == .notFound)
        #expect(!FileManager.default.fileExists(atPath: path))
        config.createIfMissing = true
        config.readOnly = true
        #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: config) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func directoryIsNotADatabase() throws {
        let error = #expect(throws: StrongroomError.self) { try Connection(path: dir.path, configuration: Configuration(key: .generate())) }
        #expect(error?.code == .notADatabase)
    }

    @Test func missingDirectoryCannotBeCreated() throws {
        let error = #expect(throws: StrongroomError.self) {
            try Connection(path: dir.file("no/such/dir/a.db"), configuration: Configuration(key: .generate()))
        }
        #expect(error?.code == .cannotCreate)
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let key = DatabaseKey.generate()
        let path = try makeDatabase("a.db", key: key)
        var config = Configuration(key: key)
        config.readOnly = true
        let db = try Connection(path: path, configuration: config)
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO note(body) VALUES ('x')") }
        #expect(error?.code == .readOnly)
    }

    @Test func settingsForEncryptedDatabases() throws {
        let db = try Connection(path: dir.file("s.db"), configuration: Configuration(key: .generate()))
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA temp_store") == 2) // MEMORY
        #expect(try db.fetchOne(String.self, sql: "PRAGMA journal_mode") == "wal")
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA synchronous") == 1) // NORMAL
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA cache_size") == -65536)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
    }

    @Test func customCipherPageSizeMustBeGivenAgainToReopen() throws {
        let key = DatabaseKey.generate()
        var config = Configuration(key: key)
        // A size other than the linked SQLCipher's default (1024 on 3.x, 4096 on 4.x).
        let pageSize = SQLCipherLibrary.nativeFormat == .sqlcipher4 ? 8192 : 4096
        config.cipherPageSize = pageSize
        let path = dir.file("p4k.db")
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "CREATE TABLE t(x)")
        db.close()
        #expect(Fixtures.bytes(of: path).count % pageSize == 0 && Fixtures.bytes(of: path).count >= pageSize)
        let reopened = try Connection(path: path, configuration: config)
        #expect(try reopened.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 0)
        #expect(throws: StrongroomError.self) { try Connection(path: path, configuration: Configuration(key: key)) }
    }

    @Test func inMemoryDatabase() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        #expect(try db.fetchOne(Int.self, sql: "SELECT sum(x) FROM t") == 3)
    }
}
