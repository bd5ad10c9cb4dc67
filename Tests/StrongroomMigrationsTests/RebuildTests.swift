import Foundation
import Strongroom
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

@Suite("Table rebuilds")
struct RebuildTests {
    let f = MigrationFixture()

    init() {
        f.write("0001_schema.sql", """
            CREATE TABLE author(
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                fax TEXT,
                "nick name" TEXT,
                CHECK (length(name) > 0)
            );
            CREATE TABLE book(
                id INTEGER PRIMARY KEY,
                author_id INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE,
                title TEXT NOT NULL
            );
            CREATE INDEX author_nick ON author("nick name");
            CREATE TRIGGER author_name_upper AFTER UPDATE OF "nick name" ON author
            BEGIN
                UPDATE author SET name = upper(name) WHERE id = NEW.id AND NEW."nick name" IS NOT NULL;
            END;
            CREATE VIEW author_books AS SELECT author.name, book.title FROM author JOIN book ON book.author_id = author.id;
            INSERT INTO author(id, name, fax, "nick name") VALUES (1, 'Ursula', '555', 'ukl'), (2, 'Octavia', NULL, NULL);
            INSERT INTO book(author_id, title) VALUES (1, 'The Dispossessed'), (1, 'The Lathe of Heaven'), (2, 'Kindred');
            """)
    }

    /// The rows of every table, to compare before and after.
    func books(_ db: Connection) throws -> [String] {
        try db.fetchAll(String.self, sql: "SELECT author_id || ':' || title FROM book ORDER BY id")
    }

    @Test func dropColumnOfAParentKeepsEveryChildRow() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let before = try books(db)
        f.write("0002_drop_fax.sql", "ALTER TABLE author DROP COLUMN fax;")
        try f.migrator().migrate(db)
        #expect(try books(db) == before)
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM author ORDER BY id") == ["Ursula", "Octavia"])
        let columns = try db.fetchAll(sql: "PRAGMA table_info(author)").map { try $0.decode(String.self, column: "name") }
        #expect(columns == ["id", "name", "nick name"])
        // Index, trigger and view were recreated; foreign keys are back on.
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE tbl_name IN ('author', 'author_books') AND type <> 'table' ORDER BY name")
            == ["author_books", "author_name_upper", "author_nick"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author_books") == 3)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
        #expect(try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"])
        #expect(try f.migrator().verify(db).isClean)
        // The cascade still works after the rebuild.
        try db.execute(sql: "DELETE FROM author WHERE id = 2")
        #expect(try f.count(db, "book") == 2)
    }

    /// A column whose name Unicode upper-cases to a keyword (`prımary`,
    /// with a dotless ı, is PRIMARY to Swift's `uppercased()`, never to
    /// SQLite, which folds only ASCII) is a column, and keeps its values
    /// through a rebuild (review of f3961f2); so is `chec` + KELVIN SIGN,
    /// which Swift's `==` takes for CHECK (review of 51ff919).
    @Test func aColumnNamedLikeAKeywordOutsideASCIIKeepsItsValues() throws {
        let db = try f.open()
        f.write("0002_lookalikes.sql", """
            CREATE TABLE lookalike(id INTEGER PRIMARY KEY, prımary TEXT, unıque TEXT, conſtraint TEXT, chec\u{212A} TEXT, fax TEXT);
            INSERT INTO lookalike VALUES (1, 'kept', 'also kept', 'kept too', 'kelvin', '555');
            """)
        try f.migrator().migrate(db)
        f.write("0003_drop_fax.sql", "ALTER TABLE lookalike DROP COLUMN fax;")
        try f.migrator().migrate(db)
        #expect(try db.fetchAll(String.self, sql: "SELECT prımary || ',' || unıque || ',' || conſtraint || ',' || chec\u{212A} FROM lookalike") == ["kept,also kept,kept too,kelvin"])
        #expect(try f.migrator().verify(db).isClean)
    }

    /// Two tables rebuilt together whose names SQLite keeps apart and Swift's
    /// strings take for one (`Kept`, and KELVIN SIGN + `ept`, its child):
    /// a Set of their names held one, and the child's index and trigger
    /// were dropped and never made again (review of cc077ff: SQLite 3.15
    /// rebuilds both for a RENAME COLUMN; the test runs that rebuild on
    /// either engine).
    @Test func tablesRebuiltTogetherKeepTheirIndexesWhateverTheirNames() throws {
        let db = try f.open()
        f.write("0002_lookalike_parent.sql", """
            CREATE TABLE Kept(id INTEGER PRIMARY KEY, a TEXT UNIQUE);
            CREATE TABLE \u{212A}ept(id INTEGER PRIMARY KEY, kid TEXT REFERENCES Kept(a));
            CREATE INDEX kx ON \u{212A}ept(kid);
            CREATE TABLE log(v TEXT);
            CREATE TRIGGER kt AFTER INSERT ON \u{212A}ept BEGIN INSERT INTO log VALUES (new.kid); END;
            INSERT INTO Kept VALUES (1, 'x');
            INSERT INTO \u{212A}ept VALUES (1, 'x');
            """)
        try f.migrator().migrate(db)
        // The rebuild itself, as SQLite 3.15 needs it, on either engine
        // (foreign keys off outside the transaction, as the runner does).
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.inTransaction { db in _ = try TableRebuild.renameColumn(db, table: "Kept", from: "a", to: "b") }
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE name IN ('kx', 'kt') ORDER BY name") == ["kt", "kx"])
        let child = try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = '\u{212A}ept'") ?? ""
        #expect(child.contains("REFERENCES Kept(b)") || child.contains("REFERENCES Kept(\"b\")"), "\(child)")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \u{212A}ept") == 1)
    }

    /// The hazard the runner avoids: the same rebuild with foreign keys left on
    /// deletes the children. If the runner left them on, the test above would
    /// fail the same way.
    @Test func naiveRebuildWithForeignKeysOnLosesChildren() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let view = try #require(try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'author_books'"))
        let steps = [
            "CREATE TABLE new_author(id INTEGER PRIMARY KEY, name TEXT NOT NULL, \"nick name\" TEXT)",
            "INSERT INTO new_author SELECT id, name, \"nick name\" FROM author",
            "DROP TABLE author",
            "ALTER TABLE new_author RENAME TO author",
        ]
        // With the view author_books left in place across DROP and RENAME:
        if SQLCipherLibrary.sqliteVersionNumber >= 3_026_000 {
            // SQLite 3.26+ re-checks every view and trigger at RENAME, and the
            // view names the dropped table: refused, rolled back, the children back.
            let error = #expect(throws: StrongroomError.self) {
                try db.inTransaction(.immediate) { db in
                    for step in steps { try db.execute(sql: step) }
                }
            }
            #expect(error?.message.contains("error in view author_books") == true, "\(error?.message ?? "")")
            #expect(try f.count(db, "book") == 3)
        } else {
            // SQLite 3.15 lets the RENAME through (the view then reads the
            // new table), and the DROP has deleted the children.
            try db.inTransaction(.immediate) { db, rollback in
                for step in steps { try db.execute(sql: step) }
                #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author_books") == 0)
                #expect(try f.count(db, "book") == 0)
                rollback = true
            }
            #expect(try f.count(db, "book") == 3)
        }
        // Steps 3 to 8 as SQLite documents them, the view dropped before and
        // created again after (which every SQLite accepts), but with foreign
        // keys left on: DROP TABLE deletes the children through the cascade.
        try db.inTransaction(.immediate) { db in
            try db.execute(sql: "DROP VIEW author_books")
            for step in steps { try db.execute(sql: step) }
            try db.execute(sql: view)
        }
        #expect(try f.count(db, "book") == 0)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author_books") == 0)
    }

    @Test func renameColumnRewritesIndexesAndTriggers() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0002_rename.sql", #"ALTER TABLE author RENAME COLUMN "nick name" TO handle;"#)
        try f.migrator().migrate(db)
        #expect(try db.fetchAll(String.self, sql: "SELECT handle FROM author WHERE handle IS NOT NULL") == ["ukl"])
        let indexSQL = try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'author_nick'") ?? ""
        #expect(indexSQL.contains("\"handle\""))
        try db.execute(sql: "UPDATE author SET handle = 'oeb' WHERE id = 2")
        #expect(try db.fetchOne(String.self, sql: "SELECT name FROM author WHERE id = 2") == "OCTAVIA")
        #expect(try books(db).count == 3)
        #expect(try f.migrator().verify(db).isClean)
    }

    /// On SQLite 3.26+, `ALTER TABLE … RENAME` re-checks every view and
    /// trigger: a rebuild that left a view over a view, or a trigger on
    /// another table, pointing at the dropped table failed there. The
    /// statements the runner issues here are replayed on SQLCipher 4.
    @Test func rebuildsRunOnANewerSQLiteAndKeepDependentsEverywhere() throws {
        let dir = TemporaryDirectory()
        let migrations = [
            Migration(version: 1, description: "schema", sql: """
                CREATE TABLE writer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);
                CREATE TABLE novel(id INTEGER PRIMARY KEY, writer_id INTEGER REFERENCES writer(id) ON DELETE CASCADE, title TEXT);
                CREATE TABLE log(id INTEGER PRIMARY KEY, msg TEXT);
                CREATE VIEW writer_names AS SELECT id, name AS name FROM writer;
                CREATE VIEW loud_writers AS SELECT id, upper(name) AS loud FROM writer_names;
                CREATE TRIGGER novel_logged AFTER INSERT ON novel BEGIN
                    INSERT INTO log(msg) SELECT name FROM writer WHERE id = NEW.writer_id;
                END;
                CREATE TRIGGER writer_names_insert INSTEAD OF INSERT ON writer_names BEGIN
                    INSERT INTO writer(id, name) VALUES (NEW.id, NEW.name);
                END;
                INSERT INTO writer(id, name, fax) VALUES (1, 'Ursula', '555'), (2, 'Octavia', NULL), (3, 'gone', NULL);
                DELETE FROM writer WHERE id = 3;
                INSERT INTO novel(writer_id, title) VALUES (1, 'The Dispossessed'), (2, 'Kindred');
                """),
            Migration(version: 2, description: "nocase", sql: """
                -- strongroom: rebuild
                CREATE TABLE writer(id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE, fax TEXT);
                """),
            Migration(version: 3, description: "drop fax", sql: "ALTER TABLE writer DROP COLUMN fax;"),
            Migration(version: 4, description: "rename", sql: "ALTER TABLE writer RENAME COLUMN name TO full_name;"),
        ]
        let db = try Connection(path: dir.file("ours.db"), configuration: Configuration(key: DatabaseKey.generate()))
        let trace = TracedStatements()
        db.traceStatements { trace.list.append($0) }
        try Migrator(migrations: migrations).migrate(db)
        db.traceStatements(nil)
        let then = """
            INSERT INTO writer_names(id, name) VALUES (9, 'Zadie');
            INSERT INTO novel(writer_id, title) VALUES (9, 'White Teeth');
            """
        try db.execute(sql: then)
        // Every dependent is back, the INSTEAD OF trigger on the view too, and works.
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name")
            == ["loud_writers", "novel_logged", "writer_names", "writer_names_insert"])
        #expect(try db.fetchAll(String.self, sql: "SELECT loud FROM loud_writers ORDER BY id") == ["URSULA", "OCTAVIA", "ZADIE"])
        #expect(try db.fetchAll(String.self, sql: "SELECT msg FROM log ORDER BY id") == ["Ursula", "Octavia", "Zadie"])
        #expect(try db.fetchAll(String.self, sql: "SELECT full_name FROM writer ORDER BY id") == ["Ursula", "Octavia", "Zadie"])
        let ours = try DatabasePicture.of(db)

        let results = try NewerSQLite.replay([NewerSQLite.Job(path: dir.file("replay.sqlite"), statements: trace.list, then: then)])
        #expect(results[0].error == nil, "SQLite \(results[0].sqlite_version): \(results[0].error ?? "") at `\(results[0].statement ?? "")`")
        let replayed = try DatabasePicture.of(DatabasePicture.openPlaintext(dir.file("replay.sqlite")))
        #expect(DatabasePicture.same(replayed, ours), "\(DatabasePicture.difference(ours, replayed, otherName: "replayed"))")
    }

    @Test func rebuildKeepsTheAutoincrementCounter() throws {
        f.write("0002_ticket.sql", """
            CREATE TABLE ticket(id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT, note TEXT);
            INSERT INTO ticket(title) VALUES ('a'), ('b'), ('c'), ('d'), ('e');
            DELETE FROM ticket WHERE id > 2;
            """)
        f.write("0003_drop_note.sql", "ALTER TABLE ticket DROP COLUMN note;")
        let db = try f.open()
        try f.migrator().migrate(db)
        #expect(try db.fetchOne(Int.self, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'ticket'") == 5)
        try db.execute(sql: "INSERT INTO ticket(title) VALUES ('f')")
        // Ids 3 to 5 were issued once; they are not issued again.
        #expect(try db.fetchOne(Int.self, sql: "SELECT max(id) FROM ticket") == 6)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_sequence WHERE name = 'ticket'") == 1)
    }

    @Test func rebuildDirectiveChangesConstraints() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0002_tighten_book.sql", """
            -- Titles become unique; a new column with a default.
            -- strongroom: rebuild
            CREATE TABLE book(
                id INTEGER PRIMARY KEY,
                author_id INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE,
                title TEXT NOT NULL UNIQUE,
                pages INTEGER NOT NULL DEFAULT 0
            );
            """)
        try f.migrator().migrate(db)
        #expect(try books(db).count == 3)
        #expect(try db.fetchAll(Int.self, sql: "SELECT pages FROM book") == [0, 0, 0])
        let error = #expect(throws: StrongroomError.self) { try db.execute(sql: "INSERT INTO book(author_id, title) VALUES (1, 'Kindred')") }
        #expect(error?.code == .uniqueConstraint)
    }

    @Test func rebuildThatBreaksAForeignKeyIsRolledBackNamingTheRows() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        try db.execute(sql: "CREATE TABLE shelf(id INTEGER PRIMARY KEY)")
        f.write("0002_shelved.sql", """
            -- strongroom: rebuild
            CREATE TABLE book(
                id INTEGER PRIMARY KEY,
                author_id INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE,
                title TEXT NOT NULL,
                shelf_id INTEGER NOT NULL DEFAULT 7 REFERENCES shelf(id)
            );
            """)
        try db.execute(sql: "DROP TABLE shelf")
        f.write("0002_shelved.sql", "CREATE TABLE shelf(id INTEGER PRIMARY KEY);\n" + (String(data: FileManager.default.contents(atPath: f.migrationsPath + "/0002_shelved.sql")!, encoding: .utf8) ?? ""))
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .foreignKeyViolation)
        #expect(error?.message.contains("book") == true)
        #expect(error?.message.contains("3 row(s)") == true)
        #expect(try f.migrator().currentVersion(db) == 1)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'shelf'") == 0)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
    }

    @Test func dropColumnRefusesWhatSQLiteRefuses() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        for (name, sql, fragment) in [
            ("0002_a.sql", "ALTER TABLE author DROP COLUMN \"nick name\";", "index author_nick"),
            ("0002_a.sql", "ALTER TABLE author DROP COLUMN id;", "PRIMARY KEY"),
            ("0002_a.sql", "ALTER TABLE author DROP COLUMN missing;", "no such column"),
        ] {
            f.write(name, sql)
            let error = #expect(throws: MigrationError.self, "\(sql)") { try f.migrator().migrate(db) }
            if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
                // SQLite 3.35+ runs DROP COLUMN itself: no rebuild, and its
                // refusal is a failing statement like any other, with SQLite's error.
                #expect(error?.code == .migrationFailed, "\(sql)")
                #expect(error?.underlying?.code == .sqlite, "\(sql): \(String(describing: error?.underlying))")
            } else {
                // SQLite 3.15 has none: our rebuild refuses before it changes anything.
                #expect(error?.code == .unsupportedRebuild, "\(sql)")
                #expect(error?.underlying == nil, "\(sql)")
            }
            #expect(error?.message.contains(fragment) == true, "\(sql): \(error?.message ?? "")")
            #expect(try f.migrator().currentVersion(db) == 1)
            #expect(try db.fetchAll(sql: "PRAGMA table_info(author)").count == 4)
        }
    }

    @Test func swiftRebuildAPI() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 2, description: "widen") { db in
            try TableRebuild.rebuild(db, table: "author", to: "CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE, \"nick name\" TEXT)")
        })
        let db = try f.open()
        try migrator.migrate(db)
        #expect(try books(db).count == 3)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author WHERE name = 'URSULA'") == 1)
        // With immediate foreign key checks the rebuild refuses to run.
        try migrator.register(Migration(version: 3, description: "unsafe", foreignKeyChecks: .immediate) { db in
            try TableRebuild.rebuild(db, table: "author", to: "CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        })
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.code == .unsupportedRebuild)
        #expect(try books(db).count == 3)
    }
}
