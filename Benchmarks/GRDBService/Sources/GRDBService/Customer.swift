import GRDB

/// A customer, as stored: a GRDB record (Codable, fetched and persisted by
/// GRDB), in a plaintext `customer` table.
struct Customer: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "customer"

    /// Assigned by SQLite on insert (`INTEGER PRIMARY KEY`).
    var id: Int64?
    var name: String
    /// UNIQUE: never two customers with one address.
    var email: String
    var note: String?
    var country: String?

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let email = Column(CodingKeys.email)
    }

    /// The id SQLite assigned.
    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
