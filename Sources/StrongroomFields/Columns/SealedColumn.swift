import Strongroom

/// One sealed column: where it is, and how it is sealed.
///
/// ```swift
/// let columns: [SealedColumn] = [
///     .randomized("phone", in: "customer"),
///     .deterministic("country", in: "customer"),
///     .indexed("email", in: "customer", indexColumn: "email_index"),
/// ]
/// ```
public struct SealedColumn: Sendable, Hashable, Codable {
    /// The table, as the schema names it.
    public let table: String
    /// The sealed column.
    public let column: String
    /// How its values are sealed.
    public let mode: SealingMode
    /// For ``SealingMode/indexed``: the companion BLOB column that holds the
    /// blind index (declare it in a migration, with an index on it).
    public let indexColumn: String?

    /// A sealed column; prefer ``randomized(_:in:)``, ``deterministic(_:in:)`` and ``indexed(_:in:indexColumn:)``.
    public init(table: String, column: String, mode: SealingMode, indexColumn: String? = nil) {
        self.table = table
        self.column = column
        self.mode = mode
        self.indexColumn = indexColumn
    }

    /// AES-256-GCM, bound to the row: the default.
    public static func randomized(_ column: String, in table: String) -> SealedColumn {
        SealedColumn(table: table, column: column, mode: .randomized)
    }

    /// AES-256-SIV: equal values seal equally, for `WHERE column = ?` lookups.
    public static func deterministic(_ column: String, in table: String) -> SealedColumn {
        SealedColumn(table: table, column: column, mode: .deterministic)
    }

    /// Randomized, plus a blind index in `indexColumn`.
    public static func indexed(_ column: String, in table: String, indexColumn: String) -> SealedColumn {
        SealedColumn(table: table, column: column, mode: .indexed, indexColumn: indexColumn)
    }
}

extension SealedColumn {
    /// True when both name one column, as SQLite compares names.
    func names(sameColumnAs other: SealedColumn) -> Bool {
        table.sqliteFolded == other.table.sqliteFolded && column.sqliteFolded == other.column.sqliteFolded
    }
}
