import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Issue 26: a database migrated on SQLite 3.15 (where a dropped column is a
/// rebuild, and SQLite's RENAME writes the table's name as "Customer") and
/// verified on SQLite 3.46 (where the replay drops the column natively and
/// keeps [Customer] as written) was reported as drifted. The quoting of an
/// object's own name is not drift; anything else still is.
@Suite("verify across engines: how a name is quoted is not drift")
struct DriftAcrossEnginesTests {
    let f = MigrationFixture()

    @Test func aRenameThatRequotesTheTableNameIsNotDrift() throws {
        f.write("0001_customer.sql", "CREATE TABLE [Customer]([CustomerId] INTEGER PRIMARY KEY, [Fax] TEXT);\nCREATE INDEX [Customer_Fax] ON [Customer]([Fax]);")
        let db = try f.open()
        try f.migrator().migrate(db)
        // What a rebuild on SQLite 3.15 leaves: the name re-quoted by RENAME.
        try db.execute(sql: "ALTER TABLE [Customer] RENAME TO Customer_old; ALTER TABLE Customer_old RENAME TO Customer")
        let sql = try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'Customer'")
        #expect(sql?.hasPrefix("CREATE TABLE \"Customer\"") == true || sql?.hasPrefix("CREATE TABLE Customer") == true, "\(sql ?? "")")
        let report = try f.migrator().verify(db)
        #expect(report.isClean, "\(report.findings.map(\.message))")
        // A real difference is still drift.
        try db.execute(sql: "ALTER TABLE Customer ADD COLUMN extra TEXT")
        #expect(try f.migrator().verify(db).findings.map(\.code) == [.schemaDrift])
    }

    /// Names SQLite keeps apart are apart in verify (review of e044ead):
    /// `Kept` and `\u{212A}ept` (KELVIN SIGN) lowercased to one key and
    /// compared equal as Swift strings, so a table added beside the
    /// migrations' own, and a trigger pointed at it, were no drift; and
    /// `é` written as one scalar or as e and a combining accent.
    @Test func namesThatDifferOnlyOutsideASCIIAreDifferentObjects() throws {
        f.write("0001_notes.sql", """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE Kept(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE caf\u{E9}(id INTEGER PRIMARY KEY);
            """)
        let db = try f.open()
        try f.migrator().migrate(db)
        #expect(try f.migrator().verify(db).isClean)
        try db.execute(sql: "CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY, body TEXT)")
        #expect(try f.migrator().verify(db).findings.map(\.code) == [.schemaDrift])
        try db.execute(sql: "DROP TABLE \u{212A}ept; CREATE TABLE cafe\u{301}(id INTEGER PRIMARY KEY)")
        #expect(try f.migrator().verify(db).findings.map(\.code) == [.schemaDrift])
    }

    /// Review of issue 26: a quoted word that SQLite reads as a string ("NULL",
    /// "CURRENT_TIMESTAMP") changes what a CHECK or DEFAULT does; it must not
    /// compare equal to the keyword.
    @Test func aQuotedKeywordInAConstraintIsDrift() throws {
        f.write("0001_account.sql", "CREATE TABLE account(id INTEGER PRIMARY KEY, role TEXT CHECK (role IS NOT NULL), made TEXT DEFAULT CURRENT_TIMESTAMP);")
        let db = try f.open()
        try f.migrator().migrate(db)
        try db.execute(sql: """
            CREATE TABLE account_new(id INTEGER PRIMARY KEY, role TEXT CHECK (role IS NOT "NULL"), made TEXT DEFAULT "CURRENT_TIMESTAMP");
            DROP TABLE account;
            ALTER TABLE account_new RENAME TO account;
            INSERT INTO account(id, role) VALUES (1, NULL);
            """)
        #expect(try db.fetchOne(String.self, sql: "SELECT made FROM account") == "CURRENT_TIMESTAMP")
        #expect(try f.migrator().verify(db).findings.map(\.code) == [.schemaDrift])
    }
}
