import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 25, second review: migrations that unbound sealed values past the
/// row-key check, a copied envelope that blocked every migration, verify
/// blinded by a planted view. Each reproduced before its fix.
@Suite("Sealed columns: migrations and verify against planted state")
struct RowKeyCheckEvasionTests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }
    func write(_ name: String, _ text: String) {
        try? FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("Migrations/" + name), contents: Data(text.utf8))
    }
    var key: [String] { ["--database", "app.db", "--key-file", "db.key"] }
    func connection() throws -> Connection {
        var config = Configuration(key: try KeyFile.read(at: dir.file("db.key")))
        config.addFieldFunctions(keyring: try FieldKeyring.load(from: dir.file("fields.keyring")))
        return try Connection(path: dir.file("app.db"), configuration: config)
    }
    func sealedNotes() throws {
        #expect(try run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        write("0001_note.sql", "CREATE TABLE note(id INTEGER PRIMARY KEY, body BLOB);")
        #expect(try run(["migrate"] + key).status == 0)
        let db = try connection()
        try db.execute(sql: "INSERT INTO note VALUES (1, strongroom_seal('first secret', 'note', 'body', 'randomized', 1)), (2, strongroom_seal('second', 'note', 'body', 'randomized', 2))")
        try SealedColumnRegistry.record([.randomized("body", in: "note")], in: db)
    }
    func opened(_ table: String) -> [String]? {
        try? connection().fetchAll(String.self, sql: "SELECT strongroom_open(body, '\(table)', 'body', id) FROM \(table) ORDER BY id")
    }

    /// A migration renames the sealed table: the table name is in every
    /// envelope's associated data; the check takes the old table as dropped.
    @Test func aTableRenameUnbindsEveryValue() throws {
        try sealedNotes()
        write("0002_rename.sql", "ALTER TABLE note RENAME TO memo;")
        let migrate = try run(["migrate"] + key)
        #expect(migrate.status != 0 && migrate.stderr.contains("note"), "\(migrate.stderr)")
        #expect(opened("note") == ["first secret", "second"])
        // A table recorded sealed that no longer exists is a finding of verify, not a crash.
        try connection().execute(sql: "ALTER TABLE note RENAME TO memo")
        let verify = try run(["verify"] + key + ["--field-keys", "fields.keyring"])
        #expect(verify.status == 1 && verify.stdout.contains("note"), "\(verify.status) \(verify.stdout) \(verify.stderr)")
    }

    /// verify's untrusted_sql finding is blinded by a TEMP view named sqlite_master.
    @Test func verifyBlindedByShadowedMaster() throws {
        try sealedNotes()
        let bare = try Connection(path: dir.file("app.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        try bare.execute(sql: """
            CREATE TABLE copy(v);
            CREATE TRIGGER note_copy AFTER INSERT ON note BEGIN INSERT INTO copy VALUES (NEW.body); END;
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('view', 'sqlite_master', 'sqlite_master', 0,
              'CREATE TEMP VIEW sqlite_master AS SELECT type, name, tbl_name, rootpage, sql FROM main.sqlite_master WHERE name NOT IN (''note_copy'', ''sqlite_master'')');
            PRAGMA writable_schema = OFF;
            """)
        bare.close()
        let verify = try run(["verify"] + key)
        #expect(verify.stdout.contains("note_copy"), "\(verify.stdout)")
        #expect(verify.stdout.contains("sqlite_master"), "the planted TEMP view is reported too: \(verify.stdout)")
    }

    /// One envelope copied into a second row (by whoever holds the database
    /// key): every later migration, even one that touches nothing sealed, is
    /// refused as moving values (the temp table keeps one key per envelope).
    @Test func aCopiedEnvelopeBlocksEveryMigration() throws {
        try sealedNotes()
        try connection().execute(sql: "UPDATE note SET body = (SELECT body FROM note WHERE id = 1) WHERE id = 2")
        write("0002_unrelated.sql", "CREATE TABLE unrelated(x);")
        let migrate = try run(["migrate"] + key)
        #expect(migrate.status == 0, "\(migrate.stderr)")
    }

    // Third review.

    /// verify reads only rows whose type column says trigger or view; SQLite
    /// loads a trigger from any row whose sql is CREATE TRIGGER.
    @Test func verifyMissesATriggerStoredAsATableRow() throws {
        try sealedNotes()
        let bare = try Connection(path: dir.file("app.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        try bare.execute(sql: """
            CREATE TABLE copy(v);
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('table', 'note_copy', 'note', 0,
              'CREATE TRIGGER note_copy AFTER INSERT ON note BEGIN INSERT INTO copy VALUES (NEW.body); END');
            PRAGMA writable_schema = OFF;
            """)
        bare.close()
        // It fires.
        try connection().execute(sql: "INSERT INTO note VALUES (3, strongroom_seal('third', 'note', 'body', 'randomized', 3))")
        #expect(try connection().fetchOne(Int.self, sql: "SELECT count(*) FROM copy") == 1)
        let verify = try run(["verify"] + key)
        #expect(verify.stdout.contains("note_copy"), "\(verify.status) \(verify.stdout)")
    }

    /// A rename with its record updated to the new name: the check takes the
    /// old table for dropped and the recorded column exists.
    @Test func aRenameWithItsRecordUpdatedPasses() throws {
        try sealedNotes()
        write("0002_rename.sql", "ALTER TABLE note RENAME TO memo; UPDATE strongroom_sealed_columns SET table_name = 'memo' WHERE table_name = 'note';")
        let migrate = try run(["migrate"] + key)
        #expect(migrate.status != 0, "migrate accepted it: \(migrate.stdout) \(migrate.stderr); memo opens: \(String(describing: opened("memo")))")
    }
    /// A schema row whose sql is a BLOB still loads; verify decodes it as String.
    @Test func verifyOnABlobSqlRow() throws {
        try sealedNotes()
        let bare = try Connection(path: dir.file("app.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        try bare.execute(sql: """
            CREATE TABLE copy(v);
            PRAGMA writable_schema = ON;
            INSERT INTO sqlite_master VALUES ('trigger', 'note_copy', 'note', 0,
              CAST('CREATE TRIGGER note_copy AFTER INSERT ON note BEGIN INSERT INTO copy VALUES (NEW.body); END' AS BLOB));
            PRAGMA writable_schema = OFF;
            """)
        bare.close()
        let verify = try run(["verify"] + key)
        #expect(verify.stdout.contains("note_copy"), "status \(verify.status) stdout: \(verify.stdout) stderr: \(verify.stderr)")
    }
}
