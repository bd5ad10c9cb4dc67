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
