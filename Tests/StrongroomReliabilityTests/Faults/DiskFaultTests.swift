import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 12's faults, through the fault VFS (`Tests/CFaultVFS`, in the
/// manner of SQLite's test_vfs.c): a full disk, write, read and fsync
/// errors on the database file, its `-wal` or its `-journal`. Each ends in
/// an error whose code says what happened (never a wrong key), with every
/// row intact and the same key opening the file after.
@Suite("Faults: full disk and I/O errors")
struct DiskFaultTests {
    let dir = TemporaryDirectory()
    static let rows = 2000

    /// A case: the fault, the file that shows it, the journal mode, and the
    /// code the caller must get.
    struct Case: CustomTestStringConvertible, Sendable {
        let fault: DiskFaults.Fault
        let suffix: String
        let journal: Configuration.JournalMode
        let expected: StrongroomError.Code
        var testDescription: String { "\(fault) on db\(suffix) (\(journal.rawValue))" }
        var name: String {
            switch fault {
            case .full: "full disk"
            case .writeError: "write error (EIO)"
            case .readError: "read error (EIO)"
            case .syncError: "fsync error"
            case .syncHeld: "fsync held"
            case .counted: "counted"
            }
        }
    }

    static let writeCases: [Case] = [DiskFaults.Fault.full, .writeError, .syncError].flatMap { fault in
        let code: StrongroomError.Code = fault == .full ? .diskFull : .ioError
        return [Case(fault: fault, suffix: "-wal", journal: .wal, expected: code),
                Case(fault: fault, suffix: "", journal: .delete, expected: code),
                Case(fault: fault, suffix: "-journal", journal: .delete, expected: code)]
    }

    func seed(_ path: String, key: DatabaseKey, journal: Configuration.JournalMode) throws {
        var configuration = Configuration(key: key)
        configuration.journalMode = journal
        let db = try Connection(path: path, configuration: configuration)
        try db.execute(sql: """
            CREATE TABLE ledger(id INTEGER PRIMARY KEY, memo TEXT NOT NULL, amount INTEGER NOT NULL);
            INSERT INTO ledger(memo, amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
              SELECT hex(randomblob(40)), i FROM n;
            """)
        db.close()
    }

    /// Whether `path` opens with `key` (a new connection), passes
    /// integrity_check and holds exactly the seeded rows.
    func intact(_ path: String, key: DatabaseKey, journal: Configuration.JournalMode) -> Bool {
        var configuration = Configuration(key: key)
        configuration.journalMode = journal
        guard let db = try? Connection(path: path, configuration: configuration) else { return false }
        defer { db.close() }
        return (try? db.fetchAll(String.self, sql: "PRAGMA integrity_check")) == ["ok"]
            && (try? db.fetchOne(Int.self, sql: "SELECT count(*) FROM ledger")) == Self.rows
            && (try? db.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger")) == Self.rows * (Self.rows + 1) / 2
    }

    @Test(arguments: writeCases)
    func aFaultDuringAWriteIsATypedErrorAndLosesNothing(_ fault: Case) throws {
        DiskFaults.install()
        let key = DatabaseKey.generate(), path = dir.file("faults.db")
        try seed(path, key: key, journal: fault.journal)
        var configuration = Configuration(key: key)
        configuration.journalMode = fault.journal
        let db = try Connection(path: path, configuration: configuration)
        // A transaction big enough to spill to the file before its commit, then a checkpoint.
        let (error, failures) = DiskFaults.whileFailing(path + fault.suffix, with: fault.fault) {
            #expect(throws: StrongroomError.self) {
                try db.inTransaction { db in
                    try db.execute(sql: """
                        INSERT INTO ledger(memo, amount) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                          SELECT hex(randomblob(100)), 0 FROM n;
                        UPDATE ledger SET amount = amount + 1;
                        DELETE FROM ledger WHERE amount = 1;
                        """)
                }
                _ = try db.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        #expect(failures > 0, "the fault was never hit")
        #expect(error?.code == fault.expected, "\(fault.testDescription): \(error.map { "\($0.code): \($0.message)" } ?? "no error")")
        #expect(error?.code != .wrongKey && error?.code != .corrupt)
        db.close()
        let held = intact(path, key: key, journal: fault.journal)
        #expect(held, "after \(fault.testDescription)")
        try ReliabilityResults.write("faults", name: fault.testDescription, [
            "fault": fault.name, "operation": "a write transaction, then a checkpoint (\(fault.journal.rawValue) journal, fault on db\(fault.suffix))",
            "injected": failures, "error": error?.code.rawValue ?? "none", "intact": held && error?.code == fault.expected,
        ])
    }

    @Test(arguments: [Configuration.JournalMode.wal, .delete])
    func aReadErrorAtOpenIsAnIOErrorNotAWrongKey(_ journal: Configuration.JournalMode) throws {
        DiskFaults.install()
        let key = DatabaseKey.generate(), path = dir.file("read.db")
        try seed(path, key: key, journal: journal)
        let (error, failures) = DiskFaults.whileFailing(path, with: .readError) {
            #expect(throws: StrongroomError.self) {
                var configuration = Configuration(key: key)
                configuration.journalMode = journal
                let db = try Connection(path: path, configuration: configuration)
                _ = try db.fetchOne(Int.self, sql: "SELECT sum(amount) FROM ledger")
            }
        }
        #expect(failures > 0)
        #expect(error?.code == .ioError, "\(error.map { "\($0.code): \($0.message) \($0.sqliteCode ?? 0)" } ?? "no error")")
        let held = intact(path, key: key, journal: journal)
        #expect(held)
        try ReliabilityResults.write("faults", name: "read error at open \(journal.rawValue)", [
            "fault": "read error (EIO)", "operation": "opening with the key (\(journal.rawValue) journal)",
            "injected": failures, "error": error?.code.rawValue ?? "none", "intact": held && error?.code == .ioError,
        ])
    }
}
