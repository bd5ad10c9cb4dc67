/// A property that holds a sealed value, as the application declares it:
/// the table and column the value was sealed in, and the properties that
/// hold the row key it was sealed with.
///
/// A read opens a value only into a property declared this way (by a
/// ``SealedRecord``, or a ``TableRecord``'s ``TableRecord/databaseSealedColumns``),
/// or into a ``Row`` fetched with ``Connection/fetchAll(sql:arguments:opening:)``.
/// The declaration is compiled into the app: nothing in the database (its
/// schema, the table a result column comes from, a column's name, the
/// registry) decides which value opens, under which row key, or into which
/// property. A value opens only when it authenticates under exactly this
/// binding, with the row key the record itself holds; anything else fails
/// the read, and an undeclared property holds the stored envelope bytes.
///
/// ```swift
/// // Property `email` holds customer.email, sealed bound to customer's row
/// // key, which the configuration declares (rowKeys: ["customer": ["id"]])
/// // and the record holds in its property `id`.
/// SealedProperty("email", of: "customer")
///
/// // A record over a join: the customer's key is in property `customerID`.
/// SealedProperty("email", of: "customer", rowKey: ["customerID"])
///
/// // Under another name: property `contact` holds customer.email.
/// SealedProperty("contact", of: "customer", column: "email", rowKey: ["customerID"])
/// ```
public struct SealedProperty: Sendable, Hashable, CustomStringConvertible {
    /// The property: its coding key, which is the name of the result
    /// column it is read from.
    public let name: String
    /// The table the value was sealed in.
    public let table: String
    /// The column of ``table`` the value was sealed in.
    public let column: String
    /// The properties that hold the row key the value was sealed with, in
    /// the order of the table's row key; nil: the row key the connection
    /// declares for ``table`` (`Configuration.seal(…, rowKeys:)` in
    /// StrongroomFields), read from the properties named after its columns.
    /// Ignored for a column sealed bound to no row (deterministic).
    public let rowKey: [String]?

    /// Property `name` holds `table.column` (`column` defaults to `name`),
    /// sealed with the row key held in the properties `rowKey`.
    public init(_ name: String, of table: String, column: String? = nil, rowKey: [String]? = nil) {
        self.name = name
        self.table = table
        self.column = column ?? name
        self.rowKey = rowKey
    }

    /// Equal when every name is the same, byte for byte (as SQLite compares
    /// names: Swift's `==` takes an NFC and an NFD spelling, two columns to
    /// SQLite, for one string).
    public static func == (a: SealedProperty, b: SealedProperty) -> Bool {
        ExactText(a.name) == ExactText(b.name) && ExactText(a.table) == ExactText(b.table) && ExactText(a.column) == ExactText(b.column)
            && a.rowKey?.map(ExactText.init) == b.rowKey?.map(ExactText.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactText(name))
        hasher.combine(ExactText(table))
        hasher.combine(ExactText(column))
        hasher.combine(rowKey?.map(ExactText.init))
    }

    /// `email (customer.email, row key id)`: the property, and the binding it
    /// declares.
    public var description: String {
        "\(name) (\(table).\(column)\(rowKey.map { ", row key \($0.joined(separator: ", "))" } ?? ""))"
    }
}

/// A type whose properties hold sealed values: it declares, for each one,
/// where the value was sealed (``SealedProperty``). Reads of it
/// (`fetchAll(Customer.self, sql: …)`, `fetchOne`, a cursor, a lookup by
/// blind index) open exactly those properties, and hand every other
/// property the value as stored.
///
/// ```swift
/// struct Customer: Codable, SealedRecord {
///     var id: Int64?
///     var email: String
///     var phone: String?
///     static let sealedProperties = [SealedProperty("email", of: "customer"),
///                                    SealedProperty("phone", of: "customer")]
/// }
///
/// // A record over a join names the customer's key property.
/// struct OrderLine: Codable, SealedRecord {
///     var orderID: Int64
///     var customerID: Int64
///     var email: String
///     static let sealedProperties = [SealedProperty("email", of: "customer", rowKey: ["customerID"])]
/// }
/// let lines = try db.fetchAll(OrderLine.self, sql: """
///     SELECT o.id AS orderID, c.id AS customerID, c.email FROM orders o JOIN customer c ON c.id = o.customer
///     """)
/// ```
///
/// A read fails, and opens nothing, when a declared property's column
/// appears twice in the result (a join's `SELECT *`: whoever holds the
/// database key can add a plain column of that name to a joined table),
/// when the result lacks a row-key property of a selected sealed one, or
/// when the connection does not seal the declared column. A wrong
/// declaration fails on the first honest row.
public protocol SealedRecord {
    /// The properties that hold sealed values, and where each was sealed.
    static var sealedProperties: [SealedProperty] { get }
}

extension TableRecord {
    /// The sealed properties a read of this record opens: its own
    /// ``SealedRecord/sealedProperties`` when it declares them (a record over
    /// a view or a join), else each of ``databaseSealedColumns`` as a column
    /// of ``databaseTableName`` under its own name, with the row key
    /// ``databaseRowKey`` (or the connection's, when that is empty).
    static var declaredSealedProperties: [SealedProperty] {
        if let declared = Self.self as? any SealedRecord.Type { return declared.sealedProperties }
        let rowKey = databaseRowKey.isEmpty ? nil : databaseRowKey
        return databaseSealedColumns.map { SealedProperty($0, of: databaseTableName, rowKey: rowKey) }
    }
}

/// The sealed properties a `Decodable` type declares: nil for none.
func declaredSealedProperties<T>(of type: T.Type) -> [SealedProperty]? {
    if let declared = T.self as? any SealedRecord.Type { return declared.sealedProperties }
    if let record = T.self as? any TableRecord.Type, !record.databaseSealedColumns.isEmpty { return record.declaredSealedProperties }
    return nil
}
