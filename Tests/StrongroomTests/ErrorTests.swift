import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Typed errors")
struct ErrorTests {
    @Test func constraintViolationsAreMatchableByKind() throws {
        let db = try Connection.inMemory(configuration: Configuration(key: .generate()))
        try db.execute(sql: """
            CREATE TABLE parent(id INTEGER PRIMARY KEY, code TEXT UNIQUE, n INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0));
            CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
            CREATE TABLE pair(a, b, PRIMARY KEY (a, b));
            INSERT INTO parent(id, code) VALUES (1, 'x');
            INSERT INTO pair VALUES (1, 1);
            """)
        let cases: [(String, StrongroomError.Code)] = [
            ("INSERT INTO parent(id, code) VALUES (2, 'x')", .uniqueConstraint),
            ("INSERT INTO parent(id, code) VALUES (1, 'y')", .primaryKeyConstraint),
            ("INSERT INTO pair VALUES (1, 1)", .primaryKeyConstraint),
            ("INSERT INTO parent(id, code, n) VALUES (3, 'z', NULL)", .notNullConstraint),
            ("INSERT INTO parent(id, code, n) VALUES (3, 'z', -1)", .checkConstraint),
            ("INSERT INTO child VALUES (1, 99)", .foreignKeyConstraint),
        ]
        for (sql, code) in cases {
            let error = #expect(throws: StrongroomError.self, "\(sql)") { try db.execute(sql: sql) }
            #expect(error?.code == code, "\(sql)")
            #expect(error?.code.isConstraintViolation == true)
            #expect(error?.sql == sql)
        }
    }

    /// Swift prints errors through `localizedDescription` (issue 7, item 13).
    @Test func errorsPrintTheirMessageWhereSwiftPrintsErrors() throws {
        let db = try Connection.inMemory()
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "SELECT * FROM missing") }
        let described = (error as (any Error)?)?.localizedDescription ?? ""
        #expect(described.contains("no such table: missing"), "\(described)")
        #expect(!described.contains("could not be completed"))
    }

    /// A duplicate INTEGER PRIMARY KEY says "UNIQUE constraint failed" yet is
    /// a primary key violation: both codes answer `isUniquenessViolation`.
    @Test func primaryKeyAndUniqueViolationsAreBothUniquenessViolations() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, code TEXT UNIQUE); INSERT INTO t VALUES (1, 'a')")
        let primary = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO t VALUES (1, 'b')") }
        let unique = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO t VALUES (2, 'a')") }
        #expect(primary?.code == .primaryKeyConstraint && primary?.code.isUniquenessViolation == true)
        #expect(unique?.code == .uniqueConstraint && unique?.code.isUniquenessViolation == true)
        #expect(primary?.message.contains("PRIMARY KEY") == true, "\(primary?.message ?? "")")
    }

    @Test func aWriteInsideReadSaysWritesAreNotAllowedThere() throws {
        let dir = TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let error = #expect(throws: StrongroomError.self) { try queue.read { db in try db.execute(sql: "INSERT INTO t VALUES (1)") } }
        #expect(error?.code == .readOnly)
        #expect(error?.message.contains("inside read") == true, "\(error?.message ?? "")")
    }

    /// A transaction left open inside `inDatabase` must not block the queue
    /// for good (issue 7, item 11).
    @Test func aTransactionLeftOpenInsideTheQueueIsRolledBackAndReported() throws {
        let dir = TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Refused()
            }
        }
        let left = #expect(throws: StrongroomError.self) {
            try queue.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "INSERT INTO t VALUES (2)")
            }
        }
        #expect(left?.code == .misuse && left?.message.contains("rolled back") == true, "\(left?.message ?? "")")
        // The queue works, and neither insert was kept.
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
        #expect(try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT x FROM t") } == [3])
    }

    /// Issue 7, item 13: a failing statement of a script is quoted alone.
    @Test func aFailingScriptQuotesOnlyTheFailingStatement() throws {
        let db = try Connection.inMemory()
        let error = #expect(throws: StrongroomError.self) {
            try db.execute(sql: "CREATE TABLE a(x); INSERT INTO nowhere VALUES (1); CREATE TABLE b(x); DROP TABLE a")
        }
        #expect(error?.sql == "INSERT INTO nowhere VALUES (1);", "\(error?.sql ?? "")")
    }

    @Test func lockHeldByAnotherConnectionIsBusy() throws {
        let dir = TemporaryDirectory()
        let key = DatabaseKey.generate()
        var config = Configuration(key: key)
        config.busyTimeout = .milliseconds(50)
        let holder = try Connection(path: dir.file("b.db"), configuration: config)
        try holder.execute(sql: "CREATE TABLE t(x)")
        try holder.execute(sql: "BEGIN IMMEDIATE")
        let other = try Connection(path: dir.file("b.db"), configuration: config)
        let error = #expect(throws: StrongroomError.self) { try other.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(error?.code == .busy)
        #expect(error?.message.contains("lock") == true)
        try holder.execute(sql: "ROLLBACK")
        try other.execute(sql: "INSERT INTO t VALUES (1)")
    }

    @Test func closedConnectionIsMisuse() throws {
        let db = try Connection.inMemory()
        db.close()
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "SELECT 1") }
        #expect(error?.code == .misuse)
    }

    @Test func aWriteTransactionOnAClosedConnectionIsMisuse() throws {
        // It once asked SQLite about the closed handle's file first (a use after free).
        let dir = TemporaryDirectory()
        let db = try Connection(path: dir.file("closed.db"), configuration: Configuration(key: .generate()))
        db.close()
        let error = #expect(throws: StrongroomError.self) { try db.inTransaction(.immediate) { _ in } }
        #expect(error?.code == .misuse)
    }

    @Test func anSQLErrorWithoutItsOwnTextIsNotCalledCorruption() throws {
        // FTS4 answers an unknown command with SQLITE_ERROR and the generic text,
        // as SQLCipher does a page that failed its HMAC on some reads.
        let dir = TemporaryDirectory()
        let db = try Connection(path: dir.file("fts.db"), configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE VIRTUAL TABLE f USING fts4(x)")
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO f(f) VALUES ('bogus')") }
        #expect(error?.code == .sqlite, "\(error.map { "\($0.code): \($0.message)" } ?? "")")
        // It says both: the SQL, or a damaged page.
        #expect(error?.message.contains("HMAC") == true)
        #expect(try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"])
        db.close()
    }

    @Test func everyCodeHasAStableRawValue() {
        let raw = StrongroomError.Code.allCases.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        #expect(raw.allSatisfy { $0 == $0.lowercased() && !$0.contains(" ") })
    }
}
