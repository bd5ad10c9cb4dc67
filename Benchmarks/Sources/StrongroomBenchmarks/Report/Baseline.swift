import Foundation

/// The committed ratios to C of a full run, at each workload's largest
/// size, by contender: `make bench CHECK=1` fails when one gets more than
/// 15% worse. Ratios, not times, so that a faster or slower machine does
/// not trip it.
///
/// Each ratio is taken two ways, and a regression is a ratio worse both
/// ways: round by round (the median of the rounds' ratios: contenders run
/// interleaved, so a slow moment of the machine falls on both sides of a
/// round) and at the best (the ratio of the minimums, the run least
/// disturbed). On this kind of virtual machine a single round can take
/// twice as long as its neighbours; a real regression slows every round.
struct Baseline: Codable {
    struct Entry: Codable, Equatable {
        var group: String
        var workload: String
        var size: Int
        var contender: String
        /// The median of the rounds' ratios to C.
        var ratio: Double
        /// The minimum's ratio to C's minimum.
        var bestRatio: Double

        var key: String { "\(workload) @\(formattedSize(size)): \(contender)" }
    }

    /// The instructions of one of ours per row (or lookup), counted by
    /// callgrind: they do not move with the machine's load, so they are
    /// guarded closely (`countTolerance`), as a ratio to the C loop on the
    /// same engine (so that another SQLCipher build does not trip them).
    struct Count: Codable, Equatable {
        var group: String
        var workload: String
        var size: Int
        var contender: String
        /// Instructions per unit (row or lookup).
        var perUnit: Double
        /// `perUnit` over the C loop's on the same engine.
        var ratio: Double

        var key: String { "\(workload) @\(formattedSize(size)): \(contender), instructions" }
    }

    var date: String
    var machine: String
    var entries: [Entry]
    /// Nil in a baseline written before counts were taken.
    var counts: [Count]?

    init(report: Report) {
        date = report.environment.date
        machine = "\(report.environment.cpuModel), \(report.environment.cores) cores"
        var largest: [String: Int] = [:]
        for w in report.workloads where w.c != nil { largest[w.name] = max(largest[w.name] ?? 0, w.size) }
        entries = report.workloads.filter { $0.c != nil && largest[$0.name] == $0.size }.flatMap { w in
            w.contenders.filter { $0.role == .ours }.map { r in
                Entry(group: w.group, workload: w.name, size: w.size, contender: r.name,
                      ratio: Self.rounded(w.pairedRatio(r.name, to: "C")), bestRatio: Self.rounded(w.ratioOfMinimums(r.name, to: "C")))
            }
        }
        counts = report.workloads.flatMap { w in
            w.contenders.filter { $0.role == .ours }.compactMap { r in
                w.instructions?[r.name].map { perUnit in
                    Count(group: w.group, workload: w.name, size: w.size, contender: r.name,
                          perUnit: perUnit.rounded(), ratio: Self.rounded(w.instructionRatioToOwnC(r.name)))
                }
            }
        }
    }

    private static func rounded(_ ratio: Double?) -> Double {
        guard let ratio, ratio.isFinite else { return .nan }
        return (ratio * 1000).rounded() / 1000
    }

    static func read(from path: String) throws -> Baseline {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchmarkError("No baseline at \(path): write one from a full run with --write-baseline (make bench ARGS=--write-baseline) and commit it.")
        }
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return try decoder.decode(Baseline.self, from: data)
        } catch {
            throw BenchmarkError("The baseline at \(path) is not one this harness wrote (\(error)): write it again from a full run with --write-baseline.")
        }
    }

    func write(to path: String) throws {
        // A count without a ratio to its C would guard nothing.
        if let unguarded = counts?.first(where: { !$0.ratio.isFinite || !$0.perUnit.isFinite }) {
            throw BenchmarkError("\(unguarded.key) has no ratio to its C (the C loop was not counted): the baseline is not written.")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    /// What fails the check: each baseline ratio of the `groups` that ran
    /// (workload groups; all when nil) that got more than `tolerance` worse both round by
    /// round and at the best, that the run no longer measures, or that it
    /// could not compute. A run of other sizes (`--quick`) is an error.
    ///
    /// A count fails when its ratio to the C loop on its engine is more than
    /// `countTolerance` above the baseline's, or when it is no longer counted.
    func regressions(in report: Report, tolerance: Double, countTolerance: Double = 0.03, groups: Set<String>? = nil) throws -> [String] {
        guard report.settings["quick"] != "true" else {
            throw BenchmarkError("--check compares a full run with the baseline: a quick run's sizes are not in it.")
        }
        return timeRegressions(in: report, tolerance: tolerance, groups: groups)
            + countRegressions(in: report, tolerance: countTolerance, groups: groups)
    }

    /// The groups whose reads are counted.
    static let countedGroups: Set<String> = ["decode", "lookups"]

    private func countRegressions(in report: Report, tolerance: Double, groups: Set<String>?) -> [String] {
        // A baseline from before counts were taken guards none: that is a
        // failure to say, not a pass.
        guard let counts else {
            let counted = groups.map { !$0.isDisjoint(with: Self.countedGroups) } ?? true
            return counted ? ["the baseline has no counts of instructions: write it again from a full run (make bench BASELINE=1)"] : []
        }
        let now = Dictionary((Baseline(report: report).counts ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        return counts.filter { groups?.contains($0.group) ?? true }.sorted { $0.key < $1.key }.compactMap { then in
            guard then.ratio.isFinite else { return "\(then.key): the baseline holds no ratio to its C for this count: write it again from a full run" }
            guard let current = now[then.key] else {
                return "\(then.key): no longer counted (a renamed or removed contender, or callgrind did not run): write the baseline again if that is intended"
            }
            guard current.ratio.isFinite else { return "\(then.key): no ratio to its C could be computed" }
            guard current.ratio > then.ratio * (1 + tolerance) else { return nil }
            return String(format: "%@: %.0f per unit, %.3fx of its C (baseline %.0f, %.3fx: +%.1f%%)",
                          then.key, current.perUnit, current.ratio, then.perUnit, then.ratio, (current.ratio / then.ratio - 1) * 100)
        }
    }

    private func timeRegressions(in report: Report, tolerance: Double, groups: Set<String>?) -> [String] {
        let now = Dictionary(Baseline(report: report).entries.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        return entries.filter { groups?.contains($0.group) ?? true }.sorted { $0.key < $1.key }.compactMap { then in
            guard let current = now[then.key] else {
                return "\(then.key): no longer measured (a renamed or removed contender, or another size): write the baseline again if that is intended"
            }
            guard current.ratio.isFinite, current.bestRatio.isFinite else { return "\(then.key): no ratio to C could be computed" }
            guard then.ratio.isFinite, then.bestRatio.isFinite else { return nil }
            let worse = current.ratio > then.ratio * (1 + tolerance) && current.bestRatio > then.bestRatio * (1 + tolerance)
            guard worse else { return nil }
            return String(format: "%@: %.2fx of C round by round (baseline %.2fx, +%.0f%%), %.2fx at the best (baseline %.2fx)",
                          then.key, current.ratio, then.ratio, (current.ratio / then.ratio - 1) * 100, current.bestRatio, then.bestRatio)
        }
    }
}
