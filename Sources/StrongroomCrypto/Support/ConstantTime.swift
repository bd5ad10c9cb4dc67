internal import CCrypto

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// True when `a` and `b` hold the same bytes. The time depends only on
    /// the lengths (OpenSSL `CRYPTO_memcmp`), so a tag or an index can be
    /// compared without telling an attacker how much of it matched.
    ///
    /// ```swift
    /// if ConstantTime.equal(expectedTag, receivedTag) { … }
    /// ```
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }

    /// ``equal(_:_:)-(UnsafeRawBufferPointer,UnsafeRawBufferPointer)`` for arrays.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in equal(x, y) } }
    }
}
