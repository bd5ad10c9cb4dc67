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
///   the transform names to ``prepareInsert(into:columns:values:connection:)``.
/// - Each statement asks, once (at its first row), which of its result
///   columns come from a transformed column (SQLite's column metadata gives
///   each result column's table and column), and which other columns of the
///   same row each needs; rows, records and single values read from it are
///   then given through ``open(_:column:table:context:)``. Such columns are
///   opened only when they come from `main`'s tables straight, or through
///   the ``declaredViews`` as declared: the name a value leaves under is
///   then one the application's own SQL chose.
///
/// Columns and tables the transform does not name cost nothing: statements
/// and inserts without one read and bind as before.
public protocol ColumnTransform: AnyObject {
    /// For a result column read from `table.column`: nil when it is stored
    /// as it is; otherwise the names of the columns of the same table whose
    /// values ``open(_:column:table:context:)`` needs (possibly none). A
    /// query that reads the column without them fails with a message that
    /// names them.
    func contextColumns(forReading column: String, of table: String) -> [String]?

    /// The value the app sees for a stored value of `table.column`;
    /// `context` holds the values of the ``contextColumns(forReading:of:)``,
    /// in that order. An error fails the read (it should name the row, never
    /// a value).
    func open(_ stored: DatabaseValue, column: String, table: String, context: [DatabaseValue]) throws -> DatabaseValue

    /// Asked once per statement for each column it opens: a function that
    /// opens a stored BLOB given as SQLite's own bytes (valid during the call
    /// only) with its context, so that neither the column's lookup nor a
    /// copy is paid per value. nil (the default): every value goes through
    /// ``open(_:column:table:context:)``.
    func blobOpener(forReading column: String, of table: String) -> BlobOpener?

    /// The `CREATE VIEW` statements of the views through which the
    /// transformed columns may be read, as the application wrote them (its
    /// migrations run the same text). A statement that reads a transformed
    /// column through any other view, or through one of these that the
    /// database no longer holds as declared, opens nothing and fails with
    /// ``StrongroomError/Code/untrustedSchema`` (see the rule in
    /// `OpeningRules`). Default: none.
    var declaredViews: [String] { get }

    /// True when inserts into `table` go through ``prepareInsert(into:columns:values:connection:)``.
    func transformsInserts(into table: String) -> Bool

    /// True when the columns ``contextColumns(forReading:of:)`` gives for
    /// `table` are the application's (pinned), not read from the database's
    /// schema. A ``TableRecord`` that holds a value of another table than
    /// its own (a join, or a record over a view) is read only when that
    /// table's row key is pinned: whoever holds the database key can make
    /// another column the key, and the record could not tell. Default:
    /// false.
    func rowKeyIsPinned(for table: String) -> Bool

    /// The tables whose columns it transforms, as the application names
    /// them. A statement whose text names one of them, or one of the
    /// ``declaredViews``, must find under each such name a table (of `main`,
    /// or of an attached database that names it so): while a view, or a TEMP
    /// object, answers to the name, the statement fails with
    /// ``StrongroomError/Code/untrustedSchema`` before a row is read.
    /// Whoever holds the database key can put a view in a sealed table's
    /// place to hand out text of theirs, under whatever name the query
    /// selects it. Read when the transform is installed on a connection. A
    /// requirement without a default: a transform that forgot it would lose
    /// the check silently.
    var transformedTables: [String] { get }

    /// Turns the row about to be inserted into what is stored: may change
    /// values, assign a missing primary key, and add columns. Runs inside
    /// the insert's transaction, before anything of the row is written.
    func prepareInsert(into table: String, columns: inout [String], values: inout [DatabaseValue], connection: Connection) throws

    /// Whether ``prepareInsert(into:columns:values:connection:)`` would
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
}

/// Opens one stored BLOB of a known column: its bytes, and its context.
public typealias BlobOpener = (UnsafeRawBufferPointer, [DatabaseValue]) throws -> DatabaseValue

extension ColumnTransform {
    public func blobOpener(forReading column: String, of table: String) -> BlobOpener? { nil }
    public var declaredViews: [String] { [] }
    public func rowKeyIsPinned(for table: String) -> Bool { false }
    public func writesBeforeInsert(into table: String, connection: Connection) throws -> Bool { true }
}

/// A result column the connection's ``ColumnTransform`` opens, as a row's
/// layout keeps it: where it comes from, and the columns of the row key it
/// is opened with (their names in the table, and where the row has them).
struct OpenedColumn: Sendable {
    let index: Int
    let table: String
    let column: String
    let contextNames: [String]
    let contextIndexes: [Int]
    /// For each row key column, every result column read from it (its
    /// position in `contextIndexes` first).
    let keyIndexes: [[Int]]
    /// Whether the row key is the application's (``ColumnTransform/rowKeyIsPinned(for:)``).
    let rowKeyIsPinned: Bool
}

/// Which result columns of a statement a transform opens, and where their
/// context columns are: worked out once per statement.
final class OpeningPlan {
    /// A class: each row's loop over the columns shares it, rather than
    /// copying (retaining) its names, indexes and opener.
    final class Column {
        /// Where the column is and comes from, as the rows' layout keeps it.
        let opened: OpenedColumn
        /// Other columns from the same origin as a row key column (`rowid, *`,
        /// or a self-join): (position in the context, column). Each must hold
        /// the row's key value, or which row a value is bound to cannot be
        /// told. Empty for almost every query.
        let keyCopies: [(key: Int, index: Int)]
        /// The transform's opener for this column's BLOBs, if it has one.
        let blobOpener: BlobOpener?

        var index: Int { opened.index }
        var table: String { opened.table }
        var column: String { opened.column }
        var contextIndexes: [Int] { opened.contextIndexes }

        init(_ opened: OpenedColumn, blobOpener: BlobOpener?) {
            self.opened = opened
            // Every column from a key column's origin but the first.
            keyCopies = opened.keyIndexes.enumerated().flatMap { key, copies in copies.dropFirst().map { (key: key, index: $0) } }
            self.blobOpener = blobOpener
        }
    }

    /// Refuses a row whose copies of a row key column (``Column/keyCopies``)
    /// hold another value than the key: in a self-join, one side's value
    /// would open under the other side's key.
    func checkKeyCopies(_ column: Column, context: [DatabaseValue], statement: Statement, value: (Int) -> DatabaseValue) throws(StrongroomError) {
        for copy in column.keyCopies where value(copy.index) != context[copy.key] {
            throw StrongroomError(.misuse, "The query reads \(column.table).\(column.column), which is sealed, beside columns \(column.contextIndexes[copy.key] + 1) and \(copy.index + 1), which both come from its row key \(column.table).\(column.opened.contextNames[copy.key]) (a self-join), and this row holds two values there: which one the value is bound to cannot be told, and one row's value could open under another row's key. Nothing was opened; read each side's sealed columns in a query of its own.",
                                  path: statement.connection.path, sql: statement.sql)
        }
    }

    let transform: any ColumnTransform
    let columns: [Column]

    init(transform: any ColumnTransform, columns: [Column]) {
        self.transform = transform
        self.columns = columns
    }

    /// `values` (one row, as stored) as the app sees them.
    func open(_ values: inout [DatabaseValue], statement: Statement) throws(StrongroomError) {
        let stored = values
        for column in columns {
            let context = column.contextIndexes.map { stored[$0] }
            if !column.keyCopies.isEmpty { try checkKeyCopies(column, context: context, statement: statement) { stored[$0] } }
            // A BLOB through the column's opener, worked out with the plan:
            // not looked up by name for every value.
            if let opener = column.blobOpener, case .blob(let bytes) = stored[column.index] {
                do {
                    values[column.index] = try bytes.withUnsafeBytes { try opener($0, context) }
                } catch let error as StrongroomError {
                    throw error
                } catch {
                    throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
                }
                continue
            }
            values[column.index] = try open(column, stored: stored[column.index], context: context, statement: statement)
        }
    }

    /// The current row's value of `column`, as the app sees it: a BLOB is
    /// handed over as SQLite's bytes, without a copy.
    func open(_ column: Column, context: [DatabaseValue], statement: Statement) throws(StrongroomError) -> DatabaseValue {
        let index = Int32(column.index)
        guard let opener = column.blobOpener, statement.columnType(at: index) == SQLITE_BLOB else {
            return try open(column, stored: statement.databaseValue(at: index), context: context, statement: statement)
        }
        do {
            return try statement.withBlobBytes(at: index) { bytes in try opener(bytes, context) }
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
        }
    }

    /// One stored value of `column`, as the app sees it.
    func open(_ column: Column, stored: DatabaseValue, context: [DatabaseValue], statement: Statement) throws(StrongroomError) -> DatabaseValue {
        do {
            return try transform.open(stored, column: column.column, table: column.table, context: context)
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.sealedValue, "\(error)", path: statement.connection.path, sql: statement.sql)
        }
    }
}
