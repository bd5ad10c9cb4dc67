import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `strongroom rekey` killed with SIGKILL at random moments (issue 12's
/// crash harness, rekey through a connection): after every kill the file
/// opens with the old key or the new one, never neither, passes
/// `integrity_check`, has every row, and a second `rekey` finishes the job.
@Suite("rekey killed with SIGKILL")
struct RekeyCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 60_000

    func rekeyProcess(_ database: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = ["rekey", "--database", database, "--key-file", "old.key", "--new-key-file", "new.key"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Which of `keys` opens `path` and reads it, by index.
    func keysThatOpen(_ path: String, _ keys: [DatabaseKey]) -> [Int] {
        keys.indices.filter { i in
            guard let db = try? Connection(path: path, configuration: Configuration(key: keys[i])) else { return false }
            defer { db.close() }
            return (try? db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master")) != nil
        }
    }

    @Test func aKilledRekeyLeavesAFileThatOneOfTheTwoKeysOpens() throws {
        let oldKey = DatabaseKey.generate(), newKey = DatabaseKey.generate()
        try KeyFile.write(oldKey, to: dir.file("old.key"))
        try KeyFile.write(newKey, to: dir.file("new.key"))
        let seeded = dir.file("seeded.db")
        do {
            let db = try Connection(path: seeded, configuration: Configuration(key: oldKey))
            try db.execute(sql: """
                CREATE TABLE ledger(id INTEGER PRIMARY KEY, memo TEXT NOT NULL, amount INTEGER NOT NULL);
                INSERT INTO ledger(memo, amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
                  SELECT 'memo number ' || i, i FROM n;
                CREATE INDEX ledger_memo ON ledger(memo);
                """)
            db.close()
        }
        let database = dir.file("db.sqlite")
        func reset() throws {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) }
            try FileManager.default.copyItem(atPath: seeded, toPath: database)
        }

        // How long an uninterrupted rekey takes, to spread the kills over it.
        try reset()
        let clock = ContinuousClock()
        let started = clock.now
        let full = try rekeyProcess(database)
        full.waitUntilExit()
        #expect(full.terminationStatus == 0)
        let elapsed = clock.now - started
        let window = CrashTrials.milliseconds(elapsed)
        #expect(keysThatOpen(database, [oldKey, newKey]) == [1])

        var trials = CrashTrials("rekey (strongroom rekey)", defaultCount: 12)
        let seededBytes = Fixtures.bytes(of: seeded)
        for trial in 0..<trials.count {
            try reset()
            let rekey = try rekeyProcess(database)
            usleep(CrashTrials.killDelay(window: window))
            kill(rekey.processIdentifier, SIGKILL)
            rekey.waitUntilExit()
            if rekey.terminationReason == .uncaughtSignal {
                trials.killedBeforeExit += 1
                // Inside the rekey: it had begun writing (a journal, or pages changed).
                let journal = ["-journal", "-wal"].contains { FileManager.default.fileExists(atPath: database + $0) }
                if journal || Fixtures.bytes(of: database) != seededBytes { trials.killedInside += 1 }
            }

            let opening = keysThatOpen(database, [oldKey, newKey])
            #expect(opening.count == 1, "trial \(trial): keys that open the file: \(opening)")
            guard let which = opening.first else {
                trials.failures += 1
                continue
            }
            trials.outcomes[which == 0 ? "old key" : "new key", default: 0] += 1
            let db = try Connection(path: database, configuration: Configuration(key: which == 0 ? oldKey : newKey))
            let intact = try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
                && db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") == Self.rows
                && db.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger") == Self.rows * (Self.rows + 1) / 2
            #expect(intact, "trial \(trial): integrity_check, row count and sum")
            db.close()

            // The next run finishes the work: from the old key, a rekey;
            // already under the new key, a rekey is refused for the wrong key
            // and the file stays as it is.
            let again = try rekeyProcess(database)
            again.waitUntilExit()
            let finished = keysThatOpen(database, [oldKey, newKey]) == [1] && (which == 1 || again.terminationStatus == 0)
            #expect(finished, "trial \(trial): after the second run")
            if !intact || !finished { trials.failures += 1 }
        }
        try trials.record()
        #expect(trials.outcomes.values.reduce(0, +) == trials.count)
        // Kills must land inside the rewrite, not only before or after it.
        #expect(trials.killedInside >= max(2, trials.count / 6), "only \(trials.killedInside) of \(trials.count) kills landed inside the rekey: \(trials.outcomes)")
    }
}
