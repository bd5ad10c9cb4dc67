internal import CCrypto

/// PBKDF2 key derivation (RFC 8018) through OpenSSL `PKCS5_PBKDF2_HMAC`.
///
/// SQLCipher stretches a passphrase with PBKDF2 over the 16-byte salt stored
/// at the start of the database file. Deriving that key once lets a pool open
/// every further connection with the raw key, skipping tens of milliseconds
/// of stretching per connection.
///
/// ```swift
/// let key = try PBKDF2.deriveKey(from: passphrase, salt: salt, hash: .sha1,
///                                iterations: 64_000, byteCount: 32)
/// ```
public enum PBKDF2 {
    /// The HMAC hash function under PBKDF2.
    public enum Hash: Sendable {
        /// SHA-1 (SQLCipher 3), SHA-256 or SHA-512 (SQLCipher 4).
        case sha1, sha256, sha512
    }

    /// Derives `byteCount` bytes from `password` and `salt`.
    public static func deriveKey(
        from password: SecureBytes,
        salt: [UInt8],
        hash: Hash,
        iterations: Int,
        byteCount: Int
    ) throws(CryptoError) -> SecureBytes {
        guard iterations > 0, byteCount > 0 else {
            throw CryptoError(.invalidArgument, "PBKDF2 needs a positive iteration count and output length")
        }
        let digest: OpaquePointer? = switch hash {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
        var failed = false
        let out = password.withUnsafeBytes { pw in
            SecureBytes(count: byteCount) { out in
                // PKCS5_PBKDF2_HMAC returns 1 on success, 0 on failure.
                let status = salt.withUnsafeBufferPointer { s in
                    PKCS5_PBKDF2_HMAC(
                        pw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(pw.count),
                        s.baseAddress, Int32(s.count),
                        Int32(iterations), digest,
                        Int32(byteCount), out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                failed = status != 1
            }
        }
        if failed { throw CryptoError(.libraryFailure, "OpenSSL PKCS5_PBKDF2_HMAC failed") }
        return out
    }
}
