import Dispatch
import Foundation

/// A wait given as a `Duration`, as the clocks that bound a wait count it.
extension Duration {
    /// The instant this long from now on the monotonic clock, clamped: a
    /// negative wait is none, one too long to count in nanoseconds is
    /// forever. For semaphores and `DispatchQueue` deadlines.
    var dispatchDeadline: DispatchTime {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return .now() }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (nanoseconds, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        let now = DispatchTime.now().uptimeNanoseconds
        guard !overflow, !overflowAgain, UInt64(nanoseconds) < UInt64.max - now else { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: now + UInt64(nanoseconds))
    }

    /// The date this long from now, for `NSCondition.wait(until:)` and
    /// `NSLock.lock(before:)`. A negative wait is now.
    var dateFromNow: Date {
        let (seconds, attoseconds) = components
        return Date(timeIntervalSinceNow: max(0, Double(seconds) + Double(attoseconds) / 1e18))
    }
}
