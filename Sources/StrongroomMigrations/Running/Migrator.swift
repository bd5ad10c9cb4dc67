import Foundation
public import Logging
public import Strongroom
public import StrongroomFields

/// Upgrades a database's schema with numbered migrations, each atomic, with a
/// history, checksums, a lock between runners, and table rebuilds SQLite's
/// `ALTER TABLE` cannot do.
///
/// ```swift
/// var migrator = try Migrator(directory: "Migrations")
/// migrator.register(Migration(version: 9, description: "backfill") { db in
///     try db.execute(sql: "UPDATE customer SET tier = 'gold' WHERE total > 1000")
/// })
/// let db = try Connection(path: "app.db", configuration: Configuration(key: key))
/// let report = try migrator.migrate(db)
/// print("now at version \(report.toVersion)")
/// ```
///
/// Each migration runs in its own `BEGIN IMMEDIATE` transaction together with
/// its history row: it is applied completely or not at all, and the database
/// is never left half-migrated ("dirty"). A failure rolls back and names the
/// version, file, statement and SQLite's message.
public struct Migrator: Sendable {
    /// The version string written into each history row.
    public static let toolVersion = "strongroom 0.3.0"

    /// The migrations, by version.
    public internal(set) var migrations: [Migration]
    /// How long to wait for another runner's lock. Default 30 seconds.
    public var lockTimeout: Duration = .seconds(30)
    /// **For development only**: when the applied migrations no longer match
    /// the known ones (a file was edited, removed or renumbered), erase every
    /// table, view, index and trigger of the database and migrate it again
    /// from scratch, instead of failing with
    /// ``MigrationError/Code/checksumMismatch``. GRDB calls it
    /// `eraseDatabaseOnSchemaChange`. Every row is lost: never set it in a
    /// shipped app. Default `false`.
    ///
    /// ```swift
    /// var migrator = try Migrator(directory: "Migrations")
    /// #if DEBUG
    /// migrator.erasesDatabaseOnSchemaChange = true
    /// #endif
    /// ```
    public var erasesDatabaseOnSchemaChange = false
    /// Opens a database that a newer version of the app migrated further
    /// (applied versions above every known one) instead of refusing it with
    /// ``MigrationError/Code/databaseNewer``: for apps that can be
    /// downgraded and whose newer migrations only add what an older version
    /// can ignore. Nothing is migrated then. Default `false`.
    public var allowsNewerDatabase = false
    /// The field keyring: SQL migrations may then call the sealed-column
    /// functions (`strongroom_seal`, `strongroom_open`,
    /// `strongroom_blind_index`, `strongroom_index`), which the runner adds
    /// to the connection it migrates for its run only (an app connection
    /// carries none), and it keeps the registry's signature
    /// (`RegistrySignature`) as migrations change the sealed columns and
    /// blind indexes they record: the migrations are the operator's own
    /// declarations. Inside each migration's transaction, a registry that
    /// verified before it is signed again after it; one that did not (a
    /// row changed without the keyring) is left for the operator to check
    /// (`strongroom fields confirm`). `strongroom migrate --field-keys`
    /// sets it. Default nil: migrations that change the registry leave it
    /// unsigned, and the tools that act on it refuse it until confirmed.
    public var fieldKeyring: FieldKeyring?
    /// The field context the lent functions bind values to (a tenant or
    /// database identifier, see `FieldContext`). nil: the context of the
    /// connection being migrated when it seals (`Configuration.seal(…,
    /// context:)`), else the one the database records. A context that
    /// differs from either is refused.
    public var fieldContext: FieldContext?
    /// Where the runner logs each migration (never bound values or keys).
    public var logger: Logger = Logger(label: "strongroom.migrations", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The SQL migrations in `directory` (`NNNN_description.sql`).
    public init(directory: String) throws(MigrationError) {
        migrations = try MigrationDirectory.load(directory)
    }

    /// The given migrations.
    public init(migrations: [Migration]) throws(MigrationError) {
        self.migrations = []
        for migration in migrations { try register(migration) }
    }

    /// Adds a migration (SQL or Swift) beside the others.
    public mutating func register(_ migration: Migration) throws(MigrationError) {
        if let existing = migrations.first(where: { $0.version == migration.version }) {
            throw MigrationError(.duplicateVersion, "Version \(migration.version) is used by both \(existing.file ?? existing.description) and \(migration.file ?? migration.description).", version: migration.version)
        }
        migrations.append(migration)
        migrations.sort { $0.version < $1.version }
    }

    // MARK: Reading the state

    /// The highest applied version, 0 for a database never migrated.
    public func currentVersion(_ db: Connection) throws(MigrationError) -> Int {
        do { return try MigrationHistory.currentVersion(db) } catch { throw .database(error) }
    }

    /// The history rows, by version.
    public func appliedMigrations(_ db: Connection) throws(MigrationError) -> [AppliedMigration] {
        do { return try MigrationHistory.applied(db) } catch { throw .database(error) }
    }

    /// True when every migration is applied (or covered by a baseline): a
    /// cheap check at launch, reading the history table only.
    ///
    /// ```swift
    /// if try !queue.read({ db in try migrator.isUpToDate(db) }) { try migrator.migrate(queue) }
    /// ```
    /// False too when `migrate` would refuse the database (a newer
    /// database, an edited migration), so that a launch that checks this
    /// first still meets those refusals in `migrate`.
    public func isUpToDate(_ db: Connection) throws(MigrationError) -> Bool {
        let applied = try appliedMigrations(db)
        guard blockingHistoryFindings(applied).isEmpty else { return false }
        let done = Self.coveredVersions(applied)
        return migrations.allSatisfy { done($0.version) }
    }

    /// The versions of the known migrations that are applied (or covered by
    /// a baseline), ascending: what GRDB calls the applied identifiers.
    public func completedVersions(_ db: Connection) throws(MigrationError) -> [Int] {
        let done = Self.coveredVersions(try appliedMigrations(db))
        return migrations.map(\.version).filter(done)
    }

    /// The migrations a run would apply, in order, up to `target` (all when nil).
    /// Reads only: a dry run.
    public func plan(_ db: Connection, to target: Int? = nil) throws(MigrationError) -> [PlannedMigration] {
        let version: SQLiteVersion
        do { version = try SQLiteVersion.of(db) } catch { throw .database(error) }
        return try pending(db, to: target).map { migration in
            let statements: Int
            if case .sql(let list, _) = migration.body { statements = list.count } else { statements = 1 }
            return PlannedMigration(version: migration.version, description: migration.description, file: migration.file,
                                    statementCount: statements, rebuildsTables: migration.rebuildsTables(sqliteVersion: version))
        }
    }

    private func pending(_ db: Connection, to target: Int?) throws(MigrationError) -> [Migration] {
        let applied = try appliedMigrations(db)
        try checkApplied(applied)
        let done = Self.coveredVersions(applied)
        try checkTarget(target, done: done)
        let pending = migrations.filter { !done($0.version) && (target == nil || $0.version <= target!) }
        // A newer database let in by allowsNewerDatabase is never migrated:
        // what is pending here would run on a schema this app does not know.
        let newest = migrations.map(\.version).max() ?? 0
        if let newer = applied.map(\.version).filter({ $0 > newest }).min(), let first = pending.first {
            throw MigrationError(.databaseNewer, "Version \(newer) is applied, newer than this app's migrations, while version \(first.version) is not: it cannot run on that schema. Upgrade the app.", version: newer)
        }
        return pending
    }

    private func checkTarget(_ target: Int?, done: (Int) -> Bool) throws(MigrationError) {
        if let target, target > 0, !migrations.contains(where: { $0.version == target }), !done(target) {
            throw MigrationError(.invalidVersion, "There is no migration with version \(target).", version: target)
        }
    }

    /// Whether a version counts as applied: it has a history row, or it is at
    /// or below a baseline (a baseline adopts the schema of every version up
    /// to it).
    static func coveredVersions(_ applied: [AppliedMigration]) -> (Int) -> Bool {
        let rows = Set(applied.map(\.version))
        let baseline = applied.filter { $0.kind == "baseline" }.map(\.version).max() ?? 0
        return { version in version <= baseline || rows.contains(version) }
    }

    /// for: the first of `verify`'s history findings becomes the error.
    private func checkApplied(_ applied: [AppliedMigration]) throws(MigrationError) {
        guard let finding = blockingHistoryFindings(applied).first else { return }
        if finding.code == .unknownApplied {
            throw MigrationError(.databaseNewer, finding.message + " Upgrade the app.", version: finding.version)
        }
        throw MigrationError(.checksumMismatch, finding.message + " Restore the original file and put the change in a new migration; `strongroom verify` lists every difference.",
                             version: finding.version, file: finding.file)
    }

    /// The history findings that stop a run: all of them, except versions
    /// above every known one when ``allowsNewerDatabase`` is set.
    private func blockingHistoryFindings(_ applied: [AppliedMigration]) -> [VerificationFinding] {
        let newest = migrations.map(\.version).max() ?? 0
        return historyFindings(applied).filter { finding in
            !(allowsNewerDatabase && finding.code == .unknownApplied && (finding.version ?? 0) > newest)
        }
    }

    /// Applied versions the migrations do not know, and applied SQL
    /// migrations whose file changed since.
    func historyFindings(_ applied: [AppliedMigration]) -> [VerificationFinding] {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        var findings: [VerificationFinding] = []
        for entry in applied {
            guard let migration = known[entry.version] else {
                findings.append(VerificationFinding(code: .unknownApplied, version: entry.version, file: nil,
                    message: "Version \(entry.version) (\(entry.description)) is applied but no migration in the directory has that version: the database is newer than the app."))
                continue
            }
            if entry.kind == "migrate", case .sql = migration.body, migration.checksum != entry.checksum {
                findings.append(VerificationFinding(code: .changedAfterApplied, version: entry.version, file: migration.file,
                    message: "Migration \(migration.file ?? String(entry.version)) changed after it was applied on \(entry.appliedAt): what it runs now differs from what ran."))
            }
        }
        return findings
    }

    // MARK: Migrating

    /// Applies the pending migrations to `db`, in order, up to `target`.
    ///
    /// Takes the migration lock on the database file first (another runner
    /// waits up to ``lockTimeout``). Each migration runs in a transaction of
    /// its own, so `db` must not be inside one: with a queue or a pool, pass
    /// the queue or the pool itself (`try migrator.migrate(queue)`).
    ///
    /// - Throws: ``MigrationError``: ``MigrationError/Code/migrationFailed`` (the
    ///   failing migration was rolled back), ``MigrationError/Code/checksumMismatch``,
    ///   ``MigrationError/Code/databaseNewer``, ``MigrationError/Code/lockTimeout``,
    ///   ``MigrationError/Code/foreignKeyViolation``.
    @discardableResult
    public func migrate(_ db: Connection, to target: Int? = nil, progress: (@Sendable (MigrationEvent) -> Void)? = nil) throws(MigrationError) -> MigrationReport {
        if db.isInsideTransaction {
            throw MigrationError(.database, "Migrations run in transactions of their own, so they cannot run inside one (such as a queue's write block): call try migrator.migrate(queue) or try migrator.migrate(pool), or migrate a connection outside any transaction. Nothing was migrated.",
                                 underlying: StrongroomError(.misuse, "migrate was called inside a transaction.", path: db.path))
        }
        let lock = db.path == ":memory:" ? nil : try MigrationLock(databasePath: db.path, timeout: lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        if erasesDatabaseOnSchemaChange, !blockingHistoryFindings(try appliedMigrations(db)).isEmpty {
            // A run that would fail on its target erases nothing.
            try checkTarget(target, done: { _ in false })
            try erase(db)
        }
        // Read the state only once the lock is held: another runner may just
        // have applied what was pending.
        let queue = try pending(db, to: target)
        // The sealed-column SQL functions, for this run only: the connection
        // may be the app's, which carries no key-bearing function.
        if let fieldKeyring, !queue.isEmpty {
            // The schema checked against the migrations first: no trigger or
            // view they did not create may run beside the functions.
            try refuseUntrustedSQL(db)
            return try Self.typed {
                try FieldFunctions.lending(fieldKeyring, context: fieldContext, to: db) { () throws -> MigrationReport in
                    try migrate(queue, db, progress: progress)
                }
            }
        }
        return try migrate(queue, db, progress: progress)
    }

    /// Applies `queue`, the pending migrations, once the lock is held.
    private func migrate(_ queue: [Migration], _ db: Connection, progress: (@Sendable (MigrationEvent) -> Void)?) throws(MigrationError) -> MigrationReport {
        let from = try currentVersion(db)
        try checkForeignKeysBeforeRunning(queue, db)
        var applied: [AppliedMigration] = []
        for (index, migration) in queue.enumerated() {
            progress?(.migrationStarted(version: migration.version, description: migration.description, index: index + 1, count: queue.count))
            let entry: AppliedMigration
            do {
                entry = try MigrationExecution(migration: migration, db: db, logger: logger, progress: progress, fieldKeyring: fieldKeyring).run()
            } catch {
                var error = error
                error.appliedBeforeFailure = applied.map(\.version)
                throw error
            }
            applied.append(entry)
            progress?(.migrationFinished(version: migration.version, duration: .milliseconds(entry.durationMs)))
        }
        return MigrationReport(fromVersion: from, toVersion: try currentVersion(db), applied: applied)
    }

    /// Applies the pending migrations through `queue`, on its connection and
    /// outside any transaction, while no other access of the queue runs.
    ///
    /// ```swift
    /// let queue = try DatabaseQueue(path: "app.db", configuration: config)
    /// try migrator.migrate(queue)
    /// ```
    @discardableResult
    public func migrate(_ queue: DatabaseQueue, to target: Int? = nil, progress: (@Sendable (MigrationEvent) -> Void)? = nil) throws(MigrationError) -> MigrationReport {
        try Self.typed { try queue.inDatabase { db in try migrate(db, to: target, progress: progress) } }
    }

    /// Applies the pending migrations through `pool`'s writer, outside any
    /// transaction. Reads go on meanwhile on the snapshots they started with.
    ///
    /// ```swift
    /// let pool = try DatabasePool(path: "app.db", configuration: config)
    /// try migrator.migrate(pool)
    /// ```
    @discardableResult
    public func migrate(_ pool: DatabasePool, to target: Int? = nil, progress: (@Sendable (MigrationEvent) -> Void)? = nil) throws(MigrationError) -> MigrationReport {
        try Self.typed { try pool.writeWithoutTransaction { db in try migrate(db, to: target, progress: progress) } }
    }

    /// ``migrate(_:to:progress:)-(DatabaseQueue,_,_)`` through a queue, from async code: waits
    /// for the queue without blocking a thread of the cooperative pool. (A
    /// name of its own: `migrate(queue)` in an `async` function stays the
    /// blocking call.)
    ///
    /// ```swift
    /// let report = try await migrator.asyncMigrate(queue)
    /// ```
    @discardableResult
    public func asyncMigrate(_ queue: DatabaseQueue, to target: Int? = nil) async throws -> MigrationReport {
        try await queue.withConnection { db in try self.migrate(db, to: target) }
    }

    /// ``migrate(_:to:progress:)-(DatabasePool,_,_)`` through a pool, from async code: runs
    /// on the writer's own thread, off the cooperative thread pool, while reads go on.
    ///
    /// ```swift
    /// let report = try await migrator.asyncMigrate(pool)
    /// ```
    @discardableResult
    public func asyncMigrate(_ pool: DatabasePool, to target: Int? = nil) async throws -> MigrationReport {
        try await pool.asyncWriteWithoutTransaction { db in try self.migrate(db, to: target) }
    }

    /// Drops every table, view, index and trigger (the history too), with
    /// foreign keys off, in one transaction: see ``erasesDatabaseOnSchemaChange``.
    private func erase(_ db: Connection) throws(MigrationError) {
        logger.warning("erasing the database: its migrations changed", metadata: ["path": "\(db.path)"])
        do {
            let foreignKeys = try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { if foreignKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try db.inTransaction(.immediate) { db in
                for kind in ["trigger", "view", "table"] {
                    for name in try db.fetchAll(String.self, sql: "SELECT name FROM main.sqlite_master WHERE type = ? AND \(SQLScript.isUserObjectName())", arguments: [kind]) {
                        // main.: a TEMP object of the same name would be found first.
                        try db.execute(sql: "DROP \(kind.uppercased()) IF EXISTS main.\(SQLScript.quotedIdentifier(name))")
                    }
                }
                // sqlite_sequence keeps AUTOINCREMENT counters of dropped tables.
                if try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE name = 'sqlite_sequence'") == 1 {
                    try db.execute(sql: "DELETE FROM sqlite_sequence")
                }
                try db.execute(sql: "PRAGMA user_version = 0")
            }
        } catch let error as StrongroomError {
            throw .database(error)
        } catch {
            throw MigrationError(.database, "\(error)")
        }
    }

    /// A queue's or pool's error, as a ``MigrationError``.
    private static func typed<T>(_ body: () throws -> T) throws(MigrationError) -> T {
        do {
            return try body()
        } catch let error as MigrationError {
            throw error
        } catch let error as StrongroomError {
            throw .database(error)
        } catch {
            throw MigrationError(.database, "\(error)")
        }
    }

    /// A migration with deferred foreign key checks fails on any row that
    /// breaks a foreign key when it ends; it cannot tell rows that were
    /// broken before from its own. So such rows (or a foreign key SQLite
    /// cannot check) stop the run before anything runs, saying what to do.
    private func checkForeignKeysBeforeRunning(_ queue: [Migration], _ db: Connection) throws(MigrationError) {
        guard queue.contains(where: { $0.foreignKeyChecks == .deferred }) else { return }
        let enforced: Bool
        do { enforced = try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") == 1 } catch { throw .database(error) }
        guard enforced else { return }
        let remedy = "fix the database first (`strongroom verify` lists what is wrong), or mark the pending migrations `-- strongroom: immediate-foreign-keys` (in Swift, `foreignKeyChecks: .immediate`), which check each statement as it runs instead. Nothing was migrated."
        let violations: [ForeignKeyViolation]
        do {
            violations = try ForeignKeyViolation.all(in: db)
        } catch {
            throw MigrationError(.foreignKeyViolation, "The database already has a foreign key SQLite cannot check (\(error.message)), so migrations cannot check theirs: \(remedy)", underlying: error)
        }
        guard !violations.isEmpty else { return }
        throw MigrationError(.foreignKeyViolation, "The database already has \(ForeignKeyViolation.describe(violations)), and migrations cannot tell them from rows they break: \(remedy)")
    }

    /// Records `version` as applied without running it, to adopt a database
    /// whose schema already matches that version: every version at or below
    /// it then counts as applied (``plan(_:to:)``, ``migrate(_:to:progress:)-(Connection,_,_)``
    /// and ``verify(_:)`` agree), and migrations above it run.
    public func baseline(_ db: Connection, version: Int) throws(MigrationError) {
        let lock = db.path == ":memory:" ? nil : try MigrationLock(databasePath: db.path, timeout: lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        guard let migration = migrations.first(where: { $0.version == version }) else {
            throw MigrationError(.invalidVersion, "There is no migration with version \(version) to baseline.", version: version)
        }
        guard try appliedMigrations(db).isEmpty else {
            throw MigrationError(.invalidVersion, "The database already has migration history; baseline adopts only a database never migrated.", version: version)
        }
        do {
            try db.inTransaction(.immediate) { db in
                try MigrationHistory.create(db)
                try MigrationHistory.record(AppliedMigration(
                    version: version, description: migration.description, checksum: migration.checksum, appliedAt: Date(),
                    durationMs: 0, toolVersion: Self.toolVersion, schemaHash: try SchemaSnapshot(db).hash, kind: "baseline"), in: db)
            }
        } catch let error as StrongroomError {
            throw .database(error)
        } catch {
            throw MigrationError(.database, "\(error)")
        }
        logger.info("baselined database", metadata: ["path": "\(db.path)", "version": "\(version)"])
    }
}
