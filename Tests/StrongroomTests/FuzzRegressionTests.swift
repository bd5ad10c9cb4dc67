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

    /// FuzzRowDecoder: INTEGER 9223372036854775807 reads as a Date (seconds
    /// since 1970, as documented), and writing that Date back trapped
    /// ("Double value cannot be converted to Int64"): its text has no year
    /// for it. A date the text cannot hold is stored as REAL seconds.
    @Test func aDateTheTextCannotHoldIsStoredAsRealSecondsNotATrap() throws {
        let db = try Connection.inMemory()
        let far = try #require(try db.fetchOne(Date.self, sql: "SELECT ?", arguments: [Int64.max]))
        #expect(far.databaseValue == .real(far.timeIntervalSince1970))
        try db.execute(sql: "CREATE TABLE t(d)")
        for date in [far, Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e18),
                     Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: -62_167_219_201)] {
            try db.execute(sql: "DELETE FROM t")
            try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [date])
            #expect(try db.fetchOne(Date.self, sql: "SELECT d FROM t") == date)
        }
        // (Review) In a column with a type, SQLite converts the REAL: a TEXT
        // column keeps its text ("300000000000.0"), a DATETIME (NUMERIC)
        // column an INTEGER. Both read back as the date.
        try db.execute(sql: "CREATE TABLE typed(t TEXT, n DATETIME)")
        for date in [Date(timeIntervalSince1970: 300_000_000_000), Date(timeIntervalSince1970: 1e300),
                     Date(timeIntervalSince1970: -1e18), Date(timeIntervalSince1970: -62_167_219_201.5)] {
            try db.execute(sql: "DELETE FROM typed")
            try db.execute(sql: "INSERT INTO typed VALUES (?, ?)", arguments: [date, date])
            #expect(try db.fetchOne(Date.self, sql: "SELECT t FROM typed") == date)
            #expect(try db.fetchOne(Date.self, sql: "SELECT n FROM typed") == date)
        }
        // Other number text is not a date.
        #expect(Date.fromDatabaseValue(.text("1700000000")) == nil)
        #expect(Date.fromDatabaseValue(.text("1e300x")) == nil)
        // Nor hexadecimal text, which SQLite does not read as a number (review).
        for text in ["0x1p40", "0X1P1000", "-0x1p40", "0x10000000000", "inf", "nan", " 1e300", "+1e300"] {
            #expect(Date.fromDatabaseValue(.text(text)) == nil, "\(text)")
        }
        // Within the years 0000 to 9999, the text as before.
        #expect(Date(timeIntervalSince1970: 0).databaseValue == .text("1970-01-01 00:00:00.000"))
        #expect(Date(timeIntervalSince1970: 253_402_300_799.5).databaseValue == .text("9999-12-31 23:59:59.500"))
        #expect(Date(timeIntervalSince1970: -62_167_219_200).databaseValue == .text("0000-01-01 00:00:00.000"))
    }

    /// (Review) `execute(sql:)` skipped Swift's whitespace (a vertical tab,
    /// U+00A0) before each statement, and so ran text SQLite refuses
    /// ("unrecognized token"): it skips only SQLite's whitespace and `;`.
    @Test func executeSkipsOnlySQLiteWhitespaceBetweenStatements() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x);; \n\t\r\u{0C};INSERT INTO t VALUES (1);\n")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1)
        for sql in ["\u{0B}INSERT INTO t VALUES (2)", "\u{A0}INSERT INTO t VALUES (2)", "SELECT 1;\u{0B}INSERT INTO t VALUES (2)",
                    "SELECT 1;\u{2003}INSERT INTO t VALUES (2)"] {
            #expect(throws: StrongroomError.self, "\(sql.debugDescription)") { try db.execute(sql: sql) }
        }
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1)
    }

    /// FuzzMigrationFile: a vertical tab (U+000B) after a `;`. SQLite's
    /// `sqlite3_complete`, which the split follows, takes it for no
    /// whitespace, and so no `CREATE TRIGGER` after it: the script split
    /// inside the trigger body. The split then trimmed the tab as Swift's
    /// whitespace, and handed SQLite a statement it would have ended
    /// elsewhere (an incomplete trigger). Only SQLite's whitespace is trimmed.
    @Test func aStatementKeepsWhatSQLiteDoesNotTakeForWhitespace() throws {
        let fuzzed = String(decoding: try #require(Data(base64Encoded: """
            dHJpZy1kcm9wLWNvbC11c2VkLWFzLW5ldwotLSBzb3VyY2U6IHNxbGl0ZSBhbHRlcmRyb3Bjb2wyLnRlc3QgMi44LjEKLS0gbmF0
            aXZlOiBlcnJvcjogZXJyb3IgaW4gdHJpZ2dlciB0cjEgYWZ0ZXIgZHJvcCBjb2x1bW46IG5vdSBzdWNoIGNvbHVtbjogbmV3LncK
            LS0gc2V0dXAKQ1JFQVRFIFRBQkxFIGxvZyhsKTsKQ1JFQVRFIFRBQkxFIGMxKHUsIHYsIHcpOwtDUkVBVEUgVFJJR0dFUiB0cjEg
            QUZURVIgSU5TRVJUIE9OIGMxIEJFR0lOCiAgSU5TRVJUIElOVE8gbG9nIFZBTFVFUyAobmV3LncpOwpFTkQ7CklOU0VSVCBJTlRP
            IGMxIFZBTFVFUyAoMSwgMiwgMyksICg0LCA1LCA2KSwgKDcsIDgsIDkpOwpERUxFVEUgRlJPTSBjMSBXSEVSRSB1ID0gNDsKLS0g
            YWx0ZXIKQUxURVIgVEFCTEUgYzEgRFJPUCB3OwotLSB0aGVuClNFTEVDVCByb3dpZCwgKiBGUk9NIGxvZzsK
            """.replacingOccurrences(of: "\n", with: ""))), as: UTF8.self)
        let statements = SQLScript.statements(in: fuzzed)
        #expect(statements.contains("\u{0B}CREATE TRIGGER tr1 AFTER INSERT ON c1 BEGIN\n  INSERT INTO log VALUES (new.w);"))
        #expect(SQLScript.statements(in: "SELECT 1;\u{0B}CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END;")
            == ["SELECT 1;", "\u{0B}CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;", "END;"])
        #expect(SQLScript.statements(in: "SELECT 1;\u{A0}SELECT 2;") == ["SELECT 1;", "\u{A0}SELECT 2;"])
        // SQLite's whitespace is trimmed as before.
        #expect(SQLScript.statements(in: " \t\r\nSELECT 1; \u{0C}\r\n\tSELECT 2 \n") == ["SELECT 1;", "SELECT 2"])
    }
}
