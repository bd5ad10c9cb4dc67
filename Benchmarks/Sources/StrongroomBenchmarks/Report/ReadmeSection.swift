import Foundation

/// The README's performance figures, written from a published report
/// (`Benchmarks/results/report.json`) between two marker lines, so that no
/// figure in it is typed by hand: `make bench PUBLISH=1` publishes a full
/// run and rewrites the section; `make test` checks that the section is
/// what the published report gives.
struct ReadmeSection {
    static let begin = "<!-- performance: begin. Written by `make bench PUBLISH=1` from Benchmarks/results/report.json: edit the harness, not this. -->"
    static let end = "<!-- performance: end -->"

    let report: Report
    /// The published report's folder as the README links it.
    let resultsLink: String

    /// The workload groups whose tables the section shows in full (at
    /// their largest size); the rest are in the linked report.
    static let shownGroups: Set<String> = ["insert", "decode", "lookups", "encryption", "fields", "migrations", "conversion", "open"]

    /// Whether the section shows `w`'s table: its group's, or a workload
    /// that timed each operation (the async pool, against GRDB's, with its
    /// latencies; the pool's other workload stays in the linked report).
    static func shows(_ w: WorkloadResult) -> Bool { shownGroups.contains(w.group) || w.latencies != nil }

    var text: String {
        let e = report.environment
        var lines = [Self.begin, ""]
        lines.append("Run of \(e.date.prefix(10)) on \(e.machine); \(e.swift); SQLCipher \(e.sqlcipher) on SQLite \(e.sqlcipherSQLite) (Strongroom and C), GRDB on the system's SQLite \(e.systemSQLite); \(e.openssl); \(e.measured).")
        lines.append("Every sample, table and note: [\(resultsLink)/report.md](\(resultsLink)/report.md) and [report.json](\(resultsLink)/report.json).")
        lines.append("")
        lines.append("![Strongroom against C, GRDB, the sqlcipher shell and openssl speed](\(resultsLink)/report.svg)")
        lines.append("")
        lines.append("### Targets")
        lines.append("")
        lines.append(contentsOf: MarkdownReport(report: report).targetRows)
        var largest: [String: WorkloadResult] = [:]
        for w in report.workloads where Self.shows(w) {
            if largest[w.name].map({ $0.size < w.size }) ?? true { largest[w.name] = w }
        }
        var shown = Set<String>()
        for w in report.workloads where largest[w.name]?.size == w.size && shown.insert(w.name).inserted {
            lines.append("")
            lines.append("### \(w.name), \(formattedSize(w.size))")
            lines.append("")
            lines.append(contentsOf: MarkdownReport.table(of: w))
        }
        lines.append("")
        lines.append(Self.end)
        return lines.joined(separator: "\n")
    }

    /// `readme` with its section between the markers replaced by `text`.
    func replacing(in readme: String) throws -> String {
        guard let start = readme.range(of: Self.begin), let stop = readme.range(of: Self.end, range: start.upperBound..<readme.endIndex) else {
            throw BenchmarkError("The README has no performance markers: put the lines\n\(Self.begin)\n\(Self.end)\nwhere the section goes.")
        }
        return readme.replacingCharacters(in: start.lowerBound..<stop.upperBound, with: text)
    }

    /// The section of the published report in `results`, linked from a
    /// README at `readmePath`.
    static func published(results: String, readmePath: String) throws -> ReadmeSection {
        let json = "\(results)/report.json"
        guard let data = FileManager.default.contents(atPath: json) else {
            throw BenchmarkError("No published report at \(json): run a full `make bench PUBLISH=1`.")
        }
        let report: Report
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            report = try decoder.decode(Report.self, from: data)
        } catch {
            throw BenchmarkError("The published report at \(json) is not one this harness wrote (\(error)).")
        }
        guard report.settings["quick"] == "false" else {
            throw BenchmarkError("The report at \(json) is not of a full run (quick: \(report.settings["quick"] ?? "unknown")): publish a full `make bench PUBLISH=1`.")
        }
        return ReadmeSection(report: report, resultsLink: relativePath(of: results, from: URL(fileURLWithPath: readmePath).deletingLastPathComponent().path))
    }

    /// `path` relative to the folder `base`, when it lies below it.
    static func relativePath(of path: String, from base: String) -> String {
        let full = URL(fileURLWithPath: path).standardizedFileURL.path, folder = URL(fileURLWithPath: base).standardizedFileURL.path
        return full.hasPrefix(folder + "/") ? String(full.dropFirst(folder.count + 1)) : full
    }
}
