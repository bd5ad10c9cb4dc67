import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Nothing written to the database reaches the disk in the clear: not the
/// file, not its WAL, not its rollback journal, not temporary storage.
@Suite("Data at rest")
struct AtRestTests {
    let dir = TemporaryDirectory()
    let marker = "MARKER-7f3a9c-Zebra-Quokka"

    /// Issue 36, item 9: a new database was created 0644 (SQLite's default
    /// less the umask), readable by every user of the machine, and its -wal,
    /// -shm and journal with it (SQLite gives them the database file's mode).
    /// A new database is 0600 unless the app asks for another mode
    /// (`Configuration.newFileMode`); an existing file keeps its own.
    @Test func newDatabaseFilesAreOwnerOnly() throws {
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
        }
        // WAL: the database, its -wal and -shm, with a connection open.
        let wal = dir.file("wal.db")
        let db = try Connection(path: wal, configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        for file in [wal, wal + "-wal", wal + "-shm"] {
            let m = try mode(file)
            #expect(m == 0o600, "\(file): \(String(m, radix: 8))")
        }
        db.close()
        // A rollback journal, while a transaction holds it.
        var deleteMode = Configuration(key: .generate())
        deleteMode.journalMode = .delete
        let journal = dir.file("journal.db")
        let rollback = try Connection(path: journal, configuration: deleteMode)
        try rollback.execute(sql: "CREATE TABLE t(x); BEGIN; INSERT INTO t VALUES (1)")
        #expect(FileManager.default.fileExists(atPath: journal + "-journal"))
        for file in [journal, journal + "-journal"] {
            let m = try mode(file)
            #expect(m == 0o600, "\(file): \(String(m, radix: 8))")
        }
        try rollback.execute(sql: "COMMIT")
        rollback.close()
        // A queue, a plaintext database, and the target of a dangling link.
        _ = try DatabaseQueue(path: dir.file("queue.db"), configuration: Configuration(key: .generate()))
        #expect(try mode(dir.file("queue.db")) == 0o600)
        _ = try Connection(path: dir.file("plain.db"), configuration: .plaintext)
        #expect(try mode(dir.file("plain.db")) == 0o600)
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.db"), withDestinationPath: "target.db")
        _ = try Connection(path: dir.file("link.db"), configuration: Configuration(key: .generate()))
        #expect(try mode(dir.file("target.db")) == 0o600)
        // The app may ask for another mode, or for SQLite's default.
        var shared = Configuration(key: .generate())
        shared.newFileMode = 0o640
        let group = try Connection(path: dir.file("group.db"), configuration: shared)
        try group.execute(sql: "CREATE TABLE t(x)")
        #expect(try mode(dir.file("group.db")) == 0o640)
        #expect(try mode(dir.file("group.db-wal")) == 0o640)
        group.close()
        var sqliteDefault = Configuration.plaintext
        sqliteDefault.newFileMode = nil
        _ = try Connection(path: dir.file("default.db"), configuration: sqliteDefault)
        // The umask, read without changing it (other tests run meanwhile).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let mask = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
            .flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) })
        #expect(try mode(dir.file("default.db")) == 0o644 & ~mask)
        // An existing file keeps its mode.
        chmod(dir.file("plain.db"), 0o644)
        _ = try Connection(path: dir.file("plain.db"), configuration: .plaintext)
        #expect(try mode(dir.file("plain.db")) == 0o644)
    }

    @Test func markerAbsentFromFileAndWAL() throws {
        let path = dir.file("w.db")
        let db = try Connection(path: path, configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE TABLE secret(x TEXT)")
        try db.execute(sql: "INSERT INTO secret VALUES (?)", arguments: [marker])
        // Before a checkpoint the committed page lives in the -wal file.
        let wal = Fixtures.bytes(of: path + "-wal")
        #expect(wal.count > 0)
        #expect(!Fixtures.contains(wal, marker))
        _ = try db.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(!Fixtures.contains(Fixtures.bytes(of: path), marker))
        // The same steps on a plaintext database do show the marker: the check can fail.
        let plainPath = dir.file("plain.db")
        let plain = try Connection(path: plainPath, configuration: .plaintext)
        try plain.execute(sql: "CREATE TABLE secret(x TEXT)")
        try plain.execute(sql: "INSERT INTO secret VALUES (?)", arguments: [marker])
        #expect(Fixtures.contains(Fixtures.bytes(of: plainPath + "-wal"), marker))
    }

    @Test func markerAbsentFromRollbackJournal() throws {
        let path = dir.file("j.db")
        var config = Configuration(key: .generate())
        config.journalMode = .persist // keeps the journal's page images after commit
        let db = try Connection(path: path, configuration: config)
        try db.execute(sql: "CREATE TABLE secret(x TEXT)")
        try db.execute(sql: "INSERT INTO secret VALUES (?)", arguments: [marker])
        // Changing the row copies the page holding the marker into the journal.
        try db.execute(sql: "UPDATE secret SET x = 'other'")
        let journal = Fixtures.bytes(of: path + "-journal")
        #expect(journal.count > 1024)
        #expect(!Fixtures.contains(journal, marker))
        #expect(!Fixtures.contains(Fixtures.bytes(of: path), marker))

        let plainPath = dir.file("pj.db")
        var plainConfig = Configuration.plaintext
        plainConfig.journalMode = .persist
        let plain = try Connection(path: plainPath, configuration: plainConfig)
        try plain.execute(sql: "CREATE TABLE secret(x TEXT)")
        try plain.execute(sql: "INSERT INTO secret VALUES (?)", arguments: [marker])
        try plain.execute(sql: "UPDATE secret SET x = 'other'")
        #expect(Fixtures.contains(Fixtures.bytes(of: plainPath + "-journal"), marker))
    }

    @Test func temporaryTablesStayInMemory() throws {
        let db = try Connection(path: dir.file("t.db"), configuration: Configuration(key: .generate()))
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA temp_store") == 2)
        try db.execute(sql: "CREATE TEMP TABLE scratch(x TEXT)")
        try db.execute(sql: "INSERT INTO scratch VALUES (?)", arguments: [marker])
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        for file in files {
            #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file(file)), marker), "\(file)")
        }
    }
}
