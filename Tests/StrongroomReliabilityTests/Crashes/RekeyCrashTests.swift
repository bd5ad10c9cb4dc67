import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Rekey killed with SIGKILL at random moments (issue 12's crash harness),
/// through a connection (`strongroom rekey`) and through a pool whose four
/// readers keep reading (`reliability-child pool-rekey`): after every kill
/// the file opens with the old key or the new one, never neither, passes
/// `integrity_check`, has every row, and a second rekey finishes the job.
@Suite("rekey killed with SIGKILL")
struct RekeyCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 150_000

    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case connection = "rekey (strongroom rekey)"
        case pool = "rekey of a pool with 4 readers reading (DatabasePool.rekey)"
        var testDescription: String { rawValue }
    }

    func rekeyProcess(_ database: String, _ path: Path) throws -> Process {
        let process = Process()
        switch path {
        case .connection:
            process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
            process.arguments = ["rekey", "--database", database, "--key-file", "old.key", "--new-key-file", "new.key"]
        case .pool:
            process.executableURL = URL(fileURLWithPath: Fixtures.reliabilityChild)
            process.arguments = ["pool-rekey", database, "old.key", "new.key"]
        }
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

    @Test(arguments: Path.allCases)
    func aKilledRekeyLeavesAFileThatOneOfTheTwoKeysOpens(_ path: Path) async throws {
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
        let full = try rekeyProcess(database, path)
        let end = await full.ended()
        #expect(full.terminationStatus == 0)
        let elapsed = end - started
        let window = CrashTrials.milliseconds(elapsed)
        #expect(keysThatOpen(database, [oldKey, newKey]) == [1])

        var trials = CrashTrials(path.rawValue, defaultCount: 24)
        let seededBytes = Fixtures.bytes(of: seeded)
        let probe = dir.file("probe.db")
        /// Which keys open the crash state, each tried on its own copy of it.
        func keysThatOpenTheCrashState() throws -> [Int] {
            try [oldKey, newKey].indices.filter { i in
                try CrashTrials.copyCrashState(of: database, to: probe)
                return keysThatOpen(probe, [[oldKey, newKey][i]]) == [0]
            }
        }
        /// Whether `key` opens the crash state (a copy) with every row intact.
        func intact(under key: DatabaseKey, _ path: String) throws -> Bool {
            let db = try Connection(path: path, configuration: Configuration(key: key))
            defer { db.close() }
            return try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
                && db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") == Self.rows
                && db.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger") == Self.rows * (Self.rows + 1) / 2
        }
        for trial in 0..<trials.count {
            try reset()
            let rekey = try rekeyProcess(database, path)
            // One kill in four waits for the rewrite's first write: start-up
            // under a loaded `make test` varies by more than the rewrite lasts.
            let (killed, failure) = await trials.kill(rekey, window: window, since: .now) { CrashTrials.hasBegunWriting(database) }
            #expect(failure == nil, "trial \(trial): the rekey \(failure ?? "")")
            if killed { trials.killedBeforeExit += 1 }
            // What SIGKILL left, before anything opens it: frames in the WAL
            // or changed pages mean the rewrite had begun.
            let walBytes = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
            let begun = walBytes > 0 || FileManager.default.fileExists(atPath: database + "-journal") || Fixtures.bytes(of: database) != seededBytes

            let opening = try keysThatOpenTheCrashState()
            #expect(opening.count == 1, "trial \(trial): keys that open the file: \(opening)")
            guard opening.count == 1, let which = opening.first else {
                trials.failures += 1
                continue
            }
            switch (which, killed, begun) {
            case (0, true, true):
                trials.outcomes["old key: killed during the rewrite", default: 0] += 1
                trials.landed(.inside)
            case (0, true, _):
                trials.outcomes["old key: killed before the rewrite", default: 0] += 1
                trials.landed(.before)
            case (0, false, _):
                trials.outcomes["old key: exited without rekeying", default: 0] += 1
                trials.landed(.after)
            case (_, true, _):
                trials.outcomes["new key: killed after the commit", default: 0] += 1
                trials.landed(.after)
            default:
                trials.outcomes["new key: finished", default: 0] += 1
                trials.landed(.after)
            }
            let whole = try intact(under: which == 0 ? oldKey : newKey, probe)
            #expect(whole, "trial \(trial): integrity_check, row count and sum")

            // The next run starts from what SIGKILL left (never opened by the
            // checks) and finishes the work: from the old key, a rekey; under
            // the new key, a rekey with the old key is refused (wrong key, 65)
            // and the file stays as it is.
            let again = try rekeyProcess(database, path)
            await again.ended()
            let finished = try again.terminationStatus == (which == 0 ? 0 : 65)
                && keysThatOpenTheCrashState() == [1] && intact(under: newKey, probe)
            #expect(finished, "trial \(trial): after the second run (exit \(again.terminationStatus))")
            let rekeyed = killed || which == 1
            #expect(rekeyed, "trial \(trial): the rekey exited 0 and left the old key")
            if failure != nil || !whole || !finished || !rekeyed { trials.failures += 1 }
        }
        // Kills must land inside the rewrite (begun, not committed), not only before or after it.
        trials.minimumInside = max(2, trials.count / 12)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }
}
