import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `strongroom upgrade` killed with SIGKILL at random moments (issue 26,
/// item 3): after every kill the path holds the SQLCipher 3 file, which the
/// old key opens in compatibility mode, or the upgraded one, which the new
/// key opens in SQLCipher 4's format, never neither; either one passes
/// `integrity_check` with every row; and a second run finishes the job (or,
/// when the first had finished, refuses the old key, changing nothing).
/// On SQLCipher 3 there is nothing to upgrade: the command is refused.
@Suite("upgrade killed with SIGKILL")
struct UpgradeCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 150_000

    func upgradeProcess(_ database: String, errors: String? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = ["upgrade", "--database", database, "--key-file", "old.key", "--new-key-file", "new.key"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.standardOutput = FileHandle.nullDevice
        if let errors {
            FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        return process
    }

    /// Whether `key` opens `path` with every row intact, in `format`.
    func intact(_ path: String, key: DatabaseKey, format: CipherFormat) -> Bool {
        var configuration = Configuration(key: key)
        configuration.cipherCompatibility = format
        configuration.keepsJournalMode = true
        configuration.createIfMissing = false
        guard let db = try? Connection(path: path, configuration: configuration) else { return false }
        defer { db.close() }
        return (try? db.fetchAll(String.self, sql: "PRAGMA integrity_check")) == ["ok"]
            && (try? db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger")) == Self.rows
            && (try? db.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger")) == Self.rows * (Self.rows + 1) / 2
    }

    /// The copies a run left beside the file (`.strongroom-PID-N.tmp`).
    func temporaryCopies() -> [String] { Self.temporaryCopies(in: dir.path) }

    static func temporaryCopies(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".strongroom-") }
    }

    /// Whether a temporary copy beside the file has bytes in it: the upgrade has begun writing.
    static func hasBegunWriting(in directory: String) -> Bool {
        temporaryCopies(in: directory).contains { name in
            ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0) > 0
        }
    }

    @Test func aKilledUpgradeLeavesTheOldFileOrTheNewOneNeverNeither() async throws {
        let oldKey = DatabaseKey.generate(), newKey = DatabaseKey.generate()
        try KeyFile.write(oldKey, to: dir.file("old.key"))
        try KeyFile.write(newKey, to: dir.file("new.key"))
        let seeded = dir.file("seeded.db")
        do {
            var legacy = Configuration(key: oldKey)
            legacy.cipherCompatibility = .sqlcipher3
            let db = try Connection(path: seeded, configuration: legacy)
            try db.execute(sql: """
                CREATE TABLE ledger(id INTEGER PRIMARY KEY, memo TEXT NOT NULL, amount INTEGER NOT NULL);
                INSERT INTO ledger(memo, amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
                  SELECT 'memo number ' || i, i FROM n;
                CREATE INDEX ledger_memo ON ledger(memo);
                PRAGMA wal_checkpoint(TRUNCATE);
                """)
            db.close()
        }
        let database = dir.file("db.sqlite")
        func reset() throws {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) }
            for copy in temporaryCopies() { unlink(dir.file(copy)) }
            try FileManager.default.copyItem(atPath: seeded, toPath: database)
        }
        try reset()
        let clock = ContinuousClock()
        let started = clock.now
        let full = try upgradeProcess(database)
        let end = await full.ended()
        guard SQLCipherLibrary.nativeFormat == .sqlcipher4 else {
            // SQLCipher 3 writes this format: already current, refused (64), unchanged.
            #expect(full.terminationStatus == 64)
            #expect(Fixtures.bytes(of: database) == Fixtures.bytes(of: seeded))
            return
        }
        #expect(full.terminationStatus == 0)
        let window = CrashTrials.milliseconds(end - started)
        #expect(intact(database, key: newKey, format: .sqlcipher4) && !intact(database, key: oldKey, format: .sqlcipher3))

        var trials = CrashTrials("upgrade (strongroom upgrade, SQLCipher 3 to 4, new key)", defaultCount: 12)
        let probe = dir.file("probe.db")
        for trial in 0..<trials.count {
            try reset()
            let upgrade = try upgradeProcess(database)
            let directory = dir.path
            let (killed, failure) = await trials.kill(upgrade, window: window, since: .now) { Self.hasBegunWriting(in: directory) }
            #expect(failure == nil, "trial \(trial): the upgrade \(failure ?? "")")
            if killed { trials.killedBeforeExit += 1 }
            let begun = Self.hasBegunWriting(in: directory)
            try CrashTrials.copyCrashState(of: database, to: probe)
            let old = intact(probe, key: oldKey, format: .sqlcipher3)
            try CrashTrials.copyCrashState(of: database, to: probe)
            let new = intact(probe, key: newKey, format: .sqlcipher4)
            #expect(old != new, "trial \(trial): the old file opens: \(old), the new one: \(new)")
            switch (old, new, killed) {
            case (true, false, true) where begun:
                trials.outcomes["SQLCipher 3 file: killed while the copy was written or checked", default: 0] += 1
                trials.landed(.inside)
            case (true, false, true):
                trials.outcomes["SQLCipher 3 file: killed before the copy", default: 0] += 1
                trials.landed(.before)
            case (false, true, true):
                trials.outcomes["upgraded: killed after the rename", default: 0] += 1
                trials.landed(.after)
            case (false, true, false):
                trials.outcomes["upgraded: finished", default: 0] += 1
                trials.landed(.after)
            default:
                trials.outcomes["neither or both", default: 0] += 1
                trials.failures += 1
                continue
            }
            // The next run starts from what SIGKILL left: it upgrades the old
            // file; the new one, under the new key, refuses the old key (wrong
            // key, 65) and stays as it is.
            let again = try upgradeProcess(database, errors: dir.file("again.err"))
            await again.ended()
            let finished = again.terminationStatus == (old ? 0 : 65) && intact(database, key: newKey, format: .sqlcipher4)
                && temporaryCopies().isEmpty
            #expect(finished, "trial \(trial) (old file: \(old)): after the second run (exit \(again.terminationStatus): \((try? String(contentsOfFile: dir.file("again.err"), encoding: .utf8)) ?? "")), copies left: \(temporaryCopies())")
            if failure != nil || !finished { trials.failures += 1 }
        }
        trials.minimumInside = max(2, trials.count / 6)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }
}
