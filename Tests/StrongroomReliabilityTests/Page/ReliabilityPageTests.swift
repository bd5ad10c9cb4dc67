import Foundation
import StrongroomTestSupport
import Testing

/// RELIABILITY.md shows as held only what a finished run measured:
/// `Scripts/reliability.py` on results made here (`--results`), the way
/// `make stress` and `make sanitize` leave them: in a folder per engine
/// (`sqlcipher3/`, `sqlcipher4/`), `make fuzz` beside them.
@Suite("RELIABILITY.md: only what a finished run measured")
struct ReliabilityPageTests {
    let dir = TemporaryDirectory()
    static let script = Fixtures.repositoryRoot + "/Scripts/reliability.py"

    /// Writes `KIND/NAME.json` in the engine's folder (make stress, make
    /// sanitize), or at the top for make fuzz and its stamp.
    func write(_ kind: String, _ name: String, _ object: [String: Any], engine: String = "sqlcipher3") throws {
        let top = kind == "fuzz" || name == "fuzz.run" ? dir.path : "\(dir.path)/\(engine)"
        let folder = kind.isEmpty ? top : "\(top)/\(kind)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: "\(folder)/\(name).json"))
    }

    func stamp(_ run: String, id: String, engine: String = "sqlcipher3", version: String? = nil) throws {
        var record: [String: Any] = ["date": "2026-11-24 10:00 UTC", "machine": "test machine", "run": id, "commit": "abc1234"]
        if let version { record["engine"] = version }
        try write("", "\(run).run", record, engine: engine)
    }

    func crash(_ operation: String, run: String, inside: Int = 40, minimum: Int = 16, failures: Int = 0) -> [String: Any] {
        ["operation": operation, "trials": 200, "killed_before_exit": 190, "killed_inside": inside, "minimum_inside": minimum,
         "killed_inside_with_writes": inside, "minimum_inside_with_writes": 0, "outcomes": ["old key": 200], "failures": failures,
         "kill_schedule": "targeted", "seconds": 10.0, "run": run]
    }

    func sanitizer(_ name: String, run: String) -> [String: Any] {
        ["sanitizer": name, "tests": 10, "suites": 2, "findings": 0, "suppressions": 0, "seconds": 5.0, "run": run]
    }

    /// The page's lines, or the script's failure.
    func page(_ arguments: [String] = [], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await ProcessRunner.run("/usr/bin/env", ["python3", Self.script, "--results", dir.path] + arguments, environment: environment)
    }

    func line(_ text: String, containing needle: String) -> String? {
        text.split(separator: "\n").map(String.init).first { $0.contains(needle) }
    }

    @Test func aCrashRowShortOfItsKillsInsideIsNotShownAsHeld() async throws {
        try stamp("stress", id: "R1")
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R1", inside: 1, minimum: 16))
        let result = try await page()
        let row = line(result.stdout, containing: "rekey (strongroom rekey)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(row.map { !$0.contains("✓") && $0.contains("✗") } == true, "\(row ?? result.stdout)")
    }

    @Test func aResultFromAnotherRunThanTheStampedOneIsNotShownAsHeld() async throws {
        try stamp("stress", id: "R1")
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R0"))
        try write("crashes", "import", crash("plaintext import", run: "R1"))
        let result = try await page()
        #expect(line(result.stdout, containing: "rekey (strongroom rekey)")?.contains("✓") != true, "\(result.stdout)")
        #expect(line(result.stdout, containing: "plaintext import")?.contains("0 ✓") == true, "\(result.stdout)")
    }

    /// A run that failed leaves its results but no stamp: none is shown as held.
    @Test func resultsWithoutAFinishedRunAreNotShownAsHeld() async throws {
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R1"))
        try write("sanitizers", "address", sanitizer("address", run: "S1"))
        let result = try await page()
        #expect(!result.stdout.contains("✓"), "\(result.stdout)")
        #expect(result.stdout.contains("No finished run of `make stress`"), "\(result.stdout)")
    }

    @Test func aSanitizerRowFromAnotherRunIsNotShownAsHeld() async throws {
        try stamp("sanitizers", id: "S2")
        try write("sanitizers", "address", sanitizer("address", run: "S2"))
        try write("sanitizers", "thread", sanitizer("thread", run: "S1"))
        let result = try await page()
        #expect(line(result.stdout, containing: "| address |")?.contains("0 ✓") == true, "\(result.stdout)")
        #expect(line(result.stdout, containing: "| thread |")?.contains("✓") != true, "\(result.stdout)")
    }

    /// The check after a run refuses results another run left.
    @Test func theStressCheckRefusesResultsOfAnotherRun() async throws {
        for (i, operation) in ["a", "b"].enumerated() {
            try write("crashes", operation, crash(operation, run: i == 0 ? "R2" : "R1"))
        }
        for kind in ["faults", "tampering", "load"] { try write(kind, "x", ["run": "R2"]) }
        try write("leaks", "core-dump", ["run": "R2"])
        let result = try await page(["--stress", "200", "2"], environment: ["STRONGROOM_RELIABILITY_RUN": "R2"])
        #expect(result.status != 0, "\(result.stdout)")
        #expect(result.stderr.contains("not from this run"), "\(result.stderr)")
    }

    /// The stamp names the commit measured.
    @Test func theRunLineNamesTheCommit() async throws {
        try stamp("stress", id: "R1")
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R1"))
        let result = try await page()
        #expect(result.stdout.contains("commit abc1234"), "\(result.stdout)")
    }

    @Test func noCrashRowsSayNothingOfKillSchedules() async throws {
        try stamp("stress", id: "R1")
        let result = try await page()
        #expect(!result.stdout.contains("kill schedules"), "\(result.stdout)")
    }

    /// A fuzz target run by hand (no run id) is not shown under the last `make fuzz`.
    @Test func aFuzzTargetRunByHandIsNotShownUnderTheLastRun() async throws {
        try stamp("fuzz", id: "F1")
        for target in ["envelope", "keyring"] {
            try write("fuzz", target, ["target": target, "what": "w", "executions": target == "envelope" ? 100 : 1_000_000,
                                       "seconds": 1.0, "crashes": 0, "corpus_files": 1, "regression_tests": 0,
                                       "run": target == "envelope" ? "" : "F1"])
        }
        let result = try await page()
        #expect(line(result.stdout, containing: "| envelope |") == nil, "\(result.stdout)")
        #expect(line(result.stdout, containing: "| keyring |")?.contains("0 ✓") == true, "\(result.stdout)")
    }

    /// A stamp written before runs had ids owns only results without one.
    @Test func aStampWithoutARunIdShowsNoResultOfARun() async throws {
        try write("", "sanitizers.run", ["date": "2026-11-23 21:26 UTC", "machine": "test machine"])
        try write("sanitizers", "address", ["sanitizer": "address", "tests": 10, "suites": 2, "findings": 0, "suppressions": 0, "seconds": 5.0])
        try write("sanitizers", "thread", sanitizer("thread", run: ""))
        let result = try await page()
        #expect(line(result.stdout, containing: "| address |")?.contains("0 ✓") == true, "\(result.stdout)")
        #expect(line(result.stdout, containing: "| thread |") == nil, "\(result.stdout)")
    }

    /// The commit is the one make read when the run started; a run whose HEAD moved is refused.
    @Test func theStampRefusesARunWhoseCommitMoved() async throws {
        for kind in ["faults", "tampering", "load", "wal"] { try write(kind, "x", ["run": "R3"]) }
        try write("leaks", "core-dump", ["run": "R3"])
        try write("crashes", "a", crash("a", run: "R3"))
        let result = try await page(["--stress", "200", "1"], environment: ["STRONGROOM_RELIABILITY_RUN": "R3", "STRONGROOM_RELIABILITY_COMMIT": "0000000"])
        #expect(result.status != 0 && result.stderr.contains("as when the run started"), "\(result.stderr)")
    }

    /// --results counts wherever it stands.
    @Test func theResultsFolderCountsWhereverItStands() async throws {
        let result = try await ProcessRunner.run("/usr/bin/env", ["python3", Self.script, "--sanitizers", "--results", dir.path],
                                                 environment: ["STRONGROOM_RELIABILITY_RUN": "S9"])
        #expect(result.status != 0 && result.stderr.contains("expected address and thread"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/sqlcipher3/sanitizers.run.json"))
    }

    /// Issue 26, item 7: each engine's run is its own, and every row names
    /// the engine it ran on, the two side by side.
    @Test func eachRowNamesTheEngineItRanOn() async throws {
        try stamp("stress", id: "R3", engine: "sqlcipher3", version: "SQLCipher 3.4.1 on SQLite 3.15.2")
        try stamp("stress", id: "R4", engine: "sqlcipher4", version: "SQLCipher 4.6.1 community on SQLite 3.46.1")
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R3"), engine: "sqlcipher3")
        try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: "R4"), engine: "sqlcipher4")
        try write("crashes", "upgrade", crash("upgrade (strongroom upgrade)", run: "R4"), engine: "sqlcipher4")
        try stamp("sanitizers", id: "S4", engine: "sqlcipher4", version: "SQLCipher 4.6.1 community on SQLite 3.46.1")
        try write("sanitizers", "thread", sanitizer("thread", run: "S4"), engine: "sqlcipher4")
        let result = try await page()
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").filter { $0.contains("rekey (strongroom rekey)") }
        #expect(rows.count == 2 && rows[0].hasPrefix("| 3.4.1 |") && rows[1].hasPrefix("| 4.6.1 |"), "\(result.stdout)")
        #expect(line(result.stdout, containing: "upgrade (strongroom upgrade)")?.hasPrefix("| 4.6.1 |") == true, "\(result.stdout)")
        #expect(line(result.stdout, containing: "| thread |")?.hasPrefix("| 4.6.1 | thread |") == true, "\(result.stdout)")
        #expect(result.stdout.contains("SQLCipher 3.4.1 on SQLite 3.15.2: `make stress`, run of"), "\(result.stdout)")
        #expect(result.stdout.contains("SQLCipher 4.6.1 community on SQLite 3.46.1: `make stress ENGINE=sqlcipher4`, run of"), "\(result.stdout)")
        #expect(result.stdout.contains("No finished run of `make sanitize` on SQLCipher 3"), "\(result.stdout)")
    }

    /// SQLCipher 3's row comes first, also when its stamp predates engine
    /// stamps (and names the engine by its folder).
    @Test func theOlderEnginesRowComesFirst() async throws {
        try write("", "stress.run", ["date": "2026-11-24 10:00 UTC", "machine": "test machine", "run": "R5", "commit": "abc1234"], engine: "sqlcipher3")
        try stamp("stress", id: "R6", engine: "sqlcipher4", version: "SQLCipher 4.6.1 community on SQLite 3.46.1")
        for (engine, run) in [("sqlcipher3", "R5"), ("sqlcipher4", "R6")] {
            try write("crashes", "rekey", crash("rekey (strongroom rekey)", run: run), engine: engine)
        }
        let result = try await page()
        let rows = result.stdout.split(separator: "\n").filter { $0.contains("rekey (strongroom rekey)") }
        #expect(rows.count == 2 && rows[0].hasPrefix("| 3 (not recorded) |") && rows[1].hasPrefix("| 4.6.1 |"), "\(result.stdout)")
    }

    /// The check after a run stamps that engine's folder with the engine
    /// make found, and refuses one that is not the folder's.
    @Test func theCheckStampsTheEngineAndRefusesAnotherOne() async throws {
        for name in ["address", "thread"] { try write("sanitizers", name, sanitizer(name, run: "S5"), engine: "sqlcipher4") }
        let wrong = try await page(["--engine", "sqlcipher4", "--sanitizers"],
                                   environment: ["STRONGROOM_RELIABILITY_RUN": "S5", "STRONGROOM_ENGINE_VERSION": "SQLCipher 3.4.1 on SQLite 3.15.2"])
        #expect(wrong.status != 0 && wrong.stderr.contains("sqlcipher4"), "\(wrong.stderr)")
        let missing = try await page(["--engine", "sqlcipher4", "--sanitizers"], environment: ["STRONGROOM_RELIABILITY_RUN": "S5", "STRONGROOM_ENGINE_VERSION": ""])
        #expect(missing.status != 0 && missing.stderr.contains("STRONGROOM_ENGINE_VERSION"), "\(missing.stderr)")
        let right = try await page(["--engine", "sqlcipher4", "--sanitizers"],
                                   environment: ["STRONGROOM_RELIABILITY_RUN": "S5", "STRONGROOM_ENGINE_VERSION": "SQLCipher 4.6.1 community on SQLite 3.46.1"])
        #expect(right.status == 0, "\(right.stderr)")
        let stamp = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path + "/sqlcipher4/sanitizers.run.json"))) as? [String: Any]
        #expect(stamp?["engine"] as? String == "SQLCipher 4.6.1 community on SQLite 3.46.1")
        #expect(line(right.stdout, containing: "| address |")?.hasPrefix("| 4.6.1 | address |") == true, "\(right.stdout)")
    }
}
