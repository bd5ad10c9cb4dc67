import Foundation
import Strongroom
import Testing

/// The package-internal statement trace the migration tests replay on SQLCipher 4.
@Suite("Statement trace")
struct TraceTests {
    final class Seen: @unchecked Sendable {
        // Sendable: appended on the connection's thread while the test waits.
        var statements: [String] = []
    }

    @Test func everyTopLevelStatementIsTracedAndTriggerStepsAreNot() throws {
        let db = try Connection.inMemory()
        let seen = Seen()
        db.traceStatements { seen.statements.append($0) }
        try db.execute(sql: """
            -- a note before the statement
            CREATE TABLE t(x);
            CREATE TABLE log(y);
            CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (NEW.x); END;
            """)
        try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [42])
        db.traceStatements(nil)
        try db.execute(sql: "SELECT 1")
        #expect(seen.statements.count == 4, "\(seen.statements)")
        #expect(seen.statements.first?.contains("CREATE TABLE t(x)") == true)
        #expect(seen.statements.last == "INSERT INTO t VALUES (42)")
        #expect(!seen.statements.contains { $0.contains("TRIGGER tr") && !$0.hasPrefix("CREATE") })
    }
}
