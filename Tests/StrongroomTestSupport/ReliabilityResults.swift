public import Foundation

/// What the reliability tests saw, for RELIABILITY.md: `make stress` sets
/// `STRONGROOM_STRESS_RESULTS` to `Reliability/results/ENGINE/` (`sqlcipher3` or
/// `sqlcipher4`, the engine it runs on), and each test
/// writes one JSON file per operation into the folder of its kind
/// (`crashes`, `faults`, `tampering`, `leaks`, `load`), from which
/// `Scripts/reliability.py` writes the page. Without the variable (a plain
/// `make test`) nothing is written. Each file carries the run that wrote it
/// (`STRONGROOM_RELIABILITY_RUN`, set by `make stress`), so that the page
/// shows only what the last finished run measured.
public enum ReliabilityResults {
    /// Whether results are being collected (`make stress`).
    public static var collecting: Bool {
        ProcessInfo.processInfo.environment["STRONGROOM_STRESS_RESULTS"] != nil
    }

    /// Writes `summary` as `KIND/NAME.json`, `NAME` made of the letters and digits of `name`.
    public static func write(_ kind: String, name: String, _ summary: [String: Any]) throws {
        guard let root = ProcessInfo.processInfo.environment["STRONGROOM_STRESS_RESULTS"] else { return }
        let folder = "\(root)/\(kind)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let run = ProcessInfo.processInfo.environment["STRONGROOM_RELIABILITY_RUN"] ?? ""
        let data = try JSONSerialization.data(withJSONObject: summary.merging(["run": run]) { $1 }, options: [.prettyPrinted, .sortedKeys])
        let file = name.lowercased().split { !($0.isLetter || $0.isNumber) }.joined(separator: "-")
        try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: "\(folder)/\(file).json"))
    }
}
