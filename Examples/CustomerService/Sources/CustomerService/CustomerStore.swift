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
    /// True while the keyring holds more than one key: only then can rows hold
    /// indexes under different keys, which the UNIQUE index cannot compare. With
    /// one key the index alone refuses a duplicate, and a create runs no check.
    /// (A lookup by the blind index searches under every key of the keyring,
    /// rows not yet rotated included.)
    let checksAcrossKeys: Bool

    struct Settings: Sendable {
        var path: String
        /// nil: a plaintext database file (a benchmark peer); sealed columns stay sealed.
        var key: DatabaseKey?
        var keyring: FieldKeyring
        var migrations: [Migration]
        var readers = 4
        var cacheSizeKiB = 65_536
        var maximumWaiters = 256
        var maximumWait: Duration = .seconds(2)
        /// Group commit (Configuration.groupsAsyncWrites).
        var groupsWrites = true
        var lockTimeout: Duration = .seconds(30)
    }

    private init(pool: DatabasePool, logger: Logger, keyIDs: [UInt32]) {
        self.pool = pool
        self.logger = logger
        checksAcrossKeys = keyIDs.count > 1
    }

    /// Opens the pool, applies the pending migrations under the migration lock
    /// (a second instance started at the same moment waits, then finds
    /// nothing to do), records the sealed columns and checks the schema.
    static func open(_ settings: Settings, logger: Logger) async throws -> CustomerStore {
        var configuration = settings.key.map { Configuration(key: $0) } ?? .plaintext
        configuration.maximumReaderCount = settings.readers
        configuration.cacheSizeKiB = settings.cacheSizeKiB
        configuration.maximumWaiters = settings.maximumWaiters
        configuration.maximumWait = settings.maximumWait
        // Creates and updates that wait for the writer together share one
        // transaction; each request still gets its own answer, after the
        // COMMIT (group commit). The store's write closures touch nothing
        // but the database, so they run without a savepoint each (whose
        // pages SQLCipher would encrypt once more): a failed one (a
        // duplicate e-mail) rolls the transaction back, and the writes
        // before it run again.
        configuration.groupsAsyncWrites = settings.groupsWrites
        configuration.groupedWriteUndo = .runningTheOthersAgain
        configuration.logger = logger
        configuration.seal(Customer.schema, keyring: settings.keyring)
        let pool = try DatabasePool(path: settings.path, configuration: configuration)
        do {
            var migrator = try Migrator(migrations: settings.migrations)
            migrator.logger = logger
            migrator.lockTimeout = settings.lockTimeout
            // The registry rows its migrations write carry the keyring's signature.
            migrator.fieldKeyring = settings.keyring
            let report = try await migrator.asyncMigrate(pool)
            logger.info("migrated", metadata: ["from": "\(report.fromVersion)", "to": "\(report.toVersion)", "applied": "\(report.applied.count)"])
            try await pool.asyncWrite { [keyring = settings.keyring] db in
                if try SealedColumnRegistry.columns(in: db).count < Customer.schema.sealedColumns.count {
                    try SealedColumnRegistry.record(Customer.schema.sealedColumns, keyring: keyring, in: db)
                }
                // A key just activated (`strongroom fields activate`) is known to
                // the database from now on, before a write seals under it.
                try FieldKeyCheck.recordActiveKey(of: keyring, in: db)
            }
            try await pool.asyncRead { db in try Customer.schema.validate(db) }
        } catch {
            try? await pool.asyncClose()
            throw error
        }
        return CustomerStore(pool: pool, logger: logger, keyIDs: settings.keyring.keyIDs)
    }

    func create(_ input: CustomerInput) async throws -> Customer {
        let customer = Customer(id: nil, name: input.name!, email: input.email!, note: input.note ?? nil, country: input.country ?? nil)
        return try await pool.asyncWrite { [customer, checksAcrossKeys] db in
            // In the write transaction: no other write runs between the check and the insert.
            if checksAcrossKeys, try db.fetchOne(Customer.self, where: .index("email_index", equals: customer.email)) != nil {
                throw Self.duplicateEmail
            }
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
    /// blind index, under every key of the keyring: no row is opened to search.
    func customer(email: String) async throws -> Customer? {
        try await pool.asyncRead { db in
            try db.fetchOne(Customer.self, where: .index("email_index", equals: email))
        }
    }

    /// Up to `limit` customers with ids above `after`, in id order (keyset
    /// pagination: each page is one index range, however deep).
    func customers(after: Int64, limit: Int) async throws -> [Customer] {
        try await pool.asyncRead { db in
            try db.fetchAll(Customer.self, sql: "SELECT * FROM customer WHERE id > ? ORDER BY id LIMIT ?", arguments: [after, limit])
        }
    }

    /// Changes the given fields; nil when there is no such customer.
    /// `update` seals the record's sealed fields again in Swift, bound to the
    /// row's id, and computes the e-mail's blind index with them.
    func update(id: Int64, _ input: CustomerInput) async throws -> Customer? {
        try await pool.asyncWrite { [checksAcrossKeys] db in
            guard var customer = try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [id]) else { return nil }
            if checksAcrossKeys, let email = input.email,
               let other = try db.fetchOne(Customer.self, where: .index("email_index", equals: email)), other.id != id {
                throw Self.duplicateEmail
            }
            if let name = input.name { customer.name = name }
            if let country = input.country { customer.country = country }
            if let note = input.note { customer.note = note }
            if let email = input.email { customer.email = email }
            try db.update(customer)
            return customer
        }
    }

    /// What a second customer with the same e-mail gets (409), as from the UNIQUE index.
    static let duplicateEmail = StrongroomError(.uniqueConstraint, "A customer with this e-mail address already exists.")

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
