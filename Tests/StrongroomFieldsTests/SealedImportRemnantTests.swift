import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// `strongroom import --seal` seals columns in the new copy before it takes
/// its name. Whoever holds the database key reads every page of the file,
/// freed space and freelist pages included: none may still hold a value
/// that sealing replaced.
@Suite("Sealed import: no replaced plaintext left in any page")
struct SealedImportRemnantTests {
    let dir = TemporaryDirectory()
    static let search = Fixtures.repositoryRoot + "/Tests/StrongroomFieldsTests/PageSearch/find_in_pages.py"

    /// Needles found in a page of `path`, decrypted with the key in `keyFile`.
    func pagesHolding(_ needles: [String], in path: String, keyFile: String) async throws -> [String: [Int]] {
        let needleFile = dir.file("needles.txt")
        try needles.joined(separator: "\n").write(toFile: needleFile, atomically: true, encoding: .utf8)
        let result = try await ProcessRunner.run("/usr/bin/env", ["python3", Self.search, keyFile, path, needleFile])
        try #require(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["found"] as? [String: [Int]])
    }

    /// A plaintext source of two tables of people: e-mails and names of
    /// varied lengths, rows in shuffled order. Sealing the e-mail makes
    /// SQLite rebalance the pages; a page it rebuilds keeps old copies of
    /// cells in its unallocated gap, which secure_delete does not zero
    /// (review of e9fdae1, which relied on it). The shapes are the ones
    /// where that happens on each engine, every run: `customer` on SQLCipher
    /// 3.4.1's 1 KiB pages, `client` (values twice as long) on 4.6.1's
    /// 4 KiB pages; `customer`'s index adds index pages, where it happens
    /// in some runs (the envelopes' order is random). The markers
    /// (`user00042@`, `clnt00042@`) are each e-mail's unique start.
    func peopleSource() throws -> (path: String, markers: [String]) {
        let path = dir.file("people.sqlite")
        let db = try Connection(path: path, configuration: .plaintext)
        var markers: [String] = []
        try db.inTransaction(.immediate) { db in
            for (table, prefix, scale) in [("customer", "user", 1), ("client", "clnt", 2)] {
                var random = SplitMix64(seed: 3)
                try db.execute(sql: "CREATE TABLE \(table)(id INTEGER PRIMARY KEY, email TEXT, name TEXT)")
                let rows = 6000
                for (id, number) in (0..<rows).shuffled(using: &random).enumerated() {
                    let email = prefix + String(repeating: "0", count: 5 - String(number).count) + "\(number)@"
                        + String(repeating: "x", count: Int.random(in: 1...(120 * scale), using: &random)) + ".example.com"
                    try db.execute(sql: "INSERT INTO \(table) VALUES (?, ?, ?)",
                                   arguments: [id + 1, email, String(repeating: "n", count: Int.random(in: 1...(200 * scale), using: &random))])
                }
                markers += (0..<rows).map { prefix + String(repeating: "0", count: 5 - String($0).count) + "\($0)@" }
            }
            try db.execute(sql: "CREATE INDEX customer_email ON customer(email)")
        }
        db.close()
        return (path, markers)
    }

    /// Both with SQLite's secure_delete as the engines build it (on) and
    /// turned off by `finishing`: the VACUUM after `finishing` is what
    /// leaves nothing behind, not secure_delete.
    @Test(arguments: [false, true]) func noPageOfASealedImportHoldsAValueItSealed(finishingTurnsSecureDeleteOff: Bool) async throws {
        let key = DatabaseKey.generate()
        let keyFile = dir.file("db.key")
        try KeyFile.write(key, to: keyFile)
        let keyring = FieldKeyring.generate()
        let (source, markers) = try peopleSource()

        // The search reads the pages: an import that seals nothing shows every value.
        let unsealed = dir.file("unsealed.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: unsealed, key: key)
        #expect(try await pagesHolding(markers, in: unsealed, keyFile: keyFile).count == markers.count)

        let sealed = dir.file("sealed.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: sealed, key: key, finishing: { (db: Connection) throws(StrongroomError) -> Void in
            if finishingTurnsSecureDeleteOff { try db.execute(sql: "PRAGMA secure_delete = OFF") }
            do {
                try ColumnSealing.sealInPlace([.randomized("email", in: "customer"), .randomized("email", in: "client")], keyring: keyring, in: db)
            } catch {
                throw StrongroomError(.sealedValue, "\(error)")
            }
        })
        let left = try await pagesHolding(markers, in: sealed, keyFile: keyFile)
        #expect(left.isEmpty, "values sealing replaced are still in pages of the file: \(left.keys.sorted().prefix(5)) (\(left.count) of \(markers.count))")

        // And the copy is whole: every sealed value opens.
        var configuration = Configuration(key: key)
        configuration.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection(path: sealed, configuration: configuration)
        #expect(try ColumnSealing.failures(keyring: keyring, in: db).isEmpty)
        #expect(try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT (SELECT count(*) FROM customer) + (SELECT count(*) FROM client)") == markers.count)
    }

    /// A source analyzed by a SQLite built with STAT4 (neither engine here
    /// is) holds sample keys of its indexes in `sqlite_stat4` (STAT3's
    /// `sqlite_stat3`, STAT2's `sqlite_stat2` in older ones): for an index on
    /// a sealed column, its plaintext values, live rows that no VACUUM
    /// removes (review of e9fdae1). A row may name its table by an old name
    /// (ALTER TABLE RENAME leaves the stat tables alone, and SQLite finds
    /// samples by index), so sealing empties the sample tables; ANALYZE on
    /// such a build samples again, the envelopes (review of 10f72f9).
    @Test func sealingEmptiesTheIndexSampleTables() async throws {
        let sqlite3 = try #require(ProcessRunner.which("sqlite3"), "the sqlite3 shell writes the sample tables; `make test-setup` installs it")
        let key = DatabaseKey.generate()
        let keyFile = dir.file("db.key")
        try KeyFile.write(key, to: keyFile)
        let source = dir.file("analyzed.sqlite")
        let markers = (1...5).map { "user0000\($0)@sample.example.com" }
        // SQLite keeps the names sqlite_stat2, 3 and 4 for ANALYZE;
        // writable_schema lets a build without them make them.
        let made = try await ProcessRunner.run(sqlite3, [source, """
            CREATE TABLE customer_old(id INTEGER PRIMARY KEY, email TEXT, name TEXT);
            CREATE INDEX customer_email ON customer_old(email);
            INSERT INTO customer_old VALUES (1, '\(markers[0])', 'Ada'), (2, '\(markers[1])', 'Grace');
            PRAGMA writable_schema = 1;
            CREATE TABLE sqlite_stat4(tbl, idx, neq, nlt, ndlt, sample);
            CREATE TABLE sqlite_stat3(tbl, idx, neq, nlt, ndlt, sample);
            CREATE TABLE sqlite_stat2(tbl, idx, sampleno, sample);
            """])
        try #require(made.status == 0, "\(made.stderr)")
        let filled = try await ProcessRunner.run(sqlite3, [source, """
            INSERT INTO sqlite_stat4 VALUES ('customer_old', 'customer_email', '1 1', '0 0', '0 0', CAST('\(markers[0])' AS BLOB));
            ALTER TABLE customer_old RENAME TO customer;
            INSERT INTO sqlite_stat4 VALUES ('Customer', 'customer_email', '1 1', '1 1', '1 1', CAST('\(markers[1])' AS BLOB));
            INSERT INTO sqlite_stat3 VALUES ('CUSTOMER', 'customer_email', '1', '0', '0', '\(markers[2])');
            INSERT INTO sqlite_stat2 VALUES ('customer', 'customer_email', 1, '\(markers[3])');
            INSERT INTO sqlite_stat2 VALUES ('customer_old', 'customer_email', 2, '\(markers[4])');
            """])
        try #require(filled.status == 0, "\(filled.stderr)")

        let keyring = FieldKeyring.generate()
        let sealed = dir.file("sealed.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: sealed, key: key, finishing: { (db: Connection) throws(StrongroomError) -> Void in
            do {
                try ColumnSealing.sealInPlace([.randomized("email", in: "customer")], keyring: keyring, in: db)
            } catch {
                throw StrongroomError(.sealedValue, "\(error)")
            }
        })
        let left = try await pagesHolding(markers, in: sealed, keyFile: keyFile)
        #expect(left.isEmpty, "index samples of the sealed column are still in the file: \(left)")
        let db = try Connection(path: sealed, configuration: Configuration(key: key))
        for table in ["sqlite_stat2", "sqlite_stat3", "sqlite_stat4"] {
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table)") == 0, "\(table)")
        }
    }

    /// The UPDATE that seals a column runs the table's triggers with the
    /// plaintext in `old`: an audit trigger, or the one that keeps an FTS
    /// index in step, writes it into another table, live (review of
    /// 10f72f9). Sealing refuses, naming the trigger; a trigger the UPDATE
    /// does not run (another column's), or one that does not read the
    /// column (it sets `updated_at`), is no obstacle (review of ce5c8a5).
    @Test func sealingRefusesWhileATriggerWouldReadThePlaintext() async throws {
        let source = dir.file("triggers.sqlite")
        let plain = try Connection(path: source, configuration: .plaintext)
        try plain.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT, name TEXT, updated_at TEXT);
            CREATE TABLE customer_audit(id, email);
            CREATE TABLE name_changes(id, name);
            CREATE TRIGGER customer_name AFTER UPDATE OF name ON customer BEGIN INSERT INTO name_changes VALUES (old.id, old.name); END;
            CREATE TRIGGER customer_touch AFTER UPDATE ON customer BEGIN UPDATE customer SET updated_at = 'now' WHERE id = new.id; END;
            INSERT INTO customer VALUES (1, 'audited@example.com', 'Ada', NULL);
            """)
        plain.close()
        let keyring = FieldKeyring.generate()
        func sealedImport(_ name: String) throws -> String {
            let destination = dir.file(name)
            _ = try PlaintextConversion.importPlaintext(from: source, to: destination, key: .generate(), finishing: { (db: Connection) throws(StrongroomError) -> Void in
                do {
                    try ColumnSealing.sealInPlace([.randomized("email", in: "customer")], keyring: keyring, in: db)
                } catch {
                    throw StrongroomError(.sealedValue, "\(error)")
                }
            })
            return destination
        }
        // Another column's trigger, and one that reads no e-mail: sealed.
        _ = try sealedImport("unrelated.db")

        let again = try Connection(path: source, configuration: .plaintext)
        try again.execute(sql: "CREATE TRIGGER customer_audit_email AFTER UPDATE ON customer BEGIN INSERT INTO customer_audit VALUES (old.id, old.email); END")
        again.close()
        let error = #expect(throws: StrongroomError.self) { _ = try sealedImport("audited.db") }
        #expect(error?.message.contains("customer_audit_email") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("customer_touch") == false, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: dir.file("audited.db")))
    }

    /// Every column is checked before anything is written: a refusal for
    /// the second column leaves the first as it was, even to a caller that
    /// catches the error and commits (review of ce5c8a5: the first was
    /// sealed, the registry not written). A trigger that calls a
    /// sealed-column function is refused as planted, not as the owner's.
    @Test func aRefusedColumnLeavesEveryColumnAsItWas() throws {
        let keyring = FieldKeyring.generate()
        var configuration = Configuration(key: .generate())
        configuration.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection(path: dir.file("two.db"), configuration: configuration)
        try db.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT);
            CREATE TABLE memo(id INTEGER PRIMARY KEY, note TEXT);
            CREATE TABLE memo_audit(id, note);
            CREATE TRIGGER memo_audit_note AFTER UPDATE ON memo BEGIN INSERT INTO memo_audit VALUES (old.id, old.note); END;
            INSERT INTO customer VALUES (1, 'first@example.com');
            INSERT INTO memo VALUES (1, 'a private note');
            """)
        try db.inTransaction(.immediate) { db in
            do {
                try ColumnSealing.sealInPlace([.randomized("email", in: "customer"), .randomized("note", in: "memo")], keyring: keyring, in: db)
                Issue.record("sealing ran the audit trigger")
            } catch let error as FieldError {
                #expect(error.code == .misuse)
                #expect(error.message.contains("memo_audit_note"), "\(error.message)")
            }
        }
        #expect(try db.fetchAll(String.self, sql: "SELECT email FROM customer") == ["first@example.com"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM memo_audit") == 0)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE 'strongroom%'") == 0)

        try db.execute(sql: """
            DROP TRIGGER memo_audit_note;
            CREATE TRIGGER planted AFTER UPDATE ON customer BEGIN INSERT INTO memo_audit VALUES (new.id, strongroom_open(new.email, 'customer', 'email', new.id)); END;
            """)
        let planted = #expect(throws: StrongroomError.self) {
            try db.inTransaction(.immediate) { db in
                try ColumnSealing.sealInPlace([.randomized("email", in: "customer")], keyring: keyring, in: db)
            }
        }
        #expect(planted?.code == .untrustedSchema, "\(planted?.message ?? "")")
        #expect(try db.fetchAll(String.self, sql: "SELECT email FROM customer") == ["first@example.com"])
    }
}
