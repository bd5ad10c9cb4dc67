import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport
import Testing

@Suite("Runners racing, killed, and fleets")
struct ConcurrencyTests {
    let f = MigrationFixture()

    func keyFile() throws -> String {
        let path = f.dir.file("app.key")
        if !FileManager.default.fileExists(atPath: path) { try KeyFile.write(f.key, to: path) }
        return path
    }

    func migrateProcess(_ extra: [String] = []) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = ["migrate", "--database", f.databasePath, "--migrations", f.migrationsPath, "--key-file", try keyFile()] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func twoRunnersApplyEachVersionExactlyOnce() async throws {
        f.write("0001_log.sql", "CREATE TABLE log(version INTEGER); INSERT INTO log VALUES (1);")
        for v in 2...8 {
            f.write(String(format: "%04d_step.sql", v), "INSERT INTO log VALUES (\(v)); CREATE TABLE t\(v) AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT i FROM n;")
        }
        try f.open().close()
        let runners = try (0..<3).map { _ in try migrateProcess() }
        for runner in runners { await runner.ended() }
        #expect(runners.allSatisfy { $0.terminationStatus == 0 })
        let db = try f.open()
        #expect(try db.fetchAll(Int.self, sql: "SELECT version FROM log ORDER BY version") == Array(1...8))
        #expect(try f.migrator().appliedMigrations(db).map(\.version) == Array(1...8))
    }

    /// Issue 7, item 15: a runner that reaches the database through a
    /// symlink takes the same lock as one that uses its real path.
    @Test func aSymlinkedDatabaseSharesTheRunnersLock() throws {
        f.write("0001_a.sql", "CREATE TABLE a(x);")
        _ = try f.open()
        let link = f.dir.file("link.db")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: f.databasePath)
        // Hold the lock through the real path.
        let fd = open(f.databasePath + "-migrate.lock", O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        var migrator = try f.migrator()
        migrator.lockTimeout = .milliseconds(200)
        let viaLink = try Connection(path: link, configuration: Configuration(key: f.key))
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(viaLink) }
        #expect(error?.code == .lockTimeout)
        flock(fd, LOCK_UN)
        #expect(try migrator.migrate(viaLink).toVersion == 1)
    }

    @Test func secondRunnerWaitsThenFailsClearly() throws {
        f.write("0001_a.sql", "CREATE TABLE a(x);")
        // Hold the runner's lock the way another runner would.
        let fd = open(f.databasePath + "-migrate.lock", O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        var migrator = try f.migrator()
        migrator.lockTimeout = .milliseconds(200)
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.code == .lockTimeout)
        #expect(error?.message.contains("Another migration runner") == true)
        flock(fd, LOCK_UN)
        #expect(try migrator.migrate(db).toVersion == 1)
    }

    /// A child process running a long migration is killed with SIGKILL at
    /// random moments: every time the database opens with its key, is at the
    /// version before or after the migration, passes integrity_check and has
    /// all its rows.
    @Test func sigkillDuringAMigrationNeverDamagesTheDatabase() async throws {
        let baseRows = 5000
        f.write("0001_base.sql", """
            CREATE TABLE account(id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL, fax TEXT);
            CREATE TABLE entry(id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE, amount INTEGER NOT NULL);
            INSERT INTO account(id, owner, balance, fax) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(baseRows)) SELECT i, 'owner ' || i, i * 10, 'fax' FROM n;
            INSERT INTO entry(account_id, amount) SELECT id, balance FROM account;
            """)
        let seeded = f.dir.file("seeded.db")
        do {
            let db = try Connection(path: seeded, configuration: Configuration(key: f.key))
            try f.migrator().migrate(db)
            db.close()
        }
        // The long migration: a rebuild of a parent, a big insert and an index.
        f.write("0002_long.sql", """
            ALTER TABLE account DROP COLUMN fax;
            CREATE TABLE ledger(id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES account(id), memo TEXT NOT NULL);
            INSERT INTO ledger(account_id, memo) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) SELECT (i % \(baseRows)) + 1, 'memo ' || i FROM n;
            CREATE INDEX ledger_account ON ledger(account_id, memo);
            UPDATE account SET balance = balance + 1;
            """)
        func reset() throws {
            for suffix in ["", "-wal", "-shm", "-journal", "-migrate.lock"] { unlink(f.databasePath + suffix) }
            try FileManager.default.copyItem(atPath: seeded, toPath: f.databasePath)
        }
        // How long an uninterrupted run takes, to spread the kills over it.
        try reset()
        let clock = ContinuousClock()
        let started = clock.now
        let full = try migrateProcess()
        let end = await full.ended()
        #expect(full.terminationStatus == 0)
        let duration = end - started
        let window = Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)

        var trials = CrashTrials("migrate with a table rebuild (strongroom migrate)", defaultCount: 24)
        let seededBytes = Fixtures.bytes(of: seeded)
        for attempt in 0..<trials.count {
            try reset()
            let runner = try migrateProcess()
            // Spread the kills from process start to past the end of the run,
            // aimed at the migration's writes (see CrashTrials.kill(_:window:since:expectedStatus:hasWritten:)).
            let databasePath = f.databasePath
            let (killed, failure) = await trials.kill(runner, window: window, since: .now) { CrashTrials.hasBegunWriting(databasePath) }
            #expect(failure == nil, "attempt \(attempt): the runner \(failure ?? "")")
            if killed { trials.killedBeforeExit += 1 }

            // Inside the migration: the runner holds its lock file (made just
            // before it starts migrating). Until its cache spills or it commits,
            // the changed pages stay in memory: a kill then finds nothing
            // written (begun), and the kills are aimed at the writes.
            let reachedMigration = FileManager.default.fileExists(atPath: f.databasePath + "-migrate.lock")
            let walBytes = (try? FileManager.default.attributesOfItem(atPath: f.databasePath + "-wal")[.size] as? Int) ?? 0
            let written = walBytes > 0 || FileManager.default.fileExists(atPath: f.databasePath + "-journal")
                || Fixtures.bytes(of: f.databasePath) != seededBytes
            // Checked on a copy: opening recovers and checkpoints, and the
            // next run must start from what SIGKILL left.
            let probe = f.dir.file("probe.db")
            try CrashTrials.copyCrashState(of: f.databasePath, to: probe)
            let db = try Connection(path: probe, configuration: Configuration(key: f.key))
            let version = try f.migrator().currentVersion(db)
            trials.outcomes["version \(version)" + (version == 1 && killed && reachedMigration ? (written ? ", pages written" : ", nothing written") : ""), default: 0] += 1
            trials.landed(killed && reachedMigration && version == 1 ? (written ? .inside : .begun) : !killed || version == 2 ? .after : .before)
            var intact = try (version == 1 || version == 2) && (killed || version == 2)
                && db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
                && db.fetchAll(sql: "PRAGMA foreign_key_check").isEmpty
                && f.count(db, "account") == baseRows
                && f.count(db, "entry") == baseRows
            let ledgerExists = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'ledger'") == 1
            let sum = try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") ?? 0
            if version == 2 {
                intact = try intact && ledgerExists && f.count(db, "ledger") == 200_000 && sum == baseRows * (baseRows + 1) / 2 * 10 + baseRows
            } else {
                intact = try intact && !ledgerExists && sum == baseRows * (baseRows + 1) / 2 * 10 && db.fetchAll(sql: "PRAGMA table_info(account)").count == 4
            }
            #expect(intact, "attempt \(attempt): version \(version), integrity, foreign keys, rows, sums and columns")
            db.close()
            // The next run completes the work.
            var finished = true
            if version == 1 {
                let rerun = try migrateProcess()
                await rerun.ended()
                let after = try f.open()
                finished = try rerun.terminationStatus == 0 && f.migrator().currentVersion(after) == 2 && f.count(after, "ledger") == 200_000
                    && after.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
                    && after.fetchAll(sql: "PRAGMA foreign_key_check").isEmpty
                    && f.count(after, "account") == baseRows && f.count(after, "entry") == baseRows
                    && after.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") == baseRows * (baseRows + 1) / 2 * 10 + baseRows
                after.close()
                #expect(finished, "attempt \(attempt): the next run")
            }
            if failure != nil || !intact || !finished { trials.failures += 1 }
        }
        // Kills must have landed inside the migration, not only before or after it,
        // and some where it had written pages (the others test the file as it was).
        trials.minimumInside = max(3, trials.count / 8)
        trials.minimumInsideWithWrites = max(2, trials.count / 12)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }

    @Test func fleetMigratesEachFileOnItsOwn() throws {
        f.write("0001_a.sql", "CREATE TABLE a(x); INSERT INTO a VALUES (1);")
        f.write("0002_b.sql", "CREATE TABLE b(x);")
        var paths: [String] = []
        for i in 0..<6 {
            let path = f.dir.file("tenant\(i).db")
            try Connection(path: path, configuration: Configuration(key: f.key)).close()
            paths.append(path)
        }
        // One tenant already has a table the migration creates: it fails alone.
        try Connection(path: paths[3], configuration: Configuration(key: f.key)).execute(sql: "CREATE TABLE b(x)")
        // One tenant is under another key.
        let other = f.dir.file("tenant-other.db")
        try Connection(path: other, configuration: Configuration(key: .generate())).execute(sql: "CREATE TABLE z(x)")
        paths.append(other)
        let key = f.key
        let results = MigrationFleet.migrate(paths, with: try f.migrator(), jobs: 3) { _ in Configuration(key: key) }
        #expect(results.map(\.path) == paths)
        #expect(results.filter(\.succeeded).count == 5)
        #expect(results[3].errorCode == "migration_failed")
        #expect(results[3].toVersion == 1)
        // Migration 1 was applied before migration 2 failed (issue 7, item 15).
        #expect(results[3].appliedCount == 1)
        #expect(results[3].error?.contains("table b already exists") == true)
        #expect(results[6].errorCode == "wrong_key")
        for i in [0, 1, 2, 4, 5] {
            #expect(results[i].toVersion == 2 && results[i].fromVersion == 0)
        }
    }
}
