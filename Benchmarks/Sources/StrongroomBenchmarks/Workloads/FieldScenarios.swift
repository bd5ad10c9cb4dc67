import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields

/// Sealed columns (issue 8): sealing throughput against `openssl speed`,
/// the cost a sealed column adds to reads, and a sealed import against the
/// same import unsealed.
enum FieldScenarios {
    struct Figures {
        var sealValuesPerSecond = 0.0
        var primitiveMicroseconds = 0.0
        var opensslMicroseconds: Double?
        var readPlain = Timing(), readSealed = Timing()
        var importPlain = Timing(), importSealed = Timing()
        var readRows = 0
    }

    static func run(directory: String, rows: Int, rounds: Int, values: Int = 1_000_000) throws -> Figures {
        var figures = Figures()
        let keyring = FieldKeyring.generate()

        // 1. Seal 1M 32-byte values into envelopes (FieldCipher), one core.
        let cipher = FieldCipher(keyring: keyring)
        let value = DatabaseValue.blob((0..<32).map { UInt8($0) })
        var best = Double.infinity
        for _ in 0..<rounds {
            best = min(best, try seconds {
                for i in 0..<values {
                    _ = try cipher.seal(value, table: "t", column: "c", rowKey: [.integer(Int64(i))], mode: .randomized)
                }
            })
        }
        figures.sealValuesPerSecond = Double(values) / best

        // 2. The primitive alone on 64-byte blocks, against `openssl speed`.
        let gcm = try AESGCM(key: SecureBytes(randomCount: AESGCM.keyByteCount))
        var plaintext = [UInt8](repeating: 7, count: 64), ciphertext = [UInt8](repeating: 0, count: 64)
        var nonce = [UInt8](repeating: 0, count: 12), tag = [UInt8](repeating: 0, count: 16)
        best = .infinity
        for _ in 0..<rounds {
            best = min(best, try seconds {
                try plaintext.withUnsafeBytes { p in try ciphertext.withUnsafeMutableBytes { c in
                    try nonce.withUnsafeMutableBytes { n in try tag.withUnsafeMutableBytes { t in
                        for _ in 0..<values { try gcm.seal(p, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), nonce: n, ciphertext: c, tag: t) }
                    } }
                } }
            })
        }
        plaintext[0] = ciphertext[0]
        figures.primitiveMicroseconds = best / Double(values) * 1e6
        figures.opensslMicroseconds = opensslMicroseconds()

        // 3. Read `rows` rows with two sealed columns, and the same rows unsealed.
        struct Person: Codable { let id: Int64; let email: String; let phone: String; let score: Double }
        figures.readRows = rows
        for sealed in [false, true] {
            let path = "\(directory)/fields-\(sealed).db"
            var config = Configuration(key: .generate())
            if sealed { config.seal([.randomized("email", in: "person"), .randomized("phone", in: "person")], keyring: keyring) }
            let queue = try DatabaseQueue(path: path, configuration: config)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, email, phone, score REAL)")
                for i in 0..<rows {
                    try db.insert(Person(id: Int64(i + 1), email: "person\(i)@example.com", phone: "+1 555 01\(i % 100)", score: Double(i)), into: "person")
                }
            }
            for _ in 0..<rounds {
                let elapsed = try seconds {
                    let people = try queue.read { try $0.fetchAll(Person.self, sql: "SELECT id, email, phone, score FROM person") }
                    precondition(people.count == rows)
                }
                if sealed { figures.readSealed.add(elapsed) } else { figures.readPlain.add(elapsed) }
            }
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        }

        // 4. Import Chinook, unsealed and with five sealed columns.
        let chinook = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../Examples/chinook.sqlite").standardized.path
        let columns: [SealedColumn] = [
            .indexed("Email", in: "Customer", indexColumn: "Email_blind_index"), .randomized("Phone", in: "Customer"),
            .randomized("Address", in: "Customer"), .randomized("BirthDate", in: "Employee"), .deterministic("Country", in: "Customer"),
        ]
        for round in 0..<rounds {
            for sealed in round % 2 == 0 ? [false, true] : [true, false] {
                let out = "\(directory)/chinook-\(sealed).db"
                for suffix in ["", "-wal", "-shm"] { unlink(out + suffix) }
                let key = DatabaseKey.generate()
                let elapsed = try seconds {
                    _ = try PlaintextConversion.importPlaintext(from: chinook, to: out, key: key, finishing: sealed ? { (db: Connection) throws(StrongroomError) -> Void in
                        do {
                            try db.inTransaction(.immediate) { db in try ColumnSealing.sealInPlace(columns, keyring: keyring, in: db) }
                        } catch {
                            throw StrongroomError(.sealedValue, "\(error)")
                        }
                    } : nil)
                }
                if sealed { figures.importSealed.add(elapsed) } else { figures.importPlain.add(elapsed) }
                for suffix in ["", "-wal", "-shm"] { unlink(out + suffix) }
            }
        }
        return figures
    }

    /// Microseconds per AES-256-GCM operation on 64-byte blocks by
    /// `openssl speed -evp aes-256-gcm` (same machine, same run), or nil.
    static func opensslMicroseconds() -> Double? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["speed", "-evp", "aes-256-gcm", "-bytes", "64", "-seconds", "2"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // "AES-256-GCM     141061.44k": thousands of bytes per second.
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("AES-256-GCM") }),
              let field = line.split(separator: " ").last, field.hasSuffix("k"),
              let kilobytes = Double(field.dropLast()) else { return nil }
        return 64 / (kilobytes * 1000) * 1e6
    }
}
