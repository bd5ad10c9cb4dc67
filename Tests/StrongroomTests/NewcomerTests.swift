import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// The walls a newcomer from FMDB or the sqlite3 C API met (issue 9), each
/// as they met it.
@Suite("Coming from FMDB and sqlite3")
struct NewcomerTests {
    /// `fetchOne(String.self, …)` threw on a NULL value: a single value that is
    /// NULL reads as nil, like no row at all (as in GRDB).
    @Test func aNullScalarReadsAsNil() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE movie(id INTEGER PRIMARY KEY, title TEXT, year INTEGER); INSERT INTO movie(title) VALUES (NULL)")
        #expect(try db.fetchOne(String.self, sql: "SELECT title FROM movie") == nil)
        #expect(try db.fetchOne(Int.self, sql: "SELECT year FROM movie") == nil)
        #expect(try db.fetchOne(Int.self, sql: "SELECT max(year) FROM movie WHERE 0") == nil)
        #expect(try db.fetchOne(String.self, sql: "SELECT title FROM movie WHERE 0") == nil)
    }
}
