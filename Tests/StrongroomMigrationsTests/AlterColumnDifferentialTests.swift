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

/// Our `ALTER TABLE … RENAME COLUMN` / `DROP COLUMN` on SQLite 3.15 against
/// SQLite's own, natively in the system `sqlite3` (3.40): for every case of
/// the corpus, both refuse, or both succeed with the same schema, the same
/// rows (with their rowids), the same view results, and the same effect of a
/// follow-up statement. Then the statements our runner issued are replayed
/// on SQLCipher 4 over SQLite >= 3.26 (Python's `sqlcipher3`), which must run
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

    func native(_ c: AlterCase, in dir: TemporaryDirectory) throws -> Outcome {
        let sqlite3 = try #require(ProcessRunner.which("sqlite3"), "the system sqlite3 (3.40) is the oracle; `make setup` installs it")
        let path = dir.file("native.sqlite")
        // Foreign keys on, as Strongroom's connections have them.
        let setup = try ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.setup)
        try #require(setup.status == 0, "\(c.name): setup fails natively: \(setup.stderr)")
        var outcome = Outcome()
        let alter = try ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.alter)
        if alter.status != 0 {
            outcome.alterError = alter.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            return outcome
        }
        outcome.afterAlter = try DatabasePicture.of(DatabasePicture.openPlaintext(path))
        let then = try ProcessRunner.run(sqlite3, [path], input: ".bail on\nPRAGMA foreign_keys = ON;\n" + c.then)
        if then.status != 0 { outcome.thenError = then.stderr.trimmingCharacters(in: .whitespacesAndNewlines) }
        outcome.afterThen = try DatabasePicture.of(DatabasePicture.openPlaintext(path))
        return outcome
    }

    func ours(_ c: AlterCase, in dir: TemporaryDirectory, trace: TracedStatements) throws -> Outcome {
        let db = try Connection(path: dir.file("ours.db"), configuration: Configuration(key: DatabaseKey.generate()))
        db.traceStatements { trace.list.append($0) }
        // The database as it stands (made as natively, foreign keys on), then the runner.
        try db.execute(sql: c.setup)
        let migrator = try Migrator(migrations: [Migration(version: 1, description: "alter", sql: c.alter)])
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

    @Test func everyCaseMatchesSQLitesOwnAndReplaysOnANewerSQLite() throws {
        let cases = try AlterCase.load(Self.corpusDirectory + "/alter-column.sql")
        try #require(cases.count >= 40, "the corpus holds \(cases.count) cases")
        let dir = TemporaryDirectory()
        var jobs: [(AlterCase, NewerSQLite.Job, Outcome)] = []
        var bothRefused = 0, bothApplied = 0, deviations = 0
        for (n, c) in cases.enumerated() {
            let caseDir = TemporaryDirectory()
            let trace = TracedStatements()
            let theirs: Outcome, mine: Outcome
            do {
                theirs = try native(c, in: caseDir)
                mine = try ours(c, in: caseDir, trace: trace)
            } catch {
                Issue.record("\(c.name): \(error)")
                continue
            }
            if let deviation = c.deviation {
                // A documented difference: it must still be the case, or the note is stale.
                #expect(!deviation.reason.isEmpty, "\(c.name): a deviation needs its reason")
                switch deviation.kind {
                case "refuses":
                    #expect(theirs.alterError == nil && mine.alterError != nil, "\(c.name): documented as refused by us only; native \(theirs.alterError ?? "applies"), ours \(mine.alterError ?? "applies")")
                case "differs":
                    #expect(theirs.alterError == nil && mine.alterError == nil && !DatabasePicture.same(mine.afterAlter, theirs.afterAlter), "\(c.name): documented as applied differently")
                default:
                    Issue.record("\(c.name): unknown deviation \(deviation.kind)")
                }
                deviations += 1
                continue
            }
            switch (theirs.alterError, mine.alterError) {
            case (.some, .some):
                bothRefused += 1
                continue
            case (nil, .some(let ourError)):
                Issue.record("\(c.name): SQLite applies `\(c.alter.trimmingCharacters(in: .whitespacesAndNewlines))`, we refuse: \(ourError)")
                continue
            case (.some(let theirError), nil):
                Issue.record("\(c.name): SQLite refuses (\(theirError)), we apply it")
                continue
            case (nil, nil):
                bothApplied += 1
            }
            #expect(DatabasePicture.same(mine.afterAlter, theirs.afterAlter), "\(c.name) after the alter: \(DatabasePicture.difference(mine.afterAlter, theirs.afterAlter))")
            #expect((mine.thenError == nil) == (theirs.thenError == nil), "\(c.name) follow-up: ours \(mine.thenError ?? "ok"), native \(theirs.thenError ?? "ok")")
            #expect(DatabasePicture.same(mine.afterThen, theirs.afterThen), "\(c.name) after the follow-up: \(DatabasePicture.difference(mine.afterThen, theirs.afterThen))")
            jobs.append((c, NewerSQLite.Job(path: dir.file("replay-\(n).sqlite"), statements: trace.list, then: c.then), mine))
        }
        #expect(bothApplied > bothRefused, "\(bothApplied) applied, \(bothRefused) refused by both")
        #expect(deviations * 10 < cases.count, "\(deviations) documented deviations in \(cases.count) cases")

        // The same statements on SQLCipher 4 over SQLite >= 3.26.
        let results = try NewerSQLite.replay(jobs.map(\.1))
        for ((c, job, mine), result) in zip(jobs, results) {
            #expect(result.error == nil, "\(c.name) on SQLite \(result.sqlite_version): \(result.error ?? "") at `\(result.statement ?? "")`")
            guard result.error == nil else { continue }
            let picture = try DatabasePicture.of(DatabasePicture.openPlaintext(job.path))
            #expect(DatabasePicture.same(picture, mine.afterThen), "\(c.name) on SQLite \(result.sqlite_version): \(DatabasePicture.difference(mine.afterThen, picture, otherName: "replayed"))")
        }
    }
}
