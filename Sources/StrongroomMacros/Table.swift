@_exported public import Strongroom
@_exported public import StrongroomFields
@_exported public import StrongroomMigrations

/// Declares a struct as the rows of one table: it becomes a
/// `TableRecord` (read and written by column position, with
/// no `Codable` containers) and a `TableModel` (its
/// table's definition, for the schema file, validation and `strongroom diff`).
///
/// ```swift
/// import StrongroomMacros
///
/// @Table("customer")
/// struct Customer {
///     @PrimaryKey var id: Int64
///     @Column(unique: true) var name: String
///     @Sealed(.indexed) var email: String
///     @Column("support_rep_id", references: "employee", onDelete: .setNull) var supportRepID: Int64?
///     @Indexed var country: String?
///     var joined: Date
/// }
///
/// try db.insert(Customer(id: 1, name: "Ada", email: "ada@example.com", supportRepID: nil, country: "UK", joined: .now))
/// let customers = try db.fetchAll(Customer.self)
/// ```
///
/// Every stored property is a column, named as the property unless
/// `@Column("name")` says otherwise; an optional property is nullable,
/// any other `NOT NULL`. The SQL type comes from the Swift type (`Int…`,
/// `Bool`: INTEGER; `Double`, `Float`: REAL; `String`, `Date`, `UUID`: TEXT;
/// `Data`, `[UInt8]`: BLOB); any other type, such as an enum with raw
/// values that conforms to `DatabaseValueConvertible`, names
/// its type with `@Column(type: "TEXT")`. A `@Sealed` property's column is
/// `BLOB`, whatever its Swift type: it holds envelopes (`@Sealed var email:
/// String` is `email BLOB NOT NULL`). `@Ignored` leaves a property out.
///
/// Columns are, in declaration order: each stored `var`, observers
/// (`didSet`) and access modifiers (`private(set)`) included; each `let`
/// without an initial value; each name of `var first, last: String`. A
/// name that needs quoting, in SQL (`order`, `group`) or in Swift
/// (`default`, in backticks), names its column as it is, quoted wherever SQL is
/// written. Computed, `static` and `lazy` properties are no columns, nor
/// is an `@Ignored` one, which needs an initial value (records read from
/// the database get it).
///
/// These are compile errors that say what to do, as the table would not be
/// what the struct declares:
/// - a stored property inside `#if`, or a property's attributes inside
///   `#if`: the macro cannot evaluate the condition, and a table is the same
///   in every build. Declare it outside the `#if` (optional, if some builds
///   have no value for it), or a type of its own for each configuration.
///   What else `#if` holds (computed or `static` properties, methods,
///   `@Ignored` properties) is fine.
/// - a `let` with an initial value, which a row could not set (synthesized
///   `Decodable` skips one with a warning): make it `var`, or mark it `@Ignored`.
/// - a property wrapper (`@Clamped var level: Int`), whose storage is the
///   wrapper, not the value a row holds: mark it `@Ignored`, or store the
///   value in a plain property.
/// - a nested optional (`String??`): one NULL cannot tell `nil` from
///   `.some(nil)`.
/// - a tuple pattern (`var (x, y): (Int, Int)`): declare each property on
///   its own.
/// - a property without a written type (`var name = "x"`).
///
/// - Parameters:
///   - name: The table's name; by default the type's name with its first
///     letter lowercased (`Customer` → `customer`).
///   - primaryKey: A primary key of several columns (one column: mark its
///     property `@PrimaryKey`).
///   - unique: UNIQUE constraints over several columns. A blind index's
///     column may be named: an indexed column's own, or a 128-bit one of
///     `blindIndexes` (a truncated one cannot be unique: a compile error).
///   - blindIndexes: Blind indexes beyond each `@Sealed(.indexed)` column's
///     own, over one sealed column or several columns (``TableBlindIndex``).
///     Each gets a BLOB column of its name and an index
///     (`tableDefinition.blindIndexes` gives them to `Configuration.seal`).
///
/// ```swift
/// @Table("customer", unique: [["email_index"]], blindIndexes: [
///     .index("email_folded", on: "email", bits: 16, transformations: [.trimmed, .normalizedCaseFolded]),
///     .compound("name_born", bits: 12, parts: [.init("last_name", [.normalizedCaseFolded]), .init("birth_date", [.year])]),
/// ])
/// struct Customer {
///     @PrimaryKey var id: Int64
///     @Sealed(.indexed) var email: String
///     @Sealed var lastName: String
///     @Column("birth_date") var birthDate: Date?
/// }
///
/// config.seal(Customer.tableDefinition.sealedColumns, indexes: Customer.tableDefinition.blindIndexes, keyring: keyring)
/// let ada = try db.fetchOne(Customer.self, where: .index("email_folded", equals: "ADA@example.com"))
/// ```
@attached(extension, conformances: TableRecord, TableModel,
          names: named(databaseTableName), named(databaseColumnNames), named(init(row:)), named(encode(to:)), named(databaseSealedColumns), named(databaseRowKey),
          named(tableDefinition))
public macro Table(_ name: String? = nil, primaryKey: [String] = [], unique: [[String]] = [], blindIndexes: [TableBlindIndex] = []) =
    #externalMacro(module: "StrongroomMacrosPlugin", type: "TableMacro")

/// A blind index declared in `@Table(blindIndexes:)`: a `BlindIndex`
/// whose table is the struct's. Names, bits and `unique` are literals, which
/// the macro checks when the app compiles.
public struct TableBlindIndex: Sendable, Hashable {
    /// The index's name (its column's).
    public let name: String
    /// The columns and their transformations.
    public let parts: [BlindIndex.Part]
    /// The length, 1 to 128 bits.
    public let bits: Int
    /// Whether its SQL index is UNIQUE (128 bits only).
    public let unique: Bool

    /// An index over one column.
    public static func index(_ name: String, on column: String, bits: Int = 128, transformations: [BlindIndexTransformation] = [],
                             unique: Bool = false) -> TableBlindIndex {
        TableBlindIndex(name: name, parts: [BlindIndex.Part(column, transformations)], bits: bits, unique: unique)
    }

    /// An index over several columns.
    public static func compound(_ name: String, bits: Int = 128, parts: [BlindIndex.Part], unique: Bool = false) -> TableBlindIndex {
        TableBlindIndex(name: name, parts: parts, bits: bits, unique: unique)
    }

    /// The index, in `table`.
    public func blindIndex(in table: String) -> BlindIndex {
        BlindIndex(name, in: table, bits: bits, parts: parts, unique: unique)
    }
}

/// Marks the property holding the table's primary key (a single column).
/// An `Int64` or `Int` key is SQLite's rowid (`INTEGER PRIMARY KEY`).
@attached(peer)
public macro PrimaryKey() = #externalMacro(module: "StrongroomMacrosPlugin", type: "MarkerMacro")

/// Describes the property's column.
///
/// ```swift
/// @Column("album_id", references: "album", onDelete: .cascade) var albumID: Int64
/// @Column(type: "TEXT", default: "'draft'") var status: Status
/// ```
///
/// - Parameters:
///   - name: The column's name, if not the property's.
///   - type: The declared SQL type, if not the one the Swift type gives.
///   - unique: Whether the column is UNIQUE.
///   - default: The `DEFAULT` expression, as SQL (`"0"`, `"'draft'"`, `"CURRENT_TIMESTAMP"`).
///   - references: The table a foreign key on this column references.
///   - column: The referenced column (default: that table's primary key).
///   - onDelete: What deleting the referenced row does.
///   - onUpdate: What changing the referenced key does.
@attached(peer)
public macro Column(_ name: String? = nil, type: String? = nil, unique: Bool = false, default: String? = nil,
                    references: String? = nil, column: String? = nil,
                    onDelete: ForeignKeyAction = .noAction, onUpdate: ForeignKeyAction = .noAction) =
    #externalMacro(module: "StrongroomMacrosPlugin", type: "MarkerMacro")

/// Seals the property's column (field encryption): the value is stored as
/// an envelope that only the field keyring opens. Inserts seal it and
/// reads open it on a connection configured with the table's sealed
/// columns (`configuration.seal(Customer.tableDefinition.sealedColumns, keyring: keyring)`).
/// Its column is declared `BLOB`, whatever the property's type.
///
/// - Parameters:
///   - mode: How it is sealed (randomized by default).
///   - indexColumn: For `SealingMode.indexed`: the
///     companion column of the blind index (default: the column's name
///     followed by `_index`), which the table gets, with an index.
///   - unique: For `SealingMode.indexed`: makes the blind index's index
///     UNIQUE, so that no two rows hold the same value (an insert of a
///     second one fails with `StrongroomError.Code.uniqueConstraint`). A
///     blind index is equal for equal values, where randomized envelopes
///     never are: `unique` on a randomized column is a compile error, and so
///     is it on a deterministic one, whose envelopes are equal for equal
///     values: give that column `@Column(unique: true)` instead. A blind
///     index is computed under a field key: between `fields activate` and
///     the end of `fields rotate`, check other keys' indexes too (the
///     "Serving requests" article).
///
/// ```swift
/// @Sealed(.indexed, unique: true) var email: String   // one customer per address
/// ```
@attached(peer)
public macro Sealed(_ mode: SealingMode = .randomized, indexColumn: String? = nil, unique: Bool = false) =
    #externalMacro(module: "StrongroomMacrosPlugin", type: "MarkerMacro")

/// Indexes the property's column (`CREATE INDEX table_column ON table(column)`).
///
/// - Parameters:
///   - name: The index's name, if not `table_column`.
///   - unique: Whether it is a UNIQUE index.
@attached(peer)
public macro Indexed(_ name: String? = nil, unique: Bool = false) =
    #externalMacro(module: "StrongroomMacrosPlugin", type: "MarkerMacro")

/// Leaves a stored property out of the table: it is not read or written,
/// and keeps its initial value in records read from the database.
@attached(peer)
public macro Ignored() = #externalMacro(module: "StrongroomMacrosPlugin", type: "MarkerMacro")
