import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 12's faults from the file system: a read-only file, a file the
/// user may not read, a directory that vanishes under an open database or
/// an export, and a `-wal` deleted under a pool. Each ends in a typed error,
/// with the data intact and the same key opening the file after.
///
/// Permissions mean nothing to root, so when the tests run as root the
/// `strongroom` command runs as `nobody` (`setpriv`), as a user would.
@Suite("Faults: read-only files, permissions, vanished directories, a deleted -wal")
struct FileSystemFaultTests {
    let dir = TemporaryDirectory()
    static let rows = 500

    /// Runs `strongroom` as an unprivileged user, with `--json` errors.
    func runUnprivileged(_ arguments: [String]) async throws -> ProcessResult {
        if geteuid() == 0 {
            // A copy nobody may load, wherever the checkout lives (issue 36, item 11).
            return try await Unprivileged.run(arguments, currentDirectory: dir.path)
        }
        return try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    /// A database of `rows` rows and its key file, both handed to the
    /// unprivileged user (the key file stays 0600, now theirs).
    func seed(journal: Configuration.JournalMode = .wal) throws -> DatabaseKey {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("db.key"))
        var configuration = Configuration(key: key)
        configuration.journalMode = journal
        let db = try Connection(path: dir.file("app.db"), configuration: configuration)
        try db.execute(sql: """
            CREATE TABLE ledger(id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);
            INSERT INTO ledger(amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows)) SELECT i FROM n;
            """)
        db.close()
        chmod(dir.path, 0o755)
        if geteuid() == 0 { chown(dir.file("db.key"), 65534, 65534) }
        return key
    }

    func intact(_ path: String, key: DatabaseKey) -> Bool {
        guard let db = try? Connection(path: path, configuration: Configuration(key: key)) else { return false }
        defer { db.close() }
        return (try? db.fetchAll(String.self, sql: "PRAGMA integrity_check")) == ["ok"]
            && (try? db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger")) == Self.rows
    }

    /// The error code in a `--json` failure report.
    func code(_ result: ProcessResult) -> String? {
        let data = Data(result.stdout.utf8)
        guard let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let error = report["error"] as? [String: Any] else { return nil }
        return error["code"] as? String
    }

    func record(_ fault: String, _ operation: String, _ error: String?, _ held: Bool) throws {
        try ReliabilityResults.write("faults", name: fault + " " + operation, [
            "fault": fault, "operation": operation, "injected": 1, "error": error ?? "none", "intact": held,
        ])
    }

    @Test(arguments: [Configuration.JournalMode.wal, .delete])
    func aWriteToAReadOnlyFileIsReadOnlyAndChangesNothing(_ journal: Configuration.JournalMode) async throws {
        let key = try seed(journal: journal)
        // The file is read-only; its directory is not (SQLite 3.15 reads a WAL
        // database only where it can make the -shm). Sticky, as /tmp is: a
        // key file may not lie where others could replace it.
        chmod(dir.path, 0o1777)
        chmod(dir.file("app.db"), 0o444)
        let write = try await runUnprivileged(["sql", "--database", "app.db", "--key-file", "db.key", "--json", "--write", "INSERT INTO ledger(amount) VALUES (1)"])
        #expect(write.status == 77, "\(write.stdout) \(write.stderr)")
        #expect(code(write) == "read_only", "\(write.stdout)")
        let read = try await runUnprivileged(["sql", "--database", "app.db", "--key-file", "db.key", "--json", "SELECT count(*) AS n FROM ledger"])
        if journal == .wal && SQLCipherLibrary.sqliteVersionNumber < 3_022_000 {
            // SQLite 3.15 reads a WAL database only with write access to it
            // (read-only WAL came in 3.22): the error must say so. SQLite
            // 3.46 (SQLCipher 4.6) reads it, as it reads a rollback-journal one.
            #expect(read.status == 77 && code(read) == "read_only" && read.stdout.contains("WAL") && read.stdout.contains("app.db"), "\(read.stdout)")
        } else {
            #expect(read.status == 0 && read.stdout.contains("\(Self.rows)"), "a read-only file still reads: \(read.stdout) \(read.stderr)")
        }
        chmod(dir.file("app.db"), 0o644)
        let held = intact(dir.file("app.db"), key: key)
        #expect(held)
        try record("read-only file (0444)", "an INSERT by its reader (strongroom sql, \(journal.rawValue))", code(write), held && code(write) == "read_only")
    }

    @Test func aFileTheUserMayNotReadIsPermissionDenied() async throws {
        let key = try seed()
        chmod(dir.file("app.db"), 0o600)
        if geteuid() != 0 { chmod(dir.file("app.db"), 0o000) }
        let read = try await runUnprivileged(["sql", "--database", "app.db", "--key-file", "db.key", "--json", "SELECT count(*) FROM ledger"])
        #expect(read.status == 77, "\(read.stdout) \(read.stderr)")
        #expect(code(read) == "permission_denied", "\(read.stdout)")
        chmod(dir.file("app.db"), 0o600)
        let held = intact(dir.file("app.db"), key: key)
        #expect(held)
        try record("permission denied (another user's 0600 file)", "opening it (strongroom sql)", code(read), held && code(read) == "permission_denied")
    }

    @Test(arguments: [Configuration.JournalMode.wal, .delete])
    func aWriteAfterTheDirectoryVanishedIsAnErrorNotASilentLoss(_ journal: Configuration.JournalMode) throws {
        let key = DatabaseKey.generate()
        let sub = dir.file("vanishing")
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        var configuration = Configuration(key: key)
        configuration.journalMode = journal
        let queue = try DatabaseQueue(path: sub + "/app.db", configuration: configuration)
        try queue.write { db in try db.execute(sql: "CREATE TABLE ledger(id INTEGER PRIMARY KEY, amount INTEGER); INSERT INTO ledger(amount) VALUES (1)") }
        try FileManager.default.removeItem(atPath: sub)
        let error = #expect(throws: StrongroomError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (2)") }
        }
        #expect(error?.code == .fileMoved, "\(error.map { "\($0.code): \($0.message)" } ?? "the write succeeded into a deleted file")")
        // The directory made again: the queue does not make a new, empty database there.
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        let again = #expect(throws: StrongroomError.self) { try queue.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (3)") } }
        #expect(again?.code == .fileMoved)
        #expect(!FileManager.default.fileExists(atPath: sub + "/app.db"), "a new database was made at the old path")
        try queue.close()
        try record("vanished directory", "a write to an open database (\(journal.rawValue))", error?.code.rawValue, error?.code == .fileMoved)
    }

    /// A pool on a new database at `path` whose table `ledger` holds
    /// `amounts`, written (in WAL mode) after the table was.
    func ledgerPool(at path: String, key: DatabaseKey, amounts: [Int]) throws -> DatabasePool {
        let pool = try DatabasePool(path: path, configuration: Configuration(key: key))
        try pool.write { db in try db.execute(sql: "CREATE TABLE ledger(id INTEGER PRIMARY KEY, amount INTEGER)") }
        try pool.write { db in
            for amount in amounts { try db.execute(sql: "INSERT INTO ledger(amount) VALUES (?)", arguments: [amount]) }
        }
        return pool
    }

    /// A read-only connection to `path` inside a read transaction: its
    /// snapshot (and its hold on the -wal) lasts until its COMMIT. Returns
    /// it and the ledger's row count it sees.
    func readerHoldingASnapshot(of path: String, key: DatabaseKey) throws -> (Connection, Int?) {
        var readOnly = Configuration(key: key)
        readOnly.readOnly = true
        let reader = try Connection(path: path, configuration: readOnly)
        try reader.execute(sql: "BEGIN")
        return (reader, try reader.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger"))
    }

    @Test func aWALDeletedUnderAPoolIsReportedItsCommitsSavedAndNothingMoreWritten() throws {
        let key = DatabaseKey.generate(), path = dir.file("pool.db")
        let pool = try ledgerPool(at: path, key: key, amounts: [1, 2, 3])
        // A reader (another connection, as another thread or process would
        // have) holds its snapshot while the -wal goes, and keeps holding it.
        let (reader, before) = try readerHoldingASnapshot(of: path, key: key)
        unlink(path + "-wal")
        let after = try reader.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger")
        #expect(before == 3 && after == 3, "the reader's snapshot stays")
        let error = #expect(throws: StrongroomError.self) {
            try pool.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (4)") }
        }
        #expect(error?.code == .fileMoved, "\(error.map { "\($0.code): \($0.message)" } ?? "the write went into a deleted -wal")")
        // While anything may still hold the gone -wal (this reader), a new -wal
        // would share its -shm index and lose commits at the next crash: the
        // pool writes no more and reads no more; it is to be opened again.
        let again = #expect(throws: StrongroomError.self) {
            try pool.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (5)") }
        }
        #expect(again?.code == .fileMoved)
        #expect(throws: StrongroomError.self) { try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") } }
        // A crash now: what was committed before the -wal went is in the database file.
        let crash = dir.file("crash.db")
        try CrashTrials.copyCrashState(of: path, to: crash)
        let copy = try Connection(path: crash, configuration: Configuration(key: key))
        let count = try copy.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger")
        let healthy = try copy.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
        copy.close()
        #expect(count == 3 && healthy)
        try reader.execute(sql: "COMMIT")
        reader.close()
        try pool.close()
        // Opened again, once nothing holds the old files: a new -wal, and every row.
        let reopened = try DatabasePool(path: path, configuration: Configuration(key: key))
        try reopened.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (6)") }
        #expect(try reopened.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger") } == 4)
        try reopened.close()
        try record("-wal deleted under a reader", "the pool's next writes and reads (a reader holding its snapshot)", error?.code.rawValue,
                   error?.code == .fileMoved && again?.code == .fileMoved && count == 3 && healthy)
    }

    /// Issue 51: a commit no longer stats the -wal when it knows it. A -wal
    /// deleted while a transaction runs (the commit goes into the deleted
    /// file, which nothing can prevent) is then still the file remembered,
    /// and the next write is refused. Before, the commit recorded "no
    /// -wal", and every later write went on into the deleted file.
    @Test func aWALDeletedDuringATransactionIsReportedAtTheNextWrite() throws {
        let key = DatabaseKey.generate(), path = dir.file("during.db")
        let pool = try ledgerPool(at: path, key: key, amounts: [1])
        let (reader, _) = try readerHoldingASnapshot(of: path, key: key)
        try pool.write { db in
            unlink(path + "-wal")
            try db.execute(sql: "INSERT INTO ledger(amount) VALUES (2)")
        }
        let error = #expect(throws: StrongroomError.self) {
            try pool.write { db in try db.execute(sql: "INSERT INTO ledger(amount) VALUES (3)") }
        }
        #expect(error?.code == .fileMoved, "\(error.map { "\($0.code): \($0.message)" } ?? "the write went into a deleted -wal")")
        try reader.execute(sql: "COMMIT")
        reader.close()
        try? pool.close()
    }

    @Test func switchingJournalModesIsNotAMovedFile() throws {
        let queue = try DatabaseQueue(path: dir.file("modes.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        try queue.inDatabase { db in
            _ = try db.fetchAll(sql: "PRAGMA journal_mode = DELETE")
            _ = try db.fetchAll(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 2)
        try queue.close()
    }
}
