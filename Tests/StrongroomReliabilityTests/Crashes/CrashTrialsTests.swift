import StrongroomTestSupport
import Testing

/// The crash harness's choice of kill moments, on a simulated run (no
/// process, no sleeping): each delay is placed on a timeline where the
/// operation occupies a short span of a long run.
@Suite("crash trials: where the kills land")
struct CrashTrialsTests {
    /// Under ThreadSanitizer a pool's rekey is a short part of its child's
    /// run (start-up, then the rewrite, then a long close and exit): kills
    /// spread evenly over the whole run landed inside it once in 24
    /// (`make sanitize`, 2026-11-23: before 6, inside 1, after 17). Here the
    /// operation is 50 ms of a 1,000 ms run (4.5 % of the kill range); the
    /// trials must still put at least one kill in twelve inside it.
    @Test func killsReachAShortOperationInsideALongRun() {
        let window = 1000, operation = 900..<950
        var trials = CrashTrials("simulated", defaultCount: 48)
        let count = trials.count
        for _ in 0..<count {
            let milliseconds = Int(trials.nextKillDelay(window: window) / 1000)
            #expect((0...window * 11 / 10).contains(milliseconds))
            trials.landed(milliseconds < operation.lowerBound ? .before : operation.contains(milliseconds) ? .inside : .after)
        }
        #expect(trials.killedInside >= count / 12, "only \(trials.killedInside) of \(count) kills landed inside")
    }

    /// Kills still cover the whole run, not only the span found so far.
    @Test func killsStillReachTheWholeRun() {
        let window = 1000
        var trials = CrashTrials("simulated", defaultCount: 200)
        var early = 0, late = 0
        for _ in 0..<200 {
            let milliseconds = Int(trials.nextKillDelay(window: window) / 1000)
            if milliseconds < 200 { early += 1 }
            if milliseconds > 900 { late += 1 }
            trials.landed(milliseconds < 500 ? .before : milliseconds < 510 ? .inside : .after)
        }
        #expect(early >= 1 && late >= 1, "kills before 200 ms: \(early), after 900 ms: \(late)")
    }
}
