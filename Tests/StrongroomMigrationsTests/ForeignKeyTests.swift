import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Every migration runs with foreign keys off (switched off outside its
/// transaction) and `foreign_key_check` before it commits, as GRDB's migrator
/// does: a hand-written rebuild of a parent table keeps its children.
@Suite("Foreign keys during migrations")
struct ForeignKeyTests {
    let f = MigrationFixture()

    init() {
        f.write("0001_schema.sql", """
            CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);
            CREATE TABLE album(id INTEGER PRIMARY KEY, artist_id INTEGER NOT NULL REFERENCES artist(id) ON DELETE CASCADE, title TEXT);
            INSERT INTO artist(id, name, fax) VALUES (1, 'Nina', NULL), (2, 'Miles', '555');
            INSERT INTO album(artist_id, title) VALUES (1, 'Pastel Blues'), (1, 'Silk & Soul'), (2, 'Kind of Blue');
            """)
    }

    func albums(_ db: Connection) throws -> [String] {
        try db.fetchAll(String.self, sql: "SELECT artist_id || ':' || title FROM album ORDER BY id")
    }

    static let handWrittenRebuild = """
        CREATE TABLE new_artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        INSERT INTO new_artist(id, name) SELECT id, name FROM artist;
        DROP TABLE artist;
        ALTER TABLE new_artist RENAME TO artist;
        """

    @Test func handWrittenRebuildInASQLFileKeepsEveryChild() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let before = try albums(db)
        f.write("0002_rebuild_artist.sql", Self.handWrittenRebuild)
        try f.migrator().migrate(db)
        #expect(try albums(db) == before)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
        // The cascade works on the rebuilt parent.
        try db.execute(sql: "DELETE FROM artist WHERE id = 1")
        #expect(try albums(db) == ["2:Kind of Blue"])
    }

    @Test func sqlitesDocumentedTwelveStepsInAFileKeepEveryChild() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let before = try albums(db)
        // Written as lang_altertable.html says; its PRAGMA foreign_keys = OFF
        // is a no-op inside the migration's transaction.
        f.write("0002_twelve_steps.sql", "PRAGMA foreign_keys = OFF;\n" + Self.handWrittenRebuild + "PRAGMA foreign_key_check;\nPRAGMA foreign_keys = ON;\n")
        try f.migrator().migrate(db)
        #expect(try albums(db) == before)
    }

    @Test func handWrittenRebuildInASwiftMigrationKeepsEveryChild() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 2, description: "rebuild artist") { db in
            try db.execute(sql: Self.handWrittenRebuild)
        })
        let db = try f.open()
        try migrator.migrate(db)
        #expect(try albums(db).count == 3)
    }

    @Test func aTransientViolationIsFine() throws {
        f.write("0002_child_first.sql", """
            INSERT INTO album(artist_id, title) VALUES (3, 'A Love Supreme');
            INSERT INTO artist(id, name) VALUES (3, 'John');
            """)
        let db = try f.open()
        try f.migrator().migrate(db)
        #expect(try albums(db).last == "3:A Love Supreme")
    }

    @Test func aViolationLeftAtTheEndRollsBackNamingTheRows() throws {
        f.write("0002_orphan.sql", "INSERT INTO album(id, artist_id, title) VALUES (40, 9, 'Orphan');\nCREATE TABLE later(x);")
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation)
        #expect(error?.message.contains("album rowid 40 → artist") == true, "\(error?.message ?? "")")
        #expect(try f.migrator().currentVersion(db) == 1)
        #expect(try f.count(db, "album") == 3)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'later'") == 0)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
    }

    @Test func violationsThatWereThereBeforeStopTheRunBeforeAnythingRunsAndSaySo() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        // A legacy orphan, written with foreign keys off.
        try db.execute(sql: "PRAGMA foreign_keys = OFF; INSERT INTO album(id, artist_id, title) VALUES (50, 77, 'Legacy orphan'); PRAGMA foreign_keys = ON")
        f.write("0002_index.sql", "CREATE INDEX album_title ON album(title);")
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation)
        #expect(error?.version == nil, "not blamed on a migration")
        let message = error?.message ?? ""
        #expect(message.contains("already") && message.contains("album rowid 50") && message.contains("immediate-foreign-keys") && message.contains("Nothing was migrated"), "\(message)")
        #expect(try f.migrator().currentVersion(db) == 1)
        // The way through: immediate checks, where each statement is checked as it runs.
        f.write("0002_index.sql", "-- strongroom: immediate-foreign-keys\nCREATE INDEX album_title ON album(title);")
        #expect(try f.migrator().migrate(db).toVersion == 2)
        #expect(try f.migrator().verify(db).findings.contains { $0.code == .foreignKey })
    }

    @Test func aNewOrphanInAWithoutRowidChildIsCaught() throws {
        f.write("0002_tags.sql", "CREATE TABLE tag(artist_id INTEGER NOT NULL REFERENCES artist(id), name TEXT NOT NULL, PRIMARY KEY (artist_id, name)) WITHOUT ROWID;\nINSERT INTO tag VALUES (1, 'jazz');\n")
        f.write("0003_orphans.sql", "INSERT INTO tag VALUES (98, 'x'), (96, 'y');")
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation)
        #expect(error?.version == 3)
        #expect(try f.migrator().currentVersion(db) == 2)
    }

    @Test func aNoTransactionMigrationThatTurnsForeignKeysOffLeavesThemOnForTheNext() throws {
        f.write("0002_compact.sql", "-- strongroom: no-transaction\nPRAGMA foreign_keys = OFF;\nVACUUM;\n")
        f.write("0003_orphan.sql", "INSERT INTO album(id, artist_id, title) VALUES (60, 88, 'Orphan');")
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation && error?.version == 3, "\(String(describing: error))")
        #expect(try f.migrator().currentVersion(db) == 2)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
    }

    @Test func aNoTransactionMigrationThatBreaksAForeignKeyIsNamed() throws {
        f.write("0002_mismatch.sql", "-- strongroom: no-transaction\nCREATE TABLE p(code TEXT);\nCREATE TABLE c(pcode TEXT REFERENCES p(code));\n")
        f.write("0003_later.sql", "CREATE TABLE later(x);")
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation && error?.version == 2, "\(String(describing: error))")
        // Its statements took effect (no transaction), its history row was not written, and it says so.
        #expect(error?.message.contains("took effect") == true && error?.message.contains("was rolled back") == false, "\(error?.message ?? "")")
        #expect(try f.migrator().currentVersion(db) == 1)
    }

    @Test func aForeignKeyThatCannotBeCheckedIsReportedWithItsMigration() throws {
        // REFERENCES a column that is neither a key nor unique: SQLite calls it a mismatch.
        f.write("0002_mismatch.sql", "CREATE TABLE p(name TEXT);\nCREATE TABLE c(pname TEXT REFERENCES p(name));\nINSERT INTO c VALUES ('x');\n")
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation, "\(String(describing: error))")
        #expect(error?.version == 2)
        #expect(error?.message.contains("mismatch") == true && error?.message.contains("rolled back") == true, "\(error?.message ?? "")")
        #expect(try f.migrator().currentVersion(db) == 1)
        // A mismatch that was there before stops the run before anything runs, saying so.
        try db.execute(sql: "CREATE TABLE p(name TEXT); CREATE TABLE c(pname TEXT REFERENCES p(name))")
        f.write("0002_mismatch.sql", "CREATE TABLE unrelated(x);")
        let before = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(before?.code == .foreignKeyViolation && before?.version == nil)
        #expect(before?.message.contains("mismatch") == true && before?.message.contains("Nothing was migrated") == true, "\(before?.message ?? "")")
        f.write("0002_mismatch.sql", "-- strongroom: immediate-foreign-keys\nCREATE TABLE unrelated(x);")
        #expect(try f.migrator().migrate(db).toVersion == 2)
    }

    @Test func aSwiftMigrationMayOptIntoImmediateChecks() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 2, description: "strict", foreignKeyChecks: .immediate) { db in
            try db.execute(sql: "INSERT INTO album(artist_id, title) VALUES (3, 'A Love Supreme')")
            try db.execute(sql: "INSERT INTO artist(id, name) VALUES (3, 'John')")
        })
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.underlying?.code == .foreignKeyConstraint, "\(String(describing: error))")
        #expect(try migrator.currentVersion(db) == 1)
    }

    @Test func aSQLMigrationMayOptIntoImmediateChecks() throws {
        f.write("0002_strict.sql", """
            -- strongroom: immediate-foreign-keys
            INSERT INTO album(artist_id, title) VALUES (3, 'A Love Supreme');
            INSERT INTO artist(id, name) VALUES (3, 'John');
            """)
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.underlying?.code == .foreignKeyConstraint, "\(String(describing: error))")
        #expect(error?.statement?.contains("INSERT INTO album") == true)
        // With immediate checks a hand-written rebuild would delete the children:
        // the runner's own rebuild refuses instead, wherever it would rebuild.
        f.write("0002_strict.sql", "-- strongroom: immediate-foreign-keys\nALTER TABLE artist DROP COLUMN fax;\n")
        if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
            // SQLite 3.35+ drops the column itself, in place: no table is
            // dropped, so immediate checks are safe and the children stay.
            #expect(try f.migrator().migrate(db).toVersion == 2)
            #expect(try db.fetchAll(sql: "PRAGMA table_info(artist)").map { try $0.decode(String.self, column: "name") } == ["id", "name"])
        } else {
            // SQLite 3.15 has no DROP COLUMN: it would be a rebuild, refused.
            let refused = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
            #expect(refused?.code == .unsupportedRebuild)
            #expect(try f.migrator().currentVersion(db) == 1)
            f.remove("0002_strict.sql")
        }
        #expect(try albums(db).count == 3)
        // A rebuild directive rebuilds on every SQLite: refused under immediate checks.
        f.write("0003_strict_rebuild.sql", """
            -- strongroom: immediate-foreign-keys
            -- strongroom: rebuild
            CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE);
            """)
        let refused = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(refused?.code == .unsupportedRebuild && refused?.version == 3, "\(String(describing: refused))")
        #expect(try albums(db).count == 3)
    }

    /// The checksum main gave `CREATE TABLE t(x);` before this change.
    static let checksumBeforeThisChange = "c259a3b12140acc36e40599d1431b1d33515820f01e56d13fd088edac304178a"

    @Test func checksumsOfExistingFilesDoNotChange() throws {
        // The default mode adds nothing to the checksum, so databases migrated
        // before foreign keys were off in every migration still verify.
        let plain = Migration(version: 1, description: "a", sql: "CREATE TABLE t(x);")
        let strict = Migration(version: 1, description: "a", sql: "-- strongroom: immediate-foreign-keys\nCREATE TABLE t(x);")
        #expect(plain.checksum == Self.checksumBeforeThisChange)
        #expect(plain.checksum != strict.checksum)
    }
}
