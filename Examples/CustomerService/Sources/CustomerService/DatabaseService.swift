import Logging
import ServiceLifecycle
import StrongroomMacros

/// The database as a service of the service group: it holds the store while
/// the HTTP server runs and closes it last. On SIGTERM the group stops the
/// server first (no new connection, the requests in flight answered), then
/// this: the WAL is checkpointed and truncated, the pool closed.
///
/// A checkpoint that fails (a full disk) loses nothing: the WAL keeps every
/// committed write and the next start reads it. The pool is closed all the
/// same, and the failure ends the process with a non-zero status, so that
/// the operator hears of it.
struct DatabaseService: Service {
    let store: CustomerStore
    let logger: Logger

    struct CheckpointFailed: Error, CustomStringConvertible {
        let code: String
        var description: String {
            let advice = code == StrongroomError.Code.diskFull.rawValue ? "free space, then start the service" : "see the log line before this one"
            return "stopped, but the WAL could not be copied into the database (\(code)); it keeps every committed write, and the next start reads it: \(advice)."
        }
    }

    func run() async throws {
        // Until the group shuts down (SIGTERM or SIGINT), or is cancelled
        // (past its graceful shutdown's bound, or a service failed).
        try? await gracefulShutdown()
        // In a task of its own, which the group's cancellation does not reach:
        // the database is closed properly however the server ended.
        try await Task { try await close() }.value
    }

    private func close() async throws {
        let started = ContinuousClock.now
        var failure: CheckpointFailed?
        do {
            try await store.checkpoint()
        } catch {
            let code = (error as? StrongroomError)?.code.rawValue ?? "\(type(of: error))"
            logger.error("shutdown checkpoint failed", metadata: ["code": "\(code)"])
            failure = CheckpointFailed(code: code)
        }
        try await store.close()
        logger.info("database closed", metadata: ["wal": "\(failure == nil ? "truncated" : "kept")", "took": "\(ContinuousClock.now - started)"])
        if let failure { throw failure }
    }
}
