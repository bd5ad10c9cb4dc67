import StrongroomCrypto

/// How a connection's SQLCipher stretches a passphrase into the page key:
/// PBKDF2 with this hash and iteration count over the file's 16-byte salt.
/// A ``DatabasePool`` derives the key once with it and opens its readers with
/// the result.
struct SQLCipherKDF {
    let hash: PBKDF2.Hash
    let iterations: Int

    /// The settings `connection` really uses, as it reports them (its
    /// configuration, a compatibility mode, a process-wide default, or
    /// SQLCipher's own): `PRAGMA cipher_kdf_algorithm` (SQLCipher 4; SQLCipher 3
    /// knows only SHA-1 and does not answer) and `PRAGMA kdf_iter`. Nil when
    /// the answer is one this library cannot reproduce.
    init?(of connection: Connection) {
        let algorithm = (try? connection.fetchOne(String.self, sql: "PRAGMA cipher_kdf_algorithm")) ?? nil
        switch algorithm?.uppercased() {
        case nil:
            guard CipherFormat.native(cipherVersion: connection.cipherVersion) == .sqlcipher3 else { return nil }
            hash = .sha1
        case "PBKDF2_HMAC_SHA1": hash = .sha1
        case "PBKDF2_HMAC_SHA256": hash = .sha256
        case "PBKDF2_HMAC_SHA512": hash = .sha512
        default: return nil
        }
        guard let reported = (try? connection.fetchOne(String.self, sql: "PRAGMA kdf_iter")) ?? nil,
              let count = Int(reported), count > 0 else { return nil }
        iterations = count
    }
}
