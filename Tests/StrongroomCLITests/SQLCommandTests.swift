import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// `strongroom sql` (issue 9, item 4): a query tool for encrypted databases
/// that knows sealed columns, prints NULL apart from the text "NULL", blobs as
/// hex and reals that round-trip, and writes only when asked.
@Suite("strongroom sql")
struct SQLCommandTests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String], input: String? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, currentDirectory: dir.path)
    }

    func chinook() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key"])
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    let sql = ["sql", "--database", "c.db", "--key-file", "db.key"]
    static let values = "SELECT 1 AS i, 2.5 AS r, 0.1 AS tenth, 'NULL' AS word, NULL AS \"nothing\", '' AS empty, x'00ff10' AS b"

    @Test func chinookInEveryFormat() async throws {
        try await chinook()
        let query = "SELECT ArtistId, Name FROM Artist WHERE ArtistId <= 3 ORDER BY ArtistId"
        let table = try await run(sql + ["--table", query])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ArtistId  Name") == true, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix("1         AC/DC") }, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix("3         Aerosmith") })

        let csv = try await run(sql + ["--csv", query])
        #expect(csv.stdout == "ArtistId,Name\n1,AC/DC\n2,Accept\n3,Aerosmith\n", "\(csv.stdout)")

        let json = try await run(sql + ["--json", query])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(parsed?.count == 3)
        #expect(parsed?[0]["ArtistId"] as? Int == 1 && parsed?[0]["Name"] as? String == "AC/DC", "\(json.stdout)")

        // Not a terminal and no format: CSV. Several statements: one result each.
        let piped = try await run(sql, input: "SELECT count(*) AS n FROM Album;\nSELECT count(*) AS n FROM Artist;\n")
        #expect(piped.stdout == "n\n347\n\nn\n275\n", "\(piped.stdout)")
        let two = try await run(sql + ["--json", "SELECT 1 AS a; SELECT 2 AS b"])
        #expect(two.stdout == "[{\"a\":1}]\n[{\"b\":2}]\n", "\(two.stdout)")
    }

    @Test func nullTextBlobsAndRealsAreTold() async throws {
        try await chinook()
        let json = try await run(sql + ["--json", Self.values])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout == #"[{"i":1,"r":2.5,"tenth":0.1,"word":"NULL","nothing":null,"empty":"","b":{"hex":"00ff10"}}]"# + "\n", "\(json.stdout)")
        let csv = try await run(sql + ["--csv", Self.values])
        #expect(csv.stdout == "i,r,tenth,word,nothing,empty,b\n1,2.5,0.1,NULL,,\"\",x'00ff10'\n", "\(csv.stdout)")
        let table = try await run(sql + ["--table", Self.values])
        #expect(table.stdout.contains("'NULL'") && table.stdout.contains(" NULL ") && table.stdout.contains("x'00ff10'"), "\(table.stdout)")
        // Reals print so that they read back as the same Double.
        let real = try await run(sql + ["--csv", "SELECT 1.0/3 AS third, 1e300 * 10 AS big, 123456789.125 AS exact"])
        let fields = real.stdout.split(separator: "\n")[1].split(separator: ",").map(String.init)
        #expect(Double(fields[0]) == 1.0 / 3 && Double(fields[2]) == 123456789.125, "\(real.stdout)")
    }

    @Test func writesOnlyWithWrite() async throws {
        try await chinook()
        let refused = try await run(sql + ["DELETE FROM Artist WHERE ArtistId = 1"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--write"), "\(refused.stderr)")
        // Nothing of a refused script ran, not even its read-only first statement's neighbours.
        let mixed = try await run(sql + ["SELECT 1; UPDATE Artist SET Name = 'x'"])
        #expect(mixed.status == 64 && mixed.stdout.isEmpty, "\(mixed.stdout)")
        #expect(try await run(sql + ["--csv", "SELECT count(*) AS n FROM Artist"]).stdout == "n\n275\n")

        let written = try await run(sql + ["--write", "INSERT INTO Artist(Name) VALUES ('Strongroom')"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try await run(sql + ["--csv", "SELECT count(*) AS n FROM Artist"]).stdout == "n\n276\n")
        // Foreign keys hold: an artist with albums is not deleted.
        let blocked = try await run(sql + ["--write", "DELETE FROM Artist WHERE ArtistId = 1"])
        #expect(blocked.status == 65 && blocked.stderr.contains("FOREIGN KEY"), "\(blocked.stderr)")
    }

    @Test func aSyntaxErrorExits65WithSQLitesMessage() async throws {
        try await chinook()
        let result = try await run(sql + ["SELEC * FROM Artist"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("near \"SELEC\": syntax error"), "\(result.stderr)")
        let wrongKey = try await run(["keygen", "--out", "other.key"])
        #expect(wrongKey.status == 0)
        let bad = try await run(["sql", "--database", "c.db", "--key-file", "other.key", "SELECT 1"])
        #expect(bad.status == 65 && bad.stderr.contains("key"), "\(bad.stderr)")
    }

    @Test func sealedColumnsOpenWithTheKeyringAndStaySealedWithout() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key",
                                      "--field-keys", "fields.keyring", "--seal", "Customer.Email:indexed", "--seal", "Customer.Phone"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let query = "SELECT CustomerId, Email, Phone FROM Customer WHERE CustomerId = 1"
        // The operator names each value's binding in the SQL: nothing the
        // database says decides what opens.
        let opening = "SELECT CustomerId, strongroom_open(Email, 'Customer', 'Email', CustomerId) AS Email, strongroom_open(Phone, 'Customer', 'Phone', CustomerId) AS Phone FROM Customer WHERE CustomerId = 1"
        let opened = try await run(sql + ["--field-keys", "fields.keyring", "--csv", opening])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == "CustomerId,Email,Phone\n1,luisg@embraer.com.br,+55 (12) 3923-5555\n", "\(opened.stdout)")
        let sealed = try await run(sql + ["--csv", query])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(!sealed.stdout.contains("embraer") && sealed.stdout.contains("x'01"), "\(sealed.stdout)")
        // With the keyring but no strongroom_open, the values stay envelopes.
        let asStored = try await run(sql + ["--field-keys", "fields.keyring", "--csv", query])
        #expect(asStored.status == 0 && !asStored.stdout.contains("embraer") && asStored.stdout.contains("x'01"), "\(asStored.stdout)")
    }

    /// `strongroom backup` (issue 9, item 5).
    @Test func backupCopiesUnderTheSameOrANewKey() async throws {
        try await chinook()
        let same = try await run(["backup", "--database", "c.db", "--key-file", "db.key", "--to", "copy.db"])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("11 tables"), "\(same.stdout)")
        #expect(try await run(["sql", "--database", "copy.db", "--key-file", "db.key", "--csv", "SELECT count(*) AS n FROM Track"]).stdout == "n\n3503\n")
        #expect(try await run(["keygen", "--out", "new.key"]).status == 0)
        let json = try await run(["backup", "--database", "c.db", "--key-file", "db.key", "--to", "new.db", "--new-key-file", "new.key", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(report?["reencrypted"] as? Bool == true, "\(json.stdout)")
        #expect(try await run(["sql", "--database", "new.db", "--key-file", "new.key", "--csv", "SELECT count(*) AS n FROM Track"]).stdout == "n\n3503\n")
        #expect(try await run(["sql", "--database", "new.db", "--key-file", "db.key", "SELECT 1"]).status == 65)
        let again = try await run(["backup", "--database", "c.db", "--key-file", "db.key", "--to", "copy.db"])
        #expect(again.status == 73 && again.stderr.contains("exists"), "\(again.stderr)")
    }

    // MARK: Review of issue 9

    @Test func aTransactionLeftOpenIsAnErrorNotASilentRollback() async throws {
        try await chinook()
        let result = try await run(sql + ["--write", "BEGIN; INSERT INTO Genre(Name) VALUES ('zz');"])
        #expect(result.status != 0, "\(result.stdout)")
        #expect(result.stderr.contains("COMMIT"), "\(result.stderr)")
        #expect(try await run(sql + ["--csv", "SELECT count(*) AS n FROM Genre WHERE Name = 'zz'"]).stdout == "n\n0\n")
    }

    @Test func controlCharactersNeverReachTheTerminal() async throws {
        try await chinook()
        let table = try await run(sql + ["--table", "SELECT char(27) || ']0;pwned' || char(7) || 'x' AS t, 'a\\nb' AS literal, 'a' || char(10) || 'b' AS newline"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(!table.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }, "\(table.stdout.debugDescription)")
        let row = table.stdout.split(separator: "\n")[2]
        #expect(row.contains("a\\\\nb") && row.contains("a\\nb"), "a backslash and a line break print apart: \(row)")
    }

    @Test func noPlaintextCopyThroughAttachOrExport() async throws {
        try await chinook()
        FileManager.default.createFile(atPath: dir.file("plain.db"), contents: nil)
        let result = try await run(sql + ["--write", "ATTACH 'plain.db' AS p KEY ''; SELECT sqlcipher_export('p');"])
        #expect(result.status != 0, "\(result.stdout)")
        #expect(Fixtures.bytes(of: dir.file("plain.db")).isEmpty)
        let export = try await run(sql + ["--write", "SELECT sqlcipher_export('main')"])
        #expect(export.status != 0)
        for pragma in ["PRAGMA rekey = 'x'", "PRAGMA key = 'x'", "PRAGMA temp_store = FILE"] {
            let refused = try await run(sql + ["--write", pragma])
            #expect(refused.status != 0, "\(pragma): \(refused.stdout)")
        }
        #expect(try await run(sql + ["--csv", "SELECT count(*) AS n FROM Artist"]).stdout == "n\n275\n", "still opens with its key")
    }

    /// Issue 25, item 9: every pragma that sets a key or a cipher or KDF
    /// setting is refused, not only `key`, `rekey` and `cipher_*`.
    @Test(arguments: ["PRAGMA kdf_iter = 1", "PRAGMA fast_kdf_iter = 1", "PRAGMA rekey_cipher = 'aes-128-cbc'",
                      "PRAGMA rekey_kdf_iter = 1", "PRAGMA hexrekey = '00'", "PRAGMA hexkey = '00'", "PRAGMA textkey = 'x'",
                      "PRAGMA KDF_ITER = 1", "PRAGMA main.kdf_iter = 1", "PRAGMA cipher_page_size = 4096"])
    func keyAndCipherPragmasAreRefused(pragma: String) async throws {
        try await chinook()
        let refused = try await run(sql + ["--write", pragma + "; SELECT count(*) FROM Artist"])
        #expect(refused.status != 0, "\(pragma): \(refused.stdout)")
        #expect(refused.stderr.contains("does not run PRAGMA"), "refused, and says what: \(refused.stderr)")
        #expect(try await run(sql + ["--csv", "SELECT count(*) AS n FROM Artist"]).stdout == "n\n275\n", "still opens with its key")
    }

    @Test func sealedColumnsAreNeverWrittenInTheClear() async throws {
        try await chinook()
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let result = try await run(sql + ["--write", "--field-keys", "fields.keyring", "UPDATE Customer SET Email = 'x'"])
        #expect(result.status == 64 && result.stderr.contains("--field-keys"), "\(result.stderr)")
    }

    @Test func aPassphraseOnStandardInputNeedsTheSQLAsAnArgument() async throws {
        let result = try await run(["sql", "--database", "c.db", "--passphrase-stdin"], input: "secret\nSELECT 1;\n")
        #expect(result.status == 64, "\(result.stderr)")
        #expect(!result.stderr.contains("secret"))
    }

    @Test func emptyStatementsBetweenSemicolonsAreSkipped() async throws {
        try await chinook()
        #expect(try await run(sql + ["--csv", "SELECT 1 AS a;;"]).stdout == "a\n1\n")
    }
}
