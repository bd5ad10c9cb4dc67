internal import CSQLCipher
import Foundation

/// Statement tracing, for the package's own tests: they replay the exact
/// statements a migration ran on another SQLite version.
extension Connection {
    /// Calls `handler` with each statement this connection starts running,
    /// with bound values written into it (`sqlite3_expanded_sql`), so it may
    /// hold secrets: it is not public, and must never reach a log.
    /// Statements run by triggers are left out. `nil` stops tracing.
    package func traceStatements(_ handler: (@Sendable (String) -> Void)?) {
        guard let handler else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            traceBox = nil
            return
        }
        let box = TraceBox(handler)
        traceBox = box
        // SQLITE_TRACE_STMT: P is the statement, X its SQL text, or a comment
        // naming the trigger when a trigger's program starts: X then differs
        // from the statement's own text (sqlite3_sql). A statement of ours may
        // start with a comment too, so the comparison, not a prefix, decides.
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, statement, text in
            guard let context, let statement, let text, let own = sqlite3_sql(OpaquePointer(statement)),
                  strcmp(own, text.assumingMemoryBound(to: CChar.self)) == 0 else { return 0 }
            let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
            guard let expanded = sqlite3_expanded_sql(OpaquePointer(statement)) else { return 0 }
            defer { sqlite3_free(expanded) }
            box.handler(String(cString: expanded))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
    }
}

/// Keeps a trace handler alive for as long as SQLite may call it.
final class TraceBox {
    let handler: @Sendable (String) -> Void
    init(_ handler: @escaping @Sendable (String) -> Void) { self.handler = handler }
}

extension Connection {
    /// Runs `body` with `report` called with the text of each statement
    /// it starts, as written (`sqlite3_sql`: `?` where arguments go, never
    /// their values), for the spans of ``Configuration/tracesStatementText``.
    /// Does nothing more when a statement trace is already set.
    package func reportingStatementText<T>(_ report: @escaping @Sendable (String) -> Void, _ body: () throws -> T) throws -> T {
        guard traceBox == nil else { return try body() }
        let box = TraceBox(report)
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, statement, text in
            guard let context, let statement, let text, let own = sqlite3_sql(OpaquePointer(statement)),
                  strcmp(own, text.assumingMemoryBound(to: CChar.self)) == 0 else { return 0 }
            Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue().handler(String(cString: own))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        defer {
            sqlite3_trace_v2(handle, 0, nil, nil)
            withExtendedLifetime(box) {}
        }
        return try body()
    }
}
