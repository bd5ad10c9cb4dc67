import Foundation
import GRDB
import Logging

/// The service's data: a plaintext database in WAL mode behind GRDB's
/// `DatabasePool` (one writer, several readers), migrated at start with a
/// `DatabaseMigrator`. Every call uses GRDB's async `read` and `write`.
final class CustomerStore: Sendable {
    let pool: DatabasePool

    private init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Opens the pool and applies the pending migrations.
    static func open(path: String, readers: Int, logger: Logger) throws -> CustomerStore {
        var configuration = Configuration()
        configuration.maximumReaderCount = readers
        let pool = try DatabasePool(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("createCustomer") { db in
            try db.create(table: "customer") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
                t.column("email", .text).notNull().unique()
                t.column("note", .text)
                t.column("country", .text)
            }
        }
        try migrator.migrate(pool)
        let applied = try pool.read { db in try migrator.appliedIdentifiers(db) }
        logger.info("migrated", metadata: ["applied": "\(applied.sorted())"])
        return CustomerStore(pool: pool)
    }

    func create(_ input: CustomerInput) async throws -> Customer {
        let customer = Customer(id: nil, name: input.name!, email: input.email!, note: input.note ?? nil, country: input.country ?? nil)
        return try await pool.write { db in
            try customer.inserted(db)
        }
    }

    func customer(id: Int64) async throws -> Customer? {
        try await pool.read { db in
            try Customer.fetchOne(db, key: id)
        }
    }

    /// The customer with this (normalized) e-mail address, through the
    /// column's UNIQUE index.
    func customer(email: String) async throws -> Customer? {
        try await pool.read { db in
            try Customer.filter(Customer.Columns.email == email).fetchOne(db)
        }
    }

    /// Up to `limit` customers with ids above `after`, in id order.
    func customers(after: Int64, limit: Int) async throws -> [Customer] {
        try await pool.read { db in
            try Customer.filter(Customer.Columns.id > after).order(Customer.Columns.id).limit(limit).fetchAll(db)
        }
    }

    /// Changes the given fields; nil when there is no such customer.
    func update(id: Int64, _ input: CustomerInput) async throws -> Customer? {
        try await pool.write { db in
            guard var customer = try Customer.fetchOne(db, key: id) else { return nil }
            if let name = input.name { customer.name = name }
            if let country = input.country { customer.country = country }
            if let note = input.note { customer.note = note }
            if let email = input.email { customer.email = email }
            try customer.update(db)
            return customer
        }
    }

    /// Deletes the customer; false when there was none.
    func delete(id: Int64) async throws -> Bool {
        try await pool.write { db in
            try Customer.deleteOne(db, key: id)
        }
    }

    /// True when a reader answers.
    func isReady() async -> Bool {
        (try? await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    /// At shutdown, once no request runs: copies the WAL into the database
    /// and truncates it, then closes the pool.
    func close() async throws {
        _ = try await pool.writeWithoutTransaction { db in
            try db.checkpoint(.truncate)
        }
        try pool.close()
    }
}
