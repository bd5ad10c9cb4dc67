import Dispatch
import Foundation

/// The permits to use a queue's connection or a pool's readers (or
/// writer), handed out first come, first served.
///
/// A caller that finds no permit free waits in one FIFO: an async caller as
/// a suspended task (a continuation, no thread held), a sync caller on a
/// semaphore of its own. A permit returned goes straight to the first
/// caller still waiting. An async caller cancelled while it waits leaves
/// the queue at once and throws `CancellationError`. The bounds of
/// ``Configuration/maximumWaiters`` and ``Configuration/maximumWait`` turn
/// a caller away with ``StrongroomError/Code/connectionUnavailable``.
///
/// `pause()` stops handing out permits and waits until all are back (a
/// pool's rekey); `close(_:)` refuses every caller waiting and every later
/// one, then waits until all permits are back.
final class AccessGate: @unchecked Sendable {
    // Sendable: every stored property below is guarded by `condition`.
    private let condition = NSCondition()
    private let capacity: Int
    private var available: Int
    private var paused = false
    private var refusal: StrongroomError?
    /// Waiters in arrival order; a waiter resolved out of turn (cancelled,
    /// timed out) stays in `order` and is skipped.
    private var order: [Waiter] = []
    private var head = 0
    private var waitingCount = 0
    private let maximumWaiters: Int?
    private let maximumWait: Duration?
    /// What a permit is for, in messages: "a reader of app.db".
    private let resource: String
    private let path: String
    private static let timers = DispatchQueue(label: "strongroom.wait-deadlines")

    /// One caller waiting. Its fields are guarded by the gate's `condition`.
    private final class Waiter: @unchecked Sendable {
        var outcome: Result<Void, StrongroomOrCancellation>?
        var continuation: CheckedContinuation<Void, any Error>?
        let semaphore: DispatchSemaphore?
        init(sync: Bool) { semaphore = sync ? DispatchSemaphore(value: 0) : nil }
    }

    enum StrongroomOrCancellation: Error {
        case refused(StrongroomError)
        case cancelled

        var error: any Error {
            switch self {
            case .refused(let error): error
            case .cancelled: CancellationError()
            }
        }
    }

    init(capacity: Int, configuration: Configuration, resource: String, path: String) {
        self.capacity = max(capacity, 1)
        self.available = self.capacity
        self.maximumWaiters = configuration.maximumWaiters
        self.maximumWait = configuration.maximumWait
        self.resource = resource
        self.path = path
    }

    /// Callers waiting now.
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return waitingCount
    }

    /// Takes a permit at once when one is free and nobody waits; else the
    /// waiter to wait on, or a refusal.
    private func enqueue(sync: Bool) throws(StrongroomError) -> Waiter? {
        if let refusal { throw refusal }
        if available > 0 && !paused && waitingCount == 0 {
            available -= 1
            return nil
        }
        if let maximumWaiters, waitingCount >= maximumWaiters {
            throw StrongroomError(.connectionUnavailable, "\(waitingCount) callers already wait for \(resource), the most Configuration.maximumWaiters (\(maximumWaiters)) allows; nothing was run. Try again later (a service answers 503 with Retry-After), or raise maximumWaiters or maximumReaderCount.", path: path)
        }
        let waiter = Waiter(sync: sync)
        order.append(waiter)
        waitingCount += 1
        return waiter
    }

    /// `enqueue` under the lock.
    private func enqueueLocked(sync: Bool, _ metrics: AccessObserver.KindMetrics) throws(StrongroomError) -> Waiter? {
        condition.lock()
        defer { condition.unlock() }
        do {
            return try enqueue(sync: sync)
        } catch {
            if error.code == .connectionUnavailable { metrics.refusedByCount.increment() }
            throw error
        }
    }

    private func tooLong() -> StrongroomError {
        StrongroomError(.connectionUnavailable, "No \(resource) came free within Configuration.maximumWait (\(maximumWait.map { "\($0)" } ?? "")); nothing was run. Try again later (a service answers 503 with Retry-After), or raise maximumWait or maximumReaderCount.", path: path)
    }

    /// With `condition` locked: settles `waiter` once; returns whether it
    /// was still waiting. The caller wakes it after unlocking.
    private func settle(_ waiter: Waiter, _ outcome: Result<Void, StrongroomOrCancellation>) -> Bool {
        guard waiter.outcome == nil else { return false }
        waiter.outcome = outcome
        waitingCount -= 1
        return true
    }

    private static func wake(_ waiter: Waiter, continuation: CheckedContinuation<Void, any Error>?) {
        waiter.semaphore?.signal()
        if let continuation, let outcome = waiter.outcome {
            continuation.resume(with: outcome.mapError { $0.error })
        }
    }

    /// Waits for a permit, blocking this thread. Past `maximumWait`, throws
    /// ``StrongroomError/Code/connectionUnavailable``.
    func acquire(for metrics: AccessObserver.KindMetrics) throws(StrongroomError) {
        let start = DispatchTime.now().uptimeNanoseconds
        try acquireBlocking(metrics)
        metrics.wait.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
    }

    private func acquireBlocking(_ metrics: AccessObserver.KindMetrics) throws(StrongroomError) {
        guard let waiter = try enqueueLocked(sync: true, metrics) else { return }
        if let maximumWait {
            let nanoseconds = UInt64(max(0, maximumWait.components.seconds)) * 1_000_000_000 + UInt64(max(0, maximumWait.components.attoseconds / 1_000_000_000))
            if waiter.semaphore!.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .timedOut {
                condition.lock()
                if settle(waiter, .failure(.refused(tooLong()))) { metrics.refusedByWait.increment() }
                condition.unlock()
            }
        } else {
            waiter.semaphore!.wait()
        }
        condition.lock()
        let outcome = waiter.outcome
        condition.unlock()
        switch outcome {
        case .success?: return
        case .failure(.refused(let error))?: throw error
        default: throw tooLong()
        }
    }

    /// Waits for a permit as a suspended task. Throws `CancellationError`
    /// when the task is cancelled while it waits (it then holds no permit),
    /// ``StrongroomError/Code/connectionUnavailable`` past a bound.
    func acquire(for metrics: AccessObserver.KindMetrics) async throws {
        let start = DispatchTime.now().uptimeNanoseconds
        try await acquireSuspending(metrics)
        metrics.wait.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
    }

    private func acquireSuspending(_ metrics: AccessObserver.KindMetrics) async throws {
        guard let waiter = try enqueueLocked(sync: false, metrics) else { return }
        if let maximumWait {
            Self.timers.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: Int64(maximumWait.components.seconds) * 1_000_000_000 + maximumWait.components.attoseconds / 1_000_000_000))) { [weak self, weak waiter] in
                guard let self, let waiter else { return }
                self.condition.lock()
                let settled = self.settle(waiter, .failure(.refused(self.tooLong())))
                let continuation = settled ? waiter.continuation.take() : nil
                self.condition.unlock()
                if settled { metrics.refusedByWait.increment() }
                if settled { Self.wake(waiter, continuation: continuation) }
            }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                condition.lock()
                if waiter.outcome == nil {
                    waiter.continuation = continuation
                    condition.unlock()
                } else {
                    condition.unlock()
                    Self.wake(waiter, continuation: continuation)
                }
            }
        } onCancel: {
            condition.lock()
            let settled = settle(waiter, .failure(.cancelled))
            let continuation = settled ? waiter.continuation.take() : nil
            condition.unlock()
            if settled { Self.wake(waiter, continuation: continuation) }
        }
    }

    /// Gives a permit back: to the first caller still waiting, if any.
    func release() {
        condition.lock()
        if !paused && refusal == nil, let (waiter, continuation) = nextWaiter() {
            condition.unlock()
            Self.wake(waiter, continuation: continuation)
            return
        }
        available += 1
        condition.broadcast()
        condition.unlock()
    }

    /// With `condition` locked: the first waiter not yet settled, settled
    /// with a permit (the one being handed over).
    private func nextWaiter() -> (Waiter, CheckedContinuation<Void, any Error>?)? {
        while head < order.count {
            let waiter = order[head]
            head += 1
            if head > 1024 && head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            if settle(waiter, .success(())) {
                return (waiter, waiter.continuation.take())
            }
        }
        order.removeAll(keepingCapacity: true)
        head = 0
        return nil
    }

    /// Stops handing out permits, and waits (blocking) until every permit
    /// is back. Callers arriving meanwhile wait, in order.
    func pause() {
        condition.lock()
        paused = true
        while available < capacity { condition.wait() }
        condition.unlock()
    }

    /// Hands out permits again, to the callers that waited first.
    func resume() {
        condition.lock()
        paused = false
        var woken: [(Waiter, CheckedContinuation<Void, any Error>?)] = []
        while available > 0, refusal == nil, let next = nextWaiter() {
            available -= 1
            woken.append(next)
        }
        condition.unlock()
        for (waiter, continuation) in woken { Self.wake(waiter, continuation: continuation) }
    }

    /// Refuses every caller waiting and every later one with `error`, then
    /// waits (blocking) until the permits in use are back.
    func close(_ error: StrongroomError) {
        condition.lock()
        if refusal == nil { refusal = error }
        var woken: [(Waiter, CheckedContinuation<Void, any Error>?)] = []
        for waiter in order[head...] where settle(waiter, .failure(.refused(error))) {
            woken.append((waiter, waiter.continuation.take()))
        }
        order.removeAll()
        head = 0
        condition.unlock()
        for (waiter, continuation) in woken { Self.wake(waiter, continuation: continuation) }
        condition.lock()
        while available < capacity { condition.wait() }
        condition.unlock()
    }

    /// The error every caller gets once the gate is closed, else nil.
    var closedError: StrongroomError? {
        condition.lock()
        defer { condition.unlock() }
        return refusal
    }
}

extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
