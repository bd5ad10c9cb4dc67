import Foundation
import InMemoryTracing
import MetricsTestKit
import Strongroom
import StrongroomTestSupport
import Testing
import Tracing

/// Issue 37, item 6: metrics (swift-metrics) and spans
/// (swift-distributed-tracing) of a pool's accesses, read from the packages'
/// own test backends: names, dimensions and values; never an argument, a
/// key or a value read.
@Suite("Observability: metrics and spans")
struct ObservabilityTests {
    let dir = TemporaryDirectory()
    static let secret = "s3cret-plaintext-4711"

    @Test(.timeLimit(.minutes(1))) func aPoolReportsItsAccessesWaitsRefusalsAndInterruptions() async throws {
        let metrics = TestMetrics()
        let tracer = InMemoryTracer()
        var configuration = Configuration(key: .generate())
        configuration.metricsFactory = metrics
        configuration.tracer = tracer
        configuration.maximumReaderCount = 1
        configuration.maximumWaiters = 1
        let pool = try DatabasePool(path: dir.file("observed.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x TEXT)") }
        try await pool.asyncWrite { db in try db.execute(sql: "INSERT INTO t(x) VALUES (?)", arguments: [Self.secret]) }
        for _ in 0..<3 { _ = try pool.read { db in try db.fetchOne(String.self, sql: "SELECT x FROM t") } }
        _ = try await pool.asyncRead { db in try db.fetchOne(String.self, sql: "SELECT x FROM t") }

        // One read holds the reader, one waits, the next is refused.
        let holding = Latch(), release = Latch()
        let holder = Task { try await pool.asyncRead { _ in holding.open(); release.wait(); return 0 } }
        await holding.opened()
        let waiter = Task { try await pool.asyncRead { _ in 1 } }
        while pool.waitingReadCount < 1 { try await Task.sleep(nanoseconds: 1_000_000) }
        await #expect(throws: StrongroomError.self) { try await pool.asyncRead { _ in 2 } }
        release.open()
        _ = try await holder.value
        _ = try await waiter.value

        // A cancelled statement is interrupted.
        let started = Latch()
        let endless = Task { try await pool.asyncRead { db in
            started.open()
            return try db.fetchOne(Int.self, sql: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c") ?? 0
        } }
        await started.opened()
        try await Task.sleep(nanoseconds: 20_000_000)
        endless.cancel()
        _ = await endless.result

        let read = [("database", "observed.db"), ("kind", "read")]
        let write = [("database", "observed.db"), ("kind", "write")]
        #expect(metrics.counterTotal(label: "strongroom.accesses", dimensions: read) == 7, "3 sync, 1 async, holder, waiter, cancelled")
        #expect(metrics.counterTotal(label: "strongroom.accesses", dimensions: write) == 2)
        #expect(try metrics.expectTimer("strongroom.wait.duration", read).values.count == 7)
        #expect(try metrics.expectTimer("strongroom.access.duration", read).values.count == 7)
        let waits = try metrics.expectTimer("strongroom.wait.duration", read).values
        #expect(waits.max() ?? 0 > 0, "the waiter waited")
        #expect(metrics.counterTotal(label: "strongroom.refusals", dimensions: read + [("bound", "maximumWaiters")]) == 1)
        #expect(metrics.counterTotal(label: "strongroom.refusals", dimensions: read + [("bound", "maximumWait")]) == 0)
        #expect(metrics.counterTotal(label: "strongroom.interruptions", dimensions: read) == 1)

        let spans = tracer.finishedSpans
        #expect(spans.filter { $0.operationName == "strongroom.read" }.count == 8, "7 run and 1 refused")
        #expect(spans.filter { $0.operationName == "strongroom.write" }.count == 2)
        for span in spans {
            #expect(span.attributes["db.system.name"]?.toSpanAttribute() == "sqlite")
            #expect(span.attributes["db.namespace"]?.toSpanAttribute() == "observed.db")
            #expect(span.kind == .client)
            #expect(span.events.isEmpty, "no statement text unless asked")
        }
        let failed = spans.compactMap { span -> String? in
            guard case .string(let code)? = span.attributes["strongroom.error.code"]?.toSpanAttribute() else { return nil }
            return code
        }
        #expect(failed.sorted() == ["cancelled", "connection_unavailable"], "\(failed)")
        #expect(!"\(spans)".contains(Self.secret))
        #expect(!"\(metrics.counters) \(metrics.timers)".contains(Self.secret))
        try await pool.asyncClose()
    }

    /// With `tracesStatementText`, each statement's text is a span event,
    /// as written: `?` where its arguments go, never their values.
    @Test func statementTextOnlyWhenAskedAndNeverArguments() async throws {
        let tracer = InMemoryTracer()
        var configuration = Configuration(key: .generate())
        configuration.tracer = tracer
        configuration.tracesStatementText = true
        let queue = try DatabaseQueue(path: dir.file("text.db"), configuration: configuration)
        try await queue.asyncWrite { db in
            try db.execute(sql: "CREATE TABLE t(x TEXT)")
            try db.execute(sql: "INSERT INTO t(x) VALUES (?)", arguments: [Self.secret])
        }
        let value = try queue.read { db in try db.fetchOne(String.self, sql: "SELECT x FROM t WHERE x = ?", arguments: [Self.secret]) }
        #expect(value == Self.secret)
        let texts = tracer.finishedSpans.flatMap(\.events).compactMap { event -> String? in
            guard case .string(let text)? = event.attributes["db.query.text"]?.toSpanAttribute() else { return nil }
            return text
        }
        #expect(texts.contains { $0.contains("INSERT INTO t(x) VALUES (?)") }, "\(texts)")
        #expect(texts.contains { $0.contains("SELECT x FROM t WHERE x = ?") }, "\(texts)")
        #expect(!"\(tracer.finishedSpans)".contains(Self.secret))
    }

    /// The checkpoint policy's truncations and the -wal's size.
    @Test func checkpointsAndTheWALSizeAreReported() throws {
        let metrics = TestMetrics()
        var configuration = Configuration(key: .generate())
        configuration.metricsFactory = metrics
        configuration.checkpointPolicy = CheckpointPolicy(walSizeLimit: 64 << 10)
        let pool = try DatabasePool(path: dir.file("checkpointed.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x BLOB)") }
        for _ in 0..<100 { try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (randomblob(2000))") } }
        let database = [("database", "checkpointed.db")]
        #expect(metrics.counterTotal(label: "strongroom.checkpoints", dimensions: database + [("mode", "truncate")]) > 0)
        let sizes = try metrics.expectGauge("strongroom.wal.size", database).values
        #expect(sizes.count > 100 && sizes.contains(0) && (sizes.max() ?? 0) > Double(64 << 10), "\(sizes.prefix(8))")
    }

    /// Nothing is recorded, and nothing fails, until the app bootstraps a backend.
    @Test func withoutABackendNothingIsRecorded() throws {
        let configuration = Configuration(key: .generate())
        #expect(configuration.metricsFactory == nil)
        #expect(configuration.tracer == nil)
        #expect(configuration.tracesStatementText == false)
        let pool = try DatabasePool(path: dir.file("quiet.db"), configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 0)
    }
}

/// Review of issue 51's hot path (helper-27): a tracer whose spans say they
/// record only once an attribute is set (as swift-distributed-tracing's own
/// test span does) still gets the access's attributes. Only the no-op
/// tracer's spans are left without them.
@Suite("Observability: spans that start recording late")
struct LateRecordingSpanTests {
    let dir = TemporaryDirectory()

    final class LateSpan: Span, @unchecked Sendable {
        let context: ServiceContext
        private let lock = NSLock()
        private var name: String
        private var stored = SpanAttributes()
        private let ended: @Sendable (LateSpan) -> Void

        init(name: String, context: ServiceContext, ended: @escaping @Sendable (LateSpan) -> Void) {
            (self.name, self.context, self.ended) = (name, context, ended)
        }

        var operationName: String {
            get { lock.withLock { name } }
            set { lock.withLock { name = newValue } }
        }
        var attributes: SpanAttributes {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
        var isRecording: Bool { lock.withLock { !stored.isEmpty } }
        func setStatus(_ status: SpanStatus) {}
        func addEvent(_ event: SpanEvent) {}
        func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
        func addLink(_ link: SpanLink) {}
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { ended(self) }
    }

    final class LateTracer: Tracer, @unchecked Sendable {
        private let lock = NSLock()
        private var spans: [LateSpan] = []
        var finished: [LateSpan] { lock.withLock { spans } }

        func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                               at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt) -> LateSpan {
            LateSpan(name: operationName, context: context()) { [weak self] span in self?.lock.withLock { self?.spans.append(span) } }
        }
        func forceFlush() {}
        func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract) where Extract.Carrier == Carrier {}
        func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject) where Inject.Carrier == Carrier {}
    }

    @Test func aSpanThatRecordsOnceGivenAttributesGetsThem() async throws {
        let tracer = LateTracer()
        var configuration = Configuration(key: .generate())
        configuration.tracer = tracer
        let queue = try DatabaseQueue(path: dir.file("late.db"), configuration: configuration)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        _ = try await queue.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") }
        let spans = tracer.finished
        #expect(spans.count == 2, "\(spans.map(\.operationName))")
        for span in spans {
            #expect(span.attributes["db.system.name"]?.toSpanAttribute() == "sqlite", "\(span.operationName)")
            #expect(span.attributes["db.namespace"]?.toSpanAttribute() == "late.db")
        }
    }
}
