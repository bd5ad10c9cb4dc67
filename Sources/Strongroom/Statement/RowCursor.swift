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
/// A cursor is used on its connection's thread, like the connection.
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

    /// The next row, or nil after the last one.
    public func next() throws(StrongroomError) -> Row? {
        guard !finished else { return nil }
        guard try statement.step() else {
            finished = true
            statement.reset()
            return nil
        }
        return try statement.currentRow()
    }

    /// The next row decoded into `T`, or nil after the last one.
    public func next<T: Decodable>(_ type: T.Type) throws(StrongroomError) -> T? {
        guard !finished else { return nil }
        guard try statement.step() else {
            finished = true
            statement.reset()
            return nil
        }
        return try statement.decodeRow(type, direct: T.self as? any DatabaseValueConvertible.Type)
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
