#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread that is waited for with `pthread_join`, so that it has ended,
/// its thread-local destructors run, before the work that started it goes
/// on (or the process exits).
///
/// A detached thread that signals its caller and only then returns can
/// still be ending while the process exits. OpenSSL's `atexit` cleanup then
/// deletes its thread-exit key, the thread's error state (904 bytes,
/// allocated by any libcrypto call, SQLCipher's page decryption included)
/// is never freed, and LeakSanitizer reports it (`make sanitize`: 2 of 24
/// pool rekeys in the reliability child). `Foundation.Thread` cannot be
/// joined.
///
/// Join at most once, from one owner (it is not `Sendable`); a thread
/// released without being joined is detached.
package final class JoinableThread {
    #if canImport(Darwin)
    private var thread: pthread_t?
    #else
    private var thread = pthread_t()
    #endif
    private var joined = false

    /// Starts `body` on a new thread, or returns nil when the system makes
    /// none (`pthread_create` failed, as at the process's thread limit): the
    /// caller then does the work itself, and no host process is stopped.
    package init?(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body))
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque((context as UnsafeMutableRawPointer?)!).takeRetainedValue().run()
            return nil
        }, context.toOpaque())
        guard status == 0 else {
            context.release()
            // No thread to detach when this object goes.
            joined = true
            return nil
        }
    }

    /// Waits until the thread has ended, its destructors run.
    package func join() {
        precondition(!joined, "a thread joined twice")
        joined = true
        #if canImport(Darwin)
        let status = pthread_join(thread!, nil)
        #else
        let status = pthread_join(thread, nil)
        #endif
        precondition(status == 0, "pthread_join failed: \(status)")
    }

    /// A thread never joined is detached, so its resources go when it ends.
    deinit {
        guard !joined else { return }
        #if canImport(Darwin)
        pthread_detach(thread!)
        #else
        pthread_detach(thread)
        #endif
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
