import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `DatabaseQueue.read` forbade writes with `PRAGMA query_only = 1` and then
/// `= 0`, and SQLite expires every prepared statement of the connection when
/// a flag pragma runs (OP_Expire; 3.15.2 and 3.46.1 alike): each read made
/// every cached statement compile again, and a statement that opens sealed
/// columns check its opening rules again (found measuring issue 39's
/// lookups: a sealed lookup cost 3.8 times a plaintext one, mostly that).
@Suite("Reads reuse their cached statements")
struct ReadStatementReuseTests {
    let dir = TemporaryDirectory()

    @Test func aCachedStatementIsNotPreparedAgainByEachRead() throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)") }
        for _ in 0..<5 {
            #expect(try queue.read { db in try db.cachedStatement(sql: "SELECT x FROM t ORDER BY x").fetchAll(Int.self) } == [1, 2])
        }
        let prepared = try queue.read { db in try db.cachedStatement(sql: "SELECT x FROM t ORDER BY x").timesPreparedAgain }
        #expect(prepared == 0, "SQLite compiled the cached statement again \(prepared) times")
        // Between writes too.
        for n in 3...5 { try queue.write { db in try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").execute(n) } }
        #expect(try queue.write { db in try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").timesPreparedAgain } == 0)
    }

    /// Writes stay refused inside a read, whatever the statement, cached or
    /// not, and the same statement writes again in `write`.
    @Test func everyWriteIsStillRefusedInsideARead() throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        for sql in ["INSERT INTO t VALUES (1)", "UPDATE t SET x = 2", "DELETE FROM t", "CREATE TABLE u(y)", "DROP TABLE t",
                    "CREATE TEMP TABLE v(z)", "PRAGMA user_version = 7", "CREATE INDEX t_x ON t(x)"] {
            let error = #expect(throws: StrongroomError.self, "\(sql)") { try queue.read { db in try db.execute(sql: sql) } }
            #expect(error?.code == .readOnly, "\(sql): \(String(describing: error))")
            #expect(error?.message.contains("inside read") == true)
            let cached = #expect(throws: StrongroomError.self, "\(sql), cached") { try queue.read { db in try db.cachedStatement(sql: sql).execute() } }
            #expect(cached?.code == .readOnly)
        }
        // A statement prepared in a write, run again in a read.
        try queue.write { db in try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").execute(1) }
        #expect(throws: StrongroomError.self) { try queue.read { db in try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").execute(2) } }
        try queue.write { db in try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").execute(3) }
        #expect(try queue.read { try $0.fetchAll(Int.self, sql: "SELECT x FROM t ORDER BY x") } == [1, 3])
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "PRAGMA user_version") } == 0)
    }
}
