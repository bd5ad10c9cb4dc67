internal import CCrypto

/// AES-SIV (RFC 5297): deterministic authenticated encryption. The same key,
/// associated data and plaintext always give the same ciphertext, which
/// makes equality lookups possible, and reveals equality: use it only where
/// that is the point.
///
/// The key is two AES keys: 64 bytes for AES-256-SIV (32, 48 for the smaller
/// sizes, accepted for known-answer tests). The output is the 16-byte
/// synthetic IV (the tag) followed by the ciphertext, as long as the
/// plaintext.
///
/// OpenSSL 3.0 fails to seal an empty plaintext with AES-SIV, so this type
/// refuses one with ``CryptoError/Code/invalidArgument``: callers encode
/// their values so that none is empty (Strongroom's envelopes start with a
/// type byte).
///
/// ```swift
/// let siv = try AESSIV(key: SecureBytes(randomCount: AESSIV.keyByteCount))
/// let a = try siv.seal(Array("ada@example.com".utf8), authenticating: Array("users.email".utf8))
/// let b = try siv.seal(Array("ada@example.com".utf8), authenticating: Array("users.email".utf8))
/// // a == b
/// ```
///
/// An instance is not thread-safe; use one per thread.
public final class AESSIV {
    /// The key size: 64 bytes (two AES-256 keys, RFC 5297).
    public static let keyByteCount = 64
    /// The synthetic IV (the tag) size: 16 bytes.
    public static let tagByteCount = 16

    private let context: OpaquePointer
    private let algorithm: OpaquePointer
    private let key: SecureBytes

    /// An AES-256-SIV instance for `key`, with its own OpenSSL context.
    ///
    /// - Throws: ``CryptoError/Code/invalidArgument`` unless `key` is 64 bytes.
    public convenience init(key: SecureBytes) throws(CryptoError) {
        try self.init(anyKey: key, allowed: [Self.keyByteCount])
    }

    /// Any AES-SIV key size (32, 48 or 64 bytes), for known-answer tests.
    package init(anyKey key: SecureBytes, allowed: Set<Int> = [32, 48, 64]) throws(CryptoError) {
        guard allowed.contains(key.count) else {
            throw CryptoError(.invalidArgument, "An AES-SIV key is \(allowed.sorted().map(String.init).joined(separator: " or ")) bytes; this one has \(key.count).")
        }
        let name = "AES-\(key.count * 4)-SIV"
        // Fetched from the default provider (AES-SIV has no EVP_aes_*_siv()).
        guard let algorithm = EVP_CIPHER_fetch(nil, name, nil) else {
            throw CryptoError(.libraryFailure, "OpenSSL has no \(name) cipher (EVP_CIPHER_fetch); OpenSSL 3.0 or later is needed.")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            EVP_CIPHER_free(algorithm)
            throw CryptoError(.libraryFailure, "EVP_CIPHER_CTX_new failed: out of memory")
        }
        self.algorithm = algorithm
        self.context = context
        self.key = key
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        EVP_CIPHER_free(algorithm)
    }

    /// Sets the key again for each value: OpenSSL's SIV keeps per-message
    /// state (the S2V chain) that only a key setup resets.
    private func start(encrypt: Bool) throws(CryptoError) {
        let status = key.withUnsafeBytes { keyBytes in
            EVP_CipherInit_ex2(context, algorithm, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, encrypt ? 1 : 0, nil)
        }
        guard status == 1 else { throw CryptoError(.libraryFailure, "EVP_CipherInit_ex2 failed for AES-SIV") }
    }

    /// One associated-data component (RFC 5297's vector has one here).
    private func addAssociatedData(_ aad: UnsafeRawBufferPointer) throws(CryptoError) {
        var length: Int32 = 0
        var empty: UInt8 = 0
        let status = withUnsafePointer(to: &empty) { emptyPointer in
            EVP_CipherUpdate(context, nil, &length, aad.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, Int32(aad.count))
        }
        guard status == 1 else { throw CryptoError(.libraryFailure, "EVP_CipherUpdate (associated data) failed for AES-SIV") }
    }

    /// Writes the synthetic IV to `tag` and the ciphertext (as long as
    /// `plaintext`, which must not be empty) to `ciphertext`.
    public func seal(_ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
                     tag: UnsafeMutableRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard plaintext.count > 0 else {
            throw CryptoError(.invalidArgument, "AES-SIV does not seal an empty plaintext here (OpenSSL 3.0 fails on one); encode values so that none is empty.")
        }
        guard ciphertext.count == plaintext.count, tag.count == Self.tagByteCount else {
            throw CryptoError(.invalidArgument, "AES-SIV output buffers: ciphertext \(plaintext.count) bytes and tag \(Self.tagByteCount) bytes are needed.")
        }
        try start(encrypt: true)
        try addAssociatedData(aad)
        var length: Int32 = 0
        // SIV reads the whole plaintext twice (S2V, then CTR): one update call.
        guard EVP_CipherUpdate(context, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                               plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CipherUpdate failed for AES-SIV")
        }
        var finalLength: Int32 = 0
        guard EVP_CipherFinal_ex(context, nil, &finalLength) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagByteCount), tag.baseAddress) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CipherFinal_ex failed for AES-SIV")
        }
    }

    /// Decrypts and checks. - Throws: ``CryptoError/Code/authenticationFailed``
    /// when the synthetic IV does not match (`plaintext` is then zeroed).
    public func open(tag: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
                     into plaintext: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard ciphertext.count > 0 else {
            throw CryptoError(.invalidArgument, "AES-SIV: an empty ciphertext is not opened here (nothing seals an empty plaintext).")
        }
        guard plaintext.count == ciphertext.count, tag.count == Self.tagByteCount else {
            throw CryptoError(.invalidArgument, "AES-SIV: a \(Self.tagByteCount)-byte tag and a plaintext buffer of \(ciphertext.count) bytes are needed.")
        }
        try start(encrypt: false)
        // The synthetic IV is the CTR IV too: it must be set before the data.
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagByteCount), UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CTRL_AEAD_SET_TAG failed for AES-SIV")
        }
        try addAssociatedData(aad)
        var length: Int32 = 0
        let updated = EVP_CipherUpdate(context, plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                                       ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(ciphertext.count))
        var finalLength: Int32 = 0
        guard updated == 1, EVP_CipherFinal_ex(context, nil, &finalLength) == 1 else {
            OPENSSL_cleanse(plaintext.baseAddress, plaintext.count)
            throw CryptoError(.authenticationFailed, "AES-SIV: the synthetic IV does not match (wrong key, or the value or its associated data changed).")
        }
    }

    /// Seals into one array: synthetic IV (16 bytes) || ciphertext.
    public func seal(_ plaintext: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.tagByteCount + plaintext.count)
        let t = Self.tagByteCount
        try CryptoError.typed { try out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) in
                try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) in
                    try seal(p, authenticating: a, tag: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<t]),
                             ciphertext: UnsafeMutableRawBufferPointer(rebasing: buffer[t...]))
                }
            }
        } }
        return out
    }

    /// Opens what ``seal(_:authenticating:)`` returned.
    public func open(_ sealed: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        let t = Self.tagByteCount
        guard sealed.count > t else {
            throw CryptoError(.invalidArgument, "An AES-SIV sealed value is more than \(t) bytes; this one has \(sealed.count).")
        }
        var out = [UInt8](repeating: 0, count: sealed.count - t)
        try CryptoError.typed { try out.withUnsafeMutableBytes { (plaintext: UnsafeMutableRawBufferPointer) in
            try sealed.withUnsafeBytes { (s: UnsafeRawBufferPointer) in
                try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) in
                    try open(tag: UnsafeRawBufferPointer(rebasing: s[0..<t]), ciphertext: UnsafeRawBufferPointer(rebasing: s[t...]),
                             authenticating: a, into: plaintext)
                }
            }
        } }
        return out
    }
}
