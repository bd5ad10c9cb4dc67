import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// The table digests that verify an import or export (issue 7, item 16):
/// one pass, constant memory, the same whatever the row order, and the same
/// when computed by several connections at once.
@Suite("Table digests")
struct TableDigestTests {
    let dir = TemporaryDirectory()

    func database(_ name: String, key: DatabaseKey, _ sql: String) throws -> String {
        let path = dir.file(name)
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: sql)
        db.close()
        return path
    }

    @Test func theRowOrderDoesNotMatterButEveryValueAndTypeDoes() throws {
        let key = DatabaseKey.generate()
        func digest(_ sql: String) throws -> TableDigest {
            let db = try Connection.inMemory(configuration: Configuration(key: key))
            try db.execute(sql: "CREATE TABLE t(a, b)")
            try db.execute(sql: sql)
            return try #require(try db.tableDigests().first)
        }
        let forward = try digest("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL)")
        let backward = try digest("INSERT INTO t VALUES (3, NULL), (2, 'y'), (1, 'x')")
        #expect(forward == backward)
        #expect(forward.rowCount == 3)
        for changed in [
            "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, '')",        // NULL vs empty text
            "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, x'')",       // NULL vs empty blob
            "INSERT INTO t VALUES ('1', 'x'), (2, 'y'), (3, NULL)",    // text vs integer
            "INSERT INTO t VALUES (1.0, 'x'), (2, 'y'), (3, NULL)",    // real vs integer
            "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL), (3, NULL)", // a duplicate row
            "INSERT INTO t VALUES (1, 'y'), (2, 'x'), (3, NULL)",      // values swapped between rows
            "INSERT INTO t VALUES (1, 'xy'), (2, ''), (3, NULL)",      // bytes moved between values
        ] {
            #expect(try digest(changed) != forward, "\(changed)")
        }
    }

    /// Several connections, each hashing a range of rowids, add up to what
    /// one connection computes: rowid tables with gaps and negative rowids, a
    /// column that hides `rowid`, a WITHOUT ROWID table, an empty table, and
    /// values long enough to bypass the scratch buffer.
    @Test(arguments: [1, 2, 3, 7])
    func partsAddUpToTheWhole(workers: Int) throws {
        let key = DatabaseKey.generate()
        let path = try database("parts.db", key: key, """
            CREATE TABLE plain(id INTEGER PRIMARY KEY, body TEXT, data BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
              INSERT INTO plain SELECT i * 3 - 7000, 'row ' || i, CASE WHEN i % 100 = 0 THEN randomblob(5000) END FROM n;
            CREATE TABLE hiding(rowid TEXT, oid TEXT, v);
            INSERT INTO hiding VALUES ('a', 'b', 1), ('c', 'd', 2);
            CREATE TABLE partly(rowid TEXT, v);
            INSERT INTO partly VALUES ('x', 1), (NULL, 2), ('z', 3);
            CREATE TABLE keyed(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO keyed VALUES ('k1', 1), ('k2', 2.5);
            CREATE TABLE empty(x);
            CREATE TABLE one(x); INSERT INTO one VALUES (9223372036854775807);
            """)
        let whole = try Connection(path: path, configuration: Configuration(key: key)).tableDigests()
        let parts = try ParallelDigest.digests(ofDatabaseAt: path, configuration: Configuration(key: key), workers: workers) { _ in }
        #expect(parts == whole)
        #expect(whole.map(\.rowCount) == [0, 2, 2, 1, 3, 5000])
    }
}
