// Serving requests: a pool sized for a service, async reads and writes,
// cancellation, the bounds on waiting, observability and shutdown.
// snippet.hide
import Foundation
import Strongroom

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serving-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
let path = directory + "/service.db"
let key = DatabaseKey.generate()

struct Customer: TableRecord, Sendable {
    static let databaseTableName = "customer"
    static let databaseColumnNames = ["id", "name"]
    var id: Int64
    var name: String
    init(id: Int64, name: String) { (self.id, self.name) = (id, name) }
    init(row: borrowing RowView) throws(StrongroomError) { (id, name) = (try row.decode(at: 0), try row.decode(at: 1)) }
    func encode(to binder: inout RecordBinder) throws(StrongroomError) { try binder.bind(id, at: 0); try binder.bind(name, at: 1) }
}

enum HTTPStatus: Int { case ok = 200, notFound = 404, serviceUnavailable = 503, conflict = 409 }

// snippet.show
// snippet.configure
var configuration = Configuration(key: key)
// One reader per core is enough for short reads; more when reads wait on I/O.
configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
// Past 256 callers waiting, or 2 s of waiting, a call is refused at once.
configuration.maximumWaiters = 256
configuration.maximumWait = .seconds(2)
// Truncate the -wal past 16 MiB even while readers always overlap (the default).
configuration.checkpointPolicy = .default
let pool = try DatabasePool(path: path, configuration: configuration)
// snippet.end
// snippet.hide
try await pool.asyncWrite { db in try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
// snippet.show

// snippet.handlers
/// GET /customers/{id}: a read on one of the pool's readers, off the
/// cooperative thread pool; the request's task waits without a thread.
func customer(id: Int64) async throws -> Customer? {
    try await pool.asyncRead { db in
        try db.fetchOne(Customer.self, sql: "SELECT id, name FROM customer WHERE id = ?", arguments: [id])
    }
}

/// POST /customers: one IMMEDIATE transaction on the writer.
func create(name: String) async throws -> Int64 {
    try await pool.asyncWrite { db in
        try db.execute(sql: "INSERT INTO customer(name) VALUES (?)", arguments: [name])
        return db.lastInsertedRowID
    }
}
// snippet.end

// snippet.errors
/// Maps what a database call threw to the HTTP answer.
func status(for error: any Error) -> HTTPStatus {
    switch error {
    case let error as StrongroomError where error.code == .connectionUnavailable:
        return .serviceUnavailable  // a bound on waiting: send Retry-After
    case let error as StrongroomError where error.code == .closed:
        return .serviceUnavailable  // shutting down
    case let error as StrongroomError where error.code.isUniquenessViolation:
        return .conflict
    default:
        return .serviceUnavailable
    }
}
// snippet.end

// snippet.cancellation
// A client that goes away cancels its request's task: a read still waiting
// leaves the queue, a statement running is interrupted (on that connection
// only), and the call throws CancellationError.
let slow = Task {
    try await pool.asyncRead { db in
        try db.fetchOne(Int.self, sql: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c")
    }
}
slow.cancel()
do {
    _ = try await slow.value
} catch is CancellationError {
    // Nothing to answer: the client is gone, and the reader serves the next request.
}
// snippet.end
// snippet.hide
let id = try await create(name: "Ada")
let found = try await customer(id: id)
precondition(found?.name == "Ada")
precondition(status(for: StrongroomError(.connectionUnavailable, "")) == .serviceUnavailable)
// snippet.show

// snippet.shutdown
// On SIGTERM, once the server stops accepting: finish the accesses running,
// refuse those still waiting (closed), close every connection.
try await pool.asyncClose()
// snippet.end
