import Strongroom
import StrongroomTestSupport
import Testing

@Suite("Transactions and savepoints")
struct TransactionTests {
    struct Boom: Error {}
    let db: Connection

    init() throws {
        db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x INTEGER)")
    }

    func count() throws -> Int { try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") ?? -1 }

    @Test(arguments: [Connection.TransactionKind.deferred, .immediate, .exclusive])
    func commitsOrRollsBack(kind: Connection.TransactionKind) throws {
        try db.inTransaction(kind) { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(try count() == 1)
        #expect(throws: Boom.self) {
            try db.inTransaction(kind) { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(try count() == 1)
        #expect(!db.isInsideTransaction)
    }

    @Test func failedCommitLeavesNoTransactionOpen() throws {
        try db.execute(sql: "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(p REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        let error = #expect(throws: StrongroomError.self) {
            try db.inTransaction { db in try db.execute(sql: "INSERT INTO child VALUES (42)") }
        }
        #expect(error?.code == .foreignKeyConstraint)
        #expect(!db.isInsideTransaction)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM child") == 0)
    }

    @Test func savepointsNestAndRollBackAlone() throws {
        try db.inTransaction { db in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            _ = try? db.inSavepoint { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                try db.inSavepoint { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
                throw Boom()
            }
            try db.inSavepoint { db in try db.execute(sql: "INSERT INTO t VALUES (4)") }
        }
        #expect(try db.fetchAll(Int.self, sql: "SELECT x FROM t ORDER BY x") == [1, 4])
        #expect(!db.isInsideTransaction)
    }

    @Test func savepointOutsideTransactionOpensAndCloses() throws {
        #expect(throws: Boom.self) {
            try db.inSavepoint { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(!db.isInsideTransaction)
        #expect(try count() == 0)
    }

    @Test func nestedTransactionIsMisuse() throws {
        let error = #expect(throws: StrongroomError.self) {
            try db.inTransaction { db in try db.inTransaction { _ in } }
        }
        #expect(error?.code == .misuse)
        #expect(!db.isInsideTransaction)
    }
}
