import Foundation

/// Async writes granted a queue's connection together: group commit (see
/// ``Configuration/groupsAsyncWrites``).
///
/// When the permit comes back and the first callers waiting are async
/// writes that may be grouped, ``AccessGate`` grants it to up to
/// ``maximumCount`` of them at once, in their order, and gives each the
/// same group. Each joins with its ``Member``; the last to join gets all
/// of them, and runs them (on the connection's thread) in one transaction.
final class WriteGroup: @unchecked Sendable {
    // Sendable: `members` is guarded by `lock`.
    /// The most writes one transaction runs.
    static let maximumCount = 64

    /// One write of the group.
    struct Member: Sendable {
        /// Runs the write's closure in the group's open transaction, in a
        /// savepoint of its own when the flag is true; its outcome waits for
        /// ``deliver``. Returns true when the closure failed. Run again
        /// after a rollback, it runs the closure again (unless its caller
        /// was answered meanwhile).
        let run: @Sendable (_ db: Connection, _ inSavepoint: Bool) -> Bool
        /// Gives the caller its outcome, or `failure` instead when its
        /// closure succeeded but its transaction did not commit (or it
        /// never ran).
        let deliver: @Sendable (_ failure: (any Error)?) -> Void
    }

    /// How many writes were granted together.
    let count: Int
    private let lock = NSLock()
    private var members: [Member] = []

    init(count: Int) {
        self.count = count
    }

    /// Adds a write to the group; returns every member, in order, once the
    /// last one has joined (else nil).
    func join(_ member: Member) -> [Member]? {
        lock.lock()
        defer { lock.unlock() }
        members.append(member)
        return members.count == count ? members : nil
    }
}

/// One grouped write's outcome, from its closure to its caller, given
/// exactly once: by the writer's thread once the transaction has ended, or
/// at once when the write's task is cancelled before its closure starts.
final class GroupedOutcome<T: Sendable>: @unchecked Sendable {
    // Sendable: `state` is guarded by `lock`; `result` is written by the
    // writer's thread after it claimed the write, and read there.
    private let lock = NSLock()
    private enum State { case waiting, running, answered }
    private var state = State.waiting
    var result: Result<T, any Error>?

    /// The writer's thread, at the write's turn: true when the closure is to
    /// run (nobody answered the caller yet). True again when the closure is
    /// to run again, after its transaction was rolled back.
    func claimForRunning() -> Bool {
        lock.withLock {
            guard state != .answered else { return false }
            state = .running
            return true
        }
    }

    /// The task was cancelled: true when the closure has not started, and
    /// the caller is to be answered now.
    func claimForCancelling() -> Bool {
        lock.withLock {
            guard state == .waiting else { return false }
            state = .answered
            return true
        }
    }

    /// After the transaction, on the writer's thread: what the caller gets,
    /// or nil when it was answered already (cancelled before its turn).
    /// The closure's result, or `failure` when the closure succeeded (or
    /// never ran) and its transaction did not commit.
    func delivered(_ failure: (any Error)?) -> Result<T, any Error>? {
        let claimed: Bool = lock.withLock {
            if state == .answered { return false }
            state = .answered
            return true
        }
        guard claimed else { return nil }
        switch (result, failure) {
        case (.failure(let error)?, _): return .failure(error)
        case (.success(let value)?, nil): return .success(value)
        case (_, let failure?): return .failure(failure)
        case (nil, nil): return .failure(CancellationError())
        }
    }
}
