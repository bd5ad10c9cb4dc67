import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `strongroom diff` (issue 10, item 3), run as a user runs it.
@Suite("strongroom diff")
struct DiffCommandTests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    func write(_ name: String, _ text: String) {
        try? FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("Migrations/" + name), contents: Data(text.utf8))
    }

    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.file("Migrations"))) ?? []).sorted()
    }

    static let initial = """
        CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);
        """

    @Test func checkExitsOneUntilTheMigrationsReachTheModelThenWritesTheMigration() async throws {
        write("0001_initial.sql", Self.initial)
        write("schema.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT, email TEXT);
            CREATE INDEX customer_name ON customer(name);
            """)
        let check = try await run(["diff", "--check"])
        #expect(check.status == 1)
        #expect(check.stdout.contains("customer.email: missing") && check.stdout.contains("customer_name"), "\(check.stdout)")

        let written = try await run(["diff", "--name", "email"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(files() == ["0001_initial.sql", "0002_email.sql", "schema.sql"])
        let sql = try String(contentsOfFile: dir.file("Migrations/0002_email.sql"), encoding: .utf8)
        #expect(sql.contains(#"ALTER TABLE "customer" ADD COLUMN "email" TEXT;"#))
        #expect(sql.contains(#"CREATE INDEX "customer_name" ON "customer" ("name");"#))
        #expect(try await run(["diff", "--check"]).status == 0)
        let again = try await run(["diff"])
        #expect(again.status == 0 && again.stdout.contains("nothing to write"))
        #expect(files().count == 3)

        // The written migration runs from the CLI on an encrypted database.
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        let migrate = try await run(["migrate", "--database", "app.db", "--key-file", "db.key"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
    }

    @Test func refusesToLoseDataUnlessAllowedAndMarksTheSteps() async throws {
        write("0001_initial.sql", Self.initial)
        write("schema.sql", "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, phone TEXT);")
        let refused = try await run(["diff"])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("drops column customer.fax"), "\(refused.stdout)")
        #expect(files() == ["0001_initial.sql", "schema.sql"], "nothing written")

        // A rename said as one loses nothing.
        let renamed = try await run(["diff", "--rename", "customer.fax=phone"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        let sql = try String(contentsOfFile: dir.file("Migrations/0002_model.sql"), encoding: .utf8)
        #expect(sql.contains(#"ALTER TABLE "customer" RENAME COLUMN "fax" TO "phone";"#))
        #expect(!sql.contains("DESTRUCTIVE"))

        write("schema.sql", "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL);")
        let allowed = try await run(["diff", "--allow-destructive", "--name", "drop_phone"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let dropped = try String(contentsOfFile: dir.file("Migrations/0003_drop_phone.sql"), encoding: .utf8)
        #expect(dropped.contains("-- DESTRUCTIVE: drops column customer.phone and its values\n-- strongroom: rebuild\nCREATE TABLE \"customer\""))
    }

    @Test func badInputIsRefusedWithASentence() async throws {
        write("0001_initial.sql", Self.initial)
        let missing = try await run(["diff"])
        #expect(missing.status == 66 && missing.stderr.contains("no model schema file"), "\(missing.stderr)")
        // The schema file runs in memory only: it cannot attach (and so create) a file.
        write("schema.sql", "ATTACH 'made-by-schema.db' AS other; CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);")
        let attach = try await run(["diff", "--check"])
        #expect(attach.status == 65, "\(attach.stdout)\(attach.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("made-by-schema.db")))
        write("schema.sql", "CREATE TABLE oops(")
        let broken = try await run(["diff"])
        #expect(broken.status == 65 && broken.stderr.contains("does not run"), "\(broken.stderr)")
        #expect(try await run(["diff", "--rename", "a.b.c=d"]).status == 64)
        #expect(try await run(["diff", "--name", "no spaces"]).status == 64)
    }

    @Test func aColumnSealedInTheModelIsSealedByTheMigrationRunWithTheFieldKeys() async throws {
        write("0001_initial.sql", Self.initial + "\nINSERT INTO customer VALUES (1, 'Ada', NULL), (2, 'Bob', '+33 1');")
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key"]).status == 0)
        write("schema.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);
            CREATE TABLE IF NOT EXISTS strongroom_sealed_columns (
              table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT,
              PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns VALUES ('customer', 'fax', 'randomized', NULL);
            """)
        let written = try await run(["diff", "--name", "seal_fax"])
        #expect(written.status == 0, "\(written.stderr)")
        let sql = try String(contentsOfFile: dir.file("Migrations/0002_seal_fax.sql"), encoding: .utf8)
        #expect(sql.contains("strongroom migrate --field-keys"))
        // Without the keyring the migration cannot seal: it fails, and changes nothing.
        let without = try await run(["migrate", "--database", "app.db", "--key-file", "db.key"])
        #expect(without.status == 65 && without.stderr.contains("strongroom_seal"), "\(without.stderr)")
        let with = try await run(["migrate", "--database", "app.db", "--key-file", "db.key", "--field-keys", "fields.keyring"])
        #expect(with.status == 0, "\(with.stderr)")
        let verify = try await run(["verify", "--database", "app.db", "--key-file", "db.key", "--field-keys", "fields.keyring"])
        #expect(verify.status == 0, "\(verify.stdout)")
        let raw = try Connection(path: dir.file("app.db"), configuration: Configuration(key: DatabaseKey.load(keyFile: dir.file("db.key"))))
        #expect(try raw.fetchOne(String.self, sql: "SELECT typeof(fax) FROM customer WHERE id = 2") == "blob")
        #expect(try raw.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") == 2)
    }

    /// Issue 25, item 3: a randomized column in a table without a primary
    /// key would be sealed bound to no row.
    @Test func sealingRandomizedInATableWithoutAPrimaryKeyIsRefused() async throws {
        write("0001_initial.sql", "CREATE TABLE note(body TEXT);")
        write("schema.sql", """
            CREATE TABLE note(body TEXT);
            CREATE TABLE IF NOT EXISTS strongroom_sealed_columns (
              table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT,
              PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns VALUES ('note', 'body', 'randomized', NULL);
            """)
        let written = try await run(["diff", "--name", "seal_body"])
        #expect(written.status != 0, "\(written.stdout)")
        #expect(written.stdout.contains("PRIMARY KEY"), "\(written.stdout)")
        #expect(files() == ["0001_initial.sql", "schema.sql"])
    }
}
