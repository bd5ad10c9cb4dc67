internal import CCrypto

/// The operating system's cryptographic random generator, through OpenSSL.
public enum SecureRandom {
    /// Fills `buffer` with random bytes (OpenSSL `RAND_bytes`).
    ///
    /// ```swift
    /// var nonce = [UInt8](repeating: 0, count: 12)
    /// nonce.withUnsafeMutableBytes { SecureRandom.fill($0) }
    /// ```
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        // RAND_bytes returns 1 on success. It fails only when the generator
        // cannot be seeded, which leaves no safe way to continue.
        let status = RAND_bytes(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        precondition(status == 1, "OpenSSL RAND_bytes failed: no secure randomness available")
    }
}
