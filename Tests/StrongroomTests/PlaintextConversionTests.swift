import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Encrypting a plaintext database and exporting to plaintext")
struct PlaintextConversionTests {
    let dir = TemporaryDirectory()

    /// A copy of Chinook with a user_version and application_id set.
    func plaintextSource() throws -> String {
        let path = dir.file("chinook.sqlite")
        try Fixtures.copy(Fixtures.chinook, to: path)
        var config = Configuration.plaintext
        config.journalMode = .delete
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "PRAGMA user_version = 42; PRAGMA application_id = 1234567")
        db.close()
        return path
    }

    @Test func tablesWhoseNamesStartWithSqliteAreVerifiedAndListed() throws {
        // `NOT LIKE 'sqlite_%'` would skip these: `_` is a wildcard there.
        let source = dir.file("users.sqlite")
        var config = Configuration.plaintext
        config.journalMode = .delete
        let plain = try Connection(path: source, configuration: config)
        try plain.execute(sql: "CREATE TABLE sqliteUsers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO sqliteUsers(name) VALUES ('a'), ('b')")
        try plain.execute(sql: "CREATE TABLE sqlite1(x); CREATE TABLE other(id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO other DEFAULT VALUES")
        plain.close()
        let key = DatabaseKey.generate()
        let report = try PlaintextConversion.importPlaintext(from: source, to: dir.file("users.db"), key: key)
        #expect(report.tables.map(\.name) == ["other", "sqlite1", "sqliteUsers"])
        #expect(report.tables.first { $0.name == "sqliteUsers" }?.rowCount == 2)
        let status = try Connection(path: dir.file("users.db"), configuration: Configuration(key: key)).status()
        #expect(status.tables.map(\.name) == ["other", "sqlite1", "sqliteUsers"])
    }

    /// Issue 7, item 16: a conversion reports how far it has come.
    @Test func importReportsProgressWhileCopyingAndVerifying() throws {
        final class Seen: @unchecked Sendable {
            // Sendable: the library calls the handler one call at a time.
            var phases: [PlaintextConversion.Progress.Phase] = []
            var verifiedRows = 0
        }
        let seen = Seen()
        let report = try PlaintextConversion.importPlaintext(from: try plaintextSource(), to: dir.file("progress.db"), key: .generate()) { progress in
            if seen.phases.last != progress.phase { seen.phases.append(progress.phase) }
            if progress.phase == .verifying { seen.verifiedRows = progress.completed }
        }
        #expect(seen.phases == [.copying, .verifying])
        #expect(seen.verifiedRows == report.tables.reduce(0) { $0 + $1.rowCount })
    }

    /// Issue 7, item 4: the copy and the digests that verify it read one
    /// snapshot, so a writer committing meanwhile cannot fail the import.
    @Test func importReadsOneSnapshotWhileAWriterCommits() throws {
        let source = dir.file("busy.sqlite")
        var config = Configuration.plaintext
        config.journalMode = .wal
        let writer = try Connection(path: source, configuration: config)
        try writer.execute(sql: "CREATE TABLE event(id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE tally(n INTEGER)")
        let insert = try writer.cachedStatement(sql: "INSERT INTO event(body) VALUES (?)")
        try writer.inTransaction { _ in for i in 0..<50_000 { try insert.execute("event number \(i)") } }
        writer.close()
        final class Stop: @unchecked Sendable {
            // Sendable: a flag read and written under `lock`.
            let lock = NSLock()
            var value = false
            var commits = 0
        }
        let stop = Stop()
        let done = DispatchSemaphore(value: 0)
        let writerConfiguration = config
        Thread.detachNewThread {
            defer { done.signal() }
            guard let db = try? Connection(path: source, configuration: writerConfiguration) else { return }
            while true {
                stop.lock.lock(); let finished = stop.value; stop.lock.unlock()
                if finished { break }
                try? db.execute(sql: "INSERT INTO event(body) VALUES ('late'); INSERT INTO tally VALUES (1)")
                stop.lock.lock(); stop.commits += 1; stop.lock.unlock()
            }
        }
        defer { stop.lock.lock(); stop.value = true; stop.lock.unlock(); done.wait() }
        for round in 0..<3 {
            let report = try PlaintextConversion.importPlaintext(from: source, to: dir.file("busy-\(round).db"), key: .generate())
            #expect(report.tables.count == 2)
        }
        stop.lock.lock(); let commits = stop.commits; stop.lock.unlock()
        #expect(commits > 0, "the writer committed while the imports ran")
    }

    @Test func importKeepsEveryRowAndTheVersions() throws {
        let source = try plaintextSource()
        let sourceBytes = Fixtures.bytes(of: source)
        let destination = dir.file("chinook.db")
        let key = DatabaseKey.generate()
        let report = try PlaintextConversion.importPlaintext(from: source, to: destination, key: key)
        #expect(report.userVersion == 42)
        #expect(report.applicationID == 1_234_567)
        #expect(report.tables.count == 11)
        #expect(report.tables.first { $0.name == "Customer" }?.rowCount == 59)
        #expect(report.tables.first { $0.name == "Track" }?.rowCount == 3503)
        // The source is untouched.
        #expect(Fixtures.bytes(of: source) == sourceBytes)
        // The copy is encrypted, and holds the same rows and versions.
        let bytes = Fixtures.bytes(of: destination)
        #expect(!bytes.starts(with: Array("SQLite format 3".utf8)))
        #expect(!Fixtures.contains(bytes, "Gonçalves"))
        let db = try Connection(path: destination, configuration: Configuration(key: key))
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA user_version") == 42)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA application_id") == 1_234_567)
        let plain = try Connection(path: source, configuration: .plaintext)
        #expect(try db.tableDigests() == plain.tableDigests())
        #expect(try db.fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            == plain.fetchAll(String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"))
    }

    /// A `finishing` that leaves a connection reading the new file keeps the
    /// last checkpoint from moving the VACUUM's pages into it; with SQLite's
    /// syncs off, only the file is synced before it is named (issue 51's
    /// review). The import must fail and name nothing: the file would hold
    /// the pages from before the change, with what it replaced.
    @Test func aCopyFinishingLeftReadIsNotNamed() throws {
        let source = try plaintextSource()
        let destination = dir.file("held.db")
        let key = DatabaseKey.generate()
        var reader: Connection?
        defer { reader?.close() }
        var configuration = Configuration(key: key)
        configuration.busyTimeout = .milliseconds(100)
        let error = #expect(throws: StrongroomError.self) {
            try PlaintextConversion.importPlaintext(from: source, to: destination, key: key, finishing: { (db: Connection) throws(StrongroomError) -> Void in
                try db.execute(sql: "UPDATE Customer SET Email = 'replaced'")
                let other = try Connection(path: db.path, configuration: configuration)
                try other.execute(sql: "BEGIN")
                _ = try other.fetchOne(Int.self, sql: "SELECT count(*) FROM Customer")
                reader = other
            })
        }
        #expect(error?.code == .busy, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func exportRoundTrip() throws {
        let source = try plaintextSource()
        let encrypted = dir.file("enc.db")
        let key = try DatabaseKey.passphrase("round trip")
        _ = try PlaintextConversion.importPlaintext(from: source, to: encrypted, key: key)
        let exported = dir.file("exported.sqlite")
        let report = try PlaintextConversion.exportPlaintext(from: encrypted, key: key, to: exported, .outputIsUnprotectedPlaintext)
        #expect(report.userVersion == 42)
        #expect(Fixtures.bytes(of: exported).starts(with: Array("SQLite format 3\0".utf8)))
        let original = try Connection(path: source, configuration: .plaintext)
        let copy = try Connection(path: exported, configuration: .plaintext)
        #expect(try copy.tableDigests() == original.tableDigests())
        #expect(try copy.fetchOne(Int.self, sql: "PRAGMA application_id") == 1_234_567)
    }

    @Test func refusesExistingOutputEncryptedInputAndWrongKey() throws {
        let source = try plaintextSource()
        let existing = dir.file("existing.db")
        FileManager.default.createFile(atPath: existing, contents: Data("keep me".utf8))
        let exists = #expect(throws: StrongroomError.self) {
            try PlaintextConversion.importPlaintext(from: source, to: existing, key: .generate())
        }
        #expect(exists?.code == .outputExists)
        #expect(Fixtures.bytes(of: existing) == Array("keep me".utf8))

        let key = DatabaseKey.generate()
        let encrypted = dir.file("enc.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: encrypted, key: key)
        let again = #expect(throws: StrongroomError.self) {
            try PlaintextConversion.importPlaintext(from: encrypted, to: dir.file("twice.db"), key: key)
        }
        #expect(again?.code == .keyRequired)

        let wrong = #expect(throws: StrongroomError.self) {
            try PlaintextConversion.exportPlaintext(from: encrypted, key: .generate(), to: dir.file("out.sqlite"), .outputIsUnprotectedPlaintext)
        }
        #expect(wrong?.code == .wrongKey)
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("twice.db")))
    }
}
