import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport
import Testing

@Suite("Checksums and verify")
struct ChecksumTests {
    let f = MigrationFixture()
    static let original = """
        -- Customers
        CREATE TABLE customer(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL DEFAULT 'a  b'
        );
        INSERT INTO customer(name) VALUES ('x');
        """

    func checksum(_ sql: String) -> String {
        Migration(version: 1, description: "t", sql: sql).checksum
    }

    @Test(arguments: [
        ("CRLF line endings", original.replacingOccurrences(of: "\n", with: "\r\n")),
        ("trailing whitespace", original.split(separator: "\n").map { $0 + "   \t" }.joined(separator: "\n")),
        ("comment edited", original.replacingOccurrences(of: "-- Customers", with: "-- All our customers, see ticket 42")),
        ("comment added", original + "\n/* reviewed */\n-- done\n"),
        ("indentation", original.replacingOccurrences(of: "    ", with: "\t")),
    ])
    func cosmeticEditsKeepTheChecksum(name: String, edited: String) {
        #expect(checksum(edited) == checksum(Self.original), "\(name)")
    }

    @Test(arguments: [
        ("changed literal", original.replacingOccurrences(of: "'x'", with: "'y'")),
        ("whitespace inside a literal", original.replacingOccurrences(of: "'a  b'", with: "'a b'")),
        ("changed type", original.replacingOccurrences(of: "name TEXT", with: "name BLOB")),
        ("extra statement", original + "\nDELETE FROM customer;"),
        ("directive", "-- strongroom: no-transaction\n" + original),
    ])
    func changesToWhatRunsChangeTheChecksum(name: String, edited: String) {
        #expect(checksum(edited) != checksum(Self.original), "\(name)")
    }

    @Test func editedAppliedMigrationIsReportedAndBlocksMigrate() throws {
        f.write("0001_customer.sql", Self.original)
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0001_customer.sql", Self.original.replacingOccurrences(of: "\n", with: "\r\n") + "\n-- cosmetic\n")
        #expect(try f.migrator().verify(db).isClean)

        f.write("0001_customer.sql", Self.original.replacingOccurrences(of: "'x'", with: "'y'"))
        let report = try f.migrator().verify(db)
        #expect(report.findings.map(\.code) == [.changedAfterApplied])
        #expect(report.findings.first?.file == "0001_customer.sql")
        f.write("0002_more.sql", "CREATE TABLE more(x);")
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .checksumMismatch)
        #expect(try f.migrator().currentVersion(db) == 1)
    }

    @Test func handMadeSchemaChangeIsDrift() throws {
        f.write("0001_customer.sql", Self.original)
        let db = try f.open()
        try f.migrator().migrate(db)
        #expect(try f.migrator().verify(db).isClean)
        try db.execute(sql: "CREATE INDEX customer_name ON customer(name)")
        try db.execute(sql: "CREATE TABLE scratch(x)")
        let findings = try f.migrator().verify(db).findings
        #expect(findings.count == 2)
        #expect(findings.allSatisfy { $0.code == .schemaDrift })
        #expect(findings.contains { $0.message.contains("index customer_name") })
        #expect(findings.contains { $0.message.contains("table scratch") })
    }

    @Test func pendingAndUnknownVersionsAreReported() throws {
        f.write("0001_customer.sql", Self.original)
        f.write("0002_order.sql", "CREATE TABLE orders(id INTEGER PRIMARY KEY);")
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0003_pending.sql", "CREATE TABLE later(x);")
        #expect(try f.migrator().verify(db).findings.map(\.code) == [.pending])
        f.remove("0002_order.sql")
        f.remove("0003_pending.sql")
        let report = try f.migrator().verify(db)
        #expect(report.findings.map(\.code).contains(.unknownApplied))
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .databaseNewer)
    }

    @Test func integrityProblemsAreFindings() throws {
        f.write("0001_tables.sql", """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
            """)
        let db = try f.open()
        try f.migrator().migrate(db)
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.execute(sql: "INSERT INTO child VALUES (1, 99)")
        let findings = try f.migrator().verify(db).findings
        #expect(findings.map(\.code) == [.foreignKey])
    }

    @Test func baselineAdoptsAnExistingDatabase() throws {
        f.write("0001_customer.sql", Self.original)
        f.write("0002_email.sql", "ALTER TABLE customer ADD COLUMN email TEXT;")
        let db = try f.open()
        try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'a  b'); INSERT INTO customer(name) VALUES ('legacy')")
        try f.migrator().baseline(db, version: 1)
        #expect(try f.migrator().appliedMigrations(db).map(\.kind) == ["baseline"])
        let report = try f.migrator().migrate(db)
        #expect(report.applied.map(\.version) == [2])
        #expect(try f.count(db, "customer") == 1) // 0001 did not run again
        #expect(try f.migrator().verify(db).isClean)
        #expect(throws: MigrationError.self) { try f.migrator().baseline(db, version: 2) }
    }
}
