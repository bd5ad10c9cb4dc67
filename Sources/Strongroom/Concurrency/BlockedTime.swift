#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How long the calling thread was blocked while a closure ran: neither
/// running nor waiting for a core, but waiting on the disk (an `fsync`) or
/// a lock. A busy machine, which makes a closure take longer only by
/// keeping the thread from a core, adds nothing to it.
///
/// On Linux: the time it took, less the thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`) and the time it waited for a core (the
/// second figure of `/proc/thread-self/schedstat`, brought up to date each
/// time the thread gets a core, so exact while it runs). Where those cannot
/// be read, the whole time the closure took counts as blocked.
enum BlockedTime {
    /// Runs `body`; its result, and the time the thread was blocked in it.
    static func measure<T>(_ body: () throws -> T) rethrows -> (result: T, blocked: Duration) {
        // The clock outside both readings: a wait for a core between them
        // and the clock counts as blocked (too much, never too little).
        let start = ContinuousClock.now
        let before = scheduled()
        let result = try body()
        let after = scheduled()
        let took = ContinuousClock.now - start
        guard let before, let after else { return (result, took) }
        let ran = Duration.nanoseconds(Int64(truncatingIfNeeded: after &- before))
        return (result, max(.zero, took - ran))
    }

    /// Nanoseconds the thread spent on a core plus waiting for one, or nil.
    private static func scheduled() -> UInt64? {
        #if os(Linux)
        var cpu = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0 else { return nil }
        let fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 96)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count - 1) }
        guard count > 0 else { return nil }
        // "<on a core> <waiting for one> <timeslices>\n"; the first lags
        // while the thread runs, the clock does not.
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard fields.count >= 3, let waiting = UInt64(String(decoding: fields[1], as: UTF8.self)),
              let slices = UInt64(String(decoding: fields[2].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)), slices > 0 else { return nil }
        return UInt64(cpu.tv_sec) &* 1_000_000_000 &+ UInt64(cpu.tv_nsec) &+ waiting
        #else
        return nil
        #endif
    }
}
