internal import CSQLCipher

/// The extension point through which a layer above stores some columns'
/// values in another form, on their way into and out of the database:
/// `StrongroomFields` seals columns this way.
///
/// Install one on a connection (in ``Configuration/prepareConnection(_:)``,
/// so every connection of a queue or pool has its own) with
/// ``Connection/columnTransform``. Then:
///
/// - ``Connection/insert(_:into:)`` hands the row of each insert into a table
///   the transform names to ``prepareInsert(into:columns:values:connection:)``,
///   and ``Connection/update(_:)`` the row of each update to
///   ``prepareUpdate(of:columns:values:rowKey:connection:)``.
/// - A read opens a value only where the application declared it: a
///   property of a ``SealedRecord`` or a ``TableRecord`` (its
///   ``SealedProperty`` list names the table, column and row-key properties
///   the value was sealed with), or a ``Row`` fetched with
///   ``Connection/fetchAll(sql:arguments:opening:)``. The transform says how
///   to open a `table.column` it seals (``bindsToRowKey(_:of:)``,
///   ``open(_:column:table:context:)``); nothing the database says (its
///   schema, a result column's origin, its name) decides which value opens,
///   under which row key, or into which property. Every other read hands
///   out the stored value (a sealed column's envelope bytes).
///
/// Columns and tables the transform does not name cost nothing: statements
/// and inserts without one read and bind as before.
public protocol ColumnTransform: AnyObject {
    /// For `table.column`: nil when the transform does not store it in
    /// another form; else whether its values are bound to their row's key
    /// (then a read gives ``open(_:column:table:context:)`` the key's values,
    /// from the properties the declaration names).
    func bindsToRowKey(_ column: String, of table: String) -> Bool?

    /// The row key the application declared for `table` (its columns, in
    /// order): what a ``SealedProperty`` without its own `rowKey` is opened
    /// with, read from the properties of those names. nil when none is
    /// declared.
    func declaredRowKey(of table: String) -> [String]?

    /// The value the app sees for a stored value of `table.column`;
    /// `context` holds the row key's values, in the key's order (none for a
    /// value bound to no row). An error fails the read (it should name the
    /// row, never a value).
    func open(_ stored: DatabaseValue, column: String, table: String, context: [DatabaseValue]) throws -> DatabaseValue

    /// Asked once per statement and declaration for each column it opens: a
    /// function that opens a stored BLOB given as SQLite's own bytes (valid
    /// during the call only) with its context, so that neither the column's
    /// lookup nor a copy is paid per value. nil (the default): every value
    /// goes through ``open(_:column:table:context:)``.
    func blobOpener(forReading column: String, of table: String) -> BlobOpener?

    /// True when inserts into `table` go through ``prepareInsert(into:columns:values:connection:)``.
    func transformsInserts(into table: String) -> Bool

    /// Turns the row about to be inserted into what is stored: may change
    /// values, assign a missing primary key, and add columns. Runs inside
    /// the insert's transaction, before anything of the row is written.
    func prepareInsert(into table: String, columns: inout [String], values: inout [DatabaseValue], connection: Connection) throws

    /// Turns the columns an update is about to write into what is stored
    /// (``Connection/update(_:)``): `columns` and `values` are the row's,
    /// `rowKey` the declared key columns among them, which the update's
    /// WHERE names the row by (they are not written). May change values and
    /// add columns (a blind index's). Runs inside the update's transaction,
    /// before anything of the row is written. Default: refuses, so that a
    /// transform that does not handle updates never lets one write a column
    /// it stores in another form as it is.
    func prepareUpdate(of table: String, columns: inout [String], values: inout [DatabaseValue], rowKey: [String], connection: Connection) throws

    /// Whether ``prepareInsert(into:columns:values:connection:)`` (or ``prepareUpdate(of:columns:values:rowKey:connection:)``) would
    /// write to the database for the next insert into `table` (a record of
    /// its own, such as the field keyring's check value), asked just before
    /// it, inside the caller's transaction.
    ///
    /// Inside a transaction, an insert for which this is false runs without
    /// a savepoint when the schema holds no trigger: its INSERT is then the
    /// only write, and SQLite undoes a failed one alone. (Inside a savepoint
    /// SQLite copies each page the row changes to a statement journal, and
    /// SQLCipher encrypts every copy.) Default: true, so that whatever
    /// `prepareInsert` writes is undone with a failed insert.
    func writesBeforeInsert(into table: String, connection: Connection) throws -> Bool

    /// The row signature the application declared for `table`: the
    /// columns it covers and the column that holds it; nil (the default)
    /// when its rows are not signed.
    ///
    /// A read that declares a sealed property of such a table must select
    /// the signature, every column it covers (each once, by name) and the
    /// row key; it checks the signature of each row with
    /// ``rowSignatureVerifier(of:)``'s function before it opens or hands out
    /// any value of the row.
    func signedRowColumns(of table: String) -> SignedRowColumns?

    /// Asked once per statement and declaration for each signed table it
    /// reads: the function that checks one row's signature (nil when
    /// `table`'s rows are not signed, the default).
    func rowSignatureVerifier(of table: String) -> RowSignatureVerifier?
}

/// Checks one row's signature, as stored, over the stored values of the
/// covered columns (in ``SignedRowColumns/covered``'s order), bound to the
/// row key's values. Throws when it does not verify (the error names the
/// row, never a value).
public typealias RowSignatureVerifier = (_ signature: DatabaseValue, _ covered: [DatabaseValue], _ rowKey: [DatabaseValue]) throws -> Void

/// Opens one stored BLOB of a known column: its bytes, and its context.
public typealias BlobOpener = (UnsafeRawBufferPointer, [DatabaseValue]) throws -> DatabaseValue

extension ColumnTransform {
    public func blobOpener(forReading column: String, of table: String) -> BlobOpener? { nil }
    public func writesBeforeInsert(into table: String, connection: Connection) throws -> Bool { true }
    public func signedRowColumns(of table: String) -> SignedRowColumns? { nil }
    public func rowSignatureVerifier(of table: String) -> RowSignatureVerifier? { nil }
    public func prepareUpdate(of table: String, columns: inout [String], values: inout [DatabaseValue], rowKey: [String], connection: Connection) throws {
        throw StrongroomError(.misuse, "\(Self.self) stores columns of \(table) in another form and does not handle updates: update them through it, or insert a new row.", path: connection.path)
    }
}

