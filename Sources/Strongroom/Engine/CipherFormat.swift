/// The SQLCipher major version whose default settings wrote a file.
///
/// SQLCipher 4 changed every default: the page size (1 KiB to 4 KiB), the
/// passphrase stretching (PBKDF2-HMAC-SHA1 with 64,000 iterations to
/// PBKDF2-HMAC-SHA512 with 256,000) and the page HMAC (SHA-1 to SHA-512). A
/// SQLCipher 4 build opens a file written by SQLCipher 3 only when told to use
/// the old settings (``Configuration/cipherCompatibility``), or after the file
/// is converted once (``DatabaseUpgrade``, `strongroom upgrade`).
///
/// ```swift
/// var config = Configuration(key: key)
/// config.cipherCompatibility = .sqlcipher3   // until the file is upgraded
/// let queue = try DatabaseQueue(path: "legacy.db", configuration: config)
/// ```
public enum CipherFormat: Int, Sendable, Hashable, Codable, CustomStringConvertible {
    /// SQLCipher 3's settings: 1 KiB pages, PBKDF2-HMAC-SHA1 64,000, HMAC-SHA1.
    case sqlcipher3 = 3
    /// SQLCipher 4's settings: 4 KiB pages, PBKDF2-HMAC-SHA512 256,000, HMAC-SHA512.
    case sqlcipher4 = 4

    /// "SQLCipher 3" or "SQLCipher 4".
    public var description: String { "SQLCipher \(rawValue)" }

    /// The format a SQLCipher of this version writes by default (its major
    /// version, at most the newest format this library knows), nil for a
    /// version it cannot read.
    static func native(cipherVersion: String) -> CipherFormat? {
        guard let major = cipherVersion.split(separator: ".").first.flatMap({ Int($0) }) else { return nil }
        if major >= 4 { return .sqlcipher4 }
        return major == 3 ? .sqlcipher3 : nil
    }
}

/// The HMAC each page carries (`PRAGMA cipher_hmac_algorithm`, SQLCipher 4).
/// SQLCipher 3 knows HMAC-SHA1 only.
public enum HMACAlgorithm: String, Sendable, Hashable, Codable {
    /// HMAC-SHA1 (SQLCipher 3's, the only one it has).
    case sha1 = "HMAC_SHA1"
    /// HMAC-SHA256.
    case sha256 = "HMAC_SHA256"
    /// HMAC-SHA512 (SQLCipher 4's default).
    case sha512 = "HMAC_SHA512"
}

/// How a passphrase is stretched (`PRAGMA cipher_kdf_algorithm`, SQLCipher 4).
/// SQLCipher 3 knows PBKDF2-HMAC-SHA1 only.
public enum KDFAlgorithm: String, Sendable, Hashable, Codable {
    /// PBKDF2-HMAC-SHA1 (SQLCipher 3's, the only one it has).
    case pbkdf2SHA1 = "PBKDF2_HMAC_SHA1"
    /// PBKDF2-HMAC-SHA256.
    case pbkdf2SHA256 = "PBKDF2_HMAC_SHA256"
    /// PBKDF2-HMAC-SHA512 (SQLCipher 4's default).
    case pbkdf2SHA512 = "PBKDF2_HMAC_SHA512"
}
