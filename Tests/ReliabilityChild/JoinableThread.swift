import Foundation

/// A thread the child waits for with `pthread_join`, so that no thread is
/// still running, or running its thread-local destructors, when the
/// process exits.
///
/// A reader of the pool that was still ending as the child returned from
/// `main` left its OpenSSL error state (904 bytes, freed by a thread-local
/// destructor) to LeakSanitizer's exit check, which reported it as a leak
/// (`make sanitize`, 2 of 24 pool rekeys); `Foundation.Thread` cannot be
/// joined.
final class JoinableThread: @unchecked Sendable {
    // Sendable: `thread` is written once, in init, before the thread is shared.
    private var thread = pthread_t()

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed: \(status)")
    }

    /// Waits until the thread has ended, its destructors run.
    func join() {
        pthread_join(thread, nil)
    }

    private final class Body: @unchecked Sendable {
        // Sendable: `run` is immutable and itself Sendable.
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
