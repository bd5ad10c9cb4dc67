import Foundation

/// What a user wants to know about a database: its encryption, size, tables
/// and schema version. Read-only; nothing here reveals key material.
///
/// ```swift
/// let status = try db.status()
/// print(status.cipherVersion, status.tables.map(\.name))
/// ```
public struct DatabaseStatus: Sendable, Codable {
    /// One table and its row count.
    public struct Table: Sendable, Codable, Hashable {
        /// The table's name.
        public let name: String
        /// How many rows it holds.
        public let rowCount: Int
    }

    /// The database path.
    public let path: String
    /// True when the file is encrypted.
    public let encrypted: Bool
    /// `PRAGMA cipher_version` (e.g. `"3.4.1"`).
    public let cipherVersion: String
    /// `PRAGMA cipher` (e.g. `"AES-256-CBC"`), nil for plaintext.
    public let cipher: String?
    /// `PRAGMA cipher_page_size`, nil for plaintext.
    public let cipherPageSize: Int?
    /// `PRAGMA kdf_iter`: PBKDF2 iterations applied to a passphrase, nil for plaintext.
    public let kdfIterations: Int?
    /// `PRAGMA cipher_use_hmac`: whether each page carries an HMAC, nil for plaintext.
    public let hmac: Bool?
    /// The format the file was opened in: the linked SQLCipher's own, or
    /// the older one ``Configuration/cipherCompatibility`` named; nil for plaintext.
    public let format: CipherFormat?
    /// True when the file was opened in an older format than the linked
    /// SQLCipher's (compatibility mode; ``DatabaseUpgrade`` converts it).
    public let compatibilityMode: Bool
    /// `PRAGMA cipher_hmac_algorithm` (e.g. `"HMAC_SHA512"`; SQLCipher 4 only,
    /// SQLCipher 3 always uses HMAC-SHA1 and does not answer), nil for plaintext.
    public let hmacAlgorithm: String?
    /// `PRAGMA cipher_kdf_algorithm` (e.g. `"PBKDF2_HMAC_SHA512"`; SQLCipher 4
    /// only, SQLCipher 3 always uses PBKDF2-HMAC-SHA1), nil for plaintext.
    public let kdfAlgorithm: String?
    /// `PRAGMA cipher_plaintext_header_size` (SQLCipher 4 only; 0 when the
    /// whole header is encrypted), nil for plaintext and SQLCipher 3.
    public let plaintextHeaderSize: Int?
    /// `PRAGMA cipher_settings` (SQLCipher 4 only): the pragmas another tool
    /// needs after the key to open the file as this connection did, e.g.
    /// `PRAGMA cipher_page_size = 4096;`; empty on SQLCipher 3 and for plaintext.
    public let cipherSettings: [String]
    /// The crypto library SQLCipher uses (`PRAGMA cipher_provider`).
    public let cipherProvider: String?
    /// `PRAGMA page_size`, the usable page size SQLite reports.
    public let pageSize: Int
    /// `PRAGMA page_count`.
    public let pageCount: Int
    /// The size of the database file in bytes (without `-wal`).
    public let fileSize: Int64
    /// The size of its `-wal` file in bytes; 0 without one. In a live WAL
    /// database, pages not yet checkpointed are there and not in the file:
    /// ``pageCount`` counts them, ``fileSize`` does not.
    public let walSize: Int64
    /// `PRAGMA journal_mode`.
    public let journalMode: String
    /// `PRAGMA user_version`.
    public let userVersion: Int
    /// `PRAGMA application_id`.
    public let applicationID: Int
    /// User tables by name, with row counts.
    public let tables: [Table]
    /// The kind of source the key that opened the database came from (a key
    /// file, a wrapped key file, a command, a systemd credential…); nil for
    /// plaintext. Never the key, its path or its name.
    public let keySource: KeySource?
}

extension Connection {
    /// Reads the ``DatabaseStatus`` of this connection's database.
    public func status() throws(StrongroomError) -> DatabaseStatus {
        func text(_ pragma: String) throws(StrongroomError) -> String? {
            try fetchOne(String.self, sql: "PRAGMA \(pragma)")
        }
        // Cipher pragmas answer as TEXT, SQLite's own as INTEGER.
        func integer(_ pragma: String) throws(StrongroomError) -> Int? {
            try fetchOne(sql: "PRAGMA \(pragma)").flatMap { row in row.values.first }.flatMap { value in
                switch value {
                case .integer(let n): return Int(n)
                case .text(let s): return Int(s)
                default: return nil
                }
            }
        }
        let tables = try tableRowCounts()
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.int64Value ?? 0
        return DatabaseStatus(
            path: path,
            encrypted: isEncrypted,
            cipherVersion: cipherVersion,
            cipher: isEncrypted ? try text("cipher") : nil,
            cipherPageSize: isEncrypted ? try integer("cipher_page_size") : nil,
            kdfIterations: isEncrypted ? try integer("kdf_iter") : nil,
            hmac: isEncrypted ? try integer("cipher_use_hmac").map { $0 != 0 } : nil,
            format: isEncrypted ? configuration.cipherCompatibility ?? CipherFormat.native(cipherVersion: cipherVersion) : nil,
            compatibilityMode: isEncrypted && configuration.cipherCompatibility.map { $0 != CipherFormat.native(cipherVersion: cipherVersion) } == true,
            hmacAlgorithm: isEncrypted ? try text("cipher_hmac_algorithm") : nil,
            kdfAlgorithm: isEncrypted ? try text("cipher_kdf_algorithm") : nil,
            plaintextHeaderSize: isEncrypted ? try integer("cipher_plaintext_header_size") : nil,
            cipherSettings: isEncrypted ? try fetchAll(String.self, sql: "PRAGMA cipher_settings") : [],
            cipherProvider: isEncrypted ? try text("cipher_provider") : nil,
            pageSize: try integer("page_size") ?? 0,
            pageCount: try integer("page_count") ?? 0,
            fileSize: size,
            walSize: walSize,
            journalMode: try text("journal_mode") ?? "",
            userVersion: try integer("user_version") ?? 0,
            applicationID: try integer("application_id") ?? 0,
            tables: tables,
            keySource: { if case .encrypted(let key) = configuration.encryption { return key.source } else { return nil } }()
        )
    }
}

extension DatabaseStatus: CustomStringConvertible {
    /// One line: path, encryption, size, journal mode, user_version, tables.
    public var description: String {
        let encryption = encrypted ? "encrypted (SQLCipher \(cipherVersion), \(cipher ?? "?"), page \(cipherPageSize ?? 0))" : "plaintext"
        return "\(path): \(encryption), \(fileSize) bytes\(walSize > 0 ? " (and \(walSize) in its -wal)" : ""), journal \(journalMode), user_version \(userVersion), \(tables.count) tables"
    }
}

extension DatabaseStatus.Table: CustomStringConvertible {
    /// "customer: 59 rows".
    public var description: String { "\(name): \(rowCount) row\(rowCount == 1 ? "" : "s")" }
}
