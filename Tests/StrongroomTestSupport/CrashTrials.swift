public import Foundation

/// The crash harness's trials: child processes killed with SIGKILL at
/// random moments during an operation. `make test` runs each operation's
/// default number of trials; `make stress` sets `STRONGROOM_STRESS_TRIALS`
/// (200) and `STRONGROOM_STRESS_RESULTS` (see ``ReliabilityResults``),
/// where each operation writes what happened (`crashes/OPERATION.json`).
public struct CrashTrials {
    /// The operation, as RELIABILITY.md names it.
    public let operation: String
    /// Trials to run: `STRONGROOM_STRESS_TRIALS` when set, else `defaultCount`.
    public let count: Int
    /// Kills that landed while the child was still running (it did not exit first).
    public var killedBeforeExit = 0
    /// Kills that landed inside the operation itself, as the test tells.
    public var killedInside = 0
    /// Kills inside the operation that found its writes in the file (``Landing/inside``), not only begun (``Landing/begun``).
    public var killedInsideWithWrites = 0
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

    /// Where a kill landed relative to the operation, as the test tells from what it left.
    public enum Landing: Sendable {
        /// Killed before the operation began changing anything.
        case before
        /// Killed after the operation had begun, before it had written anything to the file
        /// (a migration computing in its cache): counted in ``killedInside``.
        case begun
        /// Killed after the operation had written to the file and before it finished: counted in
        /// ``killedInside`` and ``killedInsideWithWrites``.
        case inside
        /// Killed after the operation finished (its commit made), or the child exited before the kill.
        case after
    }

    /// The last delay ``nextKillDelay(window:using:)`` chose, in milliseconds.
    private var lastDelay = 0
    /// Delays chosen so far.
    private var chosen = 0
    /// The latest delay whose kill landed before the operation, in milliseconds.
    private var latestBefore = 0
    /// The earliest delay whose kill landed after the operation, in milliseconds.
    private var earliestAfter: Int?

    /// The moment of the next kill, in microseconds for `usleep`.
    ///
    /// Every other trial, a random moment in `0 ... window × 1.1`
    /// milliseconds of an uninterrupted run (start-up and exit included);
    /// the others, a random moment between the latest kill that landed
    /// before the operation and the earliest that landed after it (as
    /// reported by ``landed(_:)``), so that an operation that is a short
    /// part of its child's run (a pool's rekey between start-up and a
    /// long close under a sanitizer) still gets kills inside it. Timing
    /// varies from run to run, so the two can cross (a slow start made a
    /// late kill land before); then the operation lies somewhere in the
    /// crossed span, and the moment is drawn from it.
    public mutating func nextKillDelay(window milliseconds: Int, using generator: inout some RandomNumberGenerator) -> UInt32 {
        let whole = max(milliseconds * 11 / 10, 10)
        var range = 0...whole
        if chosen % 2 == 1 {
            let after = min(earliestAfter ?? whole, whole)
            range = min(latestBefore, after)...max(latestBefore, after)
        }
        chosen += 1
        lastDelay = Int.random(in: range, using: &generator)
        return UInt32(lastDelay * 1000)
    }

    /// ``nextKillDelay(window:using:)`` with the system's random numbers.
    public mutating func nextKillDelay(window milliseconds: Int) -> UInt32 {
        var generator = SystemRandomNumberGenerator()
        return nextKillDelay(window: milliseconds, using: &generator)
    }

    /// Records where the kill of the last ``nextKillDelay(window:using:)`` landed.
    public mutating func landed(_ landing: Landing) {
        switch landing {
        case .before: latestBefore = max(latestBefore, lastDelay)
        case .begun: killedInside += 1
        case .inside: killedInside += 1; killedInsideWithWrites += 1
        case .after: earliestAfter = min(earliestAfter ?? lastDelay, lastDelay)
        }
    }

    /// Milliseconds of `duration`, at least 10.
    public static func milliseconds(_ duration: Duration) -> Int {
        max(Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000), 10)
    }

    /// Sends SIGKILL to `process` unless it has already exited, waits for
    /// it, and tells how it ended: `true` when the kill ended it, `false`
    /// when it exited first. A death by any other signal, or an exit with
    /// another status than `expectedStatus`, is a failure the caller records.
    public static func kill(_ process: Process, expectedStatus: Int32 = 0) -> (killed: Bool, failure: String?) {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        switch process.terminationReason {
        case .uncaughtSignal:
            return process.terminationStatus == SIGKILL ? (true, nil) : (true, "died of signal \(process.terminationStatus), not the SIGKILL")
        case .exit:
            return process.terminationStatus == expectedStatus ? (false, nil) : (false, "exited with \(process.terminationStatus) before the kill")
        @unknown default:
            return (false, "ended in an unknown way")
        }
    }

    /// Copies the files a crash left (`path` and its `-wal`, `-shm` and
    /// `-journal`) to `copy`, so that a check can open the copy without
    /// changing the crash state (opening recovers a journal, checkpoints
    /// a WAL) that the next run must start from.
    public static func copyCrashState(of path: String, to copy: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            unlink(copy + suffix)
            if FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
        }
    }

    /// Writes `crashes/OPERATION.json` into `STRONGROOM_STRESS_RESULTS`, when set.
    public func record() throws {
        try ReliabilityResults.write("crashes", name: operation, [
            "operation": operation, "trials": count, "killed_before_exit": killedBeforeExit, "killed_inside": killedInside,
            "outcomes": outcomes, "failures": failures, "kill_schedule": "targeted", "seconds": (Date().timeIntervalSince(started) * 10).rounded() / 10,
        ])
    }
}
