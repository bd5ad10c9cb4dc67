import Foundation

/// The committed ratios to C (medians) of a full run, by workload, size and
/// contender: `make bench CHECK=1` fails when one gets more than 15% worse.
/// Ratios, not times, so that a faster or slower machine does not trip it.
struct Baseline: Codable {
    var date: String
    var machine: String
    var ratios: [String: Double]

    init(report: Report) {
        date = report.environment.date
        machine = "\(report.environment.cpuModel), \(report.environment.cores) cores"
        ratios = [:]
        for w in report.workloads where w.c != nil {
            for r in w.contenders where r.role == .ours {
                if let ratio = w.ratio(r.name, to: "C"), ratio.isFinite { ratios[Self.key(w, r.name)] = (ratio * 1000).rounded() / 1000 }
            }
        }
    }

    static func key(_ w: WorkloadResult, _ contender: String) -> String { "\(w.name) @\(formattedSize(w.size)): \(contender)" }

    static func read(from path: String) throws -> Baseline {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchmarkError("No baseline at \(path): write one from a full run with --write-baseline (make bench ARGS=--write-baseline) and commit it.")
        }
        do { return try JSONDecoder().decode(Baseline.self, from: data) } catch {
            throw BenchmarkError("The baseline at \(path) is not one this harness wrote (\(error)).")
        }
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }

    /// Each ratio of `report` more than `tolerance` worse than its baseline.
    /// A run that shares no ratio with the baseline (another size, a subset
    /// of workloads, renamed contenders) is an error, not a pass.
    func regressions(in report: Report, tolerance: Double) throws -> [String] {
        let now = Baseline(report: report).ratios
        let compared = now.keys.filter { ratios[$0] != nil }
        guard !compared.isEmpty else {
            throw BenchmarkError("no ratio of this run is in the baseline (it holds \(ratios.count), of a full run): run the full `make bench CHECK=1`")
        }
        return now.keys.sorted().compactMap { key in
            guard let then = ratios[key], let ratio = now[key], ratio > then * (1 + tolerance) else { return nil }
            return String(format: "%@: %.2fx of C, baseline %.2fx (+%.0f%%)", key, ratio, then, (ratio / then - 1) * 100)
        }
    }
}
