internal import CCrypto

/// HMAC-SHA256 (RFC 2104) over OpenSSL's EVP_MAC, for blind indexes: a
/// keyed hash of a value that can be looked up by equality and reveals
/// nothing without the key.
///
/// One instance keeps its key set up in one OpenSSL context and reuses it;
/// computing a tag allocates nothing. Not thread-safe; use one per thread.
///
/// ```swift
/// let hmac = try HMACSHA256(key: SecureBytes(randomCount: 32))
/// let tag = hmac.authenticationCode(for: Array("ada@example.com".utf8))   // 32 bytes
/// ```
public final class HMACSHA256 {
    /// The MAC size: 32 bytes.
    public static let byteCount = 32

    private let mac: OpaquePointer
    private let context: OpaquePointer

    /// An HMAC-SHA256 instance keyed with `key`; its context is reused for every message.
    ///
    /// - Throws: ``CryptoError/Code/libraryFailure`` when OpenSSL has no HMAC.
    public init(key: SecureBytes) throws(CryptoError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw CryptoError(.libraryFailure, "OpenSSL has no HMAC (EVP_MAC_fetch)") }
        guard let context = EVP_MAC_CTX_new(mac) else {
            EVP_MAC_free(mac)
            throw CryptoError(.libraryFailure, "EVP_MAC_CTX_new failed: out of memory")
        }
        self.mac = mac
        self.context = context
        var empty: UInt8 = 0
        let status = key.withUnsafeBytes { keyBytes in
            withUnsafePointer(to: &empty) { emptyPointer in
                strongroom_hmac_sha256_init(context, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, keyBytes.count)
            }
        }
        guard status == 1 else { throw CryptoError(.libraryFailure, "EVP_MAC_init failed for HMAC-SHA256") }
    }

    deinit {
        // EVP_MAC_CTX_free cleanses the key it holds.
        EVP_MAC_CTX_free(context)
        EVP_MAC_free(mac)
    }

    /// Writes the 32-byte HMAC of `message` to `out`.
    public func authenticationCode(for message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= Self.byteCount, "an HMAC-SHA256 needs 32 bytes")
        // With a NULL key and no parameters, EVP_MAC_init starts a new message
        // under the key and digest set before: passing the digest's name again
        // would have OpenSSL fetch SHA-256 by name, under a lock, every time.
        var ok = EVP_MAC_init(context, nil, 0, nil) == 1
        if ok && message.count > 0 {
            ok = EVP_MAC_update(context, message.baseAddress!.assumingMemoryBound(to: UInt8.self), message.count) == 1
        }
        var length = 0
        ok = ok && EVP_MAC_final(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, Self.byteCount) == 1
        // Every input is valid for HMAC: a failure here is OpenSSL broken.
        precondition(ok && length == Self.byteCount, "OpenSSL HMAC-SHA256 failed")
    }

    /// The 32-byte HMAC of `message`.
    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.byteCount)
        message.withUnsafeBytes { m in out.withUnsafeMutableBytes { authenticationCode(for: m, into: $0) } }
        return out
    }
}
