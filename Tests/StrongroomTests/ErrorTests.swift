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

    @Test func everyCodeHasAStableRawValue() {
        let raw = StrongroomError.Code.allCases.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        #expect(raw.allSatisfy { $0 == $0.lowercased() && !$0.contains(" ") })
    }
}
