internal import CSQLCipher
import Foundation
import StrongroomCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A prepared SQL statement, finalized when released.
///
/// Get one from ``Connection/cachedStatement(sql:)`` (reused across calls) or
/// ``Connection/prepare(sql:)``. The fastest way to run one statement many times
/// is to bind values directly:
///
/// ```swift
/// let insert = try db.cachedStatement(sql: "INSERT INTO person(id, name, score) VALUES (?, ?, ?)")
/// try db.inTransaction(.immediate) { _ in
///     for person in people {
///         try insert.execute(person.id, person.name, person.score)
///     }
/// }
/// ```
public final class Statement {
    let handle: OpaquePointer
    unowned let connection: Connection
    /// The connection's closed flag, held strongly: read on every step
    /// without the retain and release that `unowned` costs.
    let connectionState: ConnectionState
    /// The SQL text of this statement.
    public let sql: String
    /// The number of parameters (`?`, `:name`) the statement takes.
    public let parameterCount: Int
    /// The number of columns a row of this statement has.
    @exclusivity(unchecked) public private(set) var columnCount: Int
    /// True when the statement does not write to the database file
    /// (`sqlite3_stmt_readonly`): a `SELECT` or `BEGIN`, but not an `INSERT`.
    /// SQLite counts a `PRAGMA` that changes only this connection's settings
    /// (`foreign_keys`, `temp_store`) as read-only, and a `PRAGMA
    /// journal_mode` query as not.
    ///
    /// ```swift
    /// let statement = try db.prepare(sql: userSQL)
    /// guard statement.isReadOnly else { throw MyError.writesNotAllowed }
    /// ```
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// The column names of a row, in order.
    public private(set) lazy var columnNames: [String] = (0..<Int32(columnCount)).map {
        String(cString: sqlite3_column_name(handle, $0))
    }
    package lazy var rowLayout = RowLayout(columnNames: columnNames)
    /// The first column's name as SQLite holds it: when SQLite re-prepares
    /// the statement after a schema change (inside `sqlite3_step`), it gets a
    /// new one, and the columns are read again. (sqlite3Reprepare compiles the
    /// new program while the old one, and its names, are still allocated, so
    /// the new name cannot reuse the old address.)
    private var columnsMarker: UnsafePointer<CChar>?
    /// Set by `reset`: the next row checks the columns are still the same.
    /// Read on every step without runtime exclusivity checks (a call per
    /// row): every access is a single load or store, which such a check
    /// could never find overlapping another, and a statement is used by one
    /// thread at a time.
    @exclusivity(unchecked) @usableFromInline var checksColumns = false
    /// Key-to-column (decoding) and key-to-parameter (encoding) lookups,
    /// remembered in the order a record's keys arrive.
    let decodingKeys = KeyIndexCache()
    private var reader: StatementColumnReader?
    /// Reads the current row's columns for the decoder; one per statement.
    var columnReader: StatementColumnReader {
        if let reader { return reader }
        let made = StatementColumnReader(statement: self)
        reader = made
        return made
    }
    let encodingKeys = KeyIndexCache()
    /// The `Decodable` type last read: whether it is a ``TableRecord`` (read
    /// by position), and the plan that opens what it declares.
    @exclusivity(unchecked) var decodableState: (type: ObjectIdentifier, isRecord: Bool, plan: OpeningPlan?)?
    /// The last plan worked out for this statement's rows (a type's
    /// declared sealed properties, or an explicit list): nil when none was.
    private var lastOpeningPlan: (request: OpeningRequest, plan: OpeningPlan?)?
    /// How many times SQLite compiled the statement again (a schema change,
    /// or an expiry) that its columns showed: for tests.
    package private(set) var timesPreparedAgain = 0
    private var openingReader: OpeningColumnReader?
    /// The reader a decoder uses for the current row: straight from SQLite,
    /// or, when `plan` opens some of its columns, one that opens them first.
    @inline(__always)
    func rowReader(_ plan: OpeningPlan?) throws(StrongroomError) -> ColumnReader {
        guard let reader = openingColumnReader(plan) else { return columnReader }
        try reader.load()
        return reader
    }
    /// The reader that opens `plan`'s columns (not yet loaded with the
    /// current row), or nil for no plan.
    @inline(__always)
    func openingColumnReader(_ plan: OpeningPlan?) -> OpeningColumnReader? {
        guard let plan else { return nil }
        if openingReader?.plan !== plan {
            // The old reader may be kept by a container: cut it off (and
            // break its cycle, or it stays in memory with its opened values).
            openingReader?.detach()
            openingReader = OpeningColumnReader(base: columnReader, plan: plan)
        }
        return openingReader
    }

    /// The plan for `request`, worked out once per statement (the last one
    /// is kept): `properties` gives the declaration, `owner` names it.
    func openingPlan(_ request: OpeningRequest, owner: @autoclosure () -> String,
                     properties: () -> [SealedProperty]?) throws(StrongroomError) -> OpeningPlan? {
        if let last = lastOpeningPlan, last.request == request { return last.plan }
        let plan: OpeningPlan?
        if let declared = properties(), columnCount > 0 {
            plan = try makeOpeningPlan(request, properties: declared, owner: owner())
        } else {
            plan = nil
        }
        lastOpeningPlan = (request, plan)
        return plan
    }

    /// The plan that opens the sealed properties `T` declares (a
    /// ``SealedRecord``, or a ``TableRecord`` with sealed columns); nil for
    /// any other type.
    @inline(__always)
    func openingPlan<T>(forDecoding type: T.Type) throws(StrongroomError) -> OpeningPlan? {
        try openingPlan(.type(ObjectIdentifier(T.self)), owner: "\(T.self)") { declaredSealedProperties(of: T.self) }
    }

    /// The plan a ``TableRecord`` read by position opens (its properties
    /// found by column, so one the query leaves out fails as it decodes).
    func openingPlan<T: TableRecord>(forRecord type: T.Type) throws(StrongroomError) -> OpeningPlan? {
        try openingPlan(.record(ObjectIdentifier(T.self)), owner: "\(T.self)") { T.declaredSealedProperties }
    }

    /// The plan that opens `properties`, for an explicit read of rows.
    func openingPlan(opening properties: [SealedProperty]) throws(StrongroomError) -> OpeningPlan? {
        try openingPlan(.properties(properties), owner: "the read") { properties }
    }

    /// The direct-only functions (``DatabaseFunction/isDirectOnly``) this
    /// statement's own text calls, as bits: the only ones that may run
    /// while it steps.
    let directOnlyFunctions: UInt64
    /// Set by `reset` for a statement that calls direct-only functions: the
    /// next step checks the schema first, if the statement writes.
    private var checksSchemaFirst: Bool
    /// True for a run whose schema check was made inside the transaction it
    /// runs in: a re-prepare then meets the schema that was checked.
    private var scanHoldsForThisRun = false
    /// For a statement Strongroom generated with positional parameters
    /// (``Connection/insert(_:into:)``): the parameter of each coding key,
    /// which may be no valid parameter name (`first-name`).
    var parametersByKey: [String: Int32]?
    /// For ``TableRecord`` reads: the record type last read, and where each
    /// of its properties is among the columns (nil: in order).
    var recordColumns: (type: ObjectIdentifier, columnOfProperty: [Int32]?)?

    convenience init(connection: Connection, sql: String) throws(StrongroomError) {
        let (handle, tail, directOnlyFunctions) = try Self.prepareHandle(connection: connection, sql: sql)
        guard let handle else {
            throw StrongroomError(.misuse, "The SQL holds no statement.", path: connection.path, sql: sql)
        }
        // Only whitespace, semicolons and comments may follow the statement.
        if !SQLScript.strippingComments(String(tail)).unicodeScalars.allSatisfy({ SQLScript.isSQLiteWhitespace($0) || $0 == ";" }) {
            sqlite3_finalize(handle)
            throw StrongroomError(.misuse, "The SQL holds more than one statement; use Connection.execute(sql:) for a script.", path: connection.path, sql: sql)
        }
        self.init(handle: handle, connection: connection, sql: sql, directOnlyFunctions: directOnlyFunctions)
    }

    private init(handle: OpaquePointer, connection: Connection, sql: String, directOnlyFunctions: UInt64) {
        self.handle = handle
        self.directOnlyFunctions = directOnlyFunctions
        self.checksSchemaFirst = directOnlyFunctions != 0
        self.connection = connection
        self.connectionState = connection.state
        self.sql = sql
        self.parameterCount = Int(sqlite3_bind_parameter_count(handle))
        self.columnCount = Int(sqlite3_column_count(handle))
        self.columnsMarker = columnCount > 0 ? sqlite3_column_name(handle, 0) : nil
        // A re-prepare may happen at the very first step too.
        // Even with no column: a statement whose columns SQLite sets as it
        // compiles (a PRAGMA on SQLite before 3.20) may have some after a re-prepare.
        self.checksColumns = true
    }

    /// After a re-prepare (another connection changed the schema), the
    /// columns, their names and the decoding lookups are read again: a cached
    /// `SELECT *` must not decode `name` from what is now another column.
    @usableFromInline
    func refreshColumnsIfReprepared() {
        let count = Int(sqlite3_column_count(handle))
        let marker = count > 0 ? sqlite3_column_name(handle, 0) : nil
        guard count != columnCount || marker != columnsMarker else { return }
        timesPreparedAgain += 1
        columnCount = count
        columnsMarker = marker
        columnNames = (0..<Int32(count)).map { String(cString: sqlite3_column_name(handle, $0)) }
        rowLayout = RowLayout(columnNames: columnNames)
        decodingKeys.forget()
        lastOpeningPlan = nil
        decodableState = nil
        // Its plan is gone, whichever path reads the next row.
        dropOpeningReader()
        recordColumns = nil
    }

    /// Cuts off and forgets the opening reader (a container may keep it):
    /// nothing reads through it again, and its opened values go.
    @inline(never)
    private func dropOpeningReader() {
        openingReader?.detach()
        openingReader = nil
    }

    deinit {
        // A container kept past init(from:) holds a reader: it must find
        // nothing once the handle below is finalized.
        reader?.detach()
        openingReader?.detach()
        sqlite3_finalize(handle)
    }

    /// Prepares the first statement of `sql` and returns the rest of the text.
    static func prepareFirst(connection: Connection, sql: String) throws(StrongroomError) -> (Statement?, Substring) {
        let (handle, tail, directOnlyFunctions) = try prepareHandle(connection: connection, sql: sql)
        guard let handle else { return (nil, tail) }
        let consumed = sql.utf8.count - tail.utf8.count
        let text = String(decoding: sql.utf8.prefix(consumed), as: UTF8.self).trimmingWhitespace()
        return (Statement(handle: handle, connection: connection, sql: text, directOnlyFunctions: directOnlyFunctions), tail)
    }

    /// The statement's handle, the rest of the text, and the direct-only
    /// functions the authorizer saw it call.
    private static func prepareHandle(connection: Connection, sql: String) throws(StrongroomError) -> (OpaquePointer?, Substring, UInt64) {
        connection.state.referencedDirectOnlyFunctions = 0
        connection.state.refusal = nil
        var handle: OpaquePointer?
        // SQLite always points `tail` somewhere; without it, nothing is left.
        var tailOffset = sql.utf8.count
        let status = sql.withCString { cString in
            var tail: UnsafePointer<CChar>?
            // sqlite3_prepare_v2 compiles the first statement and points `tail`
            // at the unused rest. (prepare_v3 arrived in SQLite 3.20.)
            let status = sqlite3_prepare_v2(connection.handle, cString, -1, &handle, &tail)
            if let tail { tailOffset = cString.distance(to: tail) }
            return status
        }
        // Before anything else can run on the connection: SQLite sets a
        // flag pragma as it compiles it (see `turnOffDeferredForeignKeys`).
        connection.state.noteCompiled(sql, length: status == SQLITE_OK ? tailOffset : nil)
        guard status == SQLITE_OK else {
            // In a script, the error quotes the statement that failed, not the rest.
            throw connection.lastError(status, sql: SQLScript.statements(in: sql).first ?? sql)
        }
        let tail = Substring(sql.utf8.dropFirst(tailOffset))
        return (handle, tail, connection.state.referencedDirectOnlyFunctions)
    }

    // MARK: Binding

    @usableFromInline
    package func bind(_ value: DatabaseValue, at index: Int32) throws(StrongroomError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let n): try bindInt64(n, at: index)
        case .real(let d): try bindDouble(d, at: index)
        case .text(let s): try bindText(s, at: index)
        case .blob(let bytes): try bindBlob(bytes, at: index)
        }
    }

    // One SQLite call per value, for DatabaseValue and RecordBinder alike.

    @usableFromInline
    func bindNull(at index: Int32) throws(StrongroomError) {
        try check(sqlite3_bind_null(handle, index))
    }

    @usableFromInline
    func bindInt64(_ value: Int64, at index: Int32) throws(StrongroomError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    @usableFromInline
    func bindDouble(_ value: Double, at index: Int32) throws(StrongroomError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    @usableFromInline
    func bindText(_ value: String, at index: Int32) throws(StrongroomError) {
        var text = value
        // SQLITE_TRANSIENT: SQLite copies the bytes before returning.
        try check(text.withUTF8 { utf8 in
            sqlite3_bind_text(handle, index, utf8.baseAddress, Int32(utf8.count), strongroom_sqlite_transient())
        })
    }

    /// Binds `bytes` as a BLOB, which SQLite copies: bytes from the
    /// caller's own buffer (the stack), with no array.
    package func bindBlob(bytes: UnsafeRawBufferPointer, at index: Int32) throws(StrongroomError) {
        try bindBlob(bytes, at: index)
    }

    func bindBlob(_ bytes: some ContiguousBytes, at index: Int32) throws(StrongroomError) {
        try check(bytes.withUnsafeBytes { raw in
            // A zero-length blob must not be bound as NULL.
            sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), strongroom_sqlite_transient())
        })
    }

    @inline(__always)
    private func check(_ status: Int32) throws(StrongroomError) {
        if status != SQLITE_OK {
            throw connection.lastError(status, sql: sql)
        }
    }

    /// The 1-based index of the named parameter `name` (tried as `:name`,
    /// `@name`, `$name`), or nil.
    func parameterIndex(named name: String) -> Int32? {
        if let parametersByKey { return parametersByKey[name] }
        for prefix in [":", "@", "$"] {
            let index = sqlite3_bind_parameter_index(handle, prefix + name)
            if index > 0 { return index }
        }
        return nil
    }

    @usableFromInline
    func bind(arguments: StatementArguments) throws(StrongroomError) {
        switch arguments.storage {
        case .positional(let values):
            guard values.count == parameterCount else {
                throw argumentCountMismatch(given: values.count)
            }
            for (offset, value) in values.enumerated() {
                try bind(value, at: Int32(offset + 1))
            }
        case .named(let pairs):
            sqlite3_clear_bindings(handle)
            for (name, value) in pairs {
                guard let index = parameterIndex(named: name) else {
                    throw StrongroomError(.misuse, "The statement has no parameter named \(name).", path: connection.path, sql: sql)
                }
                try bind(value, at: index)
            }
        }
    }

    // MARK: Running

    /// Readies the statement for a new run. Bindings are kept.
    @usableFromInline
    func reset() {
        // sqlite3_reset returns the error of the last step, already reported.
        sqlite3_reset(handle)
        // The run's last opened (decrypted) values go with it.
        openingReader?.forgetRow()
        checksColumns = true
        if directOnlyFunctions != 0 { checksSchemaFirst = true }
    }

    /// Steps once; returns true when a row is available, false when done.
    @usableFromInline
    func step() throws(StrongroomError) -> Bool {
        // A statement kept past its connection's close must not run on the
        // closed handle (after a failed rekey, it would write pages under a
        // half-switched key).
        if connectionState.refusesSteps { try refuseStep() }
        let status: Int32
        if directOnlyFunctions == 0 && connectionState.allowedDirectOnlyFunctions == 0 {
            // Nothing to allow or to withdraw: the common case costs two loads.
            status = sqlite3_step(handle)
        } else {
            status = try stepAllowingDirectOnlyFunctions()
        }
        switch status {
        case SQLITE_ROW:
            if checksColumns {
                checksColumns = false
                refreshColumnsIfReprepared()
            }
            return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(status, sql: sql)
            sqlite3_reset(handle)
            if connectionState.transactionBodies > 0 && sqlite3_get_autocommit(connection.handle) != 0 {
                connectionState.transactionLost = error.code
            }
            throw error
        }
    }

    /// Why this statement may not step now: its connection closed, or
    /// SQLite rolled back the transaction the closure still runs in.
    private func refuseStep() throws(StrongroomError) {
        if connectionState.isClosed { try connection.checkOpen(sql: sql) }
        if let lost = connectionState.transactionLost {
            throw StrongroomError(lost, "SQLite rolled this transaction back when one of its statements failed (\(lost.rawValue)); the closure went on, and its later statements are not run (they would each commit on their own). Nothing of the transaction was committed.", path: connection.path, sql: sql)
        }
    }

    /// `sqlite3_step` for a statement whose text calls direct-only functions
    /// (or while some are allowed): checks the schema before a write, allows
    /// only the statement's own functions while it steps, and runs it again
    /// where that is safe after SQLite re-prepared it.
    private func stepAllowingDirectOnlyFunctions() throws(StrongroomError) -> Int32 {
        if checksSchemaFirst {
            // Only a write runs CHECK constraints, DEFAULTs and index expressions.
            scanHoldsForThisRun = false
            if sqlite3_stmt_readonly(handle) == 0 {
                try connection.refuseSchemaCallingDirectOnlyFunctions()
                // What runs is what the connection loaded, which may not be
                // what is stored: its program may call no more than its text.
                try connection.refuseCallsTheTextDoesNotMake(self)
                // Inside a transaction the scan read the very schema this run
                // will meet (the transaction's snapshot, or its lock, holds it).
                scanHoldsForThisRun = sqlite3_get_autocommit(connection.handle) == 0
            }
            checksSchemaFirst = false
        }
        // Only the direct-only functions this statement's text calls may run
        // while it steps (not those a trigger, CHECK or DEFAULT calls).
        let outer = connectionState.allowedDirectOnlyFunctions
        connectionState.allowedDirectOnlyFunctions = directOnlyFunctions
        connectionState.schemaChangedWhileStepping = false
        connectionState.scanHoldsWhileStepping = scanHoldsForThisRun
        // Whether a failed run leaves nothing behind: a read writes nothing,
        // and outside a transaction SQLite rolls a failed statement's
        // implicit one back. (Inside one, rows a statement wrote before a
        // function failed may stay: SQLite keeps no statement journal for a
        // statement it expects cannot fail halfway.)
        let rerunnable = directOnlyFunctions != 0 && (sqlite3_stmt_readonly(handle) != 0 || sqlite3_get_autocommit(connection.handle) != 0)
        var status = sqlite3_step(handle)
        connectionState.allowedDirectOnlyFunctions = outer
        if status != SQLITE_ROW && status != SQLITE_DONE && connectionState.schemaChangedWhileStepping && rerunnable {
            // SQLite re-prepared the statement as it started (before any row),
            // and its direct-only functions were withdrawn. Check the schema it
            // now runs against, then run it again.
            sqlite3_reset(handle)
            connectionState.refusal = nil
            try connection.refuseSchemaCallingDirectOnlyFunctions()
            if sqlite3_stmt_readonly(handle) == 0 { try connection.refuseCallsTheTextDoesNotMake(self) }
            connectionState.allowedDirectOnlyFunctions = directOnlyFunctions
            connectionState.schemaChangedWhileStepping = false
            status = sqlite3_step(handle)
            connectionState.allowedDirectOnlyFunctions = outer
        }
        return status
    }

    /// Runs the statement to completion with `arguments`.
    public func execute(arguments: StatementArguments = .none) throws(StrongroomError) {
        reset()
        if parameterCount > 0 || !arguments.isEmpty { try bind(arguments: arguments) }
        // A statement that returned SQLITE_DONE holds no lock; the next run resets it.
        while try step() {}
    }

    /// Runs the statement to completion with positional values: the fast path,
    /// with no array and no boxing per call.
    ///
    /// ```swift
    /// try insert.execute(42, "Ada", 3.5, true, nil as String?)
    /// ```
    @inlinable
    public func execute<each V: DatabaseValueConvertible>(_ values: repeat each V) throws(StrongroomError) {
        reset()
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            try bind(value.databaseValue, at: index)
        }
        guard Int(index) == parameterCount else {
            throw argumentCountMismatch(given: Int(index))
        }
        while try step() {}
    }

    @usableFromInline
    func argumentCountMismatch(given: Int) -> StrongroomError {
        StrongroomError(.misuse, "The statement takes \(parameterCount) argument(s) but was given \(given).", path: connection.path, sql: sql)
    }

    // MARK: Reading

    /// Runs the statement and returns every row, as stored: a sealed
    /// column holds its envelope (see ``fetchAll(arguments:opening:)``).
    public func fetchAll(arguments: StatementArguments = .none) throws(StrongroomError) -> [Row] {
        try fetchAll(arguments: arguments, opening: [])
    }

    /// Runs the statement and returns every row, the columns of
    /// `properties` opened: each is the sealed column that
    /// ``SealedProperty`` names, opened with the row key held in the
    /// columns its `rowKey` names (or the configuration's row key for the
    /// table). Every other column holds its value as stored.
    ///
    /// ```swift
    /// let select = try db.prepare(sql: "SELECT id, email FROM customer WHERE id = ?")
    /// let rows = try select.fetchAll(arguments: [1], opening: [SealedProperty("email", of: "customer")])
    /// let email: String = try rows[0].decode(column: "email")
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/sealedValue`` when a value does not
    ///   open under its declaration (another row's, or another column's);
    ///   ``StrongroomError/Code/misuse`` when the result holds a declared
    ///   column twice, lacks a row-key column of a selected one, or the
    ///   connection does not seal it.
    public func fetchAll(arguments: StatementArguments = .none, opening properties: [SealedProperty]) throws(StrongroomError) -> [Row] {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        var rows: [Row] = []
        guard try step() else { return rows }
        let plan = properties.isEmpty ? nil : try openingPlan(opening: properties)
        repeat {
            rows.append(try currentRow(plan))
        } while try step()
        return rows
    }

    /// ``fetchAll(arguments:opening:)`` a row at a time: `body` gets each
    /// row, `properties` opened, until it returns false; no later row is
    /// read or opened.
    package func forEachRow(arguments: StatementArguments, opening properties: [SealedProperty], _ body: (Row) throws -> Bool) throws {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return }
        let plan = properties.isEmpty ? nil : try openingPlan(opening: properties)
        repeat {
            guard try body(try currentRow(plan)) else { return }
        } while try step()
    }

    /// Runs the statement and returns the first row, or nil; as stored
    /// (see ``fetchOne(arguments:opening:)``).
    public func fetchOne(arguments: StatementArguments = .none) throws(StrongroomError) -> Row? {
        try fetchOne(arguments: arguments, opening: [])
    }

    /// Runs the statement and returns the first row, or nil, the columns of
    /// `properties` opened, as ``fetchAll(arguments:opening:)`` does.
    public func fetchOne(arguments: StatementArguments = .none, opening properties: [SealedProperty]) throws(StrongroomError) -> Row? {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return nil }
        return try currentRow(properties.isEmpty ? nil : try openingPlan(opening: properties))
    }

    /// The first column of the first row as stored, with no conversion, or
    /// nil when there is no row: the library's own one-value queries (a
    /// rowid, a check value), without a decoder.
    package func firstValue(arguments: StatementArguments = .none) throws(StrongroomError) -> DatabaseValue? {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return nil }
        return databaseValue(at: 0)
    }

    /// Runs the statement and calls `body` with each row as it is read, in
    /// place: a ``RowView`` reads its values straight from SQLite, and is
    /// valid during the call only (``RowView/copy()`` keeps one).
    ///
    /// ```swift
    /// try select.forEachRow { row in
    ///     let id: Int64 = try row.decode(at: 0)
    ///     let title: String? = try row.decode(at: 1)
    /// }
    /// ```
    public func forEachRow(arguments: StatementArguments = .none, _ body: (RowView) throws -> Void) throws {
        reset()
        defer { reset() }
        try bind(arguments: arguments)
        guard try step() else { return }
        // One view for every row: the statement's columns cannot change
        // between rows of one run (a re-prepare happens at the first step).
        let row = rowView()
        repeat {
            try body(row)
        } while try step()
    }

    /// The current row, the columns of `plan` opened.
    func currentRow(_ plan: OpeningPlan? = nil) throws(StrongroomError) -> Row {
        var values: [DatabaseValue] = []
        values.reserveCapacity(columnCount)
        for i in 0..<Int32(columnCount) {
            values.append(databaseValue(at: i))
        }
        guard let plan else { return Row(layout: rowLayout, values: values, conversion: connection.configuration.valueConversion) }
        try plan.open(&values, statement: self)
        return Row(layout: plan.layout, values: values, conversion: connection.configuration.valueConversion)
    }

    @inline(__always)
    func columnType(at index: Int32) -> Int32 { sqlite3_column_type(handle, index) }

    @inline(__always)
    func storageClass(at index: Int32) -> StorageClass {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    @inline(__always)
    func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    @inline(__always)
    func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// The text of a column, or nil when it is not valid UTF-8 (SQLite
    /// stores whatever bytes it is given as TEXT): never repaired.
    @inline(__always)
    func text(at index: Int32) -> String? {
        Self.text(handle, index)
    }

    /// ``text(at:)`` of a statement handle.
    @inline(__always)
    static func text(_ handle: OpaquePointer, _ index: Int32) -> String? {
        // sqlite3_column_text then sqlite3_column_bytes, in that order, as the
        // SQLite docs advise, so the byte count is that of the UTF-8 text.
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        return text(pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// ``text(at:)`` of a column's `sqlite3_value` (see ``RowView``).
    @inline(__always)
    static func text(value: OpaquePointer) -> String? {
        // NULL here is SQLite out of memory: nil sends the read to the slow
        // path, whose sqlite3_column_text records the failure for the next step.
        guard let pointer = sqlite3_value_text(value) else { return nil }
        return text(pointer, count: Int(sqlite3_value_bytes(value)))
    }

    /// SQLite's text (`count` bytes, then a NUL) as a String, or nil when it
    /// is not valid UTF-8: never repaired.
    ///
    /// Up to 15 bytes of ASCII (checked a word at a time; ASCII is valid
    /// UTF-8 as it is), the bytes are copied straight into a small string:
    /// `String(validatingCString:)` builds one byte by byte (callgrind: 82
    /// instructions fewer for each row of the benchmark's 11-byte name).
    /// Longer text, or text that is not all ASCII, goes through the C-string
    /// validation, which reads up to SQLite's NUL (measured: 37 ns for 22
    /// bytes, against 55 for `String(decoding:)` and 106 for
    /// `String(validating:)`). A NUL inside shows as a shorter string (the C
    /// string stops there): then the whole text is validated.
    @inline(__always)
    static func text(_ pointer: UnsafePointer<UInt8>, count: Int) -> String? {
        if count <= 15, isASCII(pointer, count: count) {
            return String(unsafeUninitializedCapacity: count) { buffer in
                buffer.baseAddress!.initialize(from: pointer, count: count)
                return count
            }
        }
        let cString = pointer.withMemoryRebound(to: CChar.self, capacity: count + 1) { String(validatingCString: $0) }
        if let cString, cString.utf8.count == count { return cString }
        return String(validating: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Whether `count` bytes at `pointer` are all ASCII: 8 bytes at a time
    /// (the last 8 overlapping the previous word), 4 at a time under 8.
    @inline(__always)
    static func isASCII(_ pointer: UnsafePointer<UInt8>, count: Int) -> Bool {
        let raw = UnsafeRawPointer(pointer)
        if count >= 8 {
            var bits: UInt64 = 0
            var offset = 0
            while offset + 8 <= count {
                bits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            bits |= raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            return bits & 0x8080_8080_8080_8080 == 0
        }
        if count >= 4 {
            let bits = raw.loadUnaligned(as: UInt32.self) | raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            return bits & 0x8080_8080 == 0
        }
        var bits: UInt8 = 0
        for i in 0..<count { bits |= pointer[i] }
        return bits & 0x80 == 0
    }

    /// The BLOB at `index` as SQLite's own bytes, valid during `body` only.
    func withBlobBytes<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: count > 0 ? count : 0))
    }

    func textBytes(at index: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_text(handle, index) else { return [] }
        return [UInt8](UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, index))))
    }

    func blob(at index: Int32) -> [UInt8] {
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let pointer, count > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func databaseValue(at index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(at: index))
        case SQLITE_FLOAT: return .real(double(at: index))
        // TEXT that is not UTF-8 is kept as its bytes, never repaired: it
        // reads as Data, and as a String it is a conversion error.
        case SQLITE_TEXT: return text(at: index).map(DatabaseValue.text) ?? .blob(textBytes(at: index))
        case SQLITE_BLOB: return .blob(blob(at: index))
        default: return .null
        }
    }

    @inline(__always)
    func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Binds secret bytes as text without copying them into SQLite's heap
    /// (`SQLITE_STATIC`), or an empty text for nil. The caller keeps `secret`
    /// alive and clears the bindings before releasing it.
    func bindSecret(_ secret: SecureBytes?, at index: Int32) throws(StrongroomError) {
        let status: Int32
        if let secret {
            status = secret.withUnsafeBytes { bytes in
                sqlite3_bind_text(handle, index, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
            }
        } else {
            status = sqlite3_bind_text(handle, index, "", 0, strongroom_sqlite_transient())
        }
        if status != SQLITE_OK {
            throw connection.lastError(status, sql: sql)
        }
    }

    /// Steps to completion with the bindings already in place.
    func run() throws(StrongroomError) {
        reset()
        while try step() {}
        reset()
    }

    /// Clears every binding to NULL.
    @usableFromInline
    func clearBindings() { sqlite3_clear_bindings(handle) }
}

extension StatementArguments {
    var isEmpty: Bool {
        switch storage {
        case .positional(let v): return v.isEmpty
        case .named(let v): return v.isEmpty
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }
}
