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
    /// The fewest kills that must land inside the operation, set by the
    /// test: ``shortfall`` checks it, and ``record()`` writes it beside the
    /// count, so that RELIABILITY.md shows a row short of it as failing.
    public var minimumInside = 0
    /// The fewest kills inside that must find the operation's writes in the
    /// file (a migration, whose kills can also find it still computing).
    public var minimumInsideWithWrites = 0
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
    /// Delays whose kill landed before the operation wrote anything (``Landing/before``, ``Landing/begun``), in milliseconds.
    private var early: [Int] = []
    /// Delays whose kill landed after the operation, in milliseconds.
    private var late: [Int] = []

    /// The moment of the next kill, in microseconds for `usleep`.
    ///
    /// Every other trial, a random moment in `0 ... window × 1.1`
    /// milliseconds of an uninterrupted run (start-up and exit included);
    /// the others, a random moment in the span where the kills reported by
    /// ``landed(_:)`` place the operation's writes: after the kills that
    /// found nothing written yet and before those that found it finished,
    /// so that an operation that is a short part of its child's run (a
    /// pool's rekey between start-up and a long close under a sanitizer;
    /// a migration that writes only at its commit) still gets kills inside
    /// it. Timing varies from run to run (a start that stalled makes a
    /// late kill land early), so the span is not bounded by the latest
    /// early kill and the earliest late one, but split where the fewest
    /// kills lie on the wrong side (see ``targetSpan(whole:using:)``).
    public mutating func nextKillDelay(window milliseconds: Int, using generator: inout some RandomNumberGenerator) -> UInt32 {
        let whole = max(milliseconds * 11 / 10, 10)
        let range = chosen % 2 == 1 ? targetSpan(whole: whole, using: &generator) : 0...whole
        chosen += 1
        lastDelay = Int.random(in: range, using: &generator)
        return UInt32(lastDelay * 1000)
    }

    /// The span from the latest early kill to the earliest late one, once
    /// the kills on the wrong side of the split between them are left out:
    /// the split is the moment with the fewest early kills after it and late
    /// kills before it (a random one of those when several tie).
    private func targetSpan(whole: Int, using generator: inout some RandomNumberGenerator) -> ClosedRange<Int> {
        let early = early.sorted(), late = late.sorted()
        // Candidate splits: after the i earliest early kills (i = 0 ... count).
        var best: [Int] = [], fewest = Int.max
        var lateBefore = 0
        for i in 0...early.count {
            let split = i == 0 ? -1 : early[i - 1]
            while lateBefore < late.count && late[lateBefore] <= split { lateBefore += 1 }
            let wrong = (early.count - i) + lateBefore
            if wrong < fewest { fewest = wrong; best = [i] } else if wrong == fewest { best.append(i) }
        }
        let i = best.randomElement(using: &generator)!
        let lower = i == 0 ? 0 : min(early[i - 1], whole)
        let upper = min(late.first { $0 > (i == 0 ? -1 : early[i - 1]) } ?? whole, whole)
        return lower...max(lower, upper)
    }

    /// ``nextKillDelay(window:using:)`` with the system's random numbers.
    public mutating func nextKillDelay(window milliseconds: Int) -> UInt32 {
        var generator = SystemRandomNumberGenerator()
        return nextKillDelay(window: milliseconds, using: &generator)
    }

    /// From the child's start to the moment the last
    /// ``kill(_:window:since:expectedStatus:hasWritten:)`` sent SIGKILL (the
    /// child's exit and reaping after it not counted).
    public private(set) var lastWait: Duration = .zero

    /// Trials that waited in ``kill(_:window:since:expectedStatus:hasWritten:)``.
    private var waited = 0

    /// How a trial waits before its kill (``nextWait(window:aimingAtWrites:using:)``).
    public enum KillWait: Sendable, Equatable {
        /// Sleeps this many microseconds (``nextKillDelay(window:using:)``).
        case sleep(microseconds: UInt32)
        /// Until the operation first writes to the file, for `window` × 3
        /// milliseconds at most, then 0 to 2 ms more.
        case firstWrite(window: Int)

        /// Waits as planned, blocking the calling thread.
        func wait(since started: ContinuousClock.Instant, hasWritten: () -> Bool) {
            switch self {
            case .sleep(let microseconds):
                usleep(microseconds)
            case .firstWrite(let milliseconds):
                let deadline = started + .milliseconds(max(milliseconds * 3, 10))
                while !hasWritten() && ContinuousClock.now < deadline { usleep(200) }
                usleep(UInt32.random(in: 0...2000))
            }
        }
    }

    /// Plans the next trial's wait: one trial in four, when the test can
    /// tell the operation's first write (`aimingAtWrites`), until that
    /// write; the others, a sleep for ``nextKillDelay(window:using:)``.
    /// ``record(_:lasting:)`` then tells how long a wait for the first
    /// write lasted.
    public mutating func nextWait(window milliseconds: Int, aimingAtWrites: Bool, using generator: inout some RandomNumberGenerator) -> KillWait {
        waited += 1
        guard aimingAtWrites, waited % 4 == 0 else {
            return .sleep(microseconds: nextKillDelay(window: milliseconds, using: &generator))
        }
        return .firstWrite(window: milliseconds)
    }

    /// Records how long a wait for the first write lasted, as the delay
    /// of its kill for ``landed(_:)`` (a sleep's delay is known when it is planned).
    public mutating func record(_ wait: KillWait, lasting elapsed: Duration) {
        if case .firstWrite = wait { lastDelay = Self.milliseconds(elapsed) }
    }

    /// Waits for the moment of the next kill of `process`, started at
    /// `started`, sends it SIGKILL, and tells how it ended
    /// (``kill(_:expectedStatus:)``). Three trials in four, a sleep for
    /// ``nextKillDelay(window:using:)``; the fourth, when `hasWritten` is
    /// given, until it first says the operation has written to the file
    /// (asked every 200 µs, for the window × 3 at most: a child may run
    /// slower than the run that measured the window, under a sanitizer or
    /// on a busy machine), then 0 to 2 ms more. A migration writes at its
    /// commit, milliseconds that start-up times varying by tens of
    /// milliseconds let timing alone reach only now and then. Either way,
    /// ``landed(_:)`` then records where this kill landed.
    ///
    /// The wait and the signal run on a thread of their own
    /// (``OffThePool``): the kill lands when it was meant to however busy
    /// the cooperative pool is, and no thread of the pool is held for the
    /// wait (up to three times a whole run of the operation).
    ///
    /// ```swift
    /// let runner = try start(arguments)
    /// let (killed, failure) = await trials.kill(runner, window: window, since: .now) {
    ///     CrashTrials.hasBegunWriting(database)
    /// }
    /// ```
    public mutating func kill(_ process: Process, window milliseconds: Int, since started: ContinuousClock.Instant,
                              expectedStatus: Int32 = 0, hasWritten: (@Sendable () -> Bool)? = nil) async -> (killed: Bool, failure: String?) {
        var generator = SystemRandomNumberGenerator()
        let wait = nextWait(window: milliseconds, aimingAtWrites: hasWritten != nil, using: &generator)
        let elapsed = await OffThePool.run {
            wait.wait(since: started, hasWritten: hasWritten ?? { false })
            let now = ContinuousClock.now
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
            return now - started
        }
        record(wait, lasting: elapsed)
        lastWait = elapsed
        return await Self.kill(process, expectedStatus: expectedStatus)
    }

    /// Whether a journal or WAL frames of `database` exist: the first sign
    /// of a write, cheap enough to ask every 200 µs (``kill(_:window:since:expectedStatus:hasWritten:)``).
    public static func hasBegunWriting(_ database: String) -> Bool {
        var status = stat()
        return access(database + "-journal", F_OK) == 0 || (stat(database + "-wal", &status) == 0 && status.st_size > 0)
    }

    /// Records where the kill of the last ``nextKillDelay(window:using:)`` landed.
    public mutating func landed(_ landing: Landing) {
        switch landing {
        case .before: early.append(lastDelay)
        case .begun: killedInside += 1; early.append(lastDelay)
        case .inside: killedInside += 1; killedInsideWithWrites += 1
        case .after: late.append(lastDelay)
        }
    }

    /// Milliseconds of `duration`, at least 10.
    public static func milliseconds(_ duration: Duration) -> Int {
        max(Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000), 10)
    }

    /// Sends SIGKILL to `process` unless it has already exited, waits for
    /// it (off the cooperative pool: ``OffThePool``), and tells how it
    /// ended: `true` when the kill ended it, `false` when it exited first.
    /// A death by any other signal, or an exit with another status than
    /// `expectedStatus`, is a failure the caller records.
    public static func kill(_ process: Process, expectedStatus: Int32 = 0) async -> (killed: Bool, failure: String?) {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        await process.ended()
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

    /// What the kills fell short of (``minimumInside``, ``minimumInsideWithWrites``), or nil.
    public var shortfall: String? {
        if killedInside < minimumInside {
            return "only \(killedInside) of \(count) kills landed inside the operation (at least \(minimumInside) must): \(outcomes)"
        }
        if killedInsideWithWrites < minimumInsideWithWrites {
            return "only \(killedInsideWithWrites) of \(count) kills landed inside the operation's writes (at least \(minimumInsideWithWrites) must): \(outcomes)"
        }
        return nil
    }

    /// Writes `crashes/OPERATION.json` into `STRONGROOM_STRESS_RESULTS`, when set.
    public func record() throws {
        try ReliabilityResults.write("crashes", name: operation, [
            "operation": operation, "trials": count, "killed_before_exit": killedBeforeExit,
            "killed_inside": killedInside, "minimum_inside": minimumInside,
            "killed_inside_with_writes": killedInsideWithWrites, "minimum_inside_with_writes": minimumInsideWithWrites,
            "outcomes": outcomes, "failures": failures, "kill_schedule": "split, first writes", "seconds": (Date().timeIntervalSince(started) * 10).rounded() / 10,
        ])
    }
}
