import Logging
import ServiceLifecycle

/// The database as a service of the service group, as in the example: it
/// holds the store while the HTTP server runs and closes it last (the WAL
/// checkpointed and truncated, the pool closed).
struct DatabaseService: Service {
    let store: CustomerStore
    let logger: Logger

    func run() async throws {
        // Until the group shuts down (SIGTERM or SIGINT), or is cancelled.
        try? await gracefulShutdown()
        let started = ContinuousClock.now
        try await store.close()
        logger.info("database closed", metadata: ["wal": "truncated", "took": "\(ContinuousClock.now - started)"])
    }
}
