import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Swift functions called from SQL (on Linux: SQLite.swift's registration
/// crashes there; this one must not).
@Suite("SQL functions")
struct FunctionTests {
    let dir = TemporaryDirectory()

    @Test func everyTypeGoesInAndComesOut() throws {
        let db = try Connection.inMemory()
        let echo = DatabaseFunction("echo", argumentCount: 1, pure: true) { $0[0] }
        try db.add(function: echo)
        #expect(try db.fetchOne(Int.self, sql: "SELECT echo(42)") == 42)
        #expect(try db.fetchOne(Double.self, sql: "SELECT echo(2.5)") == 2.5)
        #expect(try db.fetchOne(String.self, sql: "SELECT echo('Zoë 東京')") == "Zoë 東京")
        #expect(try db.fetchOne(String.self, sql: "SELECT typeof(echo(x''))") == "blob", "an empty blob stays a blob, not NULL")
        #expect(try db.fetchOne(String.self, sql: "SELECT typeof(echo(''))") == "text")
        #expect(try db.fetchOne(String.self, sql: "SELECT typeof(echo(NULL))") == "null")
        #expect(try db.fetchOne(String.self, sql: "SELECT hex(echo(x'00ff10'))") == "00FF10")
        try db.remove(function: echo)
        #expect(throws: StrongroomError.self) { try db.fetchOne(Int.self, sql: "SELECT echo(1)") }
    }

    @Test func anyNumberOfArgumentsAndErrorsFailTheStatement() throws {
        let db = try Connection.inMemory()
        struct Refusal: Error, CustomStringConvertible { var description: String { "refused: odd count" } }
        try db.add(function: DatabaseFunction("count_args") { arguments in
            if arguments.count % 2 == 1 { throw Refusal() }
            return .integer(Int64(arguments.count))
        })
        #expect(try db.fetchOne(Int.self, sql: "SELECT count_args(1, 'a', NULL, x'01')") == 4)
        let error = #expect(throws: StrongroomError.self) { try db.fetchOne(Int.self, sql: "SELECT count_args(1)") }
        #expect(error?.message.contains("refused: odd count") == true)
    }

    /// Added through the configuration, a function is on every connection:
    /// a queue's, a pool's writer and its readers on other threads.
    @Test func configurationAddsFunctionsToEveryConnectionOfAPool() async throws {
        var config = Configuration(key: .generate())
        config.prepareConnection { db throws(StrongroomError) in
            try db.add(function: DatabaseFunction("twice", argumentCount: 1, pure: true) { arguments in
                guard case .integer(let n) = arguments[0] else { return .null }
                return .integer(n * 2)
            })
        }
        let pool = try DatabasePool(path: dir.file("f.db"), configuration: config)
        try await pool.asyncWrite { try $0.execute(sql: "CREATE TABLE t(n INTEGER); INSERT INTO t VALUES (1), (2), (3)") }
        #expect(try await pool.asyncWrite { try $0.fetchOne(Int.self, sql: "SELECT sum(twice(n)) FROM t") } == 12)
        try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<8 {
                group.addTask { try await pool.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT sum(twice(n)) FROM t") } }
            }
            for try await sum in group { #expect(sum == 12) }
        }
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: config)
        #expect(try await queue.asyncRead { try $0.fetchOne(Int.self, sql: "SELECT twice(21)") } == 42)
    }
}
