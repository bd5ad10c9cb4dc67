import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// A consistent copy of a live database (issue 9, item 5): SQLite's online
/// backup API on one snapshot, under the same key or a new one, verified
/// before it takes its name, owner-only, never over an existing file.
@Suite("Backups of live databases")
struct BackupTests {
    let dir = TemporaryDirectory()
    let key = DatabaseKey.generate()

    /// 200 accounts of 100 each: every transfer keeps the total at 20000.
    func bank(_ name: String = "bank.db") throws -> DatabasePool {
        let pool = try DatabasePool(path: dir.file(name), configuration: Configuration(key: key))
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL); CREATE TABLE transfer(id INTEGER PRIMARY KEY, amount INTEGER)")
            for id in 1...200 { try db.execute(sql: "INSERT INTO account VALUES (?, 100)", arguments: [id]) }
        }
        return pool
    }

    func total(of path: String, key: DatabaseKey) throws -> (Int, Int, String) {
        let db = try Connection(path: path, configuration: Configuration(key: key))
        defer { db.close() }
        return (try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") ?? -1,
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM transfer") ?? -1,
                try db.fetchOne(String.self, sql: "PRAGMA integrity_check") ?? "")
    }

    @Test(.timeLimit(.minutes(2))) func aCopyTakenWhileAWriterCommitsTransfersBalances() throws {
        let pool = try bank()
        let stop = Collected()
        let writer = Thread {
            var n = 0
            while stop.lines.isEmpty {
                n += 1
                try? pool.write { db in
                    let amount = n % 37 + 1, from = n % 200 + 1, to = (n * 7) % 200 + 1
                    try db.execute(sql: "UPDATE account SET balance = balance - ? WHERE id = ?", arguments: [amount, from])
                    try db.execute(sql: "UPDATE account SET balance = balance + ? WHERE id = ?", arguments: [amount, to])
                    try db.execute(sql: "INSERT INTO transfer(amount) VALUES (?)", arguments: [amount])
                }
            }
        }
        writer.start()
        defer { stop.append("stop") }
        Thread.sleep(forTimeInterval: 0.2)
        for round in 0..<3 {
            let copy = dir.file("copy-\(round).db")
            let report = try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: key), to: copy, pagesPerStep: 2)
            let (sum, transfers, integrity) = try total(of: copy, key: key)
            #expect(sum == 20000 && integrity == "ok", "round \(round): total \(sum), \(integrity)")
            #expect(report.tables.first { $0.name == "transfer" }?.rowCount == transfers)
            #expect(report.tables.first { $0.name == "account" }?.rowCount == 200)
        }
        stop.append("stop")
        #expect(try total(of: dir.file("copy-2.db"), key: key).1 > 0, "the writer committed while the copies were taken")
    }

    @Test(.timeLimit(.minutes(1))) func aCopyTakenWhileAPoolReaderHoldsASnapshot() throws {
        let pool = try bank()
        let copied = try pool.read { db -> DatabaseBackup.Report in
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") == 20000)
            return try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: key), to: dir.file("copy.db"))
        }
        #expect(copied.tables.map(\.name) == ["account", "transfer"])
        #expect(try total(of: dir.file("copy.db"), key: key).0 == 20000)
    }

    @Test func aCopyUnderANewKeyOpensWithItOnly() throws {
        _ = try bank()
        let newKey = DatabaseKey.generate()
        let events = Collected()
        _ = try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: key), to: dir.file("new.db"),
                                    newKey: newKey, progress: { events.append("\($0)") })
        #expect(try total(of: dir.file("new.db"), key: newKey).0 == 20000)
        let wrong = #expect(throws: StrongroomError.self) { try Connection(path: dir.file("new.db"), configuration: Configuration(key: key)) }
        #expect(wrong?.code == .wrongKey)
        #expect(events.lines.last?.hasPrefix("copied") == true, "\(events.lines)")
        // Still the old key for the original.
        #expect(try total(of: dir.file("bank.db"), key: key).0 == 20000)
    }

    @Test func theCopyIsOwnerOnlyAndNeverReplacesAFile() throws {
        _ = try bank()
        umask(0o022)
        _ = try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: key), to: dir.file("copy.db"))
        let mode = (try FileManager.default.attributesOfItem(atPath: dir.file("copy.db"))[.posixPermissions] as! NSNumber).intValue
        #expect(mode == 0o600)
        let before = Fixtures.bytes(of: dir.file("copy.db"))
        let exists = #expect(throws: StrongroomError.self) {
            try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: key), to: dir.file("copy.db"))
        }
        #expect(exists?.code == .outputExists)
        #expect(Fixtures.bytes(of: dir.file("copy.db")) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".strongroom") || $0.hasPrefix("copy.db-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        let wrongKey = #expect(throws: StrongroomError.self) {
            try DatabaseBackup.copy(from: dir.file("bank.db"), configuration: Configuration(key: .generate()), to: dir.file("other.db"))
        }
        #expect(wrongKey?.code == .wrongKey)
        #expect(!FileManager.default.fileExists(atPath: dir.file("other.db")))
    }
}
