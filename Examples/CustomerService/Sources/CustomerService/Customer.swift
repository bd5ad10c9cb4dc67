import StrongroomMacros

/// A customer, as stored: one declaration gives the table's columns, the
/// sealed ones, reading and writing rows, and the schema the database is
/// checked against at start (``CustomerStore/open(_:)``).
@Table("customer")
struct Customer: Sendable, Equatable {
    /// Assigned by SQLite on insert (`INTEGER PRIMARY KEY`).
    @PrimaryKey var id: Int64?
    var name: String
    /// Sealed, randomized, with a UNIQUE blind index (`email_index`): found by
    /// value, unreadable without the field keyring, never two alike.
    @Sealed(.indexed, unique: true) var email: String
    /// Sealed, randomized: free text that may hold anything personal.
    @Sealed var note: String?
    var country: String?
}

extension Customer {
    /// The tables the service's migrations must produce.
    static let schema = DatabaseSchema(Customer.self)
}
