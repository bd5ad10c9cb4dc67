#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Marks the current thread while it runs a closure of one queue or pool,
/// so a call back into that queue or pool from the closure, directly or
/// through another queue or pool, is told apart from a call that must wait.
///
/// A thread's marks are a short list of numbers behind one process-wide
/// thread-specific key: setting and clearing one costs a few loads and
/// stores, where `Thread.threadDictionary` hashed a string into an
/// `NSMutableDictionary` twice per access (5% of a sealed create's
/// instructions, measured under callgrind).
struct ThreadMark: Sendable {
    /// This mark's number: never reused in the process.
    private let id: UInt64

    private static let nextID = Atomic<UInt64>(1)

    /// A mark of its own (each queue or pool makes one).
    init() {
        id = Self.nextID.add(1, ordering: .relaxed).oldValue
    }

    /// True while this thread is inside `run`.
    var isSet: Bool { MarksOfThisThread.current?.ids.contains(id) == true }

    /// Runs `body` with the mark set on this thread.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        let marks = MarksOfThisThread.currentOrNew
        marks.ids.append(id)
        // Nested runs end in the reverse order they began: the last is ours.
        defer { marks.ids.removeLast() }
        return try body()
    }
}

/// The marks set on one thread, kept under a thread-specific key and
/// released with the thread.
private final class MarksOfThisThread {
    var ids: [UInt64] = []

    /// The process's key; its destructor releases a thread's list when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<MarksOfThisThread>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<MarksOfThisThread>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(status == 0, "pthread_key_create failed (\(status)): the process has no thread-specific key left")
        return key
    }()

    /// This thread's list, or nil before its first mark.
    static var current: MarksOfThisThread? {
        pthread_getspecific(key).map { Unmanaged<MarksOfThisThread>.fromOpaque($0).takeUnretainedValue() }
    }

    /// This thread's list, made at its first mark.
    static var currentOrNew: MarksOfThisThread {
        if let marks = current { return marks }
        let marks = MarksOfThisThread()
        let status = pthread_setspecific(key, Unmanaged.passRetained(marks).toOpaque())
        // Unset, the mark would be lost and a call back into the queue would wait for itself.
        precondition(status == 0, "pthread_setspecific failed (\(status)): no memory for this thread's marks")
        return marks
    }
}
