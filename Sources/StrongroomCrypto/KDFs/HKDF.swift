internal import CCrypto

/// HKDF with SHA-256 (RFC 5869): independent subkeys from one master key,
/// one per purpose, told apart by `info`.
///
/// ```swift
/// let columnKey = try HKDF.deriveKey(from: master, salt: [], info: Array("strongroom/users/email/siv".utf8), byteCount: 64)
/// ```
public enum HKDF {
    /// The most bytes one derivation can give (255 blocks of SHA-256).
    public static let maximumByteCount = 255 * 32

    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_KDF_fetch(nil, "HKDF", nil)

    /// Derives `byteCount` bytes from `key` (the input keying material),
    /// `salt` and `info`.
    ///
    /// - Throws: ``CryptoError/Code/invalidArgument`` for an empty key or a
    ///   `byteCount` outside 1...8160.
    public static func deriveKey(from key: SecureBytes, salt: [UInt8], info: [UInt8], byteCount: Int) throws(CryptoError) -> SecureBytes {
        guard (1...maximumByteCount).contains(byteCount) else {
            throw CryptoError(.invalidArgument, "HKDF-SHA256 derives 1 to \(maximumByteCount) bytes; \(byteCount) were asked for.")
        }
        guard key.count > 0 else {
            throw CryptoError(.invalidArgument, "HKDF needs a non-empty input key.")
        }
        guard let algorithm else { throw CryptoError(.libraryFailure, "OpenSSL has no HKDF (EVP_KDF_fetch)") }
        var status: Int32 = 0
        let derived = SecureBytes(count: byteCount) { out in
            status = key.withUnsafeBytes { ikm in
                salt.withUnsafeBytes { s in
                    info.withUnsafeBytes { i in
                        strongroom_hkdf_sha256(algorithm,
                                               ikm.baseAddress?.assumingMemoryBound(to: UInt8.self), ikm.count,
                                               s.baseAddress?.assumingMemoryBound(to: UInt8.self), s.count,
                                               i.baseAddress?.assumingMemoryBound(to: UInt8.self), i.count,
                                               out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
                    }
                }
            }
        }
        guard status == 1 else { throw CryptoError(.libraryFailure, "EVP_KDF_derive failed for HKDF-SHA256") }
        return derived
    }
}
