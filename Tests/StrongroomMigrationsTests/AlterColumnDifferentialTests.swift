import Foundation
import Strongroom
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// One scenario of `Corpus/alter-column.sql`.
struct AlterCase: CustomStringConvertible {
    var name = ""
    var source = ""
    var setup = ""
    var alter = ""
    var then = ""
    /// A deliberate difference from SQLite's own result, with the reason:
    /// `-- ours: refuses …` (SQLite applies it and leaves something broken)
    /// or `-- ours: differs …`.
    var deviation: (kind: String, reason: String)?
    var description: String { name }

    /// Reads the corpus: cases start at `-- case: name`; `-- setup`, `-- alter`
    /// and `-- then` open their sections.
    static func load(_ path: String) throws -> [AlterCase] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var cases: [AlterCase] = []
        var section: WritableKeyPath<AlterCase, String>?
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-- case:") {
                cases.append(AlterCase(name: String(trimmed.dropFirst(8)).trimmingCharacters(in: .whitespaces)))
                section = nil
            } else if trimmed.hasPrefix("-- source:"), !cases.isEmpty {
                cases[cases.count - 1].source = String(trimmed.dropFirst(10)).trimmingCharacters(in: .whitespaces)
            } else if trimmed.hasPrefix("-- ours:"), !cases.isEmpty {
                let words = trimmed.dropFirst(8).trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
                cases[cases.count - 1].deviation = (String(words.first ?? ""), words.count > 1 ? String(words[1]) : "")
            } else if trimmed == "-- setup" { section = \.setup
            } else if trimmed == "-- alter" { section = \.alter
            } else if trimmed == "-- then" { section = \.then
            } else if let section, !cases.isEmpty {
                cases[cases.count - 1][keyPath: section] += line + "\n"
            }
        }
        return cases
    }
}

/// Our `ALTER TABLE … RENAME COLUMN` / `DROP COLUMN` against SQLite's own,
/// natively in the system `sqlite3` (3.40): for every case of the corpus, both
/// refuse, or both succeed with the same schema, the same rows (with their
/// rowids), the same view results, and the same effect of a follow-up
/// statement. On each engine: on SQLite 3.15 (SQLCipher 3.4.1) the runner
/// rebuilds; on an SQLite that has the forms (SQLCipher 4.6.1: 3.46) the
/// runner leaves them to SQLite, which must match outright, and our rebuild
/// runs too, on that SQLite, and must match but for the documented
/// deviations. Then the statements our rebuild issued are replayed on
/// SQLCipher 4 over SQLite >= 3.26 (Python's `sqlcipher3`), which must run
/// them and reach the same picture.
@Suite("ALTER TABLE column changes against SQLite's own")
struct AlterColumnDifferentialTests {
    static let corpusDirectory = NewerSQLite.corpusDirectory

    struct Outcome {
        var alterError: String?
        var thenError: String?
        var afterAlter: [String] = []
        var afterThen: [String] = []
    }

    func native(_ c: AlterCase, in dir: TemporaryDirectory) async throws -> Outcome {
        let sqlite3 = try #require(ProcessRunner.which("sqlite3"), "the system sqlite3 (3.40) is the oracle; `make setup` installs it")
        let path = dir.file("native.sqlite")
        // Foreign keys on, as Strongroom's connections have them.
        let setup = try await ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.setup)
        try #require(setup.status == 0, "\(c.name): setup fails natively: \(setup.stderr)")
        var outcome = Outcome()
        let alter = try await ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.alter)
        if alter.status != 0 {
            outcome.alterError = alter.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            return outcome
        }
        outcome.afterAlter = try DatabasePicture.of(DatabasePicture.openPlaintext(path))
        let then = try await ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.then)
        if then.status != 0 { outcome.thenError = then.stderr.trimmingCharacters(in: .whitespacesAndNewlines) }
        outcome.afterThen = try DatabasePicture.of(DatabasePicture.openPlaintext(path))
        return outcome
    }

    /// The runner on the linked SQLite: its own `ALTER TABLE` where it has
    /// the form (RENAME COLUMN from 3.25, DROP COLUMN from 3.35), else our
    /// rebuild. With `forcingTheRebuild`, our rebuild whatever the linked
    /// SQLite has (as the runner does on 3.15), through a Swift migration.
    func ours(_ c: AlterCase, in dir: TemporaryDirectory, trace: TracedStatements, forcingTheRebuild: Bool = false) throws -> Outcome {
        let db = try Connection(path: dir.file(forcingTheRebuild ? "rebuilt.db" : "ours.db"), configuration: Configuration(key: DatabaseKey.generate()))
        db.traceStatements { trace.list.append($0) }
        // The database as it stands (made as natively, foreign keys on), then the runner.
        try db.execute(sql: c.setup)
        let alter = c.alter
        let migration = !forcingTheRebuild ? Migration(version: 1, description: "alter", sql: alter)
            : Migration(version: 1, description: "alter by our rebuild") { db in
                switch AlterTableRewrite.parse(alter, sqliteVersion: Self.withoutColumnForms) {
                case .dropColumn(let table, let column):
                    try TableRebuild.dropColumn(db, table: table, column: column)
                case .renameColumn(let table, let from, let to):
                    try TableRebuild.renameColumn(db, table: table, from: from, to: to)
                case nil:
                    try db.execute(sql: alter)
                }
            }
        let migrator = try Migrator(migrations: [migration])
        var outcome = Outcome()
        do {
            try migrator.migrate(db)
        } catch {
            outcome.alterError = error.message
            return outcome
        }
        db.traceStatements(nil)
        outcome.afterAlter = try DatabasePicture.of(db)
        do {
            try db.execute(sql: c.then)
        } catch {
            outcome.thenError = error.message
        }
        outcome.afterThen = try DatabasePicture.of(db)
        return outcome
    }

    /// SQLite 3.15.2, the oldest SQLite Strongroom runs on: no RENAME COLUMN, no DROP COLUMN.
    static let withoutColumnForms = SQLiteVersion(3, 15, 2)

    /// Whether the runner leaves `c`'s statement to the linked SQLite.
    static func runsNatively(_ c: AlterCase) -> Bool {
        AlterTableRewrite.parse(c.alter, sqliteVersion: SQLiteVersion(SQLCipherLibrary.sqliteVersion)) == nil
            && AlterTableRewrite.parse(c.alter, sqliteVersion: withoutColumnForms) != nil
    }

    /// How one of our runs of a case compares with SQLite's own.
    enum Verdict: Equatable {
        case bothRefused, bothApplied, deviation, mismatch
    }

    /// Compares `mine` (`who` ran it) with `theirs` (the system `sqlite3`),
    /// recording an issue for every difference `deviation` does not document.
    func compare(_ c: AlterCase, _ mine: Outcome, _ theirs: Outcome, who: String, deviation: (kind: String, reason: String)?) -> Verdict {
        if let deviation {
            // A documented difference: it must still be the case, or the note is stale.
            #expect(!deviation.reason.isEmpty, "\(c.name): a deviation needs its reason")
            switch deviation.kind {
            case "refuses":
                #expect(theirs.alterError == nil && mine.alterError != nil, "\(c.name): documented as refused by us only; native \(theirs.alterError ?? "applies"), \(who) \(mine.alterError ?? "applies")")
            case "differs":
                #expect(theirs.alterError == nil && mine.alterError == nil && !DatabasePicture.same(mine.afterAlter, theirs.afterAlter), "\(c.name): documented as applied differently by \(who)")
            default:
                Issue.record("\(c.name): unknown deviation \(deviation.kind)")
            }
            return .deviation
        }
        switch (theirs.alterError, mine.alterError) {
        case (.some, .some):
            return .bothRefused
        case (nil, .some(let ourError)):
            Issue.record("\(c.name): SQLite applies `\(c.alter.trimmingCharacters(in: .whitespacesAndNewlines))`, \(who) refuses: \(ourError)")
            return .mismatch
        case (.some(let theirError), nil):
            Issue.record("\(c.name): SQLite refuses (\(theirError)), \(who) applies it")
            return .mismatch
        case (nil, nil):
            break
        }
        #expect(DatabasePicture.same(mine.afterAlter, theirs.afterAlter), "\(c.name) after the alter by \(who): \(DatabasePicture.difference(mine.afterAlter, theirs.afterAlter))")
        #expect((mine.thenError == nil) == (theirs.thenError == nil), "\(c.name) follow-up after \(who): ours \(mine.thenError ?? "ok"), native \(theirs.thenError ?? "ok")")
        #expect(DatabasePicture.same(mine.afterThen, theirs.afterThen), "\(c.name) after the follow-up, altered by \(who): \(DatabasePicture.difference(mine.afterThen, theirs.afterThen))")
        return .bothApplied
    }

    @Test func everyCaseMatchesSQLitesOwnAndReplaysOnANewerSQLite() async throws {
        let cases = try AlterCase.load(Self.corpusDirectory + "/alter-column.sql")
        try #require(cases.count >= 40, "the corpus holds \(cases.count) cases")
        let linked = SQLCipherLibrary.sqliteVersion
        let dir = TemporaryDirectory()
        var jobs: [(AlterCase, NewerSQLite.Job, Outcome)] = []
        var bothRefused = 0, bothApplied = 0, deviations = 0, nativeToo = 0
        for (n, c) in cases.enumerated() {
            let caseDir = TemporaryDirectory()
            let trace = TracedStatements()
            let theirs: Outcome, mine: Outcome
            // Where the linked SQLite has the statement's form (SQLCipher 4:
            // SQLite 3.46 has both), the runner leaves it to SQLite, and our
            // rebuild runs on its own as well, on that SQLite (>= 3.26, which
            // re-checks every view and trigger at RENAME).
            var rebuilt: (outcome: Outcome, trace: TracedStatements)?
            do {
                theirs = try await native(c, in: caseDir)
                mine = try ours(c, in: caseDir, trace: trace)
                if Self.runsNatively(c) {
                    let rebuildTrace = TracedStatements()
                    rebuilt = (try ours(c, in: caseDir, trace: rebuildTrace, forcingTheRebuild: true), rebuildTrace)
                }
            } catch {
                Issue.record("\(c.name): \(error)")
                continue
            }
            let verdict: Verdict
            let replayed: (outcome: Outcome, trace: TracedStatements)
            if let rebuilt {
                // SQLite's own ALTER TABLE: no deviation of our rebuild
                // applies, it matches SQLite 3.40 outright.
                nativeToo += 1
                _ = compare(c, mine, theirs, who: "SQLite \(linked)'s own ALTER TABLE (through the runner)", deviation: nil)
                verdict = compare(c, rebuilt.outcome, theirs, who: "our rebuild on SQLite \(linked)", deviation: c.deviation)
                replayed = rebuilt
            } else {
                verdict = compare(c, mine, theirs, who: "our runner on SQLite \(linked)", deviation: c.deviation)
                replayed = (mine, trace)
            }
            switch verdict {
            case .bothRefused: bothRefused += 1
            case .deviation: deviations += 1
            case .mismatch: break
            case .bothApplied:
                bothApplied += 1
                jobs.append((c, NewerSQLite.Job(path: dir.file("replay-\(n).sqlite"), statements: replayed.trace.list, then: c.then), replayed.outcome))
            }
        }
        #expect(bothApplied > bothRefused, "\(bothApplied) applied, \(bothRefused) refused by both")
        #expect(deviations * 10 < cases.count, "\(deviations) documented deviations in \(cases.count) cases")
        // Which engine ran what: SQLite 3.15 has neither form (our rebuild
        // ran every case), SQLite >= 3.35 has both (every case ran both ways).
        let columnChanges = cases.filter { AlterTableRewrite.parse($0.alter, sqliteVersion: Self.withoutColumnForms) != nil }.count
        if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
            #expect(nativeToo == columnChanges, "SQLite \(linked) ran \(nativeToo) of \(columnChanges) column changes itself")
        } else if SQLCipherLibrary.sqliteVersionNumber < 3_025_000 {
            #expect(nativeToo == 0, "SQLite \(linked) ran \(nativeToo) column changes itself")
        }

        // The statements of our rebuild (or the runner's, for a statement
        // that is no column change) on SQLCipher 4 over SQLite >= 3.26.
        let results = try NewerSQLite.replay(jobs.map(\.1))
        for ((c, job, mine), result) in zip(jobs, results) {
            #expect(result.error == nil, "\(c.name) on SQLite \(result.sqlite_version): \(result.error ?? "") at `\(result.statement ?? "")`")
            guard result.error == nil else { continue }
            let picture = try DatabasePicture.of(DatabasePicture.openPlaintext(job.path))
            #expect(DatabasePicture.same(picture, mine.afterThen), "\(c.name) on SQLite \(result.sqlite_version): \(DatabasePicture.difference(mine.afterThen, picture, otherName: "replayed"))")
        }
    }
}
