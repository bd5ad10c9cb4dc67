import Foundation

/// Marks the current thread while it runs a closure of one queue or pool,
/// so a call back into that queue or pool from the closure, directly or
/// through another queue or pool, is told apart from a call that must wait.
struct ThreadMark: @unchecked Sendable {
    // Sendable: only an immutable string.
    private let key: String

    /// A mark of its own (each queue or pool makes one).
    init(_ role: String) {
        key = "strongroom.\(role).\(UUID().uuidString)"
    }

    /// True while this thread is inside `run`.
    var isSet: Bool { Thread.current.threadDictionary[key] != nil }

    /// Runs `body` with the mark set on this thread.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let outer = dictionary[key]
        dictionary[key] = true
        defer { dictionary[key] = outer }
        return try body()
    }
}
