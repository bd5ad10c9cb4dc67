import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Issue 12's crash harness on sealed columns, run as a user runs them:
/// a migration written by `strongroom diff` (a rebuild that drops a column
/// under a foreign key, and a column sealed in place) applied by
/// `strongroom migrate --field-keys`, and `strongroom fields rotate`, each
/// killed with SIGKILL at random moments. After every kill the database
/// opens, passes `integrity_check` and `foreign_key_check`, keeps every
/// row, every sealed value opens to what was written, and the next run
/// finishes the work.
@Suite("sealed columns: diff-written migrations and key rotation killed with SIGKILL")
struct SealedColumnCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 40_000

    func cli(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    func write(_ name: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        try text.write(toFile: dir.file("Migrations/" + name), atomically: true, encoding: .utf8)
    }

    /// Version 1 (customers with a plaintext e-mail and a fax, orders that
    /// reference them) migrated into `seeded-v1.db`, and the migration
    /// `strongroom diff` writes from a model without the fax and with the
    /// e-mail sealed.
    func prepare() async throws -> (databaseKey: DatabaseKey, keyring: String) {
        #expect(try await cli(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await cli(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        try write("0001_initial.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, fax TEXT);
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id), total INTEGER NOT NULL);
            INSERT INTO customer(id, name, email, fax) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
              SELECT i, 'name ' || i, 'person' || i || '@example.com', 'fax ' || i FROM n;
            INSERT INTO orders(customer_id, total) SELECT id, id FROM customer;
            CREATE INDEX orders_customer ON orders(customer_id);
            """)
        let seeded = try await cli(["migrate", "--database", "seeded-v1.db", "--key-file", "db.key"])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        try write("schema.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id), total INTEGER NOT NULL);
            CREATE INDEX orders_customer ON orders(customer_id);
            CREATE TABLE IF NOT EXISTS strongroom_sealed_columns (
              table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT,
              PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns VALUES ('customer', 'email', 'randomized', NULL);
            """)
        let diff = try await cli(["diff", "--allow-destructive", "--name", "seal_email"])
        #expect(diff.status == 0, "\(diff.stderr)")
        let written = try String(contentsOfFile: dir.file("Migrations/0002_seal_email.sql"), encoding: .utf8)
        #expect(written.contains("-- strongroom: rebuild") && written.contains("strongroom_seal"), "the diff wrote:\n\(written)")
        return (try DatabaseKey.load(keyFile: dir.file("db.key")), dir.file("fields.keyring"))
    }

    /// Copies `seeded` to `db.sqlite`, clearing what an earlier trial left.
    func reset(from seeded: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal", "-migrate.lock"] { unlink(dir.file("db.sqlite") + suffix) }
        try FileManager.default.copyItem(atPath: dir.file(seeded), toPath: dir.file("db.sqlite"))
    }

    /// What a copy of the crash state holds, checked whole.
    struct Picture {
        var version = -1
        var healthy = false
        /// E-mails read back as written: plaintext at version 1, opened at version 2.
        var emailsIntact = false
        /// Sealed e-mails per field key id.
        var keyIDs: [Int: Int] = [:]
    }

    func picture(of path: String, key: DatabaseKey, keyring: String) throws -> Picture {
        let probe = dir.file("probe.db")
        try CrashTrials.copyCrashState(of: path, to: probe)
        var configuration = Configuration(key: key)
        configuration.addFieldFunctionsForTools(keyring: try FieldKeyring.load(from: keyring))
        let db = try Connection(path: probe, configuration: configuration)
        defer { db.close() }
        var picture = Picture()
        picture.version = try Migrator(directory: dir.file("Migrations")).currentVersion(db)
        let columns = try db.fetchAll(sql: "PRAGMA table_info(customer)").map { row throws(StrongroomError) in try row.decode(String.self, column: "name") }
        picture.healthy = try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
            && db.fetchAll(sql: "PRAGMA foreign_key_check").isEmpty
            && db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") == Self.rows
            && db.fetchOne(Int.self, sql: "SELECT count(*) FROM orders") == Self.rows
            && db.fetchOne(Int.self, sql: "SELECT sum(total) FROM orders") == Self.rows * (Self.rows + 1) / 2
            && columns == (picture.version == 1 ? ["id", "name", "email", "fax"] : ["id", "name", "email"])
        let expected = "'person' || id || '@example.com'"
        if picture.version == 1 {
            picture.emailsIntact = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE email = \(expected)") == Self.rows
        } else {
            picture.emailsIntact = try db.fetchOne(Int.self, sql: """
                SELECT count(*) FROM customer WHERE typeof(email) = 'blob'
                  AND strongroom_open(email, 'customer', 'email', id) = \(expected)
                """) == Self.rows
            for row in try db.fetchAll(sql: "SELECT strongroom_key_id(email), count(*) FROM customer GROUP BY 1") {
                picture.keyIDs[try row.decode(Int.self, at: 0)] = try row.decode(Int.self, at: 1)
            }
        }
        return picture
    }

    /// How long an uninterrupted run of `arguments` takes from `seeded`, in milliseconds.
    func window(_ arguments: [String], from seeded: String) async throws -> Int {
        try reset(from: seeded)
        let clock = ContinuousClock(), started = clock.now
        let full = try start(arguments)
        let end = await full.ended()
        #expect(full.terminationStatus == 0, "an uninterrupted \(arguments[0])")
        return CrashTrials.milliseconds(end - started)
    }

    /// One trial's run: `arguments` on a fresh copy of `seeded`, killed at a
    /// random moment of `window` milliseconds (or after it exits).
    func killRandomly(_ arguments: [String], from seeded: String, window: Int, trial: Int, _ trials: inout CrashTrials,
                      aimedAtWrites: Bool = false) async throws -> (killed: Bool, failure: String?) {
        try reset(from: seeded)
        let runner = try start(arguments)
        let database = dir.file("db.sqlite")
        let hasWritten: (@Sendable () -> Bool)? = aimedAtWrites ? { @Sendable in CrashTrials.hasBegunWriting(database) } : nil
        let (killed, failure) = await trials.kill(runner, window: window, since: .now, hasWritten: hasWritten)
        #expect(failure == nil, "trial \(trial): \(arguments.prefix(2).joined(separator: " ")) \(failure ?? "")")
        if killed { trials.killedBeforeExit += 1 }
        return (killed, failure)
    }

    /// Whether the killed run had written anything: frames in the WAL, a
    /// journal, or pages of `db.sqlite` other than `seeded`'s.
    func hasWritten(from seeded: String) -> Bool {
        let database = dir.file("db.sqlite")
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
        return walBytes > 0 || FileManager.default.fileExists(atPath: database + "-journal")
            || Fixtures.bytes(of: database) != Fixtures.bytes(of: dir.file(seeded))
    }

    @Test func aKilledDiffWrittenMigrationIsAtOneVersionOrTheOtherWithEveryValue() async throws {
        let (key, keyring) = try await prepare()
        let migrate = ["migrate", "--database", "db.sqlite", "--key-file", "db.key", "--field-keys", "fields.keyring"]
        let window = try await window(migrate, from: "seeded-v1.db")
        var trials = CrashTrials("diff-written migration: a rebuild and a column sealed (strongroom migrate --field-keys)", defaultCount: 12)
        for trial in 0..<trials.count {
            let (killed, failure) = try await killRandomly(migrate, from: "seeded-v1.db", window: window, trial: trial, &trials, aimedAtWrites: true)
            // Inside: the runner held its lock. Until its commit the changed
            // pages stay in its 64 MiB cache: a kill before then finds nothing
            // written (begun), and the kills are aimed at the writes.
            let locked = FileManager.default.fileExists(atPath: dir.file("db.sqlite-migrate.lock"))
            let written = hasWritten(from: "seeded-v1.db")
            let crash = try picture(of: dir.file("db.sqlite"), key: key, keyring: keyring)
            trials.outcomes["version \(crash.version)" + (crash.version == 1 && killed && locked ? (written ? ", pages written" : ", nothing written") : ""), default: 0] += 1
            trials.landed(killed && locked && crash.version == 1 ? (written ? .inside : .begun) : !killed || crash.version == 2 ? .after : .before)
            let held = (crash.version == 1 || crash.version == 2) && crash.healthy && crash.emailsIntact
                && (killed || crash.version == 2)
            #expect(held, "trial \(trial): \(crash)")

            var finished = true
            if crash.version == 1 {
                let rerun = try start(migrate)
                await rerun.ended()
                let after = try picture(of: dir.file("db.sqlite"), key: key, keyring: keyring)
                finished = rerun.terminationStatus == 0 && after.version == 2 && after.healthy && after.emailsIntact
                #expect(finished, "trial \(trial): the next run (exit \(rerun.terminationStatus)): \(after)")
            }
            if failure != nil || !held || !finished { trials.failures += 1 }
        }
        // Kills that found nothing written test the file as it was: some must find pages written.
        trials.minimumInside = max(2, trials.count / 12)
        trials.minimumInsideWithWrites = max(2, trials.count / 12)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }

    @Test func aKilledKeyRotationLeavesEveryValueOpeningUnderOneKeyOrTheOther() async throws {
        let (key, keyring) = try await prepare()
        // Both migrations, the e-mails sealed under field key 1; then key 2 made active.
        let sealed = try await cli(["migrate", "--database", "seeded-v2.db", "--key-file", "db.key", "--field-keys", "fields.keyring"])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(try await cli(["fields", "add-key", "--field-keys", "fields.keyring"]).status == 0)
        #expect(try await cli(["fields", "activate", "--field-keys", "fields.keyring", "--key-id", "2"]).status == 0)
        let rotate = ["fields", "rotate", "--database", "db.sqlite", "--key-file", "db.key", "--field-keys", "fields.keyring", "--batch-size", "500"]
        let window = try await window(rotate, from: "seeded-v2.db")
        var trials = CrashTrials("field-key rotation (strongroom fields rotate)", defaultCount: 12)
        for trial in 0..<trials.count {
            let (killed, failure) = try await killRandomly(rotate, from: "seeded-v2.db", window: window, trial: trial, &trials)
            let crash = try picture(of: dir.file("db.sqlite"), key: key, keyring: keyring)
            let underNew = crash.keyIDs[2] ?? 0
            let outcome = underNew == 0 ? "all under key 1" : underNew == Self.rows ? "all under key 2" : "part re-sealed"
            trials.outcomes[outcome, default: 0] += 1
            trials.landed(killed && underNew > 0 && underNew < Self.rows ? .inside : !killed || underNew == Self.rows ? .after : .before)
            let held = crash.version == 2 && crash.healthy && crash.emailsIntact
                && (crash.keyIDs[1] ?? 0) + underNew == Self.rows && (killed || underNew == Self.rows)
            #expect(held, "trial \(trial): \(crash)")

            let rerun = try start(rotate)
            await rerun.ended()
            let after = try picture(of: dir.file("db.sqlite"), key: key, keyring: keyring)
            let finished = rerun.terminationStatus == 0 && after.healthy && after.emailsIntact && after.keyIDs == [2: Self.rows]
            #expect(finished, "trial \(trial): the next run (exit \(rerun.terminationStatus)): \(after)")
            if failure != nil || !held || !finished { trials.failures += 1 }
        }
        trials.minimumInside = max(2, trials.count / 12)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }
}
