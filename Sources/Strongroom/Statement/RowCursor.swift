/// Rows read one at a time, on demand: stop whenever you like, with `break`.
///
/// ```swift
/// let cursor = try db.makeCursor(sql: "SELECT id, title FROM movie ORDER BY year")
/// while let row = try cursor.next() {
///     if try row.decode(String.self, column: "title") == "Alien" { break }
/// }
/// ```
///
/// The statement holds a read on the database until the cursor reaches the
/// end or is released; release it (or let it go out of scope) when done.
/// A cursor belongs to its connection: use it inside the closure that gave
/// you the connection (a queue's or pool's), never after it returns.
public final class RowCursor {
    private let statement: Statement
    private var finished = false

    init(statement: Statement, arguments: StatementArguments) throws(StrongroomError) {
        self.statement = statement
        statement.reset()
        try statement.bind(arguments: arguments)
    }

    deinit {
        // Ends the statement's read, wherever the caller stopped.
        statement.reset()
    }

    /// The next row, or nil after the last one (and after an error).
    public func next() throws(StrongroomError) -> Row? {
        guard try advance() else { return nil }
        return try statement.currentRow()
    }

    /// The next row decoded into `T`, or nil after the last one (and after an error).
    public func next<T: Decodable>(_ type: T.Type) throws(StrongroomError) -> T? {
        guard try advance() else { return nil }
        return try statement.decodeRow(type, direct: T.self as? any DatabaseValueConvertible.Type)
    }

    /// The next row read into a ``TableRecord``, by position, or nil after the last one.
    public func next<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> T? {
        guard try advance() else { return nil }
        return try statement.decodeRecord(T.self)
    }

    /// The next row read into a ``TableRecord`` that is also `Decodable`, by position.
    public func next<T: TableRecord & Decodable>(_ type: T.Type) throws(StrongroomError) -> T? {
        guard try advance() else { return nil }
        return try statement.decodeRecord(T.self)
    }

    /// Steps once; at the end, or on an error (after which SQLite's step
    /// would start the query over), the cursor is done.
    private func advance() throws(StrongroomError) -> Bool {
        guard !finished else { return false }
        do {
            if try statement.step() { return true }
        } catch {
            finished = true
            throw error
        }
        finished = true
        statement.reset()
        return false
    }
}

extension Connection {
    /// A ``RowCursor`` over the rows of a query, read one at a time; stop
    /// early with `break`.
    public func makeCursor(sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> RowCursor {
        // A statement of its own: a cached one could be reused (and reset)
        // by another query while the cursor is still reading it.
        try RowCursor(statement: prepare(sql: sql), arguments: arguments)
    }
}
