/// A type stored as the rows of one table, read and written by column
/// position: no `Codable` containers, no lookup of a column by name per row.
///
/// The `@Table` macro (module `StrongroomMacros`) writes the conformance
/// from a plain struct; it can also be written by hand:
///
/// ```swift
/// struct Artist: TableRecord {
///     var id: Int64
///     var name: String?
///
///     static let databaseTableName = "artist"
///     static let databaseColumnNames = ["id", "name"]
///
///     init(row: borrowing RowView) throws(StrongroomError) {
///         id = try row.decode(at: 0)
///         name = try row.decode(at: 1)
///     }
///
///     func encode(to binder: inout RecordBinder) throws(StrongroomError) {
///         try binder.bind(id, at: 0)
///         try binder.bind(name, at: 1)
///     }
/// }
///
/// try db.insert(Artist(id: 1, name: "AC/DC"))
/// let artists = try db.fetchAll(Artist.self)                       // every row of the table
/// let some = try db.fetchAll(Artist.self, sql: "SELECT * FROM artist WHERE name LIKE ?", arguments: ["A%"])
/// ```
///
/// `init(row:)` reads property number *n* (in ``databaseColumnNames``
/// order) with `row.decode(at: n)`: when a query selects the columns in
/// another order, or more of them, the statement works out once where each
/// one is. Its ``databaseSealedColumns`` are sealed on the way in (through
/// the connection's ``ColumnTransform``) and opened on the way out, each
/// as that column of ``databaseTableName`` bound to the row key the record
/// holds (a record over a view or a join names each value's table as a
/// ``SealedRecord``).
public protocol TableRecord {
    /// The table's name.
    static var databaseTableName: String { get }
    /// The column of each stored property, in the order `init(row:)` reads
    /// them and `encode(to:)` binds them.
    static var databaseColumnNames: [String] { get }
    /// Reads a record from the current row; property *n* is at `row.decode(at: n)`.
    /// The row is borrowed: an initializer would otherwise take (retain and
    /// release) it for every record.
    init(row: borrowing RowView) throws(StrongroomError)
    /// Binds property *n* with `binder.bind(value, at: n)`.
    func encode(to binder: inout RecordBinder) throws(StrongroomError)
    /// The columns the record's table keeps sealed (field encryption): an
    /// insert through a connection that does not seal them is refused
    /// rather than written as plaintext, and a read opens each such
    /// property as that column of ``databaseTableName``, with the row key
    /// the record itself holds (``databaseRowKey``). Whatever the query's
    /// column of that name holds must authenticate as that value, or the
    /// read fails: an expression, another table's or row's value, text of
    /// whoever holds the database key. A result that holds two columns of
    /// that name, or a connection without the field keyring, fails the
    /// read too. None by default.
    static var databaseSealedColumns: [String] { get }
    /// The primary key's columns, as the application declares them: the
    /// row key each sealed value is bound to, read from the record's
    /// properties of these names (never from the database, whose key
    /// whoever holds the database key can move). `@Table` writes it; none
    /// by default, and then the connection's declared row key for the
    /// table (`Configuration.seal(…, rowKeys:)`) is used.
    static var databaseRowKey: [String] { get }
}

extension TableRecord {
    /// No sealed column.
    public static var databaseSealedColumns: [String] { [] }
    /// No declared row key.
    public static var databaseRowKey: [String] { [] }
}

extension Statement {
    /// Where each property of `T` is among this statement's columns: nil
    /// when they come first and in order (`SELECT *` from its table, or
    /// the columns listed in order). Worked out once per statement.
    func columnOfProperty<T: TableRecord>(for type: T.Type) throws(StrongroomError) -> [Int32]? {
        let id = ObjectIdentifier(T.self)
        if let recordColumns, recordColumns.type == id { return recordColumns.columnOfProperty }
        let names = T.databaseColumnNames
        var columns: [Int32] = []
        columns.reserveCapacity(names.count)
        for name in names {
            guard let index = rowLayout.index(of: name) else {
                throw StrongroomError(.misuse, "The query selects no column \(name) for \(T.self); select every column of \(T.databaseTableName) (SELECT * or \(names.joined(separator: ", "))).",
                                      path: connection.path, sql: sql)
            }
            columns.append(Int32(index))
        }
        let inOrder = columns.enumerated().allSatisfy { Int($1) == $0 }
        let result = inOrder ? nil : columns
        recordColumns = (id, result)
        return result
    }

    /// The current row as a `T` (a single read: the view is made for it).
    func decodeRecord<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> T {
        let row = try recordRowView(T.self)
        try row.loadOpenedColumns()
        return try T(row: row)
    }

    /// Runs the statement and reads every row into a `T`.
    @inlinable
    public func fetchAll<T: TableRecord>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        try allRecords(type, arguments: arguments)
    }

    /// Runs the statement and reads the first row into a `T`, or returns nil.
    @inlinable
    public func fetchOne<T: TableRecord>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        try firstRecord(type, arguments: arguments)
    }

    /// Runs the statement and calls `body` with each row read into a `T`,
    /// without keeping them all in memory.
    @inlinable
    public func forEach<T: TableRecord>(_ type: T.Type, arguments: StatementArguments = .none, _ body: (T) throws(StrongroomError) -> Void) throws(StrongroomError) {
        try forEachRecord(type, arguments: arguments, body)
    }

    /// Runs the statement with positional values (one or more) and reads the
    /// first row into a `T`, or returns nil: the fast path of a lookup by key,
    /// with no array and no boxing per call, as ``execute(_:)`` binds.
    ///
    /// ```swift
    /// let byID = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
    /// let ada = try byID.fetchOne(Person.self, values: 42)
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` when the number of values is
    ///   not the statement's number of parameters.
    @inlinable
    public func fetchOne<T: TableRecord, First: DatabaseValueConvertible, each V: DatabaseValueConvertible>(
        _ type: T.Type, values first: First, _ rest: repeat each V
    ) throws(StrongroomError) -> T? {
        // At least one value: with none, this would be as good a match as
        // fetchOne(_:arguments:) for `fetchOne(T.self)`, and that call ambiguous.
        var count = 1
        for _ in repeat each rest { count += 1 }
        guard count == parameterCount else { throw argumentCountMismatch(given: count) }
        reset()
        defer { reset() }
        try bind(first.databaseValue, at: 1)
        var index: Int32 = 1
        for value in repeat each rest {
            index += 1
            try bind(value.databaseValue, at: index)
        }
        guard try step() else { return nil }
        let row = try recordRowView(T.self)
        try row.loadOpenedColumns()
        return try T(row: row)
    }

    /// Runs the statement and reads into a `T` each row `filter` keeps
    /// (it sees the row's values, sealed ones opened), calling `body` with
    /// it until `body` returns false: a query that drops some rows in Swift
    /// and stops after enough, without reading the rest.
    ///
    /// ```swift
    /// var shown: [Track] = []
    /// try select.forEach(Track.self, filter: { row in row[2] != .null }) { track in
    ///     shown.append(track)
    ///     return shown.count < 10
    /// }
    /// ```
    public func forEach<T: TableRecord>(_ type: T.Type, arguments: StatementArguments = .none, filter: (RowView) throws -> Bool,
                                        _ body: (T) throws -> Bool) throws {
        try forEach(T.self, binding: { statement in try statement.bind(arguments: arguments) }, filter: filter, body)
    }

    /// ``forEach(_:arguments:filter:_:)``, the parameters bound by `bind`
    /// (after the reset, before the first step): values bound from the
    /// caller's own buffers, with no array of arguments.
    package func forEach<T: TableRecord>(_ type: T.Type, binding bind: (Statement) throws -> Void, filter: (RowView) throws -> Bool,
                                         _ body: (T) throws -> Bool) throws {
        reset()
        defer { reset() }
        try bind(self)
        guard try step() else { return }
        let row = try recordRowView(T.self)
        repeat {
            try row.loadOpenedColumns()
            if try filter(row) {
                guard try body(try T(row: row)) else { return }
            }
        } while try step()
    }

    /// The first row `filter` keeps, read into a `T`, or nil; the
    /// parameters bound by `bind` as in ``forEach(_:binding:filter:_:)``.
    /// No closure holds the record: a lookup of one row pays for no
    /// generic context.
    package func firstRecord<T: TableRecord>(_ type: T.Type, binding bind: (Statement) throws -> Void,
                                             filter: (RowView) throws -> Bool) throws -> T? {
        reset()
        defer { reset() }
        try bind(self)
        guard try step() else { return nil }
        let row = try recordRowView(T.self)
        repeat {
            try row.loadOpenedColumns()
            if try filter(row) { return try T(row: row) }
        } while try step()
        return nil
    }

    // A type both TableRecord and Decodable reads by position: these
    // overloads are more specific than either protocol's.

    /// Runs the statement and reads every row into a `T`, by position.
    @inlinable
    public func fetchAll<T: TableRecord & Decodable>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        try allRecords(type, arguments: arguments)
    }

    /// Runs the statement and reads the first row into a `T`, by position, or returns nil.
    @inlinable
    public func fetchOne<T: TableRecord & Decodable>(_ type: T.Type, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        try firstRecord(type, arguments: arguments)
    }

    /// Runs the statement and calls `body` with each row read into a `T`, by position.
    @inlinable
    public func forEach<T: TableRecord & Decodable>(_ type: T.Type, arguments: StatementArguments = .none, _ body: (T) throws(StrongroomError) -> Void) throws(StrongroomError) {
        try forEachRecord(type, arguments: arguments, body)
    }

    // Inlinable, so that they are specialized for each record type in the
    // app's module: the record is built and handed over without generic
    // copies, and the view of the rows is made once per run.

    @inlinable
    func allRecords<T: TableRecord>(_ type: T.Type, arguments: StatementArguments) throws(StrongroomError) -> [T] {
        var records: [T] = []
        try forEachRecord(type, arguments: arguments) { records.append($0) }
        return records
    }

    @inlinable
    func firstRecord<T: TableRecord>(_ type: T.Type, arguments: StatementArguments) throws(StrongroomError) -> T? {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return nil }
        let row = try recordRowView(T.self)
        try row.loadOpenedColumns()
        return try T(row: row)
    }

    @inlinable
    func forEachRecord<T: TableRecord>(_ type: T.Type, arguments: StatementArguments, _ body: (T) throws(StrongroomError) -> Void) throws(StrongroomError) {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return }
        // One view for every row: the columns cannot change between rows
        // of one run (a re-prepare happens at the first step).
        let row = try recordRowView(T.self)
        repeat {
            try row.loadOpenedColumns()
            try body(try T(row: row))
        } while try step()
    }
}
