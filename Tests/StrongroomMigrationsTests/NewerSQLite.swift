import Foundation
import Strongroom
@testable import StrongroomMigrations
import StrongroomTestSupport
import Testing

/// SQLCipher 4 over a recent SQLite (Python's `sqlcipher3-binary`), where
/// `ALTER TABLE … RENAME` re-checks every view and trigger: the statements our
/// runner issued on SQLite 3.15 are replayed there, in order, from an empty file.
enum NewerSQLite {
    static let corpusDirectory = Fixtures.repositoryRoot + "/Tests/StrongroomMigrationsTests/Corpus"

    /// One replay: a new plaintext file, the traced statements, then a follow-up script.
    struct Job: Codable {
        let path: String
        let statements: [String]
        let then: String
    }

    struct Result: Codable {
        let sqlite_version: String
        let error: String?
        let statement: String?
    }

    /// Replays every job in one Python process; fails the test when Python or
    /// `sqlcipher3` is missing, or when the SQLite there is older than 3.26.
    static func replay(_ jobs: [Job]) throws -> [Result] {
        let python = try #require(ProcessRunner.which("python3"))
        let input = String(decoding: try JSONEncoder().encode(jobs), as: UTF8.self)
        let run = try ProcessRunner.run(python, [corpusDirectory + "/replay.py"], input: input)
        try #require(run.status == 0, "replay.py failed (is sqlcipher3-binary installed? `make setup` installs it): \(run.stderr)")
        let results = try JSONDecoder().decode([Result].self, from: Data(run.stdout.utf8))
        try #require(results.count == jobs.count)
        let version = SQLiteVersion(results.first?.sqlite_version ?? "0")
        try #require(version >= SQLiteVersion(3, 26), "the replay ran on SQLite \(version)")
        return results
    }
}

/// The statements a connection ran, collected by its trace.
final class TracedStatements: @unchecked Sendable {
    // Sendable: only the connection's thread appends, while the test waits.
    var list: [String] = []
}
