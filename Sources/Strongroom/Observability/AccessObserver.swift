import CoreMetrics
import Dispatch
import Tracing

/// What a queue or pool reports of its accesses, through swift-metrics and
/// swift-distributed-tracing, written once here and called from the queue's
/// and pool's edges.
///
/// Metrics (dimensions `database`: the file's name, and `kind`: `read` or
/// `write`):
/// - `strongroom.accesses` (counter): accesses run;
/// - `strongroom.wait.duration` (timer): time a caller waited for a connection;
/// - `strongroom.access.duration` (timer): time inside the access (its transaction);
/// - `strongroom.refusals` (counter, and `bound`: `maximumWaiters` or
///   `maximumWait`): callers turned away by the bounds on waiting;
/// - `strongroom.interruptions` (counter): statements interrupted because
///   their task was cancelled;
/// - `strongroom.checkpoints` (counter, `database` and `mode`): checkpoints
///   the pool's checkpoint policy completed; `strongroom.checkpoints.incomplete`:
///   those that gave up on a reader; `strongroom.wal.size` (gauge, bytes).
///   `strongroom.checkpoints.passive` (counter, `database` and
///   `connection`): a pool's automatic checkpoints completed, by
///   `background` (the pool's checkpoint thread) or by the `writer`
///   (copying what a background one left, which its commit waits for).
///
/// One span per access, `strongroom.read` or `strongroom.write` (kind
/// client), with `db.system.name` = `sqlite` and `db.namespace` = the file's
/// name; a failed access sets the span's status to error with the error's
/// code. Never an argument, a key or a value read: statement text
/// (`db.query.text` events, without arguments) only with
/// ``Configuration/tracesStatementText``.
///
/// Both go to the factory and tracer bootstrapped by the app
/// (`MetricsSystem.bootstrap`, `InstrumentationSystem.bootstrap`), or to
/// ``Configuration/metricsFactory`` and ``Configuration/tracer``; until then
/// they record nothing.
final class AccessObserver: Sendable {
    /// The metrics of one kind of access.
    struct KindMetrics: Sendable {
        let kind: AccessKind
        let accesses: Counter
        let wait: CoreMetrics.Timer
        let duration: CoreMetrics.Timer
        let refusedByCount: Counter
        let refusedByWait: Counter
        let interruptions: Counter

        init(kind: AccessKind, database: String, factory: any MetricsFactory) {
            self.kind = kind
            let dimensions = [("database", database), ("kind", kind.rawValue)]
            accesses = Counter(label: "strongroom.accesses", dimensions: dimensions, factory: factory)
            wait = CoreMetrics.Timer(label: "strongroom.wait.duration", dimensions: dimensions, factory: factory)
            duration = CoreMetrics.Timer(label: "strongroom.access.duration", dimensions: dimensions, factory: factory)
            refusedByCount = Counter(label: "strongroom.refusals", dimensions: dimensions + [("bound", "maximumWaiters")], factory: factory)
            refusedByWait = Counter(label: "strongroom.refusals", dimensions: dimensions + [("bound", "maximumWait")], factory: factory)
            interruptions = Counter(label: "strongroom.interruptions", dimensions: dimensions, factory: factory)
        }
    }

    enum AccessKind: String, Sendable {
        case read, write
    }

    let read: KindMetrics
    let write: KindMetrics
    let checkpoints: Counter
    let incompleteCheckpoints: Counter
    /// A pool's automatic checkpoints, on its checkpoint thread.
    let backgroundCheckpoints: Counter
    /// A pool's automatic checkpoints run by the writer (see ``WALCheckpointer``).
    let writerCheckpoints: Counter
    let walSize: Gauge
    /// With group commit: how many async writes each transaction ran.
    let writeGroupSizes: Recorder
    private let tracer: (any Tracer)?
    /// The database file's name (never its directory).
    let database: String
    let tracesStatementText: Bool

    init(path: String, configuration: Configuration) {
        let database = path.split(separator: "/").last.map(String.init) ?? path
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        self.database = database
        read = KindMetrics(kind: .read, database: database, factory: factory)
        write = KindMetrics(kind: .write, database: database, factory: factory)
        checkpoints = Counter(label: "strongroom.checkpoints", dimensions: [("database", database), ("mode", "truncate")], factory: factory)
        incompleteCheckpoints = Counter(label: "strongroom.checkpoints.incomplete", dimensions: [("database", database), ("mode", "truncate")], factory: factory)
        // A label of their own: some backends (swift-prometheus 2.0 and 2.1)
        // refuse one label with two sets of dimension names.
        backgroundCheckpoints = Counter(label: "strongroom.checkpoints.passive", dimensions: [("database", database), ("connection", "background")], factory: factory)
        writerCheckpoints = Counter(label: "strongroom.checkpoints.passive", dimensions: [("database", database), ("connection", "writer")], factory: factory)
        walSize = Gauge(label: "strongroom.wal.size", dimensions: [("database", database)], factory: factory)
        writeGroupSizes = Recorder(label: "strongroom.write.group.size", dimensions: [("database", database)], factory: factory)
        tracer = configuration.tracer
        tracesStatementText = configuration.tracesStatementText
    }

    func metrics(_ kind: AccessKind) -> KindMetrics { kind == .read ? read : write }

    /// Starts the span of one access, a child of the task's service context.
    func startSpan(_ kind: AccessKind) -> any Span {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let context = ServiceContext.current ?? .topLevel
        // The no-op tracer (none bootstrapped) gets no attributes: each set
        // would build a dictionary its span drops. Any other tracer's spans
        // get them, even one that says it records only once given some.
        if tracer is NoOpTracer { return NoOpTracer.NoOpSpan(context: context) }
        let span = tracer.startSpan("strongroom.\(kind.rawValue)", context: context, ofKind: .client)
        span.attributes["db.system.name"] = "sqlite"
        span.attributes["db.namespace"] = database
        span.attributes["db.operation.name"] = kind.rawValue
        return span
    }

    /// Runs `body` as one access: its span, its count and its duration;
    /// the statements it runs as span events when the app asked for them.
    func observe<T>(_ kind: AccessKind, span: (any Span)?, on db: Connection, _ body: () throws -> T) throws -> T {
        let metrics = self.metrics(kind)
        let start = DispatchTime.now().uptimeNanoseconds
        defer {
            metrics.accesses.increment()
            metrics.duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
        }
        guard tracesStatementText, let span else { return try body() }
        return try db.reportingStatementText({ text in span.addEvent(SpanEvent(name: "statement", attributes: ["db.query.text": .string(text)])) }, body)
    }

    /// Runs `body` as the span's access, and ends the span with its outcome.
    static func ending<T>(_ span: any Span, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            end(span, error: nil)
            return result
        } catch {
            end(span, error: error)
            throw error
        }
    }

    /// Ends `span` with the outcome of its access: an error's code only
    /// (its message may name SQL the app did not ask to trace).
    static func end(_ span: any Span, error: (any Error)?) {
        if let error {
            let code = (error as? StrongroomError)?.code.rawValue ?? (error is CancellationError ? "cancelled" : "error")
            span.attributes["strongroom.error.code"] = code
            span.setStatus(SpanStatus(code: .error, message: code))
        }
        span.end()
    }
}
