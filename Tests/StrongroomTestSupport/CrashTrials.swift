import Foundation

/// The crash harness's trials: child processes killed with SIGKILL at
/// random moments during an operation. `make test` runs each operation's
/// default number of trials; `make stress` sets `STRONGROOM_STRESS_TRIALS`
/// (200) and `STRONGROOM_STRESS_RESULTS`, a folder where each operation
/// writes what happened (`OPERATION.json`), from which
/// `Scripts/reliability.py` writes RELIABILITY.md.
public struct CrashTrials {
    /// The operation, as RELIABILITY.md names it.
    public let operation: String
    /// Trials to run: `STRONGROOM_STRESS_TRIALS` when set, else `defaultCount`.
    public let count: Int
    /// Kills that landed while the child was still running (it did not exit first).
    public var killedBeforeExit = 0
    /// Kills that landed inside the operation itself, as the test tells.
    public var killedInside = 0
    /// How each trial ended (e.g. "old key", "new key", "version 1").
    public var outcomes: [String: Int] = [:]
    /// Checks that failed (each is also a failed expectation of the test).
    public var failures = 0
    private let started = Date()

    public init(_ operation: String, defaultCount: Int) {
        self.operation = operation
        let environment = ProcessInfo.processInfo.environment["STRONGROOM_STRESS_TRIALS"].flatMap(Int.init)
        count = max(environment ?? defaultCount, 1)
    }

    /// A random moment in `0 ... window × 1.1` milliseconds, to sleep before the kill.
    public static func killDelay(window milliseconds: Int) -> UInt32 {
        UInt32(Int.random(in: 0...max(milliseconds * 11 / 10, 10)) * 1000)
    }

    /// Milliseconds of `duration`, at least 10.
    public static func milliseconds(_ duration: Duration) -> Int {
        max(Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000), 10)
    }

    /// Writes `OPERATION.json` into `STRONGROOM_STRESS_RESULTS`, when set.
    public func record() throws {
        guard let folder = ProcessInfo.processInfo.environment["STRONGROOM_STRESS_RESULTS"] else { return }
        let summary: [String: Any] = [
            "operation": operation, "trials": count, "killed_before_exit": killedBeforeExit, "killed_inside": killedInside,
            "outcomes": outcomes, "failures": failures, "seconds": (Date().timeIntervalSince(started) * 10).rounded() / 10,
        ]
        let data = try JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys])
        let name = operation.lowercased().split { !($0.isLetter || $0.isNumber) }.joined(separator: "-")
        try data.write(to: URL(fileURLWithPath: "\(folder)/\(name).json"))
    }
}
