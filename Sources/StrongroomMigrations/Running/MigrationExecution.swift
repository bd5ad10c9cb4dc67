import Foundation
import Logging
import Strongroom
import StrongroomFields

/// Runs one migration: foreign keys off outside the transaction (unless it
/// asked for immediate checks), its statements and its history row in one
/// transaction, `foreign_key_check` before commit, rollback on any failure.
struct MigrationExecution {
    let migration: Migration
    let db: Connection
    let logger: Logger
    let progress: (@Sendable (MigrationEvent) -> Void)?
    /// Keeps the registry's signature (``Migrator/fieldKeyring``).
    var fieldKeyring: FieldKeyring? = nil

    func run() throws(MigrationError) -> AppliedMigration {
        let start = ContinuousClock.now
        let sqliteVersion: SQLiteVersion
        do { sqliteVersion = try SQLiteVersion.of(db) } catch { throw .database(error) }
        if case .sql(let statements, transactional: true) = migration.body {
            try refuseTransactionControl(statements)
        }
        // Foreign keys as the connection has them; whatever the migration
        // does to the setting (a no-transaction file may switch it off), the
        // next migration and the caller get it back.
        let enforced: Bool
        do { enforced = try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1 } catch { throw .database(error) }
        defer {
            if enforced { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        }
        // Deferred checks: foreign keys off while it runs, checked before
        // its history row commits. PRAGMA foreign_keys is a no-op inside a
        // transaction, so it goes off before BEGIN. A no-transaction file
        // runs with them on (cascades fire), unless it rebuilds tables.
        let checkForeignKeys = enforced && migration.foreignKeyChecks == .deferred
        if checkForeignKeys && (migration.isTransactional || migration.rebuildsTables(sqliteVersion: sqliteVersion)) {
            do { try db.execute(sql: "PRAGMA foreign_keys = OFF") } catch { throw .database(error) }
        }

        switch migration.body {
        case .sql(let statements, transactional: false):
            // Declared `no-transaction` (VACUUM and the like): each statement
            // runs on its own, then the history row in a transaction.
            for (index, statement) in statements.enumerated() {
                do {
                    try runStatement(statement, index: index, count: statements.count, sqliteVersion: sqliteVersion, inTransaction: false)
                } catch {
                    // A transaction the file opened itself ends with it.
                    db.rollbackQuietly()
                    throw error
                }
            }
            if db.isInsideTransaction {
                db.rollbackQuietly()
                throw MigrationError(.transactionControl, "Migration \(migration.version) (\(migration.file ?? migration.description)) left a transaction open; it was rolled back, with what ran in it since its BEGIN, and the history row was not written. End the transaction in the file with COMMIT.",
                                     version: migration.version, file: migration.file)
            }
            return try inTransaction(start: start, checkForeignKeys: checkForeignKeys) {}
        case .sql(let statements, transactional: true):
            return try inTransaction(start: start, checkForeignKeys: checkForeignKeys) { () throws(MigrationError) in
                for (index, statement) in statements.enumerated() {
                    try runStatement(statement, index: index, count: statements.count, sqliteVersion: sqliteVersion, inTransaction: true)
                }
            }
        case .swift(let body):
            return try inTransaction(start: start, checkForeignKeys: checkForeignKeys) { () throws(MigrationError) in
                report(.statementStarted(version: migration.version, index: 1, count: 1))
                do {
                    try body(db)
                } catch let error as MigrationError {
                    throw error
                } catch let error as StrongroomError {
                    throw failure(error.message, statement: nil, underlying: error)
                } catch {
                    throw failure("\(error)", statement: nil, underlying: nil)
                }
            }
        }
    }

    /// A transactional migration may not end or nest the runner's
    /// transaction: refused before anything of it runs.
    private func refuseTransactionControl(_ statements: [String]) throws(MigrationError) {
        guard let index = statements.firstIndex(where: Migration.isTransactionControl) else { return }
        throw MigrationError(.transactionControl, "Migration \(migration.version) (\(location(of: index))) contains `\(SQLScript.normalized(statements[index]))`: the runner runs each migration in its own transaction with its history row, so BEGIN, COMMIT, END and ROLLBACK cannot appear in it. Remove the statement (use SAVEPOINT to nest), or mark the file `-- strongroom: no-transaction`. Nothing of it ran.",
                             version: migration.version, file: migration.file, statement: statements[index])
    }

    /// `file, line N` for a SQL file's statement, else the description.
    private func location(of index: Int) -> String {
        guard let file = migration.file else { return "\(migration.description), statement \(index + 1)" }
        return "\(file), line \(line(of: index))"
    }

    private func line(of index: Int) -> Int {
        index < migration.statementLines.count ? migration.statementLines[index] : 0
    }

    /// BEGIN IMMEDIATE, `body`, foreign_key_check, the history row, COMMIT;
    /// ROLLBACK on any error.
    private func inTransaction(start: ContinuousClock.Instant, checkForeignKeys: Bool, _ body: () throws(MigrationError) -> Void) throws(MigrationError) -> AppliedMigration {
        do {
            try db.execute(sql: "BEGIN IMMEDIATE TRANSACTION")
        } catch {
            throw failure("cannot start its transaction: \(error.message)", statement: nil, underlying: error)
        }
        do throws(MigrationError) {
            let rowKeys: SealedRowKeyCheck
            do { rowKeys = try SealedRowKeyCheck.noting(db) } catch { throw failure("cannot note its sealed values' row keys: \(error.message)", statement: nil, underlying: error) }
            // Whether the registry is signed as it stands, read in this
            // transaction: only then is what the migration makes of it signed.
            var signsRegistry = false
            do throws(StrongroomError) {
                if let fieldKeyring {
                    signsRegistry = try RegistrySignature.verifies(fieldKeyring, in: db)
                    // What a trigger would write into the registry is not the migration's: refused.
                    if signsRegistry { db.refuseWritesFromTriggers(to: RegistrySignature.protectedTables) }
                }
            } catch {
                throw failure("cannot read the registry of sealed columns: \(error.message)", statement: nil, underlying: error)
            }
            // The body may not end the runner's transaction: a COMMIT is
            // turned into a rollback (nothing of it is committed), and a
            // ROLLBACK (then perhaps BEGIN again) is noticed.
            let ended = TransactionEnds()
            db.guardTransaction(onCommit: { ended.commits += 1; return false }, onRollback: { ended.rollbacks += 1 })
            defer { db.guardTransaction(onCommit: nil, onRollback: nil) }
            do throws(MigrationError) {
                try body()
            } catch {
                if ended.commits + ended.rollbacks > 0 { throw transactionEnded(ended) }
                throw error
            }
            db.guardTransaction(onCommit: nil, onRollback: nil)
            if ended.commits + ended.rollbacks > 0 { throw transactionEnded(ended) }
            let moved: String?
            do { moved = try rowKeys.moved(in: db) } catch { throw failure("cannot check its sealed values' row keys: \(error.message)", statement: nil, underlying: error) }
            if let moved { throw failure(moved + ".", statement: nil, underlying: nil) }
            if checkForeignKeys { try checkForeignKeyViolations() }
            if signsRegistry, let fieldKeyring {
                do { try RegistrySignature.confirm(fieldKeyring, in: db) } catch {
                    throw failure("cannot sign the registry of sealed columns: \(error.message)", statement: nil, underlying: error)
                }
            }
            let entry = try historyEntry(start: start)
            do {
                try MigrationHistory.create(db)
                try MigrationHistory.record(entry, in: db)
                try db.execute(sql: "COMMIT TRANSACTION")
            } catch {
                throw failure("cannot record it: \(error.message)", statement: nil, underlying: error)
            }
            logger.info("applied migration", metadata: [
                "version": "\(migration.version)", "description": "\(migration.description)", "duration_ms": "\(entry.durationMs)",
            ])
            return entry
        } catch {
            db.rollbackQuietly()
            throw error
        }
    }

    /// Progress goes to the callback and to the logger (statements at debug,
    /// rebuilds at info).
    private func report(_ event: MigrationEvent) {
        progress?(event)
        switch event {
        case .statementStarted(let version, let index, let count):
            logger.debug("migration statement", metadata: ["version": "\(version)", "statement": "\(index)/\(count)"])
        case .rowsCopied(let version, let table, let rows):
            logger.info("rebuilt table", metadata: ["version": "\(version)", "table": "\(table)", "rows_copied": "\(rows)"])
        default:
            break
        }
    }

    private func runStatement(_ statement: String, index: Int, count: Int, sqliteVersion: SQLiteVersion, inTransaction: Bool) throws(MigrationError) {
        report(.statementStarted(version: migration.version, index: index + 1, count: count))
        do {
            if Migration.isRebuild(statement) {
                guard let definition = CreateTableDefinition(statement) else {
                    throw MigrationError(.unsupportedRebuild, "The rebuild directive must precede a CREATE TABLE statement with the table's new definition.")
                }
                let rows = try TableRebuild.rebuild(db, table: definition.table, to: statement)
                report(.rowsCopied(version: migration.version, table: definition.table, rows: rows))
            } else if let rewrite = AlterTableRewrite.parse(statement, sqliteVersion: sqliteVersion) {
                switch rewrite {
                case .dropColumn(let table, let column):
                    let rows = try TableRebuild.dropColumn(db, table: table, column: column)
                    report(.rowsCopied(version: migration.version, table: table, rows: rows))
                case .renameColumn(let table, let from, let to):
                    let rows = try TableRebuild.renameColumn(db, table: table, from: from, to: to)
                    report(.rowsCopied(version: migration.version, table: table, rows: rows))
                }
            } else {
                try db.execute(sql: statement)
            }
        } catch let error as MigrationError {
            throw MigrationError(error.code, "Migration \(migration.version) (\(migration.file ?? migration.description)) failed at statement \(index + 1) of \(count) \(outcome(inTransaction: inTransaction)): \(error.message)",
                                 version: migration.version, file: migration.file, statement: statement, underlying: error.underlying)
        } catch let error as StrongroomError {
            throw MigrationError(.migrationFailed, "Migration \(migration.version) (\(migration.file ?? migration.description)) failed at statement \(index + 1) of \(count) \(outcome(inTransaction: inTransaction)): \(error.message)",
                                 version: migration.version, file: migration.file, statement: statement, underlying: error)
        } catch {
            throw failure("\(error)", statement: statement, underlying: nil)
        }
    }

    /// The run started with no row breaking a foreign key (the runner checks
    /// that first), so any violation now is this migration's: it fails,
    /// naming the rows, or a foreign key SQLite cannot check.
    /// What a failure leaves, said truthfully for each kind of migration.
    private func outcome(inTransaction: Bool) -> String {
        if inTransaction { return "and was rolled back; the database is still at the previous version" }
        if db.isInsideTransaction {
            return "inside the transaction the file opened itself, which was rolled back; statements before that transaction took effect (declared no-transaction)"
        }
        return "outside a transaction (declared no-transaction); statements before it took effect"
    }

    private func checkForeignKeyViolations() throws(MigrationError) {
        let name = "Migration \(migration.version) (\(migration.file ?? migration.description))"
        let outcome = migration.isTransactional ? "it was rolled back"
            : "its statements took effect (no-transaction) and its history row was not written"
        let violations: [ForeignKeyViolation]
        do {
            violations = try ForeignKeyViolation.all(in: db)
        } catch {
            throw MigrationError(.foreignKeyViolation, "\(name) leaves a foreign key SQLite cannot check (\(error.message)): a parent key must be its table's PRIMARY KEY or UNIQUE; \(outcome).",
                                 version: migration.version, file: migration.file, underlying: error)
        }
        guard !violations.isEmpty else { return }
        throw MigrationError(.foreignKeyViolation, "\(name) would leave \(ForeignKeyViolation.describe(violations)); \(outcome).",
                             version: migration.version, file: migration.file)
    }

    private func transactionEnded(_ ended: TransactionEnds) -> MigrationError {
        let what = ended.commits > 0 ? "tried to COMMIT the runner's transaction; the COMMIT was refused and" : "ended the runner's transaction with ROLLBACK; what it did before that is lost and"
        return MigrationError(.transactionControl, "Migration \(migration.version) (\(migration.file ?? migration.description)) \(what) the migration was rolled back; no history row was written. Keep COMMIT and ROLLBACK out of migrations (use savepoints to nest).",
                              version: migration.version, file: migration.file)
    }

    private func historyEntry(start: ContinuousClock.Instant) throws(MigrationError) -> AppliedMigration {
        let elapsed = ContinuousClock.now - start
        let schemaHash: String
        do { schemaHash = try SchemaSnapshot(db).hash } catch { throw .database(error) }
        return AppliedMigration(
            version: migration.version, description: migration.description, checksum: migration.checksum,
            appliedAt: Date(), durationMs: Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000),
            toolVersion: Migrator.toolVersion, schemaHash: schemaHash, kind: "migrate")
    }

    private func failure(_ message: String, statement: String?, underlying: StrongroomError?) -> MigrationError {
        MigrationError(.migrationFailed, "Migration \(migration.version) (\(migration.file ?? migration.description)) failed and was rolled back: \(message)",
                       version: migration.version, file: migration.file, statement: statement, underlying: underlying)
    }
}

/// One row of `PRAGMA foreign_key_check`: a row whose parent is missing.
struct ForeignKeyViolation: CustomStringConvertible {
    let table: String
    /// Nil for a `WITHOUT ROWID` table (its rowid means nothing).
    let rowid: Int64?
    let parent: String

    var description: String { "\(table) rowid \(rowid.map(String.init) ?? "?") → \(parent)" }

    /// Every violation in the database; throws for a foreign key SQLite
    /// cannot check ("foreign key mismatch").
    static func all(in db: Connection) throws(StrongroomError) -> [ForeignKeyViolation] {
        // A WITHOUT ROWID table's "rowid" in foreign_key_check means nothing.
        let withoutRowid = Set(try db.fetchAll(sql: "SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND sql IS NOT NULL").compactMap { row in
            CreateTableDefinition(row[1].description)?.isWithoutRowid == true ? row[0].description : nil
        })
        return try db.fetchAll(sql: "PRAGMA foreign_key_check").map { row in
            let table = row[0].description
            let rowid: Int64? = if case .integer(let n) = row[1], !withoutRowid.contains(table) { n } else { nil }
            return ForeignKeyViolation(table: table, rowid: rowid, parent: row[2].description)
        }
    }

    /// "N row(s) breaking a foreign key (first ten)".
    static func describe(_ violations: [ForeignKeyViolation]) -> String {
        "\(violations.count) row(s) breaking a foreign key (\(violations.prefix(10).map(\.description).joined(separator: "; "))\(violations.count > 10 ? "; …" : ""))"
    }
}

/// What the commit and rollback hooks saw while a migration's body ran.
private final class TransactionEnds: @unchecked Sendable {
    // Sendable: the hooks run on the connection's thread, inside the body's
    // calls, and the counts are read on that thread after it.
    var commits = 0
    var rollbacks = 0
}
