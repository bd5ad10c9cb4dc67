import StrongroomCrypto

/// SQLCipher 4's plaintext header: the first bytes of the database file
/// stay SQLite's own header, unencrypted (`PRAGMA cipher_plaintext_header_size`).
///
/// iOS reads those bytes to recognise a SQLite database in WAL mode before it
/// suspends an app holding its lock in a shared container; other tools that
/// sniff files do the same. SQLCipher normally keeps its random 16-byte salt
/// where that header would be, so with a plaintext header the salt is no
/// longer in the file: the application chooses it (``generateSalt()``) and
/// keeps it with the key (`PRAGMA cipher_salt`). The salt is not secret, but
/// without it the key does not open the file.
///
/// ```swift
/// var configuration = Configuration(key: key)
/// configuration.plaintextHeader = try PlaintextHeader(size: 32, salt: savedSalt)
/// let db = try Connection(path: "shared.db", configuration: configuration)
/// ```
///
/// Every tool that opens the file must be given the same settings after the key:
/// `PRAGMA cipher_plaintext_header_size = 32; PRAGMA cipher_salt = "x'<32 hex digits>'";`.
/// SQLCipher 3 has no plaintext header: a connection asked for one fails there
/// with ``StrongroomError/Code/sqlcipherUnavailable``.
public struct PlaintextHeader: Sendable, Hashable {
    /// How many bytes at the start of the file stay plaintext: a multiple of
    /// 16 from 16 to 96 (SQLCipher refuses any other). 32 is what SQLCipher
    /// recommends for iOS.
    public let size: Int

    /// The 16-byte salt SQLCipher derives the page keys with, kept outside the file.
    public let salt: [UInt8]

    /// The settings of a file whose first `size` bytes stay plaintext, its
    /// page keys derived with `salt`: for a new file, a salt from
    /// ``generateSalt()``, kept with the key; for an existing one, the salt it
    /// was made with.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` for a size SQLCipher would
    ///   refuse or a salt that is not 16 bytes.
    public init(size: Int = 32, salt: [UInt8]) throws(StrongroomError) {
        guard (16...96).contains(size), size % 16 == 0 else {
            throw StrongroomError(.misuse, "A plaintext header of \(size) bytes is not one SQLCipher takes: give a multiple of 16 from 16 to 96 (32 is the usual one).")
        }
        guard salt.count == 16 else {
            throw StrongroomError(.misuse, "A SQLCipher salt is 16 bytes, not \(salt.count); keep the one the database was made with (PlaintextHeader.generateSalt() makes a new one).")
        }
        self.size = size
        self.salt = salt
    }

    /// A new random salt from OpenSSL's cryptographic generator, for a new database.
    public static func generateSalt() -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: 16)
        salt.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return salt
    }

    /// The salt as SQLCipher's pragmas take it: `x'…'`.
    var saltLiteral: String { "\"x'" + Hex.encode(salt) + "'\"" }
}
