import ArgumentParser
import Foundation
import Testing
@testable import StrongroomBenchmarks

/// A workload with C and one of ours, whose samples are given round by round.
private func workload(_ name: String = "decode", group: String = "core", size: Int = 1_000_000,
                      c: [Double], ours: [Double], contender: String = "Strongroom record") -> WorkloadResult {
    var cSamples = Samples(), oursSamples = Samples()
    c.forEach { cSamples.add($0) }
    ours.forEach { oursSamples.add($0) }
    return WorkloadResult(name: name, group: group, size: size,
                          contenders: [ContenderResult(name: "C", role: .c, samples: cSamples),
                                       ContenderResult(name: contender, role: .ours, samples: oursSamples)])
}

private func report(_ workloads: [WorkloadResult], quick: Bool = false) -> Report {
    Report(environment: Environment.read(workDirectory: NSTemporaryDirectory()),
           settings: ["quick": String(quick), "rounds": "5"], workloads: workloads)
}

@Suite struct BaselineTests {
    @Test func aContenderNoLongerMeasuredFailsTheCheck() throws {
        let baseline = Baseline(report: report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])]))
        let renamed = report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1], contender: "Strongroom row")])
        let failures = try baseline.regressions(in: renamed, tolerance: 0.15)
        #expect(failures.contains { $0.contains("Strongroom record") && $0.contains("no longer measured") }, "\(failures)")
    }

    @Test func aRatioThatCannotBeComputedFailsTheCheck() throws {
        let baseline = Baseline(report: report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])]))
        let broken = report([workload(c: [1, 1, 1], ours: [])])
        #expect(try !baseline.regressions(in: broken, tolerance: 0.15).isEmpty)
    }

    @Test func aGroupLeftOutWithOnlyIsNotAFailure() throws {
        let baseline = Baseline(report: report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1]),
                                                workload("insert, encrypted vs plaintext", group: "encryption", c: [1, 1, 1], ours: [1, 1, 1])]))
        let coreOnly = report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])])
        #expect(try baseline.regressions(in: coreOnly, tolerance: 0.15, groups: ["core"]).isEmpty)
    }

    /// Rounds run interleaved: a round in which the machine was slow for
    /// everyone does not move a ratio taken round by round, where the ratio
    /// of medians of unpaired samples moves with it.
    @Test func ratiosArePairedRoundByRound() {
        let w = workload(c: [1.0, 2.0, 2.0, 1.0, 1.0], ours: [1.1, 2.2, 2.2, 1.1, 2.2])
        // Medians: ours 2.2, C 1.0 → 2.2x unpaired; round by round: 1.1, 1.1, 1.1, 1.1, 2.2 → 1.1x.
        #expect(abs((w.pairedRatio("Strongroom record", to: "C") ?? 0) - 1.1) < 1e-9)
    }

    @Test func aRegressionIsARatioWorseRoundByRoundAndAtTheBest() throws {
        let baseline = Baseline(report: report([workload(c: [1, 1, 1, 1, 1], ours: [1.1, 1.1, 1.1, 1.1, 1.1])]))
        // Every round 30% worse: a regression.
        let slower = report([workload(c: [1, 1, 1, 1, 1], ours: [1.43, 1.43, 1.43, 1.43, 1.43])])
        #expect(try baseline.regressions(in: slower, tolerance: 0.15).count == 1)
        // Three noisy rounds, the best as before: not a regression.
        let noisy = report([workload(c: [1, 1, 1, 1, 1], ours: [1.1, 1.6, 1.6, 1.6, 1.1])])
        #expect(try baseline.regressions(in: noisy, tolerance: 0.15).isEmpty)
    }

    @Test func onlyTheLargestSizeIsGuarded() {
        let baseline = Baseline(report: report([workload(size: 10_000, c: [1, 1, 1], ours: [1, 1, 1]),
                                                workload(size: 1_000_000, c: [1, 1, 1], ours: [1, 1, 1])]))
        #expect(baseline.entries.map(\.size) == [1_000_000])
    }
}

@Suite struct CommandLineTests {
    @Test func writingTheBaselineAndCheckingAgainstItIsRefused() {
        #expect(throws: (any Error).self) { try BenchmarkCommand.parse(["--write-baseline", "--check"]).validate() }
    }

    @Test func publishingOverTheRunsOwnReportIsRefused() {
        #expect(throws: (any Error).self) { try BenchmarkCommand.parse(["--publish", "--out", "results", "--results", "./results/"]).validate() }
    }

    #if DEBUG
    /// A debug build times Strongroom at -Onone against C at -O2.
    @Test func aFullRunOfADebugBuildIsRefused() {
        #expect(throws: (any Error).self) { try BenchmarkCommand.parse([]).validate() }
        #expect(throws: (any Error).self) { try BenchmarkCommand.parse(["--publish"]).validate() }
        #expect(throws: Never.self) { try BenchmarkCommand.parse(["--quick"]).validate() }
        #expect(throws: Never.self) { try BenchmarkCommand.parse(["--readme-check"]).validate() }
    }
    #endif
}

@Suite struct PublishedReportTests {
    let folder = NSTemporaryDirectory() + "strongroom-bench-tests-\(UUID().uuidString)"

    /// A README with the markers and a published report beside it.
    func publish(_ report: Report) throws -> (readme: String, results: String) {
        let results = "\(folder)/results"
        try report.write(to: results)
        let readme = "\(folder)/README.md"
        try Data("# R\n\n\(ReadmeSection.begin)\n\(ReadmeSection.end)\n".utf8).write(to: URL(fileURLWithPath: readme))
        let command = try BenchmarkCommand.parse(["--readme-write", "--results", results, "--readme", readme])
        try command.run()
        return (readme, results)
    }

    @Test func theCheckPassesOnWhatWasPublished() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (readme, results) = try publish(report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])]))
        let check = try BenchmarkCommand.parse(["--readme-check", "--results", results, "--readme", readme])
        #expect(throws: Never.self) { try check.run() }
    }

    @Test func aQuickReportIsNeverPublished() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: (any Error).self) { try publish(report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])], quick: true)) }
    }

    /// The report the README links must be what the harness writes from the
    /// published samples: an edited (or stale) report.md fails the check.
    @Test func anEditedPublishedReportFailsTheCheck() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (readme, results) = try publish(report([workload(c: [1, 1, 1], ours: [1.1, 1.1, 1.1])]))
        for file in ["report.md", "report.svg"] {
            let path = "\(results)/\(file)"
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            try (original + Data("\nedited by hand\n".utf8)).write(to: URL(fileURLWithPath: path))
            let check = try BenchmarkCommand.parse(["--readme-check", "--results", results, "--readme", readme])
            #expect(throws: (any Error).self, "\(file)") { try check.run() }
            try original.write(to: URL(fileURLWithPath: path))
        }
    }
}

/// Issue 26, item 7: the report sets the same workloads of two engines side by side.
@Suite struct EngineComparisonTests {
    @Test func workloadsBothEnginesMeasuredAreSetSideBySide() throws {
        var here = report([workload("insert", c: [2, 2], ours: [3, 3]), workload("decode", c: [1, 1], ours: [1, 1])])
        var there = report([workload("insert", c: [4, 4], ours: [5, 5])])
        there.environment.sqlcipher = "4.6.1 community"
        there.environment.sqlcipherSQLite = "3.46.1"
        here.engines = EngineComparison(here: here, there: there)
        let rows = try #require(here.engines?.rows)
        #expect(rows.map(\.contender) == ["C", "Strongroom record"])
        #expect(rows.allSatisfy { $0.workload == "insert" })
        #expect(rows[1].here == 3 && rows[1].there == 5 && rows[1].toCHere == 1.5 && rows[1].toCThere == 1.25)
        let text = MarkdownReport(report: here).text
        #expect(text.contains("## Engines side by side") && text.contains("SQLCipher 4.6.1 community on SQLite 3.46.1"), "\(text)")
        // It survives report.json.
        let encoded = try JSONEncoder().encode(here)
        #expect(try JSONDecoder().decode(Report.self, from: encoded).engines?.rows.count == 2)
    }
}
