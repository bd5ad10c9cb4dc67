internal import CSQLCipher
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The thread one connection's async accesses run on.
///
/// An async read or write runs its SQL here, never on the cooperative
/// thread pool (on Linux, dispatch's global queues), so a long query blocks
/// no other task of the process. The thread starts at the first async
/// access and waits on a condition between jobs; a sync access runs on its
/// caller's thread and never starts it.
final class ConnectionThread: @unchecked Sendable {
    // Sendable: `jobs`, `stopping`, `thread` and `threadID` are guarded by
    // `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false
    private var thread: JoinableThread?
    #if canImport(Darwin)
    private var threadID: pthread_t?
    #else
    private var threadID = pthread_t()
    private var hasThreadID = false
    #endif
    /// The system's name of the thread (at most 15 bytes on Linux).
    private let name: String
    /// How many nice levels below the process's main thread the thread runs
    /// (whichever thread created it; a thread started below that level
    /// comes back up only where the system lets it: root, CAP_SYS_NICE).
    private let niceness: Int32

    /// How far below the process's main thread a pool's readers' threads
    /// run, so that the writer's thread keeps the share of the CPU it needs
    /// under a flood of reads. Under Linux's scheduler a thread 10 levels
    /// down weighs about a tenth of one at the process's level (110 against
    /// 1,024). Measured in the harness's async pool workload (1,000
    /// clients, 9 reads to 1 write, 2 cores, SQLCipher 4.6.1): at 5 levels
    /// the writer's thread got about 0.28 of a core and writes queued
    /// behind it in 8 of 10 runs (the whole p99 1.43-2.32x GRDB's); at 10,
    /// 0.76-1.28x (3 of 5 runs under 1.00x). The checkpointer stays at the
    /// process's level (see `WALCheckpointer`).
    static let backgroundNiceness: Int32 = 10

    init(name: String, niceness: Int32 = 0) {
        self.name = String(name.utf8.prefix(15)) ?? "strongroom"
        self.niceness = niceness
    }

    /// Runs `job` on the thread, after the jobs given before it. When the
    /// system makes no thread (`pthread_create` failed) or the thread was
    /// stopped, `job` runs on the caller's thread instead: slower for the
    /// process, but no caller is left waiting.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        if thread == nil && !stopping {
            thread = JoinableThread { [self] in loop() }
        }
        guard thread != nil && !stopping else {
            condition.unlock()
            job()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        // The priority first: once the thread shows its own name, it runs
        // at its own level (until then it shows its creator's name).
        // Every thread, at 0 levels too: a writer or checkpointer started
        // from a reader's or a background task's thread would run at its
        // creator's level (helper-55).
        _ = strongroom_set_thread_priority(niceness)
        name.withCString { strongroom_set_thread_name($0) }
        condition.lock()
        #if canImport(Darwin)
        threadID = pthread_self()
        #else
        threadID = pthread_self()
        hasThreadID = true
        #endif
        condition.unlock()
        while let batch = nextJobs() {
            for job in batch { job() }
            // `batch` goes here, with `condition` unlocked: a job's closure
            // may hold the last reference to the queue or pool, whose
            // deinit then stops this very thread (`stop()` locks `condition`).
        }
    }

    /// Waits for jobs and takes them all, or returns nil once stopped with none left.
    private func nextJobs() -> [@Sendable () -> Void]? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopping { condition.wait() }
        if jobs.isEmpty { return nil }
        let batch = jobs
        jobs = []
        return batch
    }

    /// True on the thread itself.
    private var isCurrent: Bool {
        #if canImport(Darwin)
        guard let threadID else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
        #else
        return hasThreadID && pthread_equal(threadID, pthread_self()) != 0
        #endif
    }

    /// Ends the thread once the jobs given are done, and waits until it
    /// has ended; from the thread itself (its owner released inside a
    /// job), lets it end by itself instead.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let running = thread
        thread = nil
        let current = isCurrent
        condition.unlock()
        guard let running, !current else { return }
        running.join()
    }

    deinit { stop() }
}

/// Runs a blocking `body` on a thread of its own and waits for it without
/// holding a thread of the cooperative pool: for the rare long calls
/// (close, rekey, backup) that take no connection of a queue or pool.
func onThreadOfItsOwn<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let thread = ConnectionThread(name: name)
    defer { thread.stop() }
    return try await withCheckedThrowingContinuation { continuation in
        thread.submit { continuation.resume(with: Result { try body() }) }
    }
}
