import Foundation
import Strongroom
import Testing

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found, each kept as the
/// test of its fix.
@Suite("Fuzz regressions: connections and rows")
struct FuzzRegressionTests {
    /// FuzzDDLParser: SQLite 3.15 gives a PRAGMA its columns as it compiles
    /// it, and none when there is nothing to report. A cached
    /// `PRAGMA foreign_key_list(t1)`, prepared while t1 had no foreign key,
    /// kept "no column" after the table was made again with one and SQLite
    /// re-prepared the statement: every row read as empty ("Row has no
    /// column named id; it has ."), and DatabaseSchema.read failed.
    @Test func aStatementPreparedWithoutColumnsReadsTheColumnsItHasAfterARePrepare() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY)")
        #expect(try db.fetchAll(sql: "PRAGMA foreign_key_list(t1)").isEmpty)
        try db.execute(sql: "DROP TABLE t1")
        try db.execute(sql: "CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY, c BLOB, FOREIGN KEY (b) REFERENCES t2);")
        let keys = try db.fetchAll(sql: "PRAGMA foreign_key_list(t1)")
        #expect(keys.count == 1)
        #expect(try keys.first?.decode(String.self, column: "table") == "t2")
        #expect(try keys.first?.decode(String.self, column: "from") == "b")
        // Read in place too.
        var tables: [String] = []
        try db.cachedStatement(sql: "PRAGMA foreign_key_list(t1)").forEachRow { row in
            tables.append(try row.decode(String.self, column: "table"))
        }
        #expect(tables == ["t2"])
    }
}
