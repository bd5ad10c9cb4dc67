import ArgumentParser
import CBenchmarkLoops
import Foundation
import Strongroom
import StrongroomCrypto

/// `make bench`: every workload side by side with the same loop in C and
/// with GRDB (its own process), written as a report folder.
@main
struct BenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "StrongroomBenchmarks",
        abstract: "Strongroom against C, GRDB and the tools people use, in one run, with a report.")

    @Option(help: "Where report.json, report.md and report.svg go.")
    var out = "report"
    @Flag(help: "Every workload at a tiny size, in a few seconds (make test runs it).")
    var quick = false
    @Flag(help: "Also 10M rows for insert and decode.")
    var large = false
    @Option(help: "Recorded rounds per workload (after one warm-up round).")
    var rounds = 5
    @Option(parsing: .upToNextOption, help: "Workload groups to run (default: all): core, encryption, open, pool, fields, search, migrations, conversion, service (the last only with --customer-service and --grdb-service).")
    var only: [String] = []
    @Option(help: "The GRDB peer's executable (default: GRDBPeer/.build/{release,debug}/GRDBPeer).")
    var grdbPeer: String?
    @Flag(help: "Fail when a ratio to C is more than 15% worse than the committed baseline, or a count of instructions more than 3%.")
    var check = false
    @Option(help: "The committed baseline of ratios.")
    var baseline = "baseline.json"
    @Flag(help: "Write the baseline from this run's ratios.")
    var writeBaseline = false
    @Flag(help: "After a full run: copy the report into --results and rewrite the README's performance section from it.")
    var publish = false
    @Option(help: "The published report's folder (committed).")
    var results = "results"
    @Option(help: "The README whose performance section is written from the published report.")
    var readme = "../README.md"
    @Flag(help: "Run nothing: fail when the README's performance section is not what the published report gives (make test).")
    var readmeCheck = false
    @Flag(help: "Run nothing: rewrite the README's performance section, and the published report.md and report.svg, from the published report.json.")
    var readmeWrite = false
    @Option(help: "Another engine's report.json (make bench: SQLCipher 4.6.1's, from report-sqlcipher4/): its workloads beside this run's in the report.")
    var engineReport: String?
    @Option(help: ArgumentHelp("The service workload's Strongroom service: Examples/CustomerService's release build (the service group runs only with it and --grdb-service).", valueName: "path"))
    var customerService: String?
    @Option(help: ArgumentHelp("The service workload's GRDB peer: Benchmarks/GRDBService's release build.", valueName: "path"))
    var grdbService: String?
    @Option(help: ArgumentHelp("The wrk scripts of the service workload.", valueName: "path"))
    var loadScripts = "../Examples/CustomerService/Load"
    @Option(help: "The service workload: customers seeded in each service before the load.")
    var serviceRows = 10_000
    @Option(help: "The service workload: seconds of the mix, per service and round (wrk -d).")
    var serviceSeconds = 30
    @Option(help: "The service workload: seconds of each endpoint alone, per service and round.")
    var serviceEndpointSeconds = 10
    @Option(help: "The service workload: rounds (each on new databases; the figures are the rounds' medians).")
    var serviceRounds = 1
    @Option(help: "The service workload: wrk's connections (-c; wrk runs 2 threads).")
    var serviceConnections = 64
    @Option(help: "Only this read, five times, for perf or callgrind: c, c-owned, statement, in-place, codable, record, strings, lookups-c, lookups-record, insert-c, insert-statement, insert-codable, insert-record, create-sealed, import-chinook, import-chinook-sealed.")
    var profile: String?

    static func main() {
        // Helper processes of the harness itself (see ConversionScenarios).
        let arguments = CommandLine.arguments
        if let at = arguments.firstIndex(of: "--measure-child") { ChildProcess.measure(Array(arguments[(at + 1)...])) }
        if let at = arguments.firstIndex(of: "--count-child") { ReadCounts.child(Array(arguments[(at + 1)...])) }
        if let at = arguments.firstIndex(of: "--conversion-child") {
            do { try ConversionScenarios.child(Array(arguments[(at + 1)...])); Foundation.exit(0) } catch { Foundation.exit(1) }
        }
        do {
            // `--help` parses as ArgumentParser's own help command: run whatever was parsed.
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    func validate() throws {
        if publish && (quick || !only.isEmpty) {
            throw ValidationError("--publish takes a full run: without --quick and --only (a published report covers every workload).")
        }
        if writeBaseline && quick {
            throw ValidationError("--write-baseline takes a full run: without --quick.")
        }
        // With --only, a baseline of those groups, in a file of its own (make
        // bench writes SQLCipher 4's that way): never over the whole run's.
        if writeBaseline && !only.isEmpty && Self.sameFolder(baseline, "baseline.json") {
            throw ValidationError("--write-baseline with --only writes a baseline of those groups only: give it a file of its own with --baseline (baseline.json is the whole run's).")
        }
        if writeBaseline && check {
            throw ValidationError("--write-baseline with --check would check the run against itself: check first, then write the baseline in another run.")
        }
        if (customerService == nil) != (grdbService == nil) {
            throw ValidationError("The service workload takes both --customer-service and --grdb-service (its two services).")
        }
        if only.contains("service") && customerService == nil {
            throw ValidationError("--only service needs the services' release builds: --customer-service Examples/CustomerService/.build/release/CustomerService --grdb-service GRDBService/.build/release/GRDBService (make bench-service builds and passes them).")
        }
        guard serviceRows >= 1, serviceSeconds >= 1, serviceEndpointSeconds >= 1, serviceRounds >= 1, serviceConnections >= 2 else {
            throw ValidationError("--service-rows, --service-seconds, --service-endpoint-seconds and --service-rounds take 1 or more, --service-connections 2 or more.")
        }
        if publish && Self.sameFolder(out, results) {
            throw ValidationError("--out and --results are the same folder: the run's report would be removed before it is published.")
        }
        #if DEBUG
        // Strongroom at -Onone against C at -O2 measures nothing worth a report.
        if !(quick || readmeCheck || readmeWrite || profile != nil) {
            throw ValidationError("This is a debug build: a full run times the release build (make bench, or swift run -c release StrongroomBenchmarks); a debug build runs only --quick, --readme-check and --readme-write.")
        }
        #endif
    }

    static func sameFolder(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
    }

    func run() throws {
        if readmeCheck || readmeWrite {
            try updateReadme(check: readmeCheck)
            return
        }
        // STRONGROOM_BENCH_DIR puts the files elsewhere (another filesystem, tmpfs).
        let workBase = ProcessInfo.processInfo.environment["STRONGROOM_BENCH_DIR"] ?? FileManager.default.temporaryDirectory.path
        Self.removeAbandonedWorkDirectories(in: workBase)
        let work = "\(workBase)/strongroom-bench-\(getpid())"
        // Ours alone (0700), and new: a directory someone else made first is refused.
        guard mkdir(work, 0o700) == 0 else {
            throw BenchmarkError("Cannot create the work directory \(work): \(String(cString: strerror(errno))).")
        }
        defer { try? FileManager.default.removeItem(atPath: work) }

        let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let context = WorkloadContext(directory: work, key: try DatabaseKey.raw(keyBytes), keyHex: Hex.encode(keyBytes),
                                      data: SampleData(poolSize: 1000), peer: GRDBPeer.locate(grdbPeer, allowDebug: quick), quick: quick)
        if let profile {
            try context.profile(profile)
            return
        }
        let sizes = quick ? [1000] : [10_000, 100_000, 1_000_000] + (large ? [10_000_000] : [])
        var runner = Runner(rounds: quick ? 2 : rounds, warmUp: true)
        let allGroups = ["core", "encryption", "open", "pool", "fields", "search", "migrations", "conversion", "service"]
        if let unknown = only.first(where: { !allGroups.contains($0) }) {
            throw ValidationError("Unknown workload group \(unknown): choose among \(allGroups.joined(separator: ", ")).")
        }
        var groups = Set(only.isEmpty ? allGroups : only)
        // The service group runs only with its services' builds (make test's
        // quick run has none: it stays quick).
        if customerService == nil { groups.remove("service") }
        guard context.peer != nil || groups.subtracting(["service"]).isEmpty else {
            throw ValidationError("The GRDB peer is not built (release): run `swift build -c release --package-path GRDBPeer` (make bench does), or pass --grdb-peer.")
        }
        let environment = Environment.read(workDirectory: work)
        runner.progress("Strongroom benchmarks: \(environment.cpuModel), \(environment.cores) cores; SQLCipher \(environment.sqlcipher); sizes \(sizes.map(formattedSize).joined(separator: ", "))")
        if groups.contains("core") { try context.core(&runner, sizes: sizes) }
        let oneSize = quick ? 1000 : 1_000_000
        if groups.contains("encryption") { try context.encryptionCost(&runner, rows: oneSize) }
        if groups.contains("open") { try context.openCost(&runner) }
        if groups.contains("pool") {
            try context.poolLoad(&runner, seconds: quick ? 1 : 5)
            // Three contenders, one warm-up and `rounds` runs each.
            try context.asyncPoolLoad(&runner, seconds: quick ? 0.1 : 2, rounds: quick ? 1 : 3)
        }
        if groups.contains("fields") { try context.fields(&runner, rounds: quick ? 1 : 3) }
        if groups.contains("search") { try context.search(&runner, rounds: quick ? 1 : 3) }
        if groups.contains("migrations") { try context.migrations(&runner, rows: oneSize, fleet: quick ? 10 : 1000, rounds: quick ? 1 : 3) }
        if groups.contains("conversion") { try context.conversion(&runner, rows: quick ? 2000 : 2_000_000, rounds: quick ? 1 : 3) }
        if groups.contains("service"), let customerService, let grdbService {
            try context.serviceLoad(&runner, settings: serviceSettings(customerService: customerService, grdbService: grdbService))
        }

        var report = Report(environment: environment,
                            settings: ["rounds": String(runner.rounds), "quick": String(quick), "sizes": sizes.map(formattedSize).joined(separator: " ")],
                            workloads: runner.results)
        if let engineReport {
            let other: Report
            do {
                let decoder = JSONDecoder()
                decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
                other = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: engineReport)))
            } catch {
                throw BenchmarkError("Cannot read the other engine's report \(engineReport): \(error). Run the other engine first (make bench does).")
            }
            report.engines = EngineComparison(here: report, there: other)
        }
        try report.write(to: out)
        print(MarkdownReport(report: report).targetsTable)
        if quick { print("(quick run, debug-sized: the targets are shown, not met or missed in earnest)") }
        print("\nReport: \(out)/report.md, report.json, report.svg")
        // The check first: a regressed run is neither published nor a baseline.
        if check {
            let failures = try Baseline.read(from: baseline).regressions(in: report, tolerance: 0.15, groups: only.isEmpty ? nil : Set(report.workloads.map(\.group)))
            for failure in failures { print("REGRESSION: \(failure)") }
            if !failures.isEmpty { throw ExitCode(1) }
            print("No ratio to C is more than 15% worse than \(baseline) (round by round and at the best), and no count of instructions more than 3%.")
        }
        if writeBaseline {
            try Baseline(report: report).write(to: baseline)
            print("Baseline written: \(baseline)")
        }
        if publish {
            try FileManager.default.createDirectory(atPath: results, withIntermediateDirectories: true)
            for file in ["report.json", "report.md", "report.svg"] {
                try? FileManager.default.removeItem(atPath: "\(results)/\(file)")
                try FileManager.default.copyItem(atPath: "\(out)/\(file)", toPath: "\(results)/\(file)")
            }
            try updateReadme(check: false)
        }
    }

    /// The service workload's settings from the options (a quick run: 200
    /// customers, 2 s of the mix, 1 s per endpoint, no warm-up).
    func serviceSettings(customerService: String, grdbService: String) throws -> ServiceLoad.Settings {
        for (option, path) in [("--customer-service", customerService), ("--grdb-service", grdbService)] {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ValidationError("\(option) \(path): no executable there (build it: make bench-service does).")
            }
            // A full run times release builds only (SwiftPM's .build/debug/ is a debug one).
            guard quick || !path.contains("/debug/") else {
                throw ValidationError("\(option) \(path) is a debug build: a full run loads the release builds (swift build -c release).")
            }
        }
        guard FileManager.default.fileExists(atPath: "\(loadScripts)/mix.lua") else {
            throw ValidationError("--load-scripts \(loadScripts): no mix.lua there (Examples/CustomerService/Load).")
        }
        func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        var settings = ServiceLoad.Settings(customerService: absolute(customerService), grdbService: absolute(grdbService), scripts: absolute(loadScripts))
        settings.connections = serviceConnections
        settings.rounds = serviceRounds
        if quick {
            (settings.rows, settings.mixSeconds, settings.endpointSeconds, settings.warmUpSeconds) = (200, 2, 1, 0)
        } else {
            (settings.rows, settings.mixSeconds, settings.endpointSeconds) = (serviceRows, serviceSeconds, serviceEndpointSeconds)
        }
        return settings
    }

    /// Writes the README's performance section from the published report,
    /// or with `check`, fails when the section differs from it.
    func updateReadme(check: Bool) throws {
        let section = try ReadmeSection.published(results: results, readmePath: readme)
        guard let current = try? String(contentsOfFile: readme, encoding: .utf8) else { throw BenchmarkError("Cannot read the README at \(readme).") }
        let updated = try section.replacing(in: current)
        if check {
            guard updated == current else {
                throw BenchmarkError("The README's performance section is not what \(results)/report.json gives: run `make bench-readme` (or a full `make bench PUBLISH=1`), never edit the figures by hand.")
            }
            // The report.md and report.svg it links: what this harness writes from the same samples.
            for (file, expected) in [("report.md", MarkdownReport(report: section.report).text), ("report.svg", SVGReport(report: section.report).text)] {
                guard FileManager.default.contents(atPath: "\(results)/\(file)") == Data(expected.utf8) else {
                    throw BenchmarkError("\(results)/\(file) is not what this harness writes from \(results)/report.json: run `make bench-readme`, never edit the published report by hand.")
                }
            }
            print("The README's performance section and \(results)/report.md and report.svg match \(results)/report.json.")
        } else {
            try Data(MarkdownReport(report: section.report).text.utf8).write(to: URL(fileURLWithPath: "\(results)/report.md"))
            try Data(SVGReport(report: section.report).text.utf8).write(to: URL(fileURLWithPath: "\(results)/report.svg"))
            if updated != current { try Data(updated.utf8).write(to: URL(fileURLWithPath: readme)) }
            print("README performance section, \(results)/report.md and report.svg written from \(results)/report.json")
        }
    }

    /// The work directories of runs that were killed (SIGKILL runs no
    /// `defer`): those whose process no longer exists.
    static func removeAbandonedWorkDirectories(in base: String) {
        let prefix = "strongroom-bench-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: "\(base)/\(name)")
        }
    }
}
