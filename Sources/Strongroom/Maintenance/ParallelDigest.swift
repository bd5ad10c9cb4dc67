import Foundation

/// Table digests of one database file computed by several read-only
/// connections at once: each table is split by rowid into one part per
/// connection, and the parts' row-hash sums add up (see ``TableDigest``).
/// For a file no one else writes (the fresh copy an import or export makes).
package enum ParallelDigest {
    /// The digests of every user table of the file at `path`, with up to
    /// `workers` connections opened with `configuration` (read-only).
    /// `onRows` is told, from any worker, how many more rows were hashed.
    package static func digests(ofDatabaseAt path: String, configuration: Configuration, workers: Int,
                        onRows: @escaping @Sendable (Int) -> Void) throws(StrongroomError) -> [TableDigest] {
        var readOnly = configuration
        readOnly.readOnly = true
        readOnly.createIfMissing = false
        let first = try Connection(path: path, configuration: readOnly)
        let names = try first.tableNames()
        var items: [WorkItem] = []
        for (index, name) in names.enumerated() {
            if workers > 1, let range = try first.rowidRange(ofTable: name) {
                for part in RowidPart.split(column: range.column, lower: range.lower, upper: range.upper, into: workers) {
                    items.append(WorkItem(table: index, name: name, part: part))
                }
            } else {
                items.append(WorkItem(table: index, name: name, part: nil))
            }
        }
        let shared = SharedWork(items: items, tableCount: names.count)
        let workerConfiguration = readOnly
        let firstConnection = Handoff(first)
        let workerCount = max(1, min(workers, items.count))
        DispatchQueue.concurrentPerform(iterations: workerCount) { worker in
            do throws(StrongroomError) {
                let db = worker == 0 ? firstConnection.take() : try Connection(path: path, configuration: workerConfiguration)
                defer { db.close() }
                var hasher = RowHasher()
                while let item = shared.next() {
                    let sum = try db.rowHashSum(ofTable: item.name, part: item.part, hasher: &hasher, onRows: onRows)
                    shared.add(sum, toTable: item.table)
                }
            } catch {
                shared.fail(error)
            }
        }
        if let error = shared.error { throw error }
        return names.enumerated().map { index, name in shared.sums[index].digest(name: name) }
    }

    private struct WorkItem: Sendable {
        let table: Int
        let name: String
        let part: RowidPart?
    }

    /// The queue of parts and the sums, shared by the workers.
    private final class SharedWork: @unchecked Sendable {
        // Sendable: every property is read and written under `lock`.
        private let lock = NSLock()
        private var items: [WorkItem]
        private var nextIndex = 0
        private(set) var sums: [RowHashSum]
        private(set) var error: StrongroomError?

        init(items: [WorkItem], tableCount: Int) {
            self.items = items
            self.sums = Array(repeating: RowHashSum(), count: tableCount)
        }

        func next() -> WorkItem? {
            lock.lock()
            defer { lock.unlock() }
            guard error == nil, nextIndex < items.count else { return nil }
            nextIndex += 1
            return items[nextIndex - 1]
        }

        func add(_ sum: RowHashSum, toTable table: Int) {
            lock.lock()
            sums[table].add(sum)
            lock.unlock()
        }

        func fail(_ error: StrongroomError) {
            lock.lock()
            if self.error == nil { self.error = error }
            lock.unlock()
        }
    }
}

/// A value handed from one thread to another that alone uses it from then
/// on (a connection opened here and used by a worker).
final class Handoff<Value>: @unchecked Sendable {
    // Sendable: `value` is taken once, by the one thread it was handed to.
    private var value: Value?
    init(_ value: Value) { self.value = value }
    func take() -> Value {
        defer { value = nil }
        return value!
    }
}

/// Work started on its own thread now, and waited for later.
final class BackgroundWork<Result>: @unchecked Sendable {
    // Sendable: `result` is written by the worker before it ends (or in
    // init, when no thread could be made) and read only after `wait` has
    // joined it; `thread` is read and cleared only under `lock`.
    private var result: Swift.Result<Result, StrongroomError>?
    private var thread: JoinableThread?
    private let lock = NSLock()

    /// Starts `body` on a thread of its own; when the system makes none,
    /// runs it here and now.
    init(_ body: @escaping @Sendable () throws(StrongroomError) -> Result) {
        let run = { @Sendable [self] in
            do throws(StrongroomError) {
                result = .success(try body())
            } catch {
                result = .failure(error)
            }
        }
        thread = JoinableThread(run)
        if thread == nil { run() }
    }

    /// Waits until the work and its thread have ended (at once if they
    /// have); may be called again, from any thread. Joining, not only
    /// waiting for the result, lets no thread of ours be ending while the
    /// process exits.
    func wait() throws(StrongroomError) -> Result {
        lock.withLock {
            thread?.join()
            thread = nil
        }
        return try result!.get()
    }
}
