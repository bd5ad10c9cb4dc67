import Foundation
import Strongroom
@testable import StrongroomMigrations
import Testing

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found, each kept as the
/// test of its fix.
@Suite("Fuzz regressions: schemas")
struct FuzzRegressionTests {
    /// FuzzDDLParser: DatabaseSchema.read on a connection that had read the
    /// schema of a table of the same name without a foreign key failed
    /// ("Row has no column named id; it has ."): its cached PRAGMA had no
    /// columns. (The cause, in Strongroom's statements, has its own test.)
    @Test func aSchemaReadAgainAfterATableGainedAForeignKeyHasTheKey() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t2(id INTEGER PRIMARY KEY); CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY)")
        #expect(try DatabaseSchema.read(from: db).table("t1")?.foreignKeys.isEmpty == true)
        try db.execute(sql: "DROP TABLE t1")
        try db.execute(sql: "CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY, c BLOB, FOREIGN KEY (b) REFERENCES t2);")
        let keys = try #require(try DatabaseSchema.read(from: db).table("t1")?.foreignKeys)
        #expect(keys.map(\.table) == ["t2"] && keys.map(\.columns) == [["b"]])
    }
}
