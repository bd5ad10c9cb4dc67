internal import CSQLCipher
public import Foundation

/// The current row of a statement as it steps, read in place: no copy of
/// the row, one SQLite call per value read.
///
/// ```swift
/// let select = try db.cachedStatement(sql: "SELECT id, title, year FROM movie")
/// var total = 0
/// try select.forEachRow { row in
///     let id: Int64 = try row.decode(at: 0)
///     let title = try row.decode(String.self, at: 1)
///     let year: Int? = try row.decode(at: 2)
///     total += Int(id) + title.count + (year ?? 0)
/// }
/// ```
///
/// A row view is valid inside the closure that gave it: the statement moves
/// on to the next row afterwards. Keep a row with ``copy()``.
///
/// Reading text into a `String` checks its UTF-8 and, over 15 bytes,
/// allocates; ``withTextBytes(at:_:)`` reads it in place instead.
///
/// Values convert under the connection's ``ValueConversion`` policy, as
/// ``Row/decode(_:at:)`` does; `Int`, `Int64`, `Double`, `Bool`, `String`,
/// `Data` and their optionals read straight from SQLite when stored in the
/// class they read directly. A sealed column holds its envelope, unless the
/// row is a record's whose declaration opens it (once per row).
public struct RowView {
    let statement: Statement
    /// The statement's handle and column count, read once per run.
    let handle: OpaquePointer
    let columnCount: Int
    /// Set when the connection's ``ColumnTransform`` opens some columns.
    let opened: OpeningColumnReader?
    /// `opened != nil`, readable from inlinable code: the per-row check
    /// inlines into the caller's loop.
    @usableFromInline let opensColumns: Bool
    /// For a record: the column of each of its properties, when the query
    /// does not select them in the record's order.
    let columnOfProperty: [Int32]?

    init(statement: Statement, opened: OpeningColumnReader?, columnOfProperty: [Int32]?) {
        self.statement = statement
        self.handle = statement.handle
        self.columnCount = statement.columnCount
        self.opened = opened
        self.opensColumns = opened != nil
        self.columnOfProperty = columnOfProperty
    }

    /// The number of columns.
    public var count: Int { columnCount }

    /// The column names, in order.
    public var columnNames: [String] { statement.columnNames }

    /// The value at `index`, as stored (opened, for a sealed column).
    public subscript(index: Int) -> DatabaseValue {
        guard let column = try? column(index) else { return .null }
        return value(at: column)
    }

    /// The value of the column named `name`, or nil when there is no such
    /// column. Names match as SQLite matches them: byte for byte, but for
    /// the case of ASCII letters (`EMAIL` finds `email`; `É` does not find
    /// `é`, nor does an NFD spelling find an NFC one).
    public subscript(name: String) -> DatabaseValue? {
        statement.rowLayout.index(of: name).map { value(at: Int32($0)) }
    }

    /// A ``Row`` holding this row's values, to keep after the closure returns.
    public func copy() throws(StrongroomError) -> Row {
        var values: [DatabaseValue] = []
        values.reserveCapacity(count)
        for i in 0..<Int32(count) { values.append(value(at: i)) }
        return Row(layout: opened?.plan.layout ?? statement.rowLayout, values: values, conversion: statement.connection.configuration.valueConversion)
    }

    // MARK: Reading by position

    /// The value at `index` converted to `T`.
    ///
    /// - Throws: ``StrongroomError/Code/conversion`` when the value does not
    ///   convert (NULL converts only to an `Optional`), naming the column.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws(StrongroomError) -> T {
        try converted(T.self, at: column(index))
    }

    /// The value of the column named `name` (matched as by the
    /// subscript by name) converted to `T`.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, column name: String) throws(StrongroomError) -> T {
        guard let index = statement.rowLayout.index(of: name) else {
            throw StrongroomError(.misuse, "Row has no column named \(name); it has \(columnNames.joined(separator: ", ")).", path: statement.connection.path, sql: statement.sql)
        }
        return try converted(T.self, at: Int32(index))
    }

    // The fast paths: the types a record is mostly made of, read with one
    // SQLite call when stored in the class they read directly.

    /// The value at `index` as an `Int64`.
    public func decode(_ type: Int64.Type = Int64.self, at index: Int) throws(StrongroomError) -> Int64 {
        try read(index) { value, type in type == SQLITE_INTEGER ? sqlite3_value_int64(value) : nil }
    }

    /// The value at `index` as an `Int64`, nil for NULL.
    public func decode(_ type: Int64?.Type = Int64?.self, at index: Int) throws(StrongroomError) -> Int64? {
        try readOptional(index) { value, type in type == SQLITE_INTEGER ? sqlite3_value_int64(value) : nil }
    }

    /// The value at `index` as an `Int`.
    public func decode(_ type: Int.Type = Int.self, at index: Int) throws(StrongroomError) -> Int {
        try read(index) { value, type in type == SQLITE_INTEGER ? Int(exactly: sqlite3_value_int64(value)) : nil }
    }

    /// The value at `index` as an `Int`, nil for NULL.
    public func decode(_ type: Int?.Type = Int?.self, at index: Int) throws(StrongroomError) -> Int? {
        try readOptional(index) { value, type in type == SQLITE_INTEGER ? Int(exactly: sqlite3_value_int64(value)) : nil }
    }

    /// The value at `index` as a `Bool` (0 is false).
    public func decode(_ type: Bool.Type = Bool.self, at index: Int) throws(StrongroomError) -> Bool {
        try read(index) { value, type in type == SQLITE_INTEGER ? sqlite3_value_int64(value) != 0 : nil }
    }

    /// The value at `index` as a `Bool`, nil for NULL.
    public func decode(_ type: Bool?.Type = Bool?.self, at index: Int) throws(StrongroomError) -> Bool? {
        try readOptional(index) { value, type in type == SQLITE_INTEGER ? sqlite3_value_int64(value) != 0 : nil }
    }

    /// The value at `index` as a `Double`.
    public func decode(_ type: Double.Type = Double.self, at index: Int) throws(StrongroomError) -> Double {
        try read(index) { value, type in type == SQLITE_FLOAT ? sqlite3_value_double(value) : nil }
    }

    /// The value at `index` as a `Double`, nil for NULL.
    public func decode(_ type: Double?.Type = Double?.self, at index: Int) throws(StrongroomError) -> Double? {
        try readOptional(index) { value, type in type == SQLITE_FLOAT ? sqlite3_value_double(value) : nil }
    }

    /// The value at `index` as a `String`.
    public func decode(_ type: String.Type = String.self, at index: Int) throws(StrongroomError) -> String {
        try read(index) { value, type in type == SQLITE_TEXT ? Statement.text(value: value) : nil }
    }

    /// The value at `index` as a `String`, nil for NULL.
    public func decode(_ type: String?.Type = String?.self, at index: Int) throws(StrongroomError) -> String? {
        try readOptional(index) { value, type in type == SQLITE_TEXT ? Statement.text(value: value) : nil }
    }

    /// The value at `index` as `Data`.
    public func decode(_ type: Data.Type = Data.self, at index: Int) throws(StrongroomError) -> Data {
        try read(index) { value, type in type == SQLITE_BLOB ? Self.blobData(value) : nil }
    }

    /// The value at `index` as `Data`, nil for NULL.
    public func decode(_ type: Data?.Type = Data?.self, at index: Int) throws(StrongroomError) -> Data? {
        try readOptional(index) { value, type in type == SQLITE_BLOB ? Self.blobData(value) : nil }
    }

    // MARK: Text in place

    /// Calls `body` with the bytes of the text at `index`, read in place:
    /// no `String` is made and nothing is copied. The bytes are valid
    /// during `body` only, and `nil` stands for NULL.
    ///
    /// Making a `String` costs a check of the UTF-8 and, for a text over
    /// 15 bytes, a heap allocation: this is the way to compare, hash or
    /// parse text row by row without either.
    ///
    /// ```swift
    /// var domains: [String: Int] = [:]
    /// try select.forEachRow { row in
    ///     try row.withTextBytes(at: 0) { email in
    ///         guard let email, let at = email.firstIndex(of: UInt8(ascii: "@")) else { return }
    ///         domains[String(decoding: email[(at + 1)...], as: UTF8.self), default: 0] += 1
    ///     }
    /// }
    /// ```
    ///
    /// A TEXT value gives the bytes SQLite holds, which SQLite does not
    /// check to be UTF-8 (decoding a `String` does). A column the row's
    /// record declares sealed gives its opened value, never the envelope;
    /// any other column gives what is stored. Any other value (and an
    /// opened value) is read as a `String?` under the connection's
    /// ``ValueConversion`` policy first, then given as its UTF-8.
    ///
    /// - Throws: ``StrongroomError/Code/conversion`` when the value does not
    ///   convert to text, or what `body` throws.
    public func withTextBytes<Result>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>?) throws -> Result) throws -> Result {
        let column = try column(index)
        // In place unless this very column is one the transform opens.
        if readsInPlace(column), let value = sqlite3_column_value(handle, column) {
            switch sqlite3_value_type(value) {
            case SQLITE_NULL: return try body(nil)
            case SQLITE_TEXT:
                // text, then bytes: the byte count is that of the text form.
                if let pointer = sqlite3_value_text(value) {
                    return try body(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value))))
                }
            default: break
            }
        }
        guard var text = try converted(String?.self, at: column) else { return try body(nil) }
        return try text.withUTF8 { try body($0) }
    }

    // MARK: Stored bytes

    /// The shape of a value as the file stores it, never opened.
    package struct StoredShape {
        /// Its storage class.
        package let storageClass: StorageClass
        /// A BLOB's or a TEXT's byte count (TEXT in the database's encoding); 0 otherwise.
        package let byteCount: Int
        /// The first of those bytes (what `substr(CAST(x AS BLOB), 1, 1)`
        /// reads), nil when there is none.
        package let firstByte: UInt8?
    }

    /// The value at statement column `index` as stored, read in place with
    /// no copy and no conversion of text to UTF-8, whatever the row's
    /// record or the connection's ``ColumnTransform`` opens: what a search
    /// of the file for sealed values tests, value by value.
    package func storedShape(at index: Int) -> StoredShape {
        guard index >= 0, index < columnCount else { return StoredShape(storageClass: .null, byteCount: 0, firstByte: nil) }
        let column = Int32(index)
        let storageClass = statement.storageClass(at: column)
        guard storageClass == .blob || storageClass == .text else { return StoredShape(storageClass: storageClass, byteCount: 0, firstByte: nil) }
        // sqlite3_column_blob gives a TEXT's bytes as held, in the
        // database's encoding; the count is asked after it, as SQLite says.
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return StoredShape(storageClass: storageClass, byteCount: count, firstByte: count > 0 ? bytes?.load(as: UInt8.self) : nil)
    }

    // MARK: Internals

    /// The statement column of `index` (a record's property, when the
    /// record's columns were selected in another order).
    @inline(__always)
    func column(_ index: Int) throws(StrongroomError) -> Int32 {
        // Borrowed in place: `columnOfProperty.map { … }` would retain and
        // release the array for every value read.
        var column = index
        if columnOfProperty != nil {
            column = index < columnOfProperty!.count ? Int(columnOfProperty![index]) : -1
        }
        guard column >= 0 && column < columnCount else { throw noSuchColumn(index) }
        return Int32(truncatingIfNeeded: column)
    }

    @inline(never)
    static func columnsChanged(_ statement: Statement) -> StrongroomError {
        StrongroomError(.misuse, "The statement was prepared again while this row was read (its schema changed while the statement was used inside its own loop): the row's columns are gone. Read the row before using the statement again.",
                        path: statement.connection.path, sql: statement.sql)
    }

    /// Out of line, so that the reads that may throw it stay small.
    @inline(never)
    func noSuchColumn(_ index: Int) -> StrongroomError {
        StrongroomError(.misuse, "Row has \(columnCount) column(s); there is no column \(index).", path: statement.connection.path, sql: statement.sql)
    }

    /// `fast` reads a value stored in the class its type reads directly,
    /// else returns nil; everything else (NULL, other classes, sealed
    /// columns) goes through the conversion policy.
    ///
    /// It is given the column's `sqlite3_value` and storage class: one
    /// lookup of the column instead of one per `sqlite3_column_*` call. The
    /// value is "unprotected" in SQLite's terms, which only matters to
    /// threads sharing the connection; a connection here is used by one
    /// thread at a time (it is opened `SQLITE_OPEN_NOMUTEX`).
    @inline(__always)
    private func read<T: DatabaseValueConvertible>(_ index: Int, _ fast: (OpaquePointer, Int32) -> T?) throws(StrongroomError) -> T {
        let column = try column(index)
        if readsInPlace(column), let value = sqlite3_column_value(handle, column), let result = fast(value, sqlite3_value_type(value)) { return result }
        return try converted(T.self, at: column)
    }

    @inline(__always)
    private func readOptional<T: DatabaseValueConvertible>(_ index: Int, _ fast: (OpaquePointer, Int32) -> T?) throws(StrongroomError) -> T? {
        let column = try column(index)
        if readsInPlace(column), let value = sqlite3_column_value(handle, column) {
            let type = sqlite3_value_type(value)
            if type == SQLITE_NULL { return nil }
            if let result = fast(value, type) { return result }
        }
        return try converted(T?.self, at: column)
    }

    /// A BLOB `sqlite3_value` as `Data`.
    @inline(__always)
    static func blobData(_ value: OpaquePointer) -> Data {
        let pointer = sqlite3_value_blob(value)
        let count = Int(sqlite3_value_bytes(value))
        guard let pointer, count > 0 else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// The value of the statement's column `column` (not a record's
    /// property number), opened when sealed.
    package func value(at column: Int32) -> DatabaseValue {
        opened?.databaseValue(at: column) ?? statement.databaseValue(at: column)
    }

    /// The statement's column layout (its names), shared by its rows
    /// until it is prepared again.
    package var layout: RowLayout { statement.rowLayout }

    func converted<T: DatabaseValueConvertible>(_ type: T.Type, at column: Int32) throws(StrongroomError) -> T {
        // The statement prepared again into fewer columns while this row
        // was read (used again inside its own loop, across a schema change).
        // Only `statement` is read here: a check against this view's own
        // count made every fast read keep one more value alive (22
        // instructions a row).
        guard Int(column) < statement.columnCount else { throw Self.columnsChanged(statement) }
        let value = value(at: column)
        // A value already of T's kind (an opened one, mostly) converts
        // without the policy, the column's name or a boxed type.
        if let result = T.fromDatabaseValue(value) { return result }
        return try value.convert(to: T.self, statement.connection.configuration.valueConversion, column: statement.columnNames[Int(column)],
                                 path: statement.connection.path, sql: statement.sql)
    }

    /// Whether the value at `column` is SQLite's own, read in place: every
    /// column but those the transform opened for this row.
    @inline(__always)
    func readsInPlace(_ column: Int32) -> Bool {
        guard let opened else { return true }
        return !opened.opens(column)
    }
}

extension RowView {
    /// Opens the sealed (transformed) columns of the statement's current
    /// row, when it has some: once per row, before reading it.
    @inlinable
    func loadOpenedColumns() throws(StrongroomError) {
        if opensColumns { try loadOpened() }
    }

    @usableFromInline
    func loadOpened() throws(StrongroomError) {
        try opened?.load()
    }
}

extension Statement {
    /// A view of the statement's rows, made once per run (after the first
    /// step), its sealed columns opened for the current row.
    /// `columnOfProperty` maps a record's properties to the statement's
    /// columns, when they differ.
    /// Call ``RowView/loadOpenedColumns()`` on each row before reading it.
    func rowView(columnOfProperty: [Int32]? = nil, plan: OpeningPlan? = nil) -> RowView {
        RowView(statement: self, opened: openingColumnReader(plan), columnOfProperty: columnOfProperty)
    }

    /// Steps through the statement's rows (with no arguments), giving
    /// `body` a view of each to read with ``RowView/storedShape(at:)``,
    /// until `body` returns false or the rows end: the package's scans of
    /// the values a file stores.
    package func forEachStoredRow(_ body: (RowView) -> Bool) throws(StrongroomError) {
        reset()
        defer { reset() }
        guard try step() else { return }
        // One view for every row, as forEachRow makes; nothing is opened.
        let row = RowView(statement: self, opened: nil, columnOfProperty: nil)
        repeat {
            guard body(row) else { return }
        } while try step()
    }

    /// The view a ``TableRecord`` of type `T` reads the rows through: its
    /// declared sealed properties opened.
    @usableFromInline
    func recordRowView<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> RowView {
        let columns = try columnOfProperty(for: T.self)
        return rowView(columnOfProperty: columns, plan: try openingPlan(forRecord: T.self))
    }
}
