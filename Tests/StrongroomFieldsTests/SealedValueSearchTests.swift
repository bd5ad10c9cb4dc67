import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// What `SealedValueSearch.findings(in:)` reports: each column holding
/// values shaped as envelopes, blind indexes or row signatures, counted per
/// kind and key id, among whatever else the column holds. (The search reads
/// a table once for all its columns, then counts only where a value passed;
/// these figures pin that nothing it counted before is missed.)
@Suite("Sealed columns: finding sealed values in the data")
struct SealedValueSearchTests {
    let dir = TemporaryDirectory()

    /// A GCM envelope (version 1, algorithm 1) under key 7; a SIV envelope
    /// (algorithm 2) under key 9, stored as TEXT; a blind index under key 5;
    /// a row signature under key 4.
    static let gcm = "x'010100000007\(String(repeating: "ab", count: 29))'"
    static let sivAsText = "CAST(x'010200000009\(String(repeating: "41", count: 17))' AS TEXT)"
    static let blindIndex = "x'00000005\(String(repeating: "cd", count: 16))'"
    static let signature = "x'010300000004\(String(repeating: "ef", count: 32))'"

    @Test func everyShapeIsCountedAmongOtherValuesAndPlainColumnsAreNotReported() throws {
        let db = try Connection(path: dir.file("search.db"), configuration: Configuration(key: .generate()))
        try db.execute(sql: """
            CREATE TABLE mixed(id INTEGER PRIMARY KEY, anything, plain TEXT, n INTEGER);
            INSERT INTO mixed(anything, plain, n) VALUES
                (\(Self.gcm), 'ada', 1), (\(Self.sivAsText), 'bob', 2), (\(Self.blindIndex), x'0102', 3),
                (\(Self.signature), 'cy', 4.5), ('plain text', NULL, NULL), (42, 'dee', 6), (NULL, CAST(x'02' AS TEXT), 7), (x'01', 'e', 8);
            CREATE TABLE sealed(id INTEGER PRIMARY KEY, secret);
            INSERT INTO sealed(secret) VALUES (\(Self.gcm)), (\(Self.gcm)), (NULL);
            CREATE TABLE "odd "" name"("a column", "b");
            INSERT INTO "odd "" name"("a column", b) VALUES (\(Self.sivAsText), 1);
            CREATE TABLE empty(x);
            """)
        let findings = try SealedValueSearch.findings(in: db).sorted { ($0.table, $0.column) < ($1.table, $1.column) }
        #expect(findings.map { "\($0.table).\($0.column)" } == ["mixed.anything", "odd \" name.a column", "sealed.secret"])
        let mixed = try #require(findings.first)
        #expect(mixed.randomizedByKeyID == [7: 1] && mixed.deterministicByKeyID == [9: 1] && mixed.blindIndexesByKeyID == [5: 1]
                && mixed.rowSignaturesByKeyID == [4: 1])
        // 'plain text', 42 and a one-byte BLOB that starts like an envelope.
        #expect(mixed.otherValues == 3 && mixed.mode == nil, "\(findings)")
        #expect(findings[1].deterministicByKeyID == [9: 1] && findings[1].otherValues == 0 && findings[1].mode == .deterministic)
        #expect(findings[2].randomizedByKeyID == [7: 2] && findings[2].otherValues == 0 && findings[2].mode == .randomized)
    }
}

/// `sealedColumns(in:)` reads a table only until each column has a value
/// that cannot be an envelope (issue 51): it must still name exactly the
/// columns the full count gives a mode, whatever row the telling value is in.
@Suite("Sealed columns: the columns found sealed by their envelopes")
struct SealedColumnsByEnvelopeTests {
    let dir = TemporaryDirectory()

    @Test func theColumnsWithAModeAreFoundWhereverTheTellingValueIs() throws {
        let db = try Connection(path: dir.file("only.db"), configuration: Configuration(key: .generate()))
        let gcm = SealedValueSearchTests.gcm, siv = SealedValueSearchTests.sivAsText
        try db.execute(sql: """
            CREATE TABLE t(id INTEGER PRIMARY KEY, sealed, late_plain, late_null_sealed, late_index, one_byte, text_sealed, plain, never);
            CREATE TABLE wide(a, b);
            """)
        // 40 rows: every column but `plain` looks sealed until row 40.
        for row in 1...40 {
            let last = row == 40
            try db.execute(sql: """
                INSERT INTO t(sealed, late_plain, late_null_sealed, late_index, one_byte, text_sealed, plain, never) VALUES
                (\(gcm), \(last ? "'plain at last'" : gcm), \(row < 30 ? "NULL" : gcm), \(last ? SealedValueSearchTests.blindIndex : gcm),
                 \(last ? "x'01'" : gcm), \(siv), 'plain', NULL)
                """)
        }
        try db.execute(sql: "INSERT INTO wide VALUES (1, \(gcm)), (NULL, \(gcm)), ('x', 42)")
        let expected = try SealedValueSearch.findings(in: db).filter { $0.mode != nil }.map { "\($0.table).\($0.column)" }.sorted()
        let found = try SealedValueSearch.sealedColumns(in: db).map { "\($0.table).\($0.column):\($0.mode)" }.sorted()
        #expect(expected == ["t.late_null_sealed", "t.sealed", "t.text_sealed"])
        #expect(found == ["t.late_null_sealed:randomized", "t.sealed:randomized", "t.text_sealed:deterministic"], "\(found)")
    }
}

/// The adversary holds the database key and rewrites the schema: an index
/// whose `sqlite_master` row names other columns or another expression than
/// it was built on holds stale values, and a query SQLite answers from it
/// (a covering index, or an index on the very expression an aggregate
/// reads) sees those, not the table's (issue 51's review: the one read per
/// table, a `max()` over one column, was answered from such an index on
/// SQLCipher 4.6.1, and found no envelope where two were).
@Suite("Sealed columns: finding sealed values past a lying index")
struct SealedValueSearchIndexTests {
    let dir = TemporaryDirectory()

    /// What the search tests each value of a column with, `first` the byte an envelope starts with.
    static func shapeTest(_ column: String, first: String = "01") -> String {
        """
        CASE typeof("\(column)") WHEN 'blob' THEN length("\(column)") = 20 OR substr("\(column)", 1, 1) = x'\(first)' \
        WHEN 'text' THEN substr(CAST("\(column)" AS BLOB), 1, 1) = x'\(first)' END
        """
    }

    @Test func anIndexWhoseSchemaRowLiesHidesNoSealedValue() throws {
        let path = dir.file("lying-index.db")
        let key = DatabaseKey.generate()
        let adversary = try Connection(path: path, configuration: Configuration(key: key))
        try adversary.execute(sql: """
            CREATE TABLE alone(secret);
            INSERT INTO alone VALUES (\(SealedValueSearchTests.gcm)), (\(SealedValueSearchTests.gcm));
            CREATE INDEX alone_shape ON alone(\(Self.shapeTest("secret", first: "99")));
            CREATE TABLE keyed(id INTEGER PRIMARY KEY, secret, decoy);
            INSERT INTO keyed(secret, decoy) VALUES (\(SealedValueSearchTests.gcm), 'plain'), (\(SealedValueSearchTests.gcm), 'plain');
            CREATE INDEX keyed_decoy ON keyed(decoy);
            CREATE TABLE pair(id INTEGER PRIMARY KEY, secret, decoy);
            INSERT INTO pair(secret, decoy) VALUES (\(SealedValueSearchTests.gcm), 'plain');
            CREATE INDEX pair_decoy ON pair(decoy, id);
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE INDEX alone_shape ON alone(\(Self.shapeTest("secret").replacingOccurrences(of: "'", with: "''")))' WHERE name = 'alone_shape';
            UPDATE sqlite_master SET sql = 'CREATE INDEX keyed_decoy ON keyed(secret)' WHERE name = 'keyed_decoy';
            UPDATE sqlite_master SET sql = 'CREATE INDEX pair_decoy ON pair(secret, decoy)' WHERE name = 'pair_decoy';
            PRAGMA writable_schema = OFF;
            """)
        adversary.close()
        let db = try Connection(path: path, configuration: Configuration(key: key))
        let found = try SealedValueSearch.findings(in: db)
        for table in ["alone", "keyed", "pair"] {
            let finding = found.first { $0.table == table && $0.column == "secret" }
            #expect(finding?.randomizedByKeyID == [7: table == "pair" ? 1 : 2], "\(table): \(found.filter { $0.column == "secret" })")
        }
    }
}

/// A column the adversary turned into a generated one by rewriting the
/// table's `CREATE TABLE` (`secret AS (NULL) STORED`): its stored values
/// still read back, and `PRAGMA table_info` leaves it out (issue 51's
/// review: the search, which listed columns with it, missed the envelopes;
/// `table_xinfo` lists it).
@Suite("Sealed columns: finding sealed values in a column rewritten as generated")
struct SealedValueSearchGeneratedColumnTests {
    let dir = TemporaryDirectory()

    @Test func aColumnRewrittenAsGeneratedIsStillSearched() throws {
        let path = dir.file("generated.db")
        let key = DatabaseKey.generate()
        let adversary = try Connection(path: path, configuration: Configuration(key: key))
        let version = try adversary.fetchOne(String.self, sql: "SELECT sqlite_version()") ?? ""
        try adversary.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, secret);
            INSERT INTO customer(secret) VALUES (\(SealedValueSearchTests.gcm)), (\(SealedValueSearchTests.gcm));
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE TABLE customer(id INTEGER PRIMARY KEY, secret AS (NULL) STORED)' WHERE name = 'customer';
            PRAGMA writable_schema = OFF;
            """)
        adversary.close()
        // Generated columns came with SQLite 3.31; an older one cannot load the rewritten schema at all.
        if version.split(separator: ".").compactMap({ Int($0) }).lexicographicallyPrecedes([3, 31]) {
            #expect(throws: StrongroomError.self) {
                let db = try Connection(path: path, configuration: Configuration(key: key))
                _ = try SealedValueSearch.findings(in: db)
            }
            return
        }
        let db = try Connection(path: path, configuration: Configuration(key: key))
        #expect(try db.fetchAll(Data?.self, sql: "SELECT secret FROM customer").compactMap { $0 }.count == 2, "the stored values still read back")
        let found = try SealedValueSearch.findings(in: db)
        #expect(found.first { $0.table == "customer" && $0.column == "secret" }?.randomizedByKeyID == [7: 2], "\(found)")
    }
}
