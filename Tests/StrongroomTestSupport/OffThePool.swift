public import Foundation

/// Waits for blocking work without holding a thread of Swift's cooperative pool.
///
/// Swift Testing runs every test, synchronous or not, as a task on the
/// cooperative pool, which has one thread per core: two on a 2-core machine.
/// A test that waits for a child process with `waitUntilExit()` holds one of
/// them for as long as the child runs; a few such tests hold them all, and
/// every async test of the run stops until one of them ends. Crash trials,
/// leak watchers and the documentation build run children for seconds to
/// minutes: in the whole suite on SQLCipher 4.6.1 four async tests ran past
/// their time limits, and gdb showed up to four pool threads waiting for
/// children at once (issue 51, item 5).
///
/// Work that blocks runs here on a thread of its own, and the awaiting task
/// gives its pool thread back until the work ends:
///
/// ```swift
/// let result = try await ProcessRunner.run(binary, ["status"])  // awaits OffThePool
/// await child.ended()                                          // not waitUntilExit()
/// ```
///
/// What runs on the thread records no test issue (`#expect` needs the test's
/// task); it returns what the test then checks.
public enum OffThePool {
    /// The name of the threads work runs on (`/proc/self/task/*/comm`).
    public static let threadName = "off-the-pool"

    /// Runs `work` on a new thread and returns (or throws) what it does.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            start(named: threadName) { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work`, which cannot throw, on a new thread and returns what it does.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await run(named: threadName, work)
    }

    /// Runs `work`, which cannot throw, on a new thread named `name` (at
    /// most 15 bytes) and returns what it does.
    public static func run<T: Sendable>(named name: String, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            start(named: name) { continuation.resume(returning: work()) }
        }
    }

    private static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            // Named as `pthread_setname_np` would, which Glibc's module does not export.
            try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            body()
        }.start()
    }
}

extension Process {
    /// Waits until the process has ended, as `waitUntilExit()` does, without
    /// holding a thread of the cooperative pool (``OffThePool``), and
    /// returns when it saw the end: a crash trial times a whole run to know
    /// when to kill the next, and the awaiting task may resume later than
    /// the end on a busy pool.
    ///
    /// - Parameter threadName: the name of the thread that waits (a test
    ///   that measures it gives one no other test's thread has).
    @discardableResult
    public func ended(threadName: String = OffThePool.threadName) async -> ContinuousClock.Instant {
        await OffThePool.run(named: threadName) {
            // Not `waitUntilExit()`: on a thread other than the one that started
            // the child it runs this thread's run loop, which is empty and
            // returns at once, and so spins a core until the child ends.
            // Foundation's process monitor clears `isRunning`; a look every
            // millisecond costs next to nothing.
            while self.isRunning { usleep(1_000) }
            let end = ContinuousClock.now
            self.waitUntilExit()
            return end
        }
    }
}
