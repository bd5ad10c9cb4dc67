internal import CCrypto

/// An incremental SHA-256 digest (OpenSSL EVP), for content hashes of public data.
///
/// ```swift
/// var hash = SHA256()
/// hash.update([1, 2, 3])
/// let digest = hash.finalize()   // 32 bytes
/// ```
public struct SHA256: ~Copyable {
    private let context: OpaquePointer

    public init() {
        // EVP_MD_CTX_new allocates; it returns NULL only when out of memory.
        guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL EVP_MD_CTX_new: out of memory") }
        self.context = context
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// Adds bytes to the digest.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Returns the 32-byte digest and ends the hash.
    public consuming func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return out
    }

    /// The SHA-256 of `bytes` in one call.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.finalize()
    }
}
