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
    /// Waiters in `order` past `head` settled out of turn (cancelled, timed out).
    private var settledOutOfTurn = 0
    private let maximumWaiters: Int?
    private let maximumWait: Duration?
    /// What a permit is for, in messages: "a reader of app.db".
    private let resource: String
    private let path: String
    private static let timers = DispatchQueue(label: "strongroom.wait-deadlines")
    /// True while a timer is armed for the earliest deadline of an async
    /// waiter: one per gate, not one per waiter (under load every caller
    /// waits, and a timer each cost more than the wait's bookkeeping).
    private var deadlineTimerArmed = false

    /// One caller waiting: a blocked thread (its semaphore), or an async
    /// caller's callbacks. `outcome` is guarded by the gate's `condition`.
    final class Waiter: @unchecked Sendable {
        fileprivate var outcome: Result<Void, StrongroomOrCancellation>?
        fileprivate let semaphore: DispatchSemaphore?
        /// An async waiter's `maximumWait` deadline, set as it is queued
        /// (so in queue order: no earlier than the waiters before it).
        fileprivate var deadline: DispatchTime?
        /// Where an async waiter turned away past its deadline is counted.
        fileprivate var metrics: AccessObserver.KindMetrics?
        // Dropped once called: they hold the queue or pool, which holds
        // the gate, which may still hold this waiter in `order`.
        fileprivate var granted: (@Sendable () -> Void)?
        fileprivate var refused: (@Sendable (any Error) -> Void)?
        /// An async write that may share the permit with the async writes
        /// waiting right behind it (see ``WriteGroup``): granted with its group.
        fileprivate var grantedInGroup: (@Sendable (WriteGroup) -> Void)?
        fileprivate var isGroupable: Bool { grantedInGroup != nil }

        fileprivate init() {
            semaphore = DispatchSemaphore(value: 0)
            (granted, refused) = (nil, nil)
        }

        fileprivate init(granted: @escaping @Sendable () -> Void, refused: @escaping @Sendable (any Error) -> Void) {
            semaphore = nil
            (self.granted, self.refused) = (granted, refused)
        }

        fileprivate init(grantedInGroup: @escaping @Sendable (WriteGroup) -> Void, refused: @escaping @Sendable (any Error) -> Void) {
            semaphore = nil
            (self.grantedInGroup, self.refused) = (grantedInGroup, refused)
        }
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

    /// Takes a permit at once when one is free and nobody waits; else
    /// queues `waiter`, or refuses.
    private func enqueue(_ waiter: Waiter) throws(StrongroomError) -> Waiter? {
        if let refusal { throw refusal }
        if available > 0 && !paused && waitingCount == 0 {
            available -= 1
            return nil
        }
        if let maximumWaiters, waitingCount >= maximumWaiters {
            throw StrongroomError(.connectionUnavailable, "\(waitingCount) callers already wait for \(resource), the most Configuration.maximumWaiters (\(maximumWaiters)) allows; nothing was run. Try again later (a service answers 503 with Retry-After), or raise maximumWaiters or maximumReaderCount.", path: path)
        }
        order.append(waiter)
        waitingCount += 1
        if waiter.semaphore == nil, let maximumWait {
            waiter.deadline = maximumWait.dispatchDeadline
            if !deadlineTimerArmed { armDeadlineTimer(at: waiter.deadline!) }
        }
        return waiter
    }

    /// With `condition` locked: fires ``expireWaiters()`` at `deadline`.
    private func armDeadlineTimer(at deadline: DispatchTime) {
        deadlineTimerArmed = true
        Self.timers.asyncAfter(deadline: deadline) { [weak self] in self?.expireWaiters() }
    }

    /// The deadline timer: turns away every async waiter whose deadline has
    /// passed, then arms the timer for the first one still waiting (each
    /// waiter's deadline is no earlier than those queued before it).
    private func expireWaiters() {
        condition.lock()
        let now = DispatchTime.now()
        var expired: [Waiter] = []
        var next: DispatchTime?
        for waiter in order[head...] where waiter.outcome == nil {
            guard let deadline = waiter.deadline else { continue }
            if deadline > now { next = deadline; break }
            expired.append(waiter)
        }
        let refusal = tooLong()
        // After the scan: settling may compact `order`.
        expired = expired.filter { settle($0, .failure(.refused(refusal))) }
        deadlineTimerArmed = false
        if let next { armDeadlineTimer(at: next) }
        condition.unlock()
        for waiter in expired {
            waiter.metrics?.refusedByWait.increment()
            Self.wake(waiter, .failure(.refused(refusal)))
        }
    }

    /// `enqueue` under the lock.
    private func enqueueLocked(_ waiter: Waiter, _ metrics: AccessObserver.KindMetrics) throws(StrongroomError) -> Waiter? {
        condition.lock()
        defer { condition.unlock() }
        do {
            return try enqueue(waiter)
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
        if case .failure = outcome {
            // Out of turn: once they outnumber the callers still waiting,
            // drop them, so that callers turned away are not kept.
            settledOutOfTurn += 1
            if settledOutOfTurn > waitingCount {
                order = order[head...].filter { $0.outcome == nil }
                head = 0
                settledOutOfTurn = 0
            }
        }
        return true
    }

    /// After unlocking: tells a settled waiter its outcome.
    private static func wake(_ waiter: Waiter, _ outcome: Result<Void, StrongroomOrCancellation>) {
        if let semaphore = waiter.semaphore {
            semaphore.signal()
            return
        }
        // Only the one who settled the waiter wakes it, once.
        let (granted, grantedInGroup, refused) = (waiter.granted, waiter.grantedInGroup, waiter.refused)
        (waiter.granted, waiter.grantedInGroup, waiter.refused) = (nil, nil, nil)
        switch outcome {
        case .success:
            granted?()
            grantedInGroup?(WriteGroup(count: 1))
        case .failure(let failure): refused?(failure.error)
        }
    }

    /// After unlocking: grants the permit to `waiters`, settled together, as one group.
    private static func wake(group waiters: [Waiter]) {
        let group = WriteGroup(count: waiters.count)
        for waiter in waiters {
            let grantedInGroup = waiter.grantedInGroup
            (waiter.granted, waiter.grantedInGroup, waiter.refused) = (nil, nil, nil)
            grantedInGroup?(group)
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
        guard let waiter = try enqueueLocked(Waiter(), metrics) else { return }
        if let maximumWait {
            if waiter.semaphore!.wait(timeout: maximumWait.dispatchDeadline) == .timedOut {
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

    /// Asks for a permit for an async caller, whose task then suspends
    /// (holding no thread) until one of the callbacks resumes it.
    /// `granted` runs once the permit is the caller's: at once, on this
    /// thread, when one is free and nobody waits; else on the thread that
    /// gives one back, so that a connection's own thread hands itself to
    /// the next caller without a hop through the cooperative pool.
    /// `refused` runs instead when a bound, ``close(_:)`` or ``cancel(_:)``
    /// turns the caller away. Exactly one of them runs, once. Returns the
    /// ticket to cancel with, or nil when `granted` or `refused` already ran.
    @discardableResult
    func request(for metrics: AccessObserver.KindMetrics, granted: @escaping @Sendable () -> Void,
                 refused: @escaping @Sendable (any Error) -> Void) -> Waiter? {
        let start = DispatchTime.now().uptimeNanoseconds
        return request(Waiter(granted: {
            metrics.wait.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            granted()
        }, refused: refused), metrics: metrics, refused: refused)
    }

    /// ``request(for:granted:refused:)`` for an async write that may share
    /// the permit: when the permit comes back to it, the async writes
    /// waiting right behind it (up to ``WriteGroup/maximumCount``) are
    /// granted it too, and each `granted` is called with their one group.
    @discardableResult
    func requestGrouped(for metrics: AccessObserver.KindMetrics, granted: @escaping @Sendable (WriteGroup) -> Void,
                        refused: @escaping @Sendable (any Error) -> Void) -> Waiter? {
        let start = DispatchTime.now().uptimeNanoseconds
        return request(Waiter(grantedInGroup: { group in
            metrics.wait.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            granted(group)
        }, refused: refused), metrics: metrics, refused: refused)
    }

    /// Queues an async `waiter`, or grants or refuses it at once.
    private func request(_ waiter: Waiter, metrics: AccessObserver.KindMetrics, refused: @Sendable (any Error) -> Void) -> Waiter? {
        waiter.metrics = metrics
        let queued: Waiter?
        do {
            queued = try enqueueLocked(waiter, metrics)
        } catch {
            refused(error)
            return nil
        }
        guard queued != nil else {
            Self.wake(waiter, .success(()))
            return nil
        }
        // Past `maximumWait`, the gate's deadline timer turns it away.
        return waiter
    }

    /// An async caller's task was cancelled: when it still waits, it leaves
    /// the queue and gets `CancellationError`; once granted, nothing happens.
    func cancel(_ waiter: Waiter) {
        if settleLocked(waiter, .failure(.cancelled)) {
            Self.wake(waiter, .failure(.cancelled))
        }
    }

    private func settleLocked(_ waiter: Waiter, _ outcome: Result<Void, StrongroomOrCancellation>) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return settle(waiter, outcome)
    }

    /// Gives a permit back: to the first caller still waiting, if any.
    func release() {
        condition.lock()
        if !paused && refusal == nil, let waiter = nextWaiter() {
            guard waiter.isGroupable else {
                condition.unlock()
                Self.wake(waiter, .success(()))
                return
            }
            var group = [waiter]
            while group.count < WriteGroup.maximumCount, let next = nextWaiter(onlyIf: \.isGroupable) { group.append(next) }
            condition.unlock()
            Self.wake(group: group)
            return
        }
        available += 1
        condition.broadcast()
        condition.unlock()
    }

    /// With `condition` locked: the first waiter not yet settled, settled
    /// with a permit (the one being handed over); with `eligible`, only
    /// when that waiter meets it (else nil, and it stays first).
    private func nextWaiter(onlyIf eligible: ((Waiter) -> Bool)? = nil) -> Waiter? {
        while head < order.count {
            let waiter = order[head]
            if let eligible, waiter.outcome == nil, !eligible(waiter) { return nil }
            head += 1
            if head > 1024 && head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            if settle(waiter, .success(())) {
                if head == order.count {
                    order.removeAll(keepingCapacity: true)
                    head = 0
                }
                return waiter
            }
            settledOutOfTurn = max(0, settledOutOfTurn - 1)
        }
        order.removeAll(keepingCapacity: true)
        head = 0
        settledOutOfTurn = 0
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

    /// ``pause()``, giving up after `timeout`: returns true once every
    /// permit is back (the gate stays paused), false when some were still
    /// out after `timeout` (the gate hands out permits again).
    func pause(within timeout: Duration) -> Bool {
        let deadline = timeout.dateFromNow
        condition.lock()
        paused = true
        while available < capacity {
            if !condition.wait(until: deadline) && available < capacity {
                condition.unlock()
                resume()
                return false
            }
        }
        condition.unlock()
        return true
    }

    /// Hands out permits again, to the callers that waited first.
    func resume() {
        condition.lock()
        paused = false
        var woken: [Waiter] = []
        while available > 0, refusal == nil, let next = nextWaiter() {
            available -= 1
            woken.append(next)
        }
        condition.unlock()
        for waiter in woken { Self.wake(waiter, .success(())) }
    }

    /// Refuses every caller waiting and every later one with `error`, then
    /// waits (blocking) until the permits in use are back.
    func close(_ error: StrongroomError) {
        condition.lock()
        if refusal == nil { refusal = error }
        var woken: [Waiter] = []
        for waiter in order[head...] where settle(waiter, .failure(.refused(error))) {
            woken.append(waiter)
        }
        order.removeAll()
        head = 0
        settledOutOfTurn = 0
        condition.unlock()
        for waiter in woken { Self.wake(waiter, .failure(.refused(error))) }
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

extension AccessGate {
    /// ``run(for:access:_:)`` for an async write that may share the permit
    /// with the async writes waiting behind it: `start` gets their group,
    /// which the last of them to join runs (see ``WriteGroup``).
    func runGrouped<T: Sendable>(for metrics: AccessObserver.KindMetrics, access: CancellableAccess,
                                 _ start: @escaping @Sendable (_ group: WriteGroup, _ finish: @escaping @Sendable (Result<T, any Error>) -> Void) -> Void) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ticket = requestGrouped(for: metrics, granted: { group in
                    start(group) { result in continuation.resume(with: result) }
                }, refused: { error in
                    continuation.resume(throwing: error)
                })
                access.wait(in: self, with: ticket)
            }
        } onCancel: {
            access.cancel()
        }
    }

    /// One async access, from the caller's task: waits for a permit as a
    /// suspended task, then `start` begins the work (on a connection's
    /// thread) and calls its `finish` once with the result. Cancelling the
    /// task goes to `access`: it leaves the queue while waiting, or
    /// interrupts the work's SQL.
    func run<T: Sendable>(for metrics: AccessObserver.KindMetrics, access: CancellableAccess,
                          _ start: @escaping @Sendable (_ finish: @escaping @Sendable (Result<T, any Error>) -> Void) -> Void) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ticket = request(for: metrics, granted: {
                    start { result in continuation.resume(with: result) }
                }, refused: { error in
                    continuation.resume(throwing: error)
                })
                access.wait(in: self, with: ticket)
            }
        } onCancel: {
            access.cancel()
        }
    }
}
