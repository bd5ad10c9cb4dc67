public import Strongroom
import StrongroomFields

/// One thing `verify` found wrong. ``code`` is stable, for matching and JSON.
public struct VerificationFinding: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The kinds of finding.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// An applied migration's file changed since it was applied.
        case changedAfterApplied = "changed_after_applied"
        /// The database has a version applied that the directory does not know (it is newer than the app).
        case unknownApplied = "unknown_applied"
        /// A migration in the directory is not applied yet.
        case pending = "pending"
        /// The live schema differs from the one the applied migrations produce.
        case schemaDrift = "schema_drift"
        /// `PRAGMA integrity_check` reported a problem.
        case integrity = "integrity"
        /// `PRAGMA foreign_key_check` found rows breaking a foreign key.
        case foreignKey = "foreign_key"
        /// A trigger or view on a sealed table (or calling a sealed-column
        /// function) that no migration creates: SQL the application did not
        /// write, which could copy sealed values elsewhere. Find out who
        /// added it; a connection holding the field keyring refuses to run
        /// the field functions for it either way.
        case untrustedSQL = "untrusted_sql"
    }

    /// What kind of finding, to match on.
    public let code: Code
    /// The migration concerned, when one is.
    public let version: Int?
    /// Its file, when it has one.
    public let file: String?
    /// One sentence saying what is wrong.
    public let message: String

    /// The message.
    public var description: String { message }
}

/// The result of ``Migrator/verify(_:)``.
public struct VerificationReport: Sendable, Codable {
    /// The highest applied version.
    public let currentVersion: Int
    /// Every finding; empty when everything holds.
    public let findings: [VerificationFinding]
    /// False for a database no migration manages (no migration history:
    /// imported, say): its schema has nothing to be compared with, and
    /// schema drift was not checked. Integrity, foreign keys and triggers
    /// and views on sealed tables were.
    public let driftChecked: Bool
    /// True when there is no finding.
    public var isClean: Bool { findings.isEmpty }
}

extension VerificationReport: CustomStringConvertible {
    /// "At version 5; no finding." or one line per finding.
    public var description: String {
        let drift = driftChecked ? "" : " (no migration history: schema drift was not checked)"
        guard !isClean else { return "At version \(currentVersion)\(drift); no finding." }
        return "At version \(currentVersion)\(drift); \(findings.count) finding(s):\n" + findings.map { "  [\($0.code.rawValue)] \($0.message)" }.joined(separator: "\n")
    }
}

extension Migrator {
    /// Compares `db` with the migrations and reports every finding: applied
    /// migrations whose file changed, applied versions unknown to the
    /// directory, pending migrations, schema drift (the live schema against the
    /// schema obtained by replaying the applied migrations into a fresh
    /// in-memory database), `integrity_check` and `foreign_key_check` failures.
    /// Reads only.
    ///
    /// ```swift
    /// let report = try migrator.verify(db)
    /// for finding in report.findings { print(finding.code.rawValue, finding.message) }
    /// ```
    public func verify(_ db: Connection) throws(MigrationError) -> VerificationReport {
        let applied = try appliedMigrations(db)
        let current = applied.map(\.version).max() ?? 0
        var findings = historyFindings(applied)
        let done = Self.coveredVersions(applied)
        for migration in migrations where !done(migration.version) {
            findings.append(VerificationFinding(code: .pending, version: migration.version, file: migration.file,
                message: "Migration \(migration.file ?? String(migration.version)) is not applied\(migration.version < current ? " (older than the current version \(current))" : "")."))
        }
        // A database no migration manages has no schema to compare with.
        let managed = !applied.isEmpty
        let replayed = managed ? try replayedSnapshot(upTo: current, applied: done) : nil
        if let replayed { findings += try drift(db, replayed: replayed) }
        findings += try untrustedSQL(db, replayed: replayed)
        findings += try integrity(db)
        return VerificationReport(currentVersion: current, findings: findings, driftChecked: managed)
    }

    /// Before the runner lends the field keyring's functions to a run: the
    /// schema must hold no trigger or view the applied migrations do not
    /// create that names a sealed table or calls a sealed-column function,
    /// and no TEMP row (``untrustedSQL(_:replayed:)``, as `verify` reports
    /// them). Refused with ``MigrationError/Code/untrustedSchema``, naming
    /// them; nothing is migrated.
    func refuseUntrustedSQL(_ db: Connection) throws(MigrationError) {
        let applied = try appliedMigrations(db)
        let current = applied.map(\.version).max() ?? 0
        let replayed = applied.isEmpty ? nil : try replayedSnapshot(upTo: current, applied: Self.coveredVersions(applied))
        let findings = try untrustedSQL(db, replayed: replayed)
        guard findings.isEmpty else {
            throw MigrationError(.untrustedSchema, "The database holds SQL no migration created, and this run has the field keyring: "
                                 + findings.map(\.message).joined(separator: " ") + " Nothing was migrated.")
        }
    }

    /// Triggers and views no migration creates (all of them, without a
    /// history) that name a sealed table or call a sealed-column function.
    private func untrustedSQL(_ db: Connection, replayed: Result<SchemaSnapshot, MigrationError>?) throws(MigrationError) -> [VerificationFinding] {
        do {
            let sealedTables = Set(try SealedColumnRegistry.columns(in: db).map(\.table.sqliteFolded))
            let functions = Set(["strongroom_open", "strongroom_seal", "strongroom_blind_index", "strongroom_index"].map(\.sqliteFolded))
            let live = try SchemaSnapshot(db)
            var findings: [VerificationFinding] = []
            for row in try db.fetchAll(sql: "SELECT type, name, tbl_name, sql FROM main.sqlite_master WHERE sql IS NOT NULL ORDER BY name") {
                let sql = SQLScript.schemaText(row[3])
                let name = SQLScript.schemaText(row[1])
                // What SQLite loads is told by the SQL, not by the row's type.
                var words = SQLScript.normalized(sql).split(separator: " ").prefix(3).map { String($0).asciiUppercased }
                let temporary = words.count >= 2 && words[0] == "CREATE" && (words[1] == "TEMP" || words[1] == "TEMPORARY")
                if temporary { words.remove(at: 1) }
                let type = words.count >= 2 && words[0] == "CREATE" && ["TRIGGER", "VIEW", "TABLE", "INDEX"].contains(words[1]) ? words[1].lowercased() : SQLScript.schemaText(row[0])
                if temporary {
                    findings.append(VerificationFinding(code: .untrustedSQL, version: nil, file: nil,
                        message: "The schema holds a temporary \(type) \(name), which only PRAGMA writable_schema puts there: SQLite loads it over the real schema (even over sqlite_master, hiding what is there). SQL the application did not write; find out who added it, and remove it (with writable_schema)."))
                    continue
                }
                guard type == "trigger" || type == "view" else { continue }
                // A migration's object only with the migration's SQL, byte for
                // byte once normalized (its name and body, not a name that
                // Unicode folding alone takes for it).
                if case .success(let expected)? = replayed, SchemaSnapshot.sameSQL(expected.objects[SchemaSnapshot.key(type: type, name: name)], live.canonicalSQL(sql)) { continue }
                let tokens = SQLTokenizer.tokenize(sql)
                // A table may be named by a 'string' too (SQLite takes one
                // where a name is expected), so string literals count as
                // table names; a string that is only a value may be taken for
                // one (a false positive, accepted). A function is never named
                // by a string.
                let names = Set(tokens.compactMap { $0.name?.sqliteFolded })
                let table = SQLScript.schemaText(row[2])
                let sealed = names.union([table.sqliteFolded]).intersection(sealedTables)
                let calls = !Set(tokens.compactMap { $0.identifier?.sqliteFolded }).isDisjoint(with: functions)
                guard !sealed.isEmpty || calls else { continue }
                let what = calls ? "calls a sealed-column function" : "reads or writes a sealed table"
                findings.append(VerificationFinding(code: .untrustedSQL, version: nil, file: nil,
                    message: "The \(type) \(name) \(what), and no migration creates it: SQL the application did not write, which could copy sealed values elsewhere. Find out who added it, and remove it (DROP \(type.uppercased()) \(SQLScript.quotedIdentifier(name)))."))
            }
            return findings
        } catch {
            throw .database(error)
        }
    }

    /// The schema the applied migrations give, replayed into a fresh
    /// in-memory database; a failure to replay is a finding of its own.
    private func replayedSnapshot(upTo current: Int, applied: (Int) -> Bool) throws(MigrationError) -> Result<SchemaSnapshot, MigrationError> {
        do {
            let scratch = try Self.scratchDatabase()
            var replay = self
            replay.migrations = migrations.filter { $0.version <= current && applied($0.version) }
            // The scratch database has functions of its own (a throwaway keyring).
            replay.fieldKeyring = nil
            try replay.migrate(scratch)
            return .success(try SchemaSnapshot(scratch))
        } catch let error as MigrationError {
            return .failure(error)
        } catch let error as StrongroomError {
            throw .database(error)
        } catch {
            throw MigrationError(.database, "\(error)")
        }
    }

    private func drift(_ db: Connection, replayed: Result<SchemaSnapshot, MigrationError>) throws(MigrationError) -> [VerificationFinding] {
        let expected: SchemaSnapshot
        switch replayed {
        case .success(let snapshot): expected = snapshot
        case .failure(let error):
            return [VerificationFinding(code: .schemaDrift, version: error.version, file: error.file,
                message: "Replaying the applied migrations into an empty database failed, so drift cannot be checked: \(error.message)")]
        }
        let live: SchemaSnapshot
        do { live = try SchemaSnapshot(db) } catch { throw .database(error) }
        return live.differences(from: expected).map {
            VerificationFinding(code: .schemaDrift, version: nil, file: nil, message: "Schema drift: \($0).")
        }
    }

    private func integrity(_ db: Connection) throws(MigrationError) -> [VerificationFinding] {
        var findings: [VerificationFinding] = []
        do {
            let problems = try db.fetchAll(String.self, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            findings += problems.prefix(20).map {
                VerificationFinding(code: .integrity, version: nil, file: nil, message: "integrity_check: \($0)")
            }
            let violations = try db.fetchAll(sql: "PRAGMA foreign_key_check")
            if !violations.isEmpty {
                let tables = Set(violations.map { $0[0].description }).sorted()
                findings.append(VerificationFinding(code: .foreignKey, version: nil, file: nil,
                    message: "foreign_key_check: \(violations.count) row(s) in \(tables.joined(separator: ", ")) reference missing parents."))
            }
        } catch {
            throw .database(error)
        }
        return findings
    }
}
