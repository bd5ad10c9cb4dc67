import Foundation
import Logging
import StrongroomMacros

/// The service's data: an encrypted database in WAL mode behind a
/// ``DatabasePool`` (one writer, several readers), its `customer` table
/// migrated and checked against ``Customer`` at start, e-mail and note
/// sealed with the field keyring.
///
/// Every call is async and waits for a connection without holding a thread
/// of the cooperative pool; a request whose client goes away is cancelled,
/// and its statement interrupted.
final class CustomerStore: Sendable {
    let pool: DatabasePool
    let logger: Logger

    struct Settings: Sendable {
        var path: String
        /// nil: a plaintext database file (a benchmark peer); sealed columns stay sealed.
        var key: DatabaseKey?
        var keyring: FieldKeyring
        var migrations: [Migration]
        var readers = 4
        var maximumWaiters = 256
        var maximumWait: Duration = .seconds(2)
    }

    private init(pool: DatabasePool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Opens the pool, applies the pending migrations under the migration lock
    /// (a second instance started at the same moment waits, then finds
    /// nothing to do), records the sealed columns and checks the schema.
    static func open(_ settings: Settings, logger: Logger) async throws -> CustomerStore {
        var configuration = settings.key.map { Configuration(key: $0) } ?? .plaintext
        configuration.maximumReaderCount = settings.readers
        configuration.maximumWaiters = settings.maximumWaiters
        configuration.maximumWait = settings.maximumWait
        configuration.logger = logger
        configuration.seal(Customer.schema.sealedColumns, keyring: settings.keyring)
        let pool = try DatabasePool(path: settings.path, configuration: configuration)
        do {
            var migrator = try Migrator(migrations: settings.migrations)
            migrator.logger = logger
            let report = try await migrator.asyncMigrate(pool)
            logger.info("migrated", metadata: ["from": "\(report.fromVersion)", "to": "\(report.toVersion)", "applied": "\(report.applied.count)"])
            try await pool.asyncWrite { db in
                if try SealedColumnRegistry.columns(in: db).count < Customer.schema.sealedColumns.count {
                    try SealedColumnRegistry.record(Customer.schema.sealedColumns, in: db)
                }
            }
            try await pool.asyncRead { db in try Customer.schema.validate(db) }
        } catch {
            try? await pool.asyncClose()
            throw error
        }
        return CustomerStore(pool: pool, logger: logger)
    }

    func create(_ input: CustomerInput) async throws -> Customer {
        let customer = Customer(id: nil, name: input.name!, email: input.email!, note: input.note ?? nil, country: input.country ?? nil)
        return try await pool.asyncWrite { [customer] db in
            var stored = customer
            try db.insert(customer)
            stored.id = db.lastInsertedRowID
            return stored
        }
    }

    func customer(id: Int64) async throws -> Customer? {
        try await pool.asyncRead { db in
            try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [id])
        }
    }

    /// The customer with this (normalized) e-mail address, found through the
    /// blind index: no row is opened to search.
    func customer(email: String) async throws -> Customer? {
        try await pool.asyncRead { db in
            try db.fetchAll(Customer.self, sql: "SELECT * FROM customer WHERE email_index = strongroom_blind_index(?, 'customer', 'email')",
                            arguments: [email])
                .first { $0.email == email }
        }
    }

    /// Up to `limit` customers with ids above `after`, in id order (keyset
    /// pagination: each page is one index range, however deep).
    func customers(after: Int64, limit: Int) async throws -> [Customer] {
        try await pool.asyncRead { db in
            try db.fetchAll(Customer.self, sql: "SELECT * FROM customer WHERE id > ? ORDER BY id LIMIT ?", arguments: [after, limit])
        }
    }

    /// Changes the given fields; nil when there is no such customer. Sealed
    /// fields are sealed again in the statement (`strongroom_seal`, bound to
    /// the row's id), the e-mail's blind index with them.
    func update(id: Int64, _ input: CustomerInput) async throws -> Customer? {
        try await pool.asyncWrite { db in
            guard var customer = try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [id]) else { return nil }
            if let name = input.name { customer.name = name }
            if let country = input.country { customer.country = country }
            if let note = input.note { customer.note = note }
            if let email = input.email { customer.email = email }
            try db.execute(sql: """
                UPDATE customer SET name = ?2, country = ?3,
                       note = strongroom_seal(?4, 'customer', 'note', 'randomized', id),
                       email = strongroom_seal(?5, 'customer', 'email', 'indexed', id),
                       email_index = strongroom_blind_index(?5, 'customer', 'email')
                 WHERE id = ?1
                """, arguments: [id, customer.name, customer.country, customer.note, customer.email])
            return customer
        }
    }

    /// Deletes the customer; false when there was none.
    func delete(id: Int64) async throws -> Bool {
        try await pool.asyncWrite { db in
            try db.execute(sql: "DELETE FROM customer WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// True when a reader answers: the pool is open and the database readable.
    func isReady() async -> Bool {
        (try? await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT 1") }) == 1
    }

    /// At shutdown, once no request runs: copies the WAL into the database
    /// and truncates it.
    func checkpoint() async throws {
        try await pool.asyncWriteWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Closes every connection of the pool.
    func close() async throws {
        try await pool.asyncClose()
    }
}
