internal import CCrypto

/// HMAC-SHA256 (RFC 2104), for blind indexes: a keyed hash of a value that
/// can be looked up by equality and reveals nothing without the key.
///
/// One instance hashes its key's two padded blocks once, keeps the two
/// SHA-256 states, and starts each message from copies of them: a short
/// message costs two SHA-256 compressions and allocates nothing. The states
/// are wiped when the instance goes. Not thread-safe; use one per thread.
///
/// ```swift
/// let hmac = try HMACSHA256(key: SecureBytes(randomCount: 32))
/// let tag = hmac.authenticationCode(for: Array("ada@example.com".utf8))   // 32 bytes
/// ```
public final class HMACSHA256 {
    /// The MAC size: 32 bytes.
    public static let byteCount = 32

    /// The key's inner and outer SHA-256 states (key material).
    private let key: UnsafeMutablePointer<strongroom_hmac_sha256_key>

    /// An HMAC-SHA256 instance keyed with `key` (any length).
    ///
    /// - Throws: ``CryptoError/Code/libraryFailure`` when OpenSSL's SHA-256 fails.
    public init(key: SecureBytes) throws(CryptoError) {
        let prepared = UnsafeMutablePointer<strongroom_hmac_sha256_key>.allocate(capacity: 1)
        var empty: UInt8 = 0
        let status = key.withUnsafeBytes { keyBytes in
            withUnsafePointer(to: &empty) { emptyPointer in
                strongroom_hmac_sha256_prepare(prepared, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, keyBytes.count)
            }
        }
        guard status == 1 else {
            strongroom_hmac_sha256_clear(prepared)
            prepared.deallocate()
            throw CryptoError(.libraryFailure, "SHA-256 failed while preparing an HMAC-SHA256 key")
        }
        self.key = prepared
    }

    deinit {
        strongroom_hmac_sha256_clear(key)
        key.deallocate()
    }

    /// Writes the 32-byte HMAC of `message` to `out`.
    public func authenticationCode(for message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= Self.byteCount, "an HMAC-SHA256 needs 32 bytes")
        var empty: UInt8 = 0
        let ok = withUnsafePointer(to: &empty) { emptyPointer in
            strongroom_hmac_sha256(key, message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, message.count,
                                   out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        // Every input is valid for HMAC: a failure here is OpenSSL broken.
        precondition(ok == 1, "OpenSSL SHA-256 failed")
    }

    /// The 32-byte HMAC of `message`.
    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.byteCount)
        message.withUnsafeBytes { m in out.withUnsafeMutableBytes { authenticationCode(for: m, into: $0) } }
        return out
    }
}
