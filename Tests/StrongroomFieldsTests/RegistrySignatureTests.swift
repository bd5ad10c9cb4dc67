import Foundation
import Strongroom
import StrongroomFields
import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// Issue 50, item 4: what the operator's tools read from the database is
/// authenticated under the field keyring, or refused. The adversary holds
/// the database key (a bare connection here: what the stock `sqlcipher`
/// shell gives) and rewrites the registry and the keyring's check rows.
@Suite("Sealed columns: the registry's signature and the keyring check")
struct RegistrySignatureTests {
    let dir = TemporaryDirectory()
    let databaseKey = DatabaseKey.generate()
    let right = FieldKeyring.generate()
    let wrong = FieldKeyring.generate()

    struct Customer: Codable, Equatable, SealedRecord {
        var id: Int64?
        var email: String
        var phone: String?
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer")]
    }

    static let columns: [SealedColumn] = [.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("phone", in: "customer")]

    func queue(_ path: String, keyring: FieldKeyring) throws -> DatabaseQueue {
        var config = Configuration(key: databaseKey)
        config.seal(Self.columns, keyring: keyring, rowKeys: ["customer": ["id"]])
        return try DatabaseQueue(path: path, configuration: config)
    }

    func bare(_ path: String) throws -> Connection {
        try Connection(path: path, configuration: Configuration(key: databaseKey))
    }

    /// Three customers sealed under `right`, the registry recorded with it.
    func database(_ name: String) throws -> String {
        let path = dir.file(name)
        try queue(path, keyring: right).write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB, phone BLOB)")
            try SealedColumnRegistry.record(Self.columns, keyring: right, in: db)
            for (id, email) in [(1, "ada@example.com"), (2, "bob@example.com"), (3, "cy@example.com")] {
                try db.insert(Customer(id: Int64(id), email: email, phone: "+44 20 7946 000\(id)"), into: "customer")
            }
        }
        return path
    }

    func expectUntrusted(_ names: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: StrongroomError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .untrustedRegistry, "\(String(describing: error))", sourceLocation: sourceLocation)
        for name in names {
            #expect(error?.message.contains(name) == true, "names \(name): \(error?.message ?? "")", sourceLocation: sourceLocation)
        }
    }

    // MARK: The issue's first attack

    /// A randomized column rewritten in the registry as `indexed`, with a
    /// companion column of the adversary's: rotation and an index rebuild
    /// would write an exact 128-bit index of every value. Both are refused,
    /// naming the row, and the column stays empty.
    @Test func aRandomizedColumnRewrittenAsIndexedGetsNoIndex() throws {
        let path = try database("attack1.db")
        let adversary = try bare(path)
        try adversary.execute(sql: """
            ALTER TABLE customer ADD COLUMN leak BLOB;
            UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'leak' WHERE column_name = 'phone';
            """)
        let (grown, id) = right.addingKey()
        let rotated = try grown.activating(id)
        let queue = try queue(path, keyring: rotated)
        let registry = "strongroom_sealed_columns (customer, phone)"
        expectUntrusted([registry, "changed"]) {
            let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: rotated) }
            _ = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        }
        // Given the columns by a caller that read the registry unverified: refused all the same.
        expectUntrusted([registry]) {
            let columns = try queue.read { db in try SealedColumnRegistry.columns(in: db) }
            _ = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        }
        expectUntrusted([registry]) { _ = try BlindIndexRebuild.rebuild("leak", of: "customer", in: queue, keyring: rotated) }
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(leak) FROM customer") == 0)
        // Every value is still under key 1: nothing was re-sealed either.
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE substr(phone, 3, 4) = x'00000001'") == 3)

        // Put back as it was signed, the registry verifies again.
        try adversary.execute(sql: "UPDATE strongroom_sealed_columns SET mode = 'randomized', index_column = NULL WHERE column_name = 'phone'")
        let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: rotated) }
        let report = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        #expect(report.resealed["customer.phone"] == 3, "\(report)")
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(leak) FROM customer") == 0)
    }

    /// Every way of changing the registry without the keyring is named:
    /// a row changed, added or deleted, a blind index's state or
    /// definition, the signature itself; and a change made by the library
    /// with the keyring after one of these does not sign it over.
    @Test func everyChangeWithoutTheKeyringIsNamed() throws {
        let path = try database("changes.db")
        let adversary = try bare(path)
        try queue(path, keyring: right).write { db in
            try BlindIndexRebuild.addInPlace(BlindIndex("email_folded", on: "email", in: "customer", bits: 8, transformations: [.normalizedCaseFolded]), keyring: right, in: db)
        }
        let verify = { try RegistrySignature.verify(right, in: bare(path)) }
        try verify()
        let cases: [(sql: String, undo: String, names: [String])] = [
            ("UPDATE strongroom_sealed_columns SET mode = 'deterministic' WHERE column_name = 'phone'",
             "UPDATE strongroom_sealed_columns SET mode = 'randomized' WHERE column_name = 'phone'", ["(customer, phone) was changed"]),
            ("DELETE FROM strongroom_sealed_columns WHERE column_name = 'phone'",
             "INSERT INTO strongroom_sealed_columns VALUES ('customer', 'phone', 'randomized', NULL)", ["(customer, phone) was deleted"]),
            ("INSERT INTO strongroom_sealed_columns VALUES ('customer', 'id', 'deterministic', NULL)",
             "DELETE FROM strongroom_sealed_columns WHERE column_name = 'id'", ["(customer, id)", "added without the keyring"]),
            ("UPDATE strongroom_sealed_columns SET mode = CAST('randomized' AS BLOB) WHERE column_name = 'phone'",
             "UPDATE strongroom_sealed_columns SET mode = 'randomized' WHERE column_name = 'phone'", ["(customer, phone) was changed"]),
            ("UPDATE strongroom_blind_indexes SET state = 'building', rebuilt_through = 1",
             "UPDATE strongroom_blind_indexes SET state = 'ready', rebuilt_through = NULL", ["strongroom_blind_indexes (customer, email_folded) was changed"]),
            ("UPDATE strongroom_blind_indexes SET definition = replace(definition, '\"bits\":8', '\"bits\":128')",
             "UPDATE strongroom_blind_indexes SET definition = replace(definition, '\"bits\":128', '\"bits\":8')", ["(customer, email_folded) was changed"]),
            // The signed text holds `randomized` in hex.
            ("UPDATE strongroom_registry_signature SET signed = replace(signed, '72616E646F6D697A6564', '64657465726D696E6973746963')",
             "UPDATE strongroom_registry_signature SET signed = replace(signed, '64657465726D696E6973746963', '72616E646F6D697A6564')", ["does not verify"]),
            ("DELETE FROM strongroom_registry_signature", "", ["No signature", "(customer, phone)"]),
        ]
        let saved = try adversary.fetchAll(sql: "SELECT key_id, signed, mac FROM strongroom_registry_signature")
        for change in cases {
            try adversary.execute(sql: change.sql)
            expectUntrusted(change.names) { try verify() }
            // The library's own write with the keyring leaves it unsigned.
            try queue(path, keyring: right).write { db in try SealedColumnRegistry.record([.randomized("note", in: "customer")], keyring: right, in: db) }
            expectUntrusted(change.names) { try verify() }
            try adversary.execute(sql: "DELETE FROM strongroom_sealed_columns WHERE column_name = 'note'")
            if change.undo.isEmpty {
                try adversary.execute(sql: "INSERT INTO strongroom_registry_signature VALUES (?, ?, ?)", arguments: StatementArguments(saved[0].values))
            } else {
                try adversary.execute(sql: change.undo)
            }
            try verify()
        }
        // Another keyring's signature is refused as well.
        try RegistrySignature.confirm(wrong, in: bare(path))
        expectUntrusted(["does not verify"]) { try verify() }
    }

    /// With the keyring, the library keeps the signature through every
    /// write of the registry: a column recorded, an index added, rebuilt and
    /// dropped, a rotation (which moves it to the active key, so that the
    /// old key can be retired).
    @Test func theLibraryKeepsTheSignatureThroughItsOwnWrites() throws {
        let path = try database("writes.db")
        let queue = try queue(path, keyring: right)
        let verify = { try queue.read { db in try RegistrySignature.verify(right, in: db) } }
        let index = BlindIndex("email_folded", on: "email", in: "customer", bits: 8, transformations: [.normalizedCaseFolded])
        try BlindIndexRebuild.add(index, in: queue, keyring: right, batchSize: 2)
        try verify()
        try BlindIndexRebuild.rebuild("email_folded", of: "customer", in: queue, keyring: right, batchSize: 1)
        try verify()
        let (grown, id) = right.addingKey()
        let rotated = try grown.activating(id)
        let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: rotated) }
        _ = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        #expect(try bare(path).fetchOne(Int.self, sql: "SELECT key_id FROM strongroom_registry_signature") == Int(id))
        // Signed under key 1 again (by the old keyring): no value uses key 1,
        // but the signature does, so it is not retired; a rotation signs anew.
        try queue.write { db in try RegistrySignature.confirm(right, in: db) }
        let early = #expect(throws: FieldError.self) { _ = try queue.write { db in try FieldRotation.retire(1, from: rotated, in: db) } }
        #expect(early?.message.contains("signs the registry") == true, "\(String(describing: early))")
        _ = try FieldRotation.rotate(queue, columns: columns, keyring: rotated)
        #expect(try bare(path).fetchOne(Int.self, sql: "SELECT key_id FROM strongroom_registry_signature") == Int(id))
        let retired = try queue.write { db in try FieldRotation.retire(1, from: rotated, in: db) }
        try queue.read { db in try RegistrySignature.verify(retired, in: db) }
        try BlindIndexRebuild.drop("email_folded", of: "customer", in: queue, keyring: retired)
        try queue.read { db in try RegistrySignature.verify(retired, in: db) }
    }

    /// Rows a migration writes are signed when the runner has the keyring
    /// and the registry verified before; without it, the tools refuse them
    /// until the operator confirms.
    @Test func migrationsSignTheRowsTheyWriteOnlyWithTheKeyring() throws {
        let path = dir.file("migrated.db")
        let migrations = [
            Migration(version: 1, description: "customer", sql: """
                CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB, phone BLOB);
                CREATE TABLE IF NOT EXISTS strongroom_sealed_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT, PRIMARY KEY (table_name, column_name));
                INSERT INTO strongroom_sealed_columns VALUES ('customer', 'email', 'indexed', 'email_index');
                """),
            Migration(version: 2, description: "phone", sql: "INSERT INTO strongroom_sealed_columns VALUES ('customer', 'phone', 'randomized', NULL);"),
        ]
        var migrator = try Migrator(migrations: migrations)
        migrator.fieldKeyring = right
        try migrator.migrate(try bare(path), to: 1)
        try RegistrySignature.verify(right, in: bare(path))
        // Changed between two runs: the next migration does not sign over it.
        try bare(path).execute(sql: "UPDATE strongroom_sealed_columns SET mode = 'deterministic' WHERE column_name = 'email'")
        try migrator.migrate(try bare(path))
        expectUntrusted(["(customer, email) was changed", "(customer, phone) was added"]) { try RegistrySignature.verify(right, in: bare(path)) }

        // Without the keyring, a migration's rows are unsigned until confirmed.
        let other = dir.file("unsigned.db")
        try Migrator(migrations: migrations).migrate(try bare(other))
        expectUntrusted(["No signature", "(customer, email)", "(customer, phone)"]) { try RegistrySignature.verify(right, in: bare(other)) }
        try RegistrySignature.confirm(right, in: bare(other))
        #expect(try SealedColumnRegistry.columns(in: bare(other), keyring: right).map(\.column) == ["email", "phone"])
    }

    // MARK: The issue's second attack

    /// The check rows and the registry deleted (with its signature): a
    /// service started with another keyring that also has a key 1 must not
    /// seal under it, nor record its check. The application's own
    /// declarations say which columns hold values, and one of each must
    /// open first.
    @Test func aKeyringCheckDeletedWithTheRegistryTakesNoOtherKeyring() throws {
        let path = try database("attack2.db")
        let adversary = try bare(path)
        try adversary.execute(sql: "DELETE FROM strongroom_field_keys; DELETE FROM strongroom_sealed_columns; DROP TABLE strongroom_registry_signature")
        let before = try adversary.fetchAll(sql: "SELECT * FROM customer").map { "\($0)" }
        let error = #expect(throws: StrongroomError.self) {
            try queue(path, keyring: wrong).write { db in try db.insert(Customer(id: 4, email: "eve@example.com", phone: nil), into: "customer") }
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        #expect(error?.message.contains("key 1") == true, "\(error?.message ?? "")")
        #expect(try adversary.fetchAll(sql: "SELECT * FROM customer").map { "\($0)" } == before)
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM strongroom_field_keys") == 0)
        // The right keyring is still taken, and records its check.
        try queue(path, keyring: right).write { db in try db.insert(Customer(id: 4, email: "dee@example.com", phone: nil), into: "customer") }
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM strongroom_field_keys") == 1)
    }

    /// The same with the envelopes' key ids rewritten to one the other
    /// keyring lacks (to be put back once it had sealed and recorded its
    /// check): a value under a key id the keyring lacks is refused, not
    /// skipped, even stored as TEXT (SQLite's `||` makes text of the bytes:
    /// the e-mails here); put back, the right keyring reads every row.
    @Test func rewrittenKeyIDsAreRefusedNotSkipped() throws {
        let path = try database("attack2b.db")
        let adversary = try bare(path)
        try adversary.execute(sql: """
            DELETE FROM strongroom_field_keys; DELETE FROM strongroom_sealed_columns; DROP TABLE strongroom_registry_signature;
            UPDATE customer SET email = substr(email, 1, 2) || x'00000009' || substr(email, 7), phone = CAST(substr(phone, 1, 2) || x'00000009' || substr(phone, 7) AS BLOB);
            """)
        let error = #expect(throws: StrongroomError.self) {
            try queue(path, keyring: wrong).write { db in try db.insert(Customer(id: 4, email: "eve@example.com", phone: "+1"), into: "customer") }
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        #expect(error?.message.contains("key 9") == true, "\(error?.message ?? "")")
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") == 3)
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM strongroom_field_keys") == 0)
        try adversary.execute(sql: "UPDATE customer SET email = CAST(substr(CAST(email AS BLOB), 1, 2) || x'00000001' || substr(CAST(email AS BLOB), 7) AS BLOB), phone = CAST(substr(phone, 1, 2) || x'00000001' || substr(phone, 7) AS BLOB)")
        let read = try queue(path, keyring: right).read { db in try db.fetchAll(Customer.self, sql: "SELECT id, email, phone FROM customer ORDER BY id") }
        #expect(read.map(\.email) == ["ada@example.com", "bob@example.com", "cy@example.com"])
    }

    // MARK: Review of item 4 (a helper acting as the database-key holder)

    /// A trigger the adversary plants on the registry fires inside the
    /// library's own write of it, which then signed the adversary's row too:
    /// an honest `fields index add` marked the randomized phone `indexed`
    /// into `leak`, signed. A write of the registry from a trigger is
    /// refused, and nothing is signed.
    @Test func aTriggerOnTheRegistryGetsNothingSigned() throws {
        let path = try database("trigger.db")
        let adversary = try bare(path)
        try adversary.execute(sql: """
            ALTER TABLE customer ADD COLUMN leak BLOB;
            \(BlindIndexRegistry.createTableSQL.replacingOccurrences(of: "IF NOT EXISTS main.", with: ""));
            CREATE TRIGGER strongroom_x AFTER INSERT ON strongroom_blind_indexes BEGIN
              UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'leak' WHERE column_name = 'phone';
            END;
            """)
        try RegistrySignature.verify(right, in: adversary)
        let queue = try queue(path, keyring: right)
        let error = #expect(throws: StrongroomError.self) {
            try BlindIndexRebuild.add(BlindIndex("phone_last", on: "phone", in: "customer", bits: 8, transformations: [.digitsOnly, .suffix(4)]), in: queue, keyring: right)
        }
        #expect(error?.code == .untrustedSchema && error?.message.contains("strongroom_x") == true, "\(String(describing: error))")
        #expect(try adversary.fetchOne(String.self, sql: "SELECT mode FROM strongroom_sealed_columns WHERE column_name = 'phone'") == "randomized")
        try adversary.execute(sql: "DROP TRIGGER strongroom_x; UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'leak' WHERE column_name = 'phone'")
        expectUntrusted(["(customer, phone) was changed"]) { try RegistrySignature.verify(right, in: adversary) }
    }

    /// The same through a migration run with the keyring: a trigger on the
    /// table the migration updates writes the registry, and the runner
    /// signed the result. The migration now fails, and so does one through
    /// a foreign key action on a registry table rebuilt with a foreign key.
    @Test func aMigrationSignsNoRegistryWriteItDidNotMake() throws {
        let path = try database("migration-trigger.db")
        let adversary = try bare(path)
        try adversary.execute(sql: """
            ALTER TABLE customer ADD COLUMN note TEXT; ALTER TABLE customer ADD COLUMN leak BLOB;
            CREATE TRIGGER customer_audit AFTER UPDATE OF note ON customer BEGIN
              UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'leak' WHERE column_name = 'phone';
            END;
            """)
        var migrator = try Migrator(migrations: [Migration(version: 1, description: "notes", sql: "UPDATE customer SET note = 'n';")])
        migrator.fieldKeyring = right
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(try bare(path)) }
        #expect(error?.message.contains("customer_audit") == true, "\(String(describing: error))")
        try RegistrySignature.verify(right, in: adversary)
        #expect(try adversary.fetchOne(String.self, sql: "SELECT mode FROM strongroom_sealed_columns WHERE column_name = 'phone'") == "randomized")

        // A foreign key action instead of a trigger.
        try adversary.execute(sql: """
            DROP TRIGGER customer_audit;
            CREATE TABLE flag(mode TEXT PRIMARY KEY); INSERT INTO flag VALUES ('randomized'), ('indexed');
            CREATE TABLE registry_copy AS SELECT * FROM strongroom_sealed_columns;
            DROP TABLE strongroom_sealed_columns;
            CREATE TABLE strongroom_sealed_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
              mode TEXT NOT NULL REFERENCES flag(mode) ON UPDATE CASCADE, index_column TEXT, PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns SELECT * FROM registry_copy; DROP TABLE registry_copy;
            """)
        // The rows are as signed, but the table's foreign key is a way around every write the library checks.
        expectUntrusted(["strongroom_sealed_columns", "not the table Strongroom creates"]) { try RegistrySignature.verify(right, in: adversary) }
        var cascading = try Migrator(migrations: [Migration(version: 1, description: "flags", sql: "-- strongroom: immediate-foreign-keys\nUPDATE flag SET mode = 'deterministic' WHERE mode = 'randomized';")])
        cascading.fieldKeyring = right
        try cascading.migrate(try bare(path))
        #expect(try adversary.fetchOne(String.self, sql: "SELECT mode FROM strongroom_sealed_columns WHERE column_name = 'phone'") == "deterministic")
        // The cascade's change is not signed: the signature still holds the rows as they were.
        try adversary.execute(sql: "PRAGMA foreign_keys = OFF; UPDATE strongroom_sealed_columns SET mode = 'randomized' WHERE column_name = 'phone'")
        try adversary.execute(sql: """
            CREATE TABLE registry_copy AS SELECT * FROM strongroom_sealed_columns; DROP TABLE strongroom_sealed_columns;
            CREATE TABLE strongroom_sealed_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT, PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns SELECT * FROM registry_copy; DROP TABLE registry_copy;
            """)
        try RegistrySignature.verify(right, in: adversary)
    }

    /// `fields rotate` with another keyring after the checks, the registry
    /// and its signature were deleted: it recorded its own check (its
    /// columns, found by their envelopes, were not among those checked).
    @Test func aRotationWithAnotherKeyringRecordsNoCheck() throws {
        let path = try database("rotate-other.db")
        let adversary = try bare(path)
        try adversary.execute(sql: "DROP TABLE strongroom_field_keys; DROP TABLE strongroom_sealed_columns; DROP TABLE strongroom_registry_signature")
        let queue = try DatabaseQueue(path: path, configuration: Configuration(key: databaseKey))
        let error = #expect(throws: StrongroomError.self) {
            let columns = try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: wrong) }
            _ = try FieldRotation.rotate(queue, columns: columns, keyring: wrong)
        }
        #expect(error?.code == .wrongFieldKeyring, "\(String(describing: error))")
        #expect(try adversary.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'strongroom_field_keys'") == 0)
        // Sealing in place with another keyring is refused the same way.
        let sealing = #expect(throws: StrongroomError.self) {
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS memo(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO memo VALUES (1, 'x')")
                try ColumnSealing.sealInPlace([.randomized("body", in: "memo")], keyring: wrong, in: db)
            }
        }
        #expect(sealing?.code == .wrongFieldKeyring, "\(String(describing: sealing))")
    }

    /// A change that `quote()` does not show (text cut at a NUL byte) or
    /// that Swift's `==` does not (a KELVIN SIGN for K, NFD for NFC) is
    /// named like any other: the signature covers the bytes.
    @Test func theSignatureCoversEveryByte() throws {
        let path = try database("bytes.db")
        let adversary = try bare(path)
        for (change, undo) in [
            ("UPDATE strongroom_sealed_columns SET index_column = 'email_index' || char(0) || 'zzz' WHERE column_name = 'email'",
             "UPDATE strongroom_sealed_columns SET index_column = 'email_index' WHERE column_name = 'email'"),
            ("UPDATE strongroom_sealed_columns SET table_name = 'customer' || char(0) WHERE column_name = 'phone'",
             "UPDATE strongroom_sealed_columns SET table_name = 'customer' WHERE column_name = 'phone'"),
        ] {
            try adversary.execute(sql: change)
            expectUntrusted(["strongroom_sealed_columns"]) { try RegistrySignature.verify(right, in: adversary) }
            try adversary.execute(sql: undo)
            try RegistrySignature.verify(right, in: adversary)
        }
        // Names Swift's == takes as one: K and KELVIN SIGN, é precomposed and decomposed.
        for (signed, planted) in [("Kunde", "\u{212A}unde"), ("caf\u{E9}", "cafe\u{301}")] {
            let other = dir.file("names-\(signed.unicodeScalars.count).db")
            let db = try bare(other)
            try db.execute(sql: "CREATE TABLE \"\(signed)\"(id INTEGER PRIMARY KEY, v BLOB)")
            try SealedColumnRegistry.record([.randomized("v", in: signed)], keyring: right, in: db)
            try db.execute(sql: "UPDATE strongroom_sealed_columns SET table_name = ?", arguments: [planted])
            expectUntrusted(["strongroom_sealed_columns"]) { try RegistrySignature.verify(right, in: db) }
        }
    }

    /// A database bound to a `FieldContext` that it does not record (the
    /// application passes it to `seal`): the check of a newly activated
    /// key opened the old values without the context and refused the right
    /// keyring.
    @Test func aNewKeyIsRecordedUnderTheApplicationsContext() throws {
        let path = dir.file("context.db")
        let context = try FieldContext("tenant-7")
        func app(_ keyring: FieldKeyring) throws -> DatabaseQueue {
            var config = Configuration(key: databaseKey)
            config.seal(Self.columns, keyring: keyring, context: context, rowKeys: ["customer": ["id"]])
            return try DatabaseQueue(path: path, configuration: config)
        }
        try app(right).write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB, phone BLOB)")
            try db.insert(Customer(id: 1, email: "ada@example.com", phone: "+1"), into: "customer")
        }
        let (grown, id) = right.addingKey()
        try app(try grown.activating(id)).write { db in try db.insert(Customer(id: 2, email: "bob@example.com", phone: "+2"), into: "customer") }
        #expect(try bare(path).fetchAll(Int.self, sql: "SELECT key_id FROM strongroom_field_keys ORDER BY 1") == [1, Int(id)])
    }

    // MARK: Second review of item 4

    /// The registry's tables must be the tables Strongroom creates: a view
    /// given `type = 'table'` with `writable_schema` (whose rows changed
    /// between the library's check and its signature, once a trigger on
    /// another table fired), a UNIQUE index that makes the library's own
    /// `INSERT OR REPLACE` delete another row, or a column that takes a
    /// default on conflict, would all get rows the adversary chose signed.
    @Test func onlyTheTablesStrongroomCreatesAreSigned() throws {
        let index = BlindIndex("phone_last", on: "phone", in: "customer", bits: 8, transformations: [.digitsOnly, .suffix(4)])
        // A UNIQUE index the adversary adds on the blind index registry.
        let uniquePath = try database("unique.db")
        try queue(uniquePath, keyring: right).write { db in try BlindIndexRebuild.addInPlace(index, keyring: right, in: db) }
        let adversary = try bare(uniquePath)
        try adversary.execute(sql: "CREATE UNIQUE INDEX evil ON strongroom_blind_indexes(table_name)")
        expectUntrusted(["strongroom_blind_indexes", "evil"]) { try RegistrySignature.verify(right, in: adversary) }
        let refused = #expect(throws: StrongroomError.self) {
            try BlindIndexRebuild.add(BlindIndex("email_domain", on: "email", in: "customer", bits: 8, transformations: [.normalizedCaseFolded]),
                                      in: try queue(uniquePath, keyring: right), keyring: right)
        }
        #expect(refused?.code == .untrustedRegistry, "\(String(describing: refused))")
        #expect(try adversary.fetchAll(String.self, sql: "SELECT name FROM strongroom_blind_indexes") == ["phone_last"])
        try adversary.execute(sql: "DROP INDEX evil")
        try RegistrySignature.verify(right, in: adversary)

        // A column that takes the adversary's value on conflict.
        let conflictPath = try database("conflict.db")
        let other = try bare(conflictPath)
        try other.execute(sql: """
            CREATE TABLE copy AS SELECT * FROM strongroom_sealed_columns; DROP TABLE strongroom_sealed_columns;
            CREATE TABLE strongroom_sealed_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL,
              index_column TEXT NOT NULL ON CONFLICT REPLACE DEFAULT 'leak', PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns SELECT table_name, column_name, mode, coalesce(index_column, '') FROM copy WHERE 0;
            DROP TABLE copy;
            """)
        expectUntrusted(["strongroom_sealed_columns", "not the table Strongroom creates"]) { try RegistrySignature.verify(right, in: other) }

        // A view given the type of a table.
        let viewPath = try database("view.db")
        let planter = try bare(viewPath)
        try planter.execute(sql: """
            CREATE TABLE sc_real AS SELECT * FROM strongroom_sealed_columns; CREATE TABLE flag(x);
            DROP TABLE strongroom_sealed_columns;
            CREATE VIEW strongroom_sealed_columns AS SELECT table_name, column_name,
              CASE WHEN column_name = 'phone' AND EXISTS (SELECT 1 FROM flag) THEN 'indexed' ELSE mode END AS mode,
              CASE WHEN column_name = 'phone' AND EXISTS (SELECT 1 FROM flag) THEN 'leak' ELSE index_column END AS index_column FROM sc_real;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET type = 'table' WHERE name = 'strongroom_sealed_columns';
            PRAGMA writable_schema = OFF;
            """)
        // SQLite 3.46 may refuse the planted schema outright; either way nothing verifies.
        let error = #expect(throws: (any Error).self) { try RegistrySignature.verify(right, in: bare(viewPath)) }
        if let error = error as? StrongroomError, error.code == .untrustedRegistry {
            #expect(error.message.contains("not the table Strongroom creates"), "\(error.message)")
        }
    }

    // MARK: The format page

    /// "The registry's signature" on SealedValueFormat.md: Strongroom signs
    /// the page's registry to the page's bytes, and Python's standard
    /// library with `cryptography`'s HKDF, from the page's text alone,
    /// computes the same MAC.
    @Test func thePagesSignatureExampleIsWhatStrongroomSignsAndPythonChecks() async throws {
        let page = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md").standardized.path, encoding: .utf8)
        func field(_ name: String) throws -> String {
            // The names are padded to 9 characters: "mac key  …", "mac      …".
            let prefix = name.padding(toLength: 9, withPad: " ", startingAt: 0)
            let line = try #require(page.split(separator: "\n").first { $0.hasPrefix(prefix) }, "the page has a line \(name)")
            return String(line.dropFirst(prefix.count))
        }
        let signed = try field("signed"), macKey = try field("mac key"), mac = try field("mac")
        let keyringPath = dir.file("demo.keyring")
        let demo = "strongroom field keyring 1\nactive 1\nkey 1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
        #expect(FileManager.default.createFile(atPath: keyringPath, contents: Data(demo.utf8), attributes: [.posixPermissions: 0o600]))
        let keyring = try FieldKeyring.load(from: keyringPath)
        let db = try bare(dir.file("page.db"))
        try db.execute(sql: """
            CREATE TABLE strongroom_sealed_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, mode TEXT NOT NULL, index_column TEXT, PRIMARY KEY (table_name, column_name));
            INSERT INTO strongroom_sealed_columns VALUES ('customer', 'phone', 'randomized', NULL), ('customer', 'email', 'indexed', 'email_index');
            """)
        try RegistrySignature.confirm(keyring, in: db)
        let stored = try #require(try db.fetchOne(sql: "SELECT key_id, signed, hex(mac) AS mac FROM strongroom_registry_signature"))
        #expect(try stored.decode(Int.self, column: "key_id") == 1)
        #expect(try stored.decode(String.self, column: "signed") == signed)
        #expect(try stored.decode(String.self, column: "mac").lowercased() == mac)

        let python = try #require(ProcessRunner.which("python3"))
        let script = """
            import hmac, hashlib, sys
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            from cryptography.hazmat.primitives import hashes
            key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"strongroom.field.v1",
                       info=b"registry-signature\\x00" + (1).to_bytes(4, "big")).derive(bytes(range(32)))
            print(key.hex(), hmac.new(key, sys.stdin.buffer.read(), hashlib.sha256).hexdigest())
            """
        let result = try await ProcessRunner.run(python, ["-c", script], input: signed)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(macKey) \(mac)")
    }
}
