public import Foundation
public import Logging

/// A swift-log handler that keeps every line, to check what the library logs.
public struct CapturingLogHandler: LogHandler {
    public final class Store: @unchecked Sendable {
        // Sendable: `lines` is guarded by `lock`.
        private let lock = NSLock()
        private var storage: [String] = []
        public func append(_ line: String) { lock.lock(); storage.append(line); lock.unlock() }
        public var lines: [String] { lock.lock(); defer { lock.unlock() }; return storage }
    }

    let store: Store
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        store.append("\(event.level) \(event.message) \(event.metadata ?? [:]) \(metadata)")
    }

    public static func logger() -> (Logger, Store) {
        let store = Store()
        return (Logger(label: "test") { _ in CapturingLogHandler(store: store) }, store)
    }
}
