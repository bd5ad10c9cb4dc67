internal import CCrypto

/// Zeroing that the optimiser keeps, for plaintext in memory the caller
/// owns (a scratch buffer, a stack allocation) rather than a ``SecureBytes``.
///
/// ```swift
/// withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { scratch in
///     defer { SecureMemory.zero(scratch) }
///     // … plaintext in scratch …
/// }
/// ```
public enum SecureMemory {
    /// Writes zeros over `buffer` with `OPENSSL_cleanse`: a store to memory
    /// about to be freed is otherwise dead, and may be dropped.
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress, buffer.count > 0 else { return }
        OPENSSL_cleanse(start, buffer.count)
    }
}
