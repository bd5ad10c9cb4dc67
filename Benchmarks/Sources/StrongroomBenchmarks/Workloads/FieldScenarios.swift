import CBenchmarkLoops
import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields

/// Sealed columns (issue 8), each run measured by the runner like any other
/// contender: sealing and opening values, the AES-GCM primitive against
/// `openssl speed`, reads of sealed rows, a sealed import, and lookups by a
/// deterministic sealed column and by a blind index.
enum FieldScenarios {
    /// Seals (or opens) `values` 32-byte values with `cipher`, in `mode`,
    /// each bound to its own row; returns the seconds.
    static func sealValues(_ cipher: FieldCipher, values: Int, mode: SealingMode) throws -> Double {
        let value = DatabaseValue.blob((0..<32).map { UInt8($0) })
        var bytes = 0
        let elapsed = try seconds {
            for i in 0..<values {
                if case .blob(let envelope) = try cipher.seal(value, table: "t", column: "c", rowKey: [.integer(Int64(i))], mode: mode) {
                    bytes &+= envelope.count
                }
            }
        }
        guard bytes > values * 32 else { throw BenchmarkError("sealing produced no envelopes") }
        return elapsed
    }

    /// The envelopes `openValues` opens: `values` of them, sealed by `cipher`.
    static func envelopes(_ cipher: FieldCipher, values: Int, mode: SealingMode) throws -> [DatabaseValue] {
        let value = DatabaseValue.blob((0..<32).map { UInt8($0) })
        return try (0..<values).map { i in try cipher.seal(value, table: "t", column: "c", rowKey: [.integer(Int64(i))], mode: mode) }
    }

    /// Opens every envelope (sealed for row `i` at index `i`); returns the seconds.
    static func openValues(_ cipher: FieldCipher, _ envelopes: [DatabaseValue], mode: SealingMode) throws -> Double {
        var bytes = 0
        let elapsed = try seconds {
            for (i, envelope) in envelopes.enumerated() {
                if case .blob(let plain) = try cipher.open(envelope, table: "t", column: "c", rowKey: [.integer(Int64(i))], mode: mode) {
                    bytes &+= plain.count
                }
            }
        }
        guard bytes == envelopes.count * 32 else { throw BenchmarkError("opening gave back \(bytes) bytes, expected \(envelopes.count * 32)") }
        return elapsed
    }

    /// Seconds per AES-256-GCM seal of a 64-byte block through our
    /// primitive (the context reused, as FieldCipher does), over `count` seals.
    static func primitiveSeal(count: Int) throws -> Double {
        let gcm = try AESGCM(key: SecureBytes(randomCount: AESGCM.keyByteCount))
        let plaintext = [UInt8](repeating: 7, count: 64)
        var ciphertext = [UInt8](repeating: 0, count: 64)
        var nonce = [UInt8](repeating: 0, count: 12), tag = [UInt8](repeating: 0, count: 16)
        let elapsed = try seconds {
            try plaintext.withUnsafeBytes { p in try ciphertext.withUnsafeMutableBytes { c in
                try nonce.withUnsafeMutableBytes { n in try tag.withUnsafeMutableBytes { t in
                    for _ in 0..<count { try gcm.seal(p, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), nonce: n, ciphertext: c, tag: t) }
                } }
            } }
        }
        guard ciphertext != plaintext else { throw BenchmarkError("AES-GCM wrote nothing") }
        return elapsed / Double(count)
    }

    /// Seconds per seal of a 64-byte message by the same loop in C on the
    /// same libcrypto.
    static func cSeal(count: Int) throws -> Double {
        var checksum: Int64 = 0
        let perSeal = c_gcm_seal_64(Int64(count), &checksum)
        guard perSeal > 0, checksum != 0 else { throw BenchmarkError("the C AES-GCM loop failed") }
        return perSeal
    }

    /// Seconds per AES-256-GCM message of 64 bytes by
    /// `openssl speed -evp aes-256-gcm -aead` (same machine, same run):
    /// with `-aead` each message is a whole AEAD operation (nonce, update,
    /// tag), as a seal is; without it, `openssl speed` only times updates
    /// of one running message.
    static func opensslSeal() throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["speed", "-evp", "aes-256-gcm", "-aead", "-bytes", "64", "-seconds", "1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // "AES-256-GCM     141061.44k": thousands of bytes per second.
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("AES-256-GCM") }),
              let field = line.split(separator: " ").last, field.hasSuffix("k"),
              let kilobytes = Double(field.dropLast()), kilobytes > 0 else {
            throw BenchmarkError("openssl speed gave no AES-256-GCM figure")
        }
        return 64 / (kilobytes * 1000)
    }

    struct Person: Codable { let id: Int64; let email: String; let phone: String; let score: Double }
    /// The same person, its e-mail and phone declared sealed (opened on a read).
    struct SealedPerson: Codable, SealedRecord {
        let id: Int64; let email: String; let phone: String; let score: Double
        static let sealedProperties = [SealedProperty("email", of: "person"), SealedProperty("phone", of: "person")]
    }

    /// A queue on a new file of `rows` people, their e-mail and phone sealed
    /// (randomized) when `keyring` is given.
    /// With `signed`, the rows are signed too (``SignedRow``), over `score`
    /// and the two sealed columns, in `row_signature`.
    static func people(path: String, rows: Int, keyring: FieldKeyring?, signed: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path, configuration: peopleConfiguration(keyring: keyring, signed: signed))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, email, phone, score REAL, row_signature BLOB)")
            try insertPeople(db, from: 0, count: rows)
        }
        return queue
    }

    /// Seconds for `rows` creates as a service makes them: each its own
    /// IMMEDIATE transaction, a person with an indexed (blind-indexed)
    /// e-mail and a randomized phone (`--profile create-sealed`).
    static func sealedCreates(path: String, rows: Int) throws -> Double {
        var config = Configuration(key: .generate())
        config.seal([.indexed("email", in: "person", indexColumn: "email_index"), .randomized("phone", in: "person")],
                    keyring: FieldKeyring.generate(), rowKeys: ["person": ["id"]])
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, email BLOB, email_index BLOB UNIQUE, phone BLOB, score REAL)")
        }
        struct NewPerson: Encodable { let email: String; let phone: String; let score: Double }
        return try seconds {
            for i in 0..<rows {
                try queue.inTransaction(.immediate) { db, _ in
                    try db.insert(NewPerson(email: "person\(i)@example.com", phone: "+1 555 01\(i % 100)", score: Double(i)), into: "person")
                }
            }
        }
    }

    static func peopleConfiguration(keyring: FieldKeyring?, signed: Bool) -> Configuration {
        var config = Configuration(key: .generate())
        if let keyring {
            config.seal([.randomized("email", in: "person"), .randomized("phone", in: "person")], keyring: keyring, rowKeys: ["person": ["id"]],
                        signedRows: signed ? [SignedRow("person", columns: ["score"])] : [])
        }
        return config
    }

    static func insertPeople(_ db: Connection, from first: Int, count: Int) throws {
        for i in first..<(first + count) {
            try db.insert(Person(id: Int64(i + 1), email: "person\(i)@example.com", phone: "+1 555 01\(i % 100)", score: Double(i)), into: "person")
        }
    }

    /// Seconds to insert `count` more people in one transaction (deleted
    /// again after, outside the time).
    static func insertMorePeople(_ queue: DatabaseQueue, rows: Int, count: Int) throws -> Double {
        let elapsed = try queue.write { db in try seconds { try insertPeople(db, from: rows, count: count) } }
        try queue.write { db in try db.execute(sql: "DELETE FROM person WHERE id > ?", arguments: [rows]) }
        return elapsed
    }

    /// Reads every person: as a ``SealedPerson`` from a `sealed` file.
    static func readPeople(_ queue: DatabaseQueue, rows: Int, sealed: Bool) throws -> Double {
        var count = 0
        // The signature too (NULL but on the signed file, where each row's is checked).
        let sql = "SELECT id, email, phone, score, row_signature FROM person"
        let elapsed = try seconds {
            count = try queue.read { db in sealed ? try db.fetchAll(SealedPerson.self, sql: sql).count : try db.fetchAll(Person.self, sql: sql).count }
        }
        guard count == rows else { throw BenchmarkError("read \(count) people, expected \(rows)") }
        return elapsed
    }

    /// How `sealedUpdates` writes a phone number.
    enum SealedUpdate: CaseIterable {
        /// `Connection.update(_:in:)` on the sealed file: the phone sealed
        /// in Swift, bound to the row's id, inside a savepoint-free UPDATE.
        case updateSealed
        /// `Connection.update(_:in:)` on the plain file: the same call, nothing sealed.
        case updatePlain
        /// The envelope made with the cipher and bound to a cached UPDATE
        /// by hand: the floor under `update` for the sealing itself.
        case sealedByHand

        var name: String {
            switch self {
            case .updateSealed: "update(_:in:), phone sealed"
            case .updatePlain: "update(_:in:), plain file"
            case .sealedByHand: "envelope made and bound by hand"
            }
        }
    }

    struct PhoneChange: Encodable { let id: Int64; let phone: String }

    /// `updates` phones of `rows` people written again (one transaction),
    /// `how` says how, on `sealed` or `plain`; returns the seconds.
    static func sealedUpdates(sealed: DatabaseQueue, plain: DatabaseQueue, cipher: FieldCipher, how: SealedUpdate, rows: Int, updates: Int) throws -> Double {
        switch how {
        case .updateSealed, .updatePlain:
            return try (how == .updateSealed ? sealed : plain).write { db in
                try seconds {
                    for i in 0..<updates { try db.update(PhoneChange(id: Int64(i % rows + 1), phone: "+1 555 02\(i % 100)"), in: "person") }
                }
            }
        case .sealedByHand:
            return try sealed.write { db in
                let update = try db.cachedStatement(sql: "UPDATE person SET phone = ? WHERE id = ?")
                return try seconds {
                    for i in 0..<updates {
                        let id = Int64(i % rows + 1)
                        let envelope = try cipher.seal(.text("+1 555 02\(i % 100)"), table: "person", column: "phone", rowKey: [.integer(id)], mode: .randomized)
                        try update.execute(arguments: [envelope, DatabaseValue.integer(id)])
                    }
                }
            }
        }
    }

    /// `reads` first reads of a sealed row: each statement prepared anew
    /// (not cached), so each works out which columns it opens, and checks
    /// how it reads them, again; returns the seconds.
    static func firstReads(_ queue: DatabaseQueue, rows: Int, reads: Int, sealed: Bool) throws -> Double {
        var found = 0
        let elapsed = try seconds {
            try queue.read { db in
                for i in 0..<reads {
                    let statement = try db.prepare(sql: "SELECT id, email, phone, score FROM person WHERE id = ?")
                    let arguments: StatementArguments = [DatabaseValue.integer(Int64(i % rows + 1))]
                    let row = sealed ? try statement.fetchOne(SealedPerson.self, arguments: arguments) != nil : try statement.fetchOne(Person.self, arguments: arguments) != nil
                    if row { found += 1 }
                }
            }
        }
        guard found == reads else { throw BenchmarkError("first reads found \(found) of \(reads) people") }
        return elapsed
    }

    /// The Chinook sample shipped with the examples.
    static let chinook = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../../Examples/chinook.sqlite").standardized.path

    /// Imports Chinook into `out`, sealing five personal columns when
    /// `keyring` is given; returns the seconds.
    static func importChinook(to out: String, keyring: FieldKeyring?) throws -> Double {
        let columns: [SealedColumn] = [
            .indexed("Email", in: "Customer", indexColumn: "Email_blind_index"), .randomized("Phone", in: "Customer"),
            .randomized("Address", in: "Customer"), .randomized("BirthDate", in: "Employee"), .deterministic("Country", in: "Customer"),
        ]
        for suffix in ["", "-wal", "-shm"] { unlink(out + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { unlink(out + suffix) } }
        let key = DatabaseKey.generate()
        func seal(_ db: Connection) throws(StrongroomError) {
            guard let keyring else { return }
            do {
                try db.inTransaction(.immediate) { db in try ColumnSealing.sealInPlace(columns, keyring: keyring, in: db) }
            } catch {
                throw StrongroomError(.sealedValue, "\(error)")
            }
        }
        return try seconds {
            _ = try PlaintextConversion.importPlaintext(from: chinook, to: out, key: key, finishing: keyring == nil ? nil : seal)
        }
    }

    /// How a customer is found by e-mail in `lookupCustomers`.
    enum Lookup: CaseIterable {
        /// A plaintext column with an index: the floor.
        case plaintext
        /// The e-mail sealed deterministically (AES-SIV) with an index on
        /// the envelope: `fetchOne(_:where: .column(…))` seals the value once
        /// per lookup and key, in Swift, and binds it.
        case deterministic
        /// The e-mail sealed randomized, found through its blind index
        /// (HMAC) column with an index: `fetchOne(_:where: .index(…))`
        /// computes the hash once per lookup and key, in Swift.
        case blindIndex
    }

    struct Customer: Codable { let id: Int64; let email: String; let phone: String }
    /// The same customer, its sealed columns declared: e-mail and phone.
    struct SealedCustomer: Codable, SealedRecord {
        let id: Int64; let email: String; let phone: String
        static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer")]
    }

    /// A queue on a new file of `rows` customers whose e-mail is stored as
    /// `lookup` needs it (the phone is sealed randomized in both sealed forms).
    static func customers(path: String, rows: Int, keyring: FieldKeyring, lookup: Lookup) throws -> DatabaseQueue {
        var config = Configuration(key: .generate())
        switch lookup {
        case .plaintext: break
        case .deterministic: config.seal([.deterministic("email", in: "customer"), .randomized("phone", in: "customer")], keyring: keyring, rowKeys: ["customer": ["id"]])
        case .blindIndex: config.seal([.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("phone", in: "customer")], keyring: keyring, rowKeys: ["customer": ["id"]])
        }
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email, phone, email_index)")
            for i in 0..<rows {
                try db.insert(Customer(id: Int64(i + 1), email: "customer\(i)@example.com", phone: "+1 555 01\(i % 100)"), into: "customer")
            }
            try db.execute(sql: lookup == .blindIndex ? "CREATE INDEX customer_email_index ON customer(email_index)" : "CREATE INDEX customer_email ON customer(email)")
        }
        return queue
    }

    /// `lookups` customers found by e-mail (drawn with seed 7, each a read
    /// of its own), their sealed columns opened; returns the seconds.
    static func lookupCustomers(_ queue: DatabaseQueue, lookup: Lookup, rows: Int, lookups: Int) throws -> Double {
        var random = SplitMix64(seed: 7)
        let emails = (0..<lookups).map { _ in "customer\(Int(random.next() % UInt64(rows)))@example.com" }
        var found = 0
        let elapsed = try seconds {
            for email in emails {
                let found1 = try queue.read { db in
                    switch lookup {
                    case .plaintext: try db.fetchOne(Customer.self, sql: "SELECT id, email, phone FROM customer WHERE email = ?", arguments: [email])?.email
                    case .deterministic: try db.fetchOne(SealedCustomer.self, where: .column("email", equals: email))?.email
                    case .blindIndex: try db.fetchOne(SealedCustomer.self, where: .index("email_index", equals: email))?.email
                    }
                }
                if found1 == email { found += 1 }
            }
        }
        guard found == lookups else { throw BenchmarkError("\(lookup) lookups found \(found) of \(lookups) customers") }
        return elapsed
    }
}
