public import StrongroomFields
import Strongroom

/// One table of the model: its columns, keys and indexes, and which of its
/// columns are sealed.
///
/// The `@Table` macro writes one for each annotated struct; one can also be
/// written by hand:
///
/// ```swift
/// let artist = TableDefinition("artist", columns: [
///     ColumnDefinition("id", type: "INTEGER", notNull: true),
///     ColumnDefinition("name", type: "TEXT"),
/// ], primaryKey: ["id"])
/// ```
///
/// Names compare as SQLite compares them (ASCII letters without case).
public struct TableDefinition: Sendable, Hashable {
    /// The table's name.
    public var name: String
    /// The columns, in order.
    public var columns: [ColumnDefinition]
    /// The primary key's columns; empty for a table keyed by its rowid only.
    public var primaryKey: [String]
    /// UNIQUE constraints of the table, each a list of columns. One equal to
    /// the primary key is the primary key's own: SQLite makes no index for it
    /// (but for an `INTEGER PRIMARY KEY`, the rowid), and a schema read from a
    /// database does not list it, nor a second key on the same columns (which
    /// SQLite makes only when their collations differ: the model holds none).
    public var uniqueKeys: [[String]]
    /// Foreign keys.
    public var foreignKeys: [ForeignKeyDefinition]
    /// Indexes created beside the table (`CREATE INDEX`).
    public var indexes: [IndexDefinition]
    /// Blind indexes beyond each indexed sealed column's own (`BlindIndex`):
    /// their companion columns and SQL indexes are among ``columns`` and
    /// ``indexes``; the definitions go to the registry the tools read.
    public var blindIndexes: [BlindIndex]

    /// A table definition.
    public init(_ name: String, columns: [ColumnDefinition], primaryKey: [String] = [], uniqueKeys: [[String]] = [],
                foreignKeys: [ForeignKeyDefinition] = [], indexes: [IndexDefinition] = [], blindIndexes: [BlindIndex] = []) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.uniqueKeys = uniqueKeys
        self.foreignKeys = foreignKeys
        self.indexes = indexes
        self.blindIndexes = blindIndexes
    }

    /// The unique keys that are not the primary key's, each once (names
    /// compared as SQLite compares them): what a table's uniqueness is
    /// compared by.
    var distinctUniqueKeys: [[String]] {
        let key = primaryKey.map(\.sqliteFolded)
        var seen: Set<[FoldedName]> = []
        return uniqueKeys.filter { unique in
            let folded = unique.map(\.sqliteFolded)
            return folded != key && seen.insert(folded).inserted
        }
    }

    /// The column called `name`, if any.
    public func column(_ name: String) -> ColumnDefinition? {
        columns.first { $0.name.sqliteFolded == name.sqliteFolded }
    }

    /// Whether `column` is the table's rowid (a lone `INTEGER PRIMARY KEY`),
    /// which can never be NULL whatever `NOT NULL` says.
    func isRowid(_ column: ColumnDefinition) -> Bool {
        primaryKey.count == 1 && primaryKey[0].sqliteFolded == column.name.sqliteFolded && column.type.asciiUppercased == "INTEGER"
    }

    /// NOT NULL as SQLite enforces it.
    func enforcesNotNull(_ column: ColumnDefinition) -> Bool { column.notNull || isRowid(column) }

    /// The row key of its sealed columns, as the field-encryption layer
    /// takes it (`rowKeys:`): its primary key, when it has sealed columns.
    public var rowKeys: [String: [String]] {
        sealedColumns.isEmpty || primaryKey.isEmpty ? [:] : [name: primaryKey]
    }

    /// The sealed columns, as the field-encryption layer takes them
    /// (`configuration.seal(table.sealedColumns, keyring: keyring, rowKeys: table.rowKeys)`).
    public var sealedColumns: [SealedColumn] {
        columns.compactMap { column in
            column.sealing.map { SealedColumn(table: name, column: column.name, mode: $0, indexColumn: column.sealedIndexColumn) }
        }
    }
}

/// One column of a ``TableDefinition``.
public struct ColumnDefinition: Sendable, Hashable {
    /// The column's name.
    public var name: String
    /// The declared type, as written in `CREATE TABLE` (`INTEGER`, `TEXT`,
    /// `REAL`, `BLOB`, `NUMERIC`, …); empty for none.
    public var type: String
    /// Whether the column is `NOT NULL`.
    public var notNull: Bool
    /// The `DEFAULT` clause's expression as SQL (`0`, `'draft'`,
    /// `CURRENT_TIMESTAMP`), or nil.
    public var defaultSQL: String?
    /// How the column is sealed, or nil for plaintext.
    public var sealing: SealingMode?
    /// For the `indexed` sealing mode: the companion column holding the blind index.
    public var sealedIndexColumn: String?

    /// A column definition.
    public init(_ name: String, type: String, notNull: Bool = false, defaultSQL: String? = nil,
                sealing: SealingMode? = nil, sealedIndexColumn: String? = nil) {
        self.name = name
        self.type = type
        self.notNull = notNull
        self.defaultSQL = defaultSQL
        self.sealing = sealing
        self.sealedIndexColumn = sealedIndexColumn
    }
}

/// A foreign key of a ``TableDefinition``.
public struct ForeignKeyDefinition: Sendable, Hashable {
    /// The referencing columns, in this table.
    public var columns: [String]
    /// The referenced table.
    public var table: String
    /// The referenced columns; empty for the referenced table's primary key.
    public var referencedColumns: [String]
    /// What deleting the referenced row does.
    public var onDelete: ForeignKeyAction
    /// What changing the referenced key does.
    public var onUpdate: ForeignKeyAction

    /// A foreign key.
    public init(_ columns: [String], references table: String, columns referencedColumns: [String] = [],
                onDelete: ForeignKeyAction = .noAction, onUpdate: ForeignKeyAction = .noAction) {
        self.columns = columns
        self.table = table
        self.referencedColumns = referencedColumns
        self.onDelete = onDelete
        self.onUpdate = onUpdate
    }
}

/// What a foreign key does when its referenced row is deleted or its key changes.
public enum ForeignKeyAction: String, Sendable, Hashable, CaseIterable {
    /// Nothing (the default); the constraint is checked at the end of the statement.
    case noAction = "NO ACTION"
    /// Refuse at once.
    case restrict = "RESTRICT"
    /// Set the referencing columns to NULL.
    case setNull = "SET NULL"
    /// Set the referencing columns to their defaults.
    case setDefault = "SET DEFAULT"
    /// Delete (or update) the referencing rows too.
    case cascade = "CASCADE"
}

/// An index of a ``TableDefinition``.
public struct IndexDefinition: Sendable, Hashable {
    /// The index's name.
    public var name: String
    /// The indexed columns, in order.
    public var columns: [String]
    /// Whether it is a `UNIQUE` index.
    public var unique: Bool
    /// For a partial index, the expression after `WHERE` (the rows it
    /// covers); nil for an index of every row. Compared token by token,
    /// keywords and names without case, literals exactly.
    public var whereSQL: String?

    /// An index of every row.
    public init(_ name: String, columns: [String], unique: Bool = false) {
        self.init(name, columns: columns, unique: unique, whereSQL: nil)
    }

    /// A partial index, of the rows `whereSQL` selects (nil: every row).
    public init(_ name: String, columns: [String], unique: Bool = false, whereSQL: String?) {
        self.name = name
        self.columns = columns
        self.unique = unique
        self.whereSQL = whereSQL
    }
}

/// A type whose table the model declares: the `@Table` macro conforms a
/// struct to it. ``DatabaseSchema`` collects them (`DatabaseSchema(Artist.self, Album.self)`).
public protocol TableModel {
    /// The type's table.
    static var tableDefinition: TableDefinition { get }
}
