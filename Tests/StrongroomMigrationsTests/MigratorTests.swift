import Foundation
import Strongroom
import StrongroomMigrations
import StrongroomTestSupport
import Testing

@Suite("Applying migrations")
struct MigratorTests {
    let f = MigrationFixture()

    init() {
        f.write("0001_create_customer.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            INSERT INTO customer(name) VALUES ('Ada'), ('Grace');
            """)
        f.write("0002_create_order.sql", """
            CREATE TABLE "order"(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id) ON DELETE CASCADE, total REAL);
            INSERT INTO "order"(customer_id, total) SELECT id, 10 FROM customer;
            """)
        f.write("0010_add_email.sql", "ALTER TABLE customer ADD COLUMN email TEXT;\n")
    }

    @Test func appliesInOrderWithHistory() throws {
        let db = try f.open()
        let report = try f.migrator().migrate(db)
        #expect(report.fromVersion == 0)
        #expect(report.toVersion == 10)
        #expect(report.applied.map(\.version) == [1, 2, 10])
        let history = try f.migrator().appliedMigrations(db)
        #expect(history.map(\.description) == ["create customer", "create order", "add email"])
        #expect(history.allSatisfy { $0.checksum.count == 64 && $0.schemaHash.count == 64 && $0.toolVersion.hasPrefix("strongroom") && $0.kind == "migrate" })
        #expect(Set(history.map(\.schemaHash)).count == 3)
        #expect(try f.count(db, "\"order\"") == 2)
        // Running again does nothing.
        #expect(try f.migrator().migrate(db).applied.isEmpty)
    }

    /// Issue 9: through a queue, `migrate` inside `write` failed with
    /// SQLite's "cannot start a transaction within a transaction"; the
    /// error must say what to do instead.
    @Test func migratingInsideATransactionSaysWhatToDo() throws {
        let queue = try DatabaseQueue(path: f.databasePath, configuration: Configuration(key: f.key))
        let migrator = try f.migrator()
        let error = #expect(throws: MigrationError.self) { try queue.write { db in try migrator.migrate(db) } }
        #expect(error?.message.contains("migrator.migrate(queue)") == true, "\(error?.message ?? "")")
        #expect(try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'customer'") } == 0)
    }

    @Test func migratesThroughAQueueAndAPoolWithOneCall() throws {
        let queue = try DatabaseQueue(path: f.databasePath, configuration: Configuration(key: f.key))
        #expect(try f.migrator().migrate(queue).toVersion == 10)
        #expect(try f.migrator().migrate(queue).applied.isEmpty)
        let poolPath = f.dir.file("pool.db")
        let pool = try DatabasePool(path: poolPath, configuration: Configuration(key: f.key))
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master") } == 0)
        #expect(try f.migrator().migrate(pool, to: 2).applied.map(\.version) == [1, 2])
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM \"order\"") } == 2)
        #expect(try f.migrator().migrate(pool).applied.map(\.version) == [10])
        #expect(try pool.read { try $0.fetchAll(sql: "PRAGMA table_info(customer)").count } == 3)
        // A report prints as a sentence, not a struct dump.
        #expect(try f.migrator().migrate(queue).description == "Already at version 10: nothing to apply.")
        let fresh = try DatabaseQueue(path: f.dir.file("fresh.db"), configuration: Configuration(key: f.key))
        let report = try f.migrator().migrate(fresh, to: 1)
        #expect(report.description.hasPrefix("Migrated from version 0 to 1: 1 create customer ("))
    }

    @Test func aCheapUpToDateCheckAndTheCompletedVersions() async throws {
        let queue = try DatabaseQueue(path: f.databasePath, configuration: Configuration(key: f.key))
        let migrator = try f.migrator()
        #expect(try await queue.asyncRead { try migrator.isUpToDate($0) } == false)
        #expect(try await queue.asyncRead { try migrator.completedVersions($0) } == [])
        try await migrator.asyncMigrate(queue, to: 2)
        #expect(try await queue.asyncRead { try migrator.completedVersions($0) } == [1, 2])
        #expect(try await queue.asyncRead { try migrator.isUpToDate($0) } == false)
        let report = try await migrator.asyncMigrate(queue)
        #expect(report.applied.map(\.version) == [10])
        #expect(try await queue.asyncRead { try migrator.isUpToDate($0) } == true)
    }

    /// Issue 9: every public result type prints readably, not as a struct dump.
    @Test func migrationResultsPrintReadably() throws {
        let queue = try DatabaseQueue(path: f.databasePath, configuration: Configuration(key: f.key))
        let migrator = try f.migrator()
        let plan = try queue.inDatabase { try migrator.plan($0, to: 1) }
        #expect("\(plan[0])".hasPrefix("1 create customer ("), "\(plan[0])")
        let collected = Collected()
        try migrator.migrate(queue, to: 1) { event in collected.append("\(event)") }
        let events = collected.lines
        #expect(events.first?.hasPrefix("migration 1 create customer started (1 of 1)") == true, "\(events)")
        #expect(events.last?.hasPrefix("migration 1 finished in ") == true, "\(events)")
        let applied = try queue.inDatabase { try migrator.appliedMigrations($0) }
        #expect("\(applied[0])".hasPrefix("1 create customer, applied "), "\(applied[0])")
        let key = f.key
        let results = MigrationFleet.migrate([f.databasePath], with: migrator, jobs: 1) { _ in Configuration(key: key) }
        #expect("\(results[0])" == "\(f.databasePath): migrated from version 1 to 10 (2 applied)", "\(results[0])")
    }

    /// Issue 9: a sync `migrate(queue)` written in an async function (an
    /// app's async startup) resolved to the async overload and did not compile.
    @Test func aSyncMigrateInsideAnAsyncFunctionStaysSync() async throws {
        let queue = try DatabaseQueue(path: f.databasePath, configuration: Configuration(key: f.key))
        let migrator = try f.migrator()
        var report: MigrationReport?
        report = try migrator.migrate(queue, to: 1)
        #expect(report?.applied.map(\.version) == [1])
        #expect(try queue.read { try migrator.completedVersions($0) } == [1])
    }

    /// GRDB's eraseDatabaseOnSchemaChange, for development: an edited
    /// migration erases the database and migrates it again.
    @Test func anEditedMigrationErasesTheDatabaseWhenAskedFor() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        try db.execute(sql: "INSERT INTO customer(name) VALUES ('Linus')")
        f.write("0001_create_customer.sql", """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, nickname TEXT);
            INSERT INTO customer(name) VALUES ('Ada');
            """)
        // By default the edit is refused, and nothing changes.
        #expect((#expect(throws: MigrationError.self) { try f.migrator().migrate(db) })?.code == .checksumMismatch)
        #expect(try f.count(db, "customer") == 3)
        var migrator = try f.migrator()
        migrator.erasesDatabaseOnSchemaChange = true
        let report = try migrator.migrate(db)
        #expect(report.fromVersion == 0 && report.toVersion == 10)
        #expect(try f.count(db, "customer") == 1)
        #expect(try db.fetchAll(sql: "PRAGMA table_info(customer)").count == 4)
        #expect(try migrator.verify(db).isClean)
        // Nothing changed since: the next run erases nothing.
        #expect(try migrator.migrate(db).applied.isEmpty)
        #expect(try f.count(db, "customer") == 1)
    }

    /// An app that can be downgraded opts in to open a database a newer
    /// version migrated further; refusing stays the default.
    @Test func aNewerDatabaseOpensOnlyWhenAllowed() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let older = try Migrator(migrations: f.migrator().migrations.filter { $0.version <= 2 })
        #expect((#expect(throws: MigrationError.self) { try older.migrate(db) })?.code == .databaseNewer)
        var tolerant = older
        tolerant.allowsNewerDatabase = true
        #expect(try tolerant.migrate(db).applied.isEmpty)
        #expect(try tolerant.isUpToDate(db))
        // A gap (an unknown version below a known one) is still refused.
        let gap = try Migrator(migrations: f.migrator().migrations.filter { $0.version != 2 })
        var tolerantGap = gap
        tolerantGap.allowsNewerDatabase = true
        #expect(throws: MigrationError.self) { try tolerantGap.migrate(db) }
    }

    @Test func migratesUpToATarget() throws {
        let db = try f.open()
        #expect(try f.migrator().migrate(db, to: 2).toVersion == 2)
        #expect(try f.migrator().plan(db).map(\.version) == [10])
        #expect(throws: MigrationError.self) { try f.migrator().migrate(db, to: 7) }
    }

    @Test func failingMigrationRollsBackCompletelyAndSaysWhere() throws {
        f.write("0011_broken.sql", """
            CREATE TABLE audit(id INTEGER PRIMARY KEY);
            INSERT INTO audit VALUES (1);
            INSERT INTO no_such_table VALUES (1);
            """)
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.version == 11)
        #expect(error?.file == "0011_broken.sql")
        #expect(error?.statement == "INSERT INTO no_such_table VALUES (1);")
        #expect(error?.message.contains("statement 3 of 3") == true)
        #expect(error?.message.contains("no such table: no_such_table") == true)
        // The earlier migrations stay; the failed one left nothing behind.
        #expect(try f.migrator().currentVersion(db) == 10)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
        #expect(!db.isInsideTransaction)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
        // Fixed, it applies.
        f.write("0011_broken.sql", "CREATE TABLE audit(id INTEGER PRIMARY KEY);")
        #expect(try f.migrator().migrate(db).applied.map(\.version) == [11])
    }

    @Test func baselineCoversEveryVersionBelowIt() throws {
        // A database made by hand at the schema of version 2.
        let db = try f.open()
        try db.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE "order"(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id) ON DELETE CASCADE, total REAL);
            """)
        try f.migrator().baseline(db, version: 2)
        #expect(try f.migrator().plan(db).map(\.version) == [10])
        #expect(try f.migrator().migrate(db).applied.map(\.version) == [10])
        let report = try f.migrator().verify(db)
        #expect(report.isClean, "\(report.findings)")
        #expect(report.currentVersion == 10)
        // A target at or below the baseline is already reached.
        #expect(try f.migrator().migrate(db, to: 1).applied.isEmpty)
    }

    @Test func transactionControlInAMigrationIsRefusedNamingFileAndLine() throws {
        for (control, line) in [("COMMIT;", 3), ("END TRANSACTION;", 3), ("ROLLBACK;", 3), ("BEGIN;", 3), ("commit", 3)] {
            f.write("0011_commits.sql", """
                CREATE TABLE audit(id INTEGER PRIMARY KEY);
                -- finish early
                \(control)
                INSERT INTO audit VALUES (1);
                """)
            let db = try f.open()
            try f.migrator().migrate(db, to: 10)
            let error = #expect(throws: MigrationError.self, "\(control)") { try f.migrator().migrate(db) }
            #expect(error?.code == .transactionControl, "\(control)")
            #expect(error?.message.contains("0011_commits.sql, line \(line)") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("rolled back") == false, "\(error?.message ?? "")")
            // Nothing of it ran.
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
            #expect(try f.migrator().currentVersion(db) == 10)
            #expect(!db.isInsideTransaction)
        }
        // Savepoints nest inside the migration's transaction and stay allowed.
        f.write("0011_commits.sql", "SAVEPOINT a;\nCREATE TABLE audit(id INTEGER PRIMARY KEY);\nRELEASE a;\nSAVEPOINT b;\nINSERT INTO audit VALUES (1);\nROLLBACK TO b;\nRELEASE b;\n")
        let db = try f.open()
        #expect(try f.migrator().migrate(db).toVersion == 11)
        #expect(try f.count(db, "audit") == 0)
    }

    @Test func aSwiftMigrationThatEndsItsTransactionIsReportedTruthfully() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 20, description: "commits itself") { db in
            try db.execute(sql: "CREATE TABLE audit(id INTEGER PRIMARY KEY)")
            try db.execute(sql: "COMMIT")
        })
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.code == .transactionControl)
        // Its COMMIT is refused: nothing of it is committed, and the message says so.
        #expect(error?.message.contains("COMMIT") == true && error?.message.contains("rolled back") == true, "\(error?.message ?? "")")
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
        // No history row was written for it outside a transaction.
        #expect(try migrator.currentVersion(db) == 10)
        #expect(!db.isInsideTransaction)
    }

    @Test func aSwiftMigrationThatRollsBackAndBeginsAgainIsCaught() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 20, description: "rolls back and begins") { db in
            try db.execute(sql: "DELETE FROM customer")
            try db.execute(sql: "ROLLBACK")
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "CREATE TABLE audit(id INTEGER PRIMARY KEY)")
        })
        // Savepoints, including one rolled back, stay allowed.
        try migrator.register(Migration(version: 21, description: "savepoints") { db in
            try? db.inSavepoint { db in
                try db.execute(sql: "DELETE FROM customer")
                throw MigrationError(.migrationFailed, "undo")
            }
        })
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db, to: 20) }
        #expect(error?.code == .transactionControl, "\(String(describing: error))")
        #expect(try migrator.currentVersion(db) == 10)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
        #expect(!db.isInsideTransaction)
        var savepoints = try f.migrator()
        try savepoints.register(migrator.migrations.first { $0.version == 21 }!)
        #expect(try savepoints.migrate(db).toVersion == 21)
        #expect(try f.count(db, "customer") == 2)
    }

    @Test func aSwiftMigrationThatCommitsAndBeginsAgainIsCaught() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 20, description: "commits and begins") { db in
            try db.execute(sql: "CREATE TABLE audit(id INTEGER PRIMARY KEY)")
            try db.execute(sql: "COMMIT")
            try db.execute(sql: "BEGIN")
        })
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.code == .transactionControl)
        #expect(try migrator.currentVersion(db) == 10)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'audit'") == 0)
        #expect(!db.isInsideTransaction)
    }

    @Test func aNoTransactionMigrationKeepsForeignKeysAsTheConnectionHasThem() throws {
        // Outside a transaction nothing can defer the checks: the cascade fires.
        f.write("0011_purge.sql", "-- strongroom: no-transaction\nDELETE FROM customer WHERE name = 'Ada';\nVACUUM;\n")
        let db = try f.open()
        try f.migrator().migrate(db)
        #expect(try f.count(db, "\"order\"") == 1)
        #expect(try f.migrator().verify(db).isClean)
    }

    @Test func aNoTransactionMigrationNeverLeavesItsOwnTransactionOpen() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0011_own.sql", "-- strongroom: no-transaction\nCREATE TABLE t(x);\nBEGIN;\nINSERT INTO t VALUES (1);\nINSERT INTO nope VALUES (1);\nCOMMIT;\n")
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.message.contains("rolled back") == true, "\(error?.message ?? "")")
        #expect(!db.isInsideTransaction)
        #expect(try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1)
        #expect(try f.count(db, "t") == 0)
        #expect(try f.migrator().currentVersion(db) == 10)
        // One that leaves a transaction open is refused, and what it left is rolled back.
        f.write("0011_own.sql", "-- strongroom: no-transaction\nBEGIN;\nCREATE TABLE u(x);\n")
        let open = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(open?.code == .transactionControl, "\(String(describing: open))")
        #expect(!db.isInsideTransaction)
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'u'") == 0)
        #expect(try f.migrator().currentVersion(db) == 10)
    }

    @Test func tablesWhoseNamesStartWithSqliteAreNotSkippedByDriftChecks() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        try db.execute(sql: "CREATE TABLE sqliteUsers(id INTEGER PRIMARY KEY)")
        let findings = try f.migrator().verify(db).findings
        #expect(findings.contains { $0.code == .schemaDrift && $0.message.lowercased().contains("sqliteusers") }, "\(findings)")
    }

    @Test func migrationErrorsPrintTheirMessageWhereSwiftPrintsErrors() throws {
        f.write("0011_broken.sql", "INSERT INTO no_such_table VALUES (1);")
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(try f.open()) }
        let described = (error as (any Error)?)?.localizedDescription ?? ""
        #expect(described.contains("0011_broken.sql") && described.contains("no such table"), "\(described)")
    }

    @Test func aFailureSaysWhichMigrationsThisRunAppliedBeforeIt() throws {
        f.write("0011_broken.sql", "INSERT INTO no_such_table VALUES (1);")
        let db = try f.open()
        try f.migrator().migrate(db, to: 1)
        let error = #expect(throws: MigrationError.self) { try f.migrator().migrate(db) }
        #expect(error?.appliedBeforeFailure == [2, 10])
    }

    @Test func dryRunChangesNoByte() throws {
        let db = try f.open()
        try f.migrator().migrate(db, to: 1)
        db.close()
        let before = Fixtures.bytes(of: f.databasePath)
        var config = Configuration(key: f.key)
        config.readOnly = true
        let readOnly = try Connection(path: f.databasePath, configuration: config)
        let plan = try f.migrator().plan(readOnly)
        #expect(plan.map(\.version) == [2, 10])
        #expect(plan.map(\.file) == ["0002_create_order.sql", "0010_add_email.sql"])
        readOnly.close()
        #expect(Fixtures.bytes(of: f.databasePath) == before)
    }

    @Test func swiftMigrationsRunBesideFiles() throws {
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 5, description: "seed vip") { db in
            try db.execute(sql: "INSERT INTO customer(name) VALUES ('VIP')")
        })
        let db = try f.open()
        try migrator.migrate(db)
        #expect(try migrator.appliedMigrations(db).map(\.version) == [1, 2, 5, 10])
        #expect(try f.count(db, "customer") == 3)
        let error = #expect(throws: MigrationError.self) {
            var m = try f.migrator()
            try m.register(Migration(version: 2, description: "clash") { _ in })
        }
        #expect(error?.code == .duplicateVersion)
    }

    @Test func throwingSwiftMigrationRollsBack() throws {
        struct Refused: Error {}
        var migrator = try f.migrator()
        try migrator.register(Migration(version: 20, description: "half done") { db in
            try db.execute(sql: "DELETE FROM customer")
            throw Refused()
        })
        let db = try f.open()
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.version == 20)
        #expect(try f.count(db, "customer") == 2)
        #expect(try migrator.currentVersion(db) == 10)
    }

    @Test func noTransactionDirectiveRunsVacuum() throws {
        f.write("0011_compact.sql", """
            -- strongroom: no-transaction
            DELETE FROM "order";
            VACUUM;
            """)
        let db = try f.open()
        let report = try f.migrator().migrate(db)
        #expect(report.toVersion == 11)
        #expect(try f.count(db, "\"order\"") == 0)
    }

    @Test func progressReportsStatementsAndRows() throws {
        final class Events: @unchecked Sendable {
            let lock = NSLock()
            var items: [MigrationEvent] = []
            func add(_ e: MigrationEvent) { lock.lock(); items.append(e); lock.unlock() }
        }
        f.write("0011_drop_email.sql", "ALTER TABLE customer DROP COLUMN email;")
        f.write("0012_rebuild_order.sql", """
            -- strongroom: rebuild
            CREATE TABLE "order"(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id) ON DELETE CASCADE, total REAL NOT NULL DEFAULT 0);
            """)
        let events = Events()
        try f.migrator().migrate(try f.open()) { events.add($0) }
        let statements = events.items.compactMap { event -> String? in
            if case .statementStarted(let v, let i, let n) = event { return "\(v):\(i)/\(n)" }
            return nil
        }
        #expect(statements == ["1:1/2", "1:2/2", "2:1/2", "2:2/2", "10:1/1", "11:1/1", "12:1/1"])
        let copied = events.items.compactMap { event -> String? in
            if case .rowsCopied(let v, let table, let rows) = event { return "\(v):\(table):\(rows)" }
            return nil
        }
        if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
            // SQLite 3.35+ drops the column itself: no rebuild, no rows copied.
            #expect(copied == ["12:order:2"])
        } else {
            // SQLite 3.15 has no DROP COLUMN: the runner rebuilds customer.
            #expect(copied == ["11:customer:2", "12:order:2"])
        }
        #expect(events.items.filter { if case .migrationFinished = $0 { return true }; return false }.count == 5)
    }

    @Test func progressAlsoReachesTheCallersLogger() throws {
        f.write("0011_drop_email.sql", "ALTER TABLE customer DROP COLUMN email;")
        f.write("0012_rebuild_order.sql", """
            -- strongroom: rebuild
            CREATE TABLE "order"(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id) ON DELETE CASCADE, total REAL NOT NULL DEFAULT 0);
            """)
        var migrator = try f.migrator()
        let (logger, store) = CapturingLogHandler.logger()
        migrator.logger = logger
        try migrator.migrate(try f.open())
        #expect(store.lines.contains { $0.contains("migration statement") && $0.contains("1/2") })
        let rebuilt = store.lines.filter { $0.contains("rebuilt table") }
        #expect(rebuilt.contains { $0.contains("\"table\": order") && $0.contains("\"rows_copied\": 2") && $0.contains("\"version\": 12") }, "\(rebuilt)")
        if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
            // SQLite 3.35+ drops the column itself: nothing rebuilt for 11.
            #expect(rebuilt.count == 1, "\(rebuilt)")
        } else {
            // SQLite 3.15 has no DROP COLUMN: the runner rebuilds customer.
            #expect(rebuilt.count == 2, "\(rebuilt)")
            #expect(rebuilt.contains { $0.contains("\"table\": customer") && $0.contains("\"rows_copied\": 2") && $0.contains("\"version\": 11") }, "\(rebuilt)")
        }
        #expect(store.lines.filter { $0.contains("applied migration") }.count == 5)
    }
}

@Suite("Migration files")
struct MigrationFileTests {
    let f = MigrationFixture()

    @Test(arguments: ["1-first.sql", "abc_first.sql", "0000_zero.sql", "0003_.sql", "0003.sql"])
    func malformedNamesAreErrorsNamingTheFile(name: String) throws {
        f.write(name, "SELECT 1;")
        let error = #expect(throws: MigrationError.self) { try f.migrator() }
        #expect(error?.code == .malformedName)
        #expect(error?.message.contains(name) == true)
    }

    @Test func duplicateVersionsAreErrors() throws {
        f.write("0001_a.sql", "SELECT 1;")
        f.write("001_b.sql", "SELECT 1;")
        let error = #expect(throws: MigrationError.self) { try f.migrator() }
        #expect(error?.code == .duplicateVersion)
        #expect(error?.message.contains("0001_a.sql") == true && error?.message.contains("001_b.sql") == true)
    }

    @Test func gapsAndOtherFilesAreFine() throws {
        f.write("0001_a.sql", "SELECT 1;")
        f.write("0007_b.sql", "SELECT 1;")
        f.write("README.md", "notes")
        #expect(try f.migrator().migrations.map(\.version) == [1, 7])
        #expect(throws: MigrationError.self) { try Migrator(directory: f.dir.file("missing")) }
    }
}

/// Defects the review of the new migrator options found, each before its fix.
@Suite("Migrator options: review")
struct MigratorOptionReviewTests {
    let f = MigrationFixture()

    init() {
        f.write("0001_a.sql", "CREATE TABLE a(id INTEGER PRIMARY KEY);\n")
        f.write("0002_b.sql", "CREATE TABLE b(id INTEGER PRIMARY KEY);\n")
        f.write("0010_c.sql", "CREATE TABLE c(id INTEGER PRIMARY KEY);\n")
    }

    /// isUpToDate must not let a launch skip the refusals migrate would make.
    @Test func isUpToDateIsFalseForANewerOrEditedDatabase() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        let older = try Migrator(migrations: f.migrator().migrations.filter { $0.version <= 2 })
        #expect(try older.isUpToDate(db) == false)
        f.write("0002_b.sql", "CREATE TABLE b(id INTEGER PRIMARY KEY, x);\n")
        #expect(try f.migrator().isUpToDate(db) == false)
    }

    /// allowsNewerDatabase migrates nothing: a known version still pending
    /// would run on a schema this app does not know.
    @Test func allowingANewerDatabaseNeverRunsAPendingMigration() throws {
        let db = try f.open()
        let all = try f.migrator().migrations
        try Migrator(migrations: all.filter { $0.version != 2 }).migrate(db)   // a newer build had 1 and 10
        var older = try Migrator(migrations: all.filter { $0.version <= 2 })   // this app knows 1 and 2
        older.allowsNewerDatabase = true
        #expect((#expect(throws: MigrationError.self) { try older.migrate(db) })?.code == .databaseNewer)
        #expect(try f.count(db, "sqlite_master WHERE name = 'b'") == 0)
    }

    /// Erasing drops main's tables even when a TEMP table has the same name,
    /// and never erases for a run that would fail on its target.
    @Test func eraseHitsMainAndChecksTheTargetFirst() throws {
        let db = try f.open()
        try f.migrator().migrate(db)
        f.write("0001_a.sql", "CREATE TABLE a(id INTEGER PRIMARY KEY, changed);\n")
        var migrator = try f.migrator()
        migrator.erasesDatabaseOnSchemaChange = true
        #expect((#expect(throws: MigrationError.self) { try migrator.migrate(db, to: 7) })?.code == .invalidVersion)
        #expect(try f.count(db, "c") == 0, "nothing was erased")
        try db.execute(sql: "CREATE TEMP TABLE a(x)")
        #expect(try migrator.migrate(db).toVersion == 10)
        #expect(try db.fetchAll(sql: "PRAGMA main.table_info(a)").count == 2)
    }
}
