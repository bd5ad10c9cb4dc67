import Strongroom
import Testing

/// Review of d55e1a2: a `Duration` given to SQLite as whole milliseconds
/// (``Configuration/busyTimeout``, a checkpoint's wait) is clamped to what
/// `sqlite3_busy_timeout` takes. A value that wrapped to a negative one
/// would turn SQLite's busy handler off: a lock would fail at once.
@Suite("Durations in milliseconds")
struct DurationConversionTests {
    @Test(arguments: [
        (Duration.zero, Int32(0)),
        (.milliseconds(1500), 1500),
        (.nanoseconds(999_999), 0),
        (.seconds(-3), 0),
        (.seconds(Int64(Int32.max) / 1000 + 1), .max),
        (.seconds(Int64.max / 1000), .max),
        // Within 999 ms of Int64.max milliseconds: adding them must not wrap.
        (Duration(secondsComponent: Int64.max / 1000, attosecondsComponent: 999_000_000_000_000_000), .max),
        (Duration(secondsComponent: Int64.max, attosecondsComponent: 0), .max),
    ] as [(Duration, Int32)])
    func aDurationBecomesClampedMilliseconds(duration: Duration, expected: Int32) {
        #expect(Connection.milliseconds(duration) == expected, "\(duration)")
    }
}
