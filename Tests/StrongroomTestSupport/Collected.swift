import Foundation

/// Lines collected from a `@Sendable` callback (progress, events), safe to
/// append to from any thread.
public final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    public init() {}

    public func append(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        stored.append(line)
    }

    public var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
