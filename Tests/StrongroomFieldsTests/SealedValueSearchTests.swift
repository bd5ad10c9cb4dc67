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
