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

    /// The size of a digest, in bytes.
    public static let byteCount = 32

    /// SHA-256 fetched from the default provider once: OpenSSL 3 would
    /// otherwise look it up again at every initialization. Fetched algorithms
    /// are immutable and may be shared by threads.
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    /// A digest ready for its first `update`.
    public init() {
        // EVP_MD_CTX_new allocates; it returns NULL only when out of memory.
        guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL EVP_MD_CTX_new: out of memory") }
        self.context = context
        Self.start(context)
    }

    private static func start(_ context: OpaquePointer) {
        if let algorithm {
            EVP_DigestInit_ex(context, algorithm, nil)
        } else {
            EVP_DigestInit_ex(context, EVP_sha256(), nil)
        }
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

    /// Writes the digest of everything added so far into the first 32 bytes
    /// of `out`, and starts a new digest on the same context: for hashing
    /// many short inputs without an allocation each.
    ///
    /// ```swift
    /// var hash = SHA256()
    /// var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
    /// for row in rows {
    ///     row.withUnsafeBytes { hash.update($0) }
    ///     digest.withUnsafeMutableBytes { hash.finalizeAndRestart(into: $0) }
    /// }
    /// ```
    public mutating func finalizeAndRestart(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= Self.byteCount, "a SHA-256 digest needs 32 bytes")
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
        Self.start(context)
    }

    /// The SHA-256 of `bytes` in one call.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.finalize()
    }
}
