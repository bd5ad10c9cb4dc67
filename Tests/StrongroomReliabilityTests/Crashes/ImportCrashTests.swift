import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `strongroom import` killed with SIGKILL at random moments (issue 12's
/// crash harness, plaintext import): the destination is either absent or a
/// whole, verified copy that opens with the key; the plaintext source is
/// untouched; and the next run completes the import and clears what the
/// killed one left beside the destination.
@Suite("import killed with SIGKILL")
struct ImportCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 80_000

    func importProcess() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = ["import", "--from", "plain.sqlite", "--database", "out.db", "--key-file", "db.key"]
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The temporary copies an import makes beside its destination.
    func leftovers() -> [String] { Self.leftovers(in: dir.path) }

    static func leftovers(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".strongroom-") }
    }

    /// Whether `out.db` is the whole copy: it opens with `key`, passes
    /// integrity_check and holds every row of the source.
    func isWholeCopy(key: DatabaseKey) -> Bool {
        guard let db = try? Connection(path: dir.file("out.db"), configuration: Configuration(key: key)) else { return false }
        defer { db.close() }
        return (try? db.fetchAll(String.self, sql: "PRAGMA integrity_check")) == ["ok"]
            && (try? db.fetchOne(Int.self, sql: "SELECT count(*) FROM invoice")) == Self.rows
            && (try? db.fetchOne(Int.self, sql: "SELECT sum(total) FROM invoice")) == Self.rows * (Self.rows + 1) / 2
    }

    @Test func aKilledImportLeavesNothingOrTheWholeCopy() async throws {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("db.key"))
        do {
            let plain = try Connection(path: dir.file("plain.sqlite"), configuration: .plaintext)
            try plain.execute(sql: """
                CREATE TABLE invoice(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total INTEGER NOT NULL);
                INSERT INTO invoice(customer, total) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
                  SELECT 'customer ' || i, i FROM n;
                CREATE INDEX invoice_customer ON invoice(customer);
                PRAGMA journal_mode = DELETE;
                """)
            plain.close()
        }
        let source = Fixtures.bytes(of: dir.file("plain.sqlite"))
        func reset() {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(dir.file("out.db") + suffix) }
            // A copy left by a kill between publishing and its unlink must not count in the next trial.
            for name in leftovers() { unlink(dir.file(name)) }
        }

        // How long an uninterrupted import takes, to spread the kills over it.
        let clock = ContinuousClock()
        let started = clock.now
        let full = try importProcess()
        let end = await full.ended()
        #expect(full.terminationStatus == 0)
        let window = CrashTrials.milliseconds(end - started)
        #expect(isWholeCopy(key: key))

        var trials = CrashTrials("plaintext import (strongroom import)", defaultCount: 12)
        for trial in 0..<trials.count {
            reset()
            let importer = try importProcess()
            let directory = dir.path
            // One kill in four waits for the temporary copy to appear.
            let (killed, failure) = await trials.kill(importer, window: window, since: .now) { !Self.leftovers(in: directory).isEmpty }
            #expect(failure == nil, "trial \(trial): the import \(failure ?? "")")
            if killed { trials.killedBeforeExit += 1 }
            // Inside the import: its temporary copy had been made.
            let inside = killed && !leftovers().isEmpty
            let exists = FileManager.default.fileExists(atPath: dir.file("out.db"))
            trials.landed(inside ? .inside : !killed || exists ? .after : .before)
            trials.outcomes[exists ? "whole copy" : "no destination", default: 0] += 1
            let intact = (!exists || isWholeCopy(key: key)) && Fixtures.bytes(of: dir.file("plain.sqlite")) == source
                && (killed || exists)
            #expect(intact, "trial \(trial): the destination is absent (killed) or whole, the source untouched")

            // The next run completes the work and clears the killed run's copy.
            var finished = true
            if !exists {
                let rerun = try importProcess()
                await rerun.ended()
                finished = rerun.terminationStatus == 0 && isWholeCopy(key: key) && leftovers().isEmpty
                #expect(finished, "trial \(trial): the next run; left beside it: \(leftovers())")
            }
            if failure != nil || !intact || !finished { trials.failures += 1 }
        }
        trials.minimumInside = max(2, trials.count / 6)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }
}
