import Foundation
import StrongroomTestSupport
import Testing

/// `make stress` and `make sanitize` with ENGINE (review of issue 26, item
/// 7): what they remove stays inside the engine's results folder wherever
/// the checkout lies, an ENGINE they do not know stops them before anything
/// runs, an ENGINE in the environment does not break other targets, and a
/// run on SQLCipher 3 is not made in a shell set up for SQLCipher 4.
/// Run with `make -n` on a copy of the Makefile: nothing is built.
@Suite("make stress and make sanitize: ENGINE")
struct ReliabilityMakeTests {
    let dir = TemporaryDirectory()

    /// `make -n ARGUMENTS` in a copy of the Makefile at `checkout`.
    func dryRun(_ arguments: [String], in checkout: String, environment: [String: String] = [:]) async throws -> ProcessResult {
        if !FileManager.default.fileExists(atPath: checkout + "/Makefile") {
            try FileManager.default.createDirectory(atPath: checkout, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.repositoryRoot + "/Makefile", toPath: checkout + "/Makefile")
        }
        // A make that runs this test (make stress ENGINE=sqlcipher4) passes its
        // command-line variables down in MAKEFLAGS: the copy must not see them.
        var clean = ["STRONGROOM_ENGINE": "", "ENGINE": "", "MAKEFLAGS": "", "MFLAGS": "", "MAKELEVEL": "", "MAKEOVERRIDES": ""]
        clean.merge(environment) { $1 }
        let unset = clean.filter { $0.value.isEmpty }.keys.flatMap { ["-u", $0] }
        let set = clean.filter { !$0.value.isEmpty }.map { "\($0.key)=\($0.value)" }
        return try await ProcessRunner.run("/usr/bin/env", unset + set + ["make", "-n", "--no-print-directory"] + arguments, currentDirectory: checkout)
    }

    @Test func whatStressRemovesStaysInItsFolderWhereverTheCheckoutLies() async throws {
        let keep = dir.file("my/keep")
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        let checkout = dir.file("my projects")
        for arguments in [["stress"], ["stress", "ENGINE=sqlcipher4"], ["sanitize"], ["sanitize", "ENGINE=sqlcipher4"]] {
            let plan = try await dryRun(arguments, in: checkout)
            #expect(plan.status == 0, "\(arguments): \(plan.stderr)")
            let removals = plan.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("rm ") }
            #expect(!removals.isEmpty, "\(arguments): \(plan.stdout)")
            for removal in removals {
                _ = try await ProcessRunner.run("/bin/sh", ["-c", removal], currentDirectory: checkout)
            }
            #expect(FileManager.default.fileExists(atPath: keep), "\(arguments) removed \(keep): \(removals)")
        }
    }

    @Test func anEngineItDoesNotKnowStopsItBeforeAnythingRuns() async throws {
        for engine in ["sqlcipher3 sqlcipher4", "sqlcipher5", ""] {
            for target in ["stress", "sanitize"] {
                let plan = try await dryRun([target, "ENGINE=\(engine)"], in: dir.file("checkout"))
                #expect(plan.status != 0 && plan.stderr.contains("ENGINE") && !plan.stdout.contains("rm "), "\(target) ENGINE=\(engine): \(plan.stdout) \(plan.stderr)")
            }
        }
    }

    @Test func anEngineVariableInTheEnvironmentLeavesOtherTargetsAlone() async throws {
        let plan = try await dryRun(["test"], in: dir.file("checkout"), environment: ["ENGINE": "v8"])
        #expect(plan.status == 0, "\(plan.stderr)")
    }

    /// A shell that sourced `.build/sqlcipher4/env` would build on SQLCipher
    /// 4 and stamp the results SQLCipher 3's: refused, and sanitize.sh is told
    /// its engine rather than reading it from the environment.
    @Test func aSQLCipher3RunIsNotMadeInAShellSetUpForSQLCipher4() async throws {
        for target in ["stress", "sanitize"] {
            for engine in [[], ["ENGINE=sqlcipher3"], ["ENGINE=sqlcipher3 "]] {
                let plan = try await dryRun([target] + engine, in: dir.file("checkout"), environment: ["STRONGROOM_ENGINE": "sqlcipher4"])
                #expect(plan.status != 0 && plan.stderr.contains("ENGINE=sqlcipher4"), "\(target) \(engine): \(plan.stdout) \(plan.stderr)")
            }
        }
        for engine in ["sqlcipher3", "sqlcipher4"] {
            let plan = try await dryRun(["sanitize", "ENGINE=\(engine)"], in: dir.file("checkout"))
            let runs = plan.stdout.split(separator: "\n").filter { $0.contains("Scripts/sanitize.sh") }
            #expect(runs.count == 2 && runs.allSatisfy { $0.contains("STRONGROOM_ENGINE=\(engine) ") }, "\(engine): \(plan.stdout)")
        }
    }
}
