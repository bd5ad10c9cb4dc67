internal import CCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// AES-256-GCM (NIST SP 800-38D) with 96-bit random nonces and 128-bit tags,
/// over OpenSSL's EVP interface.
///
/// One instance keeps one OpenSSL context and its key schedule, and reuses
/// them for every value: sealing allocates nothing. The caller gives the
/// output buffers. An instance is not thread-safe; use one per thread.
///
/// ```swift
/// let gcm = try AESGCM(key: SecureBytes(randomCount: AESGCM.keyByteCount))
/// let sealed = try gcm.seal(Array("secret".utf8), authenticating: Array("users.email#42".utf8))
/// let opened = try gcm.open(sealed, authenticating: Array("users.email#42".utf8))
/// ```
///
/// A random 96-bit nonce under one key is safe for about 2^32 messages
/// (SP 800-38D, 8.3); rotate keys well before that.
public final class AESGCM {
    /// The key size: 32 bytes (AES-256).
    public static let keyByteCount = 32
    /// The nonce size: 12 bytes (96 bits), drawn at random for every seal.
    public static let nonceByteCount = 12
    /// The authentication tag size: 16 bytes.
    public static let tagByteCount = 16

    private let context: OpaquePointer
    /// Whether `context` is set up to encrypt (true) or decrypt (false) now.
    private var encrypting: Bool?
    private let key: SecureBytes
    /// Random bytes for the next nonces, drawn from OpenSSL 256 nonces at a
    /// time (one RAND_bytes call costs more than sealing a short value).
    /// Each byte is used once; a forked child discards what it inherited.
    private let noncePool: UnsafeMutableRawBufferPointer
    private var noncePoolOffset = 256 * AESGCM.nonceByteCount
    /// The fork generation the pool was drawn in (see `forkGeneration`).
    private var noncePoolGeneration: UInt64 = .max

    /// Counts forks, in the child: a pool drawn before a fork must not be
    /// used in both processes. Cheaper than asking getpid() every value.
    nonisolated(unsafe) private static var forkGeneration: UInt64 = 0
    private static let countsForks: Void = {
        // pthread_atfork's child handler runs in the child, alone, right after fork().
        pthread_atfork(nil, nil) { AESGCM.forkGeneration &+= 1 }
    }()

    /// An AES-256-GCM instance for `key`, with its own OpenSSL context.
    ///
    /// - Throws: ``CryptoError/Code/invalidArgument`` unless `key` is 32 bytes.
    public convenience init(key: SecureBytes) throws(CryptoError) {
        try self.init(anyKey: key, allowed: [Self.keyByteCount])
    }

    /// Any AES key size (16, 24 or 32 bytes), for known-answer tests.
    package init(anyKey key: SecureBytes, allowed: Set<Int> = [16, 24, 32]) throws(CryptoError) {
        guard allowed.contains(key.count) else {
            throw CryptoError(.invalidArgument, "An AES-GCM key is \(allowed.sorted().map(String.init).joined(separator: " or ")) bytes; this one has \(key.count).")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError(.libraryFailure, "EVP_CIPHER_CTX_new failed: out of memory") }
        self.context = context
        self.key = key
        noncePool = .allocate(byteCount: 256 * Self.nonceByteCount, alignment: 16)
    }

    deinit {
        // EVP_CIPHER_CTX_free cleanses the key schedule it holds.
        EVP_CIPHER_CTX_free(context)
        SecureMemory.zero(noncePool)
        noncePool.deallocate()
    }

    private func cipher() -> OpaquePointer? {
        switch key.count {
        case 16: EVP_aes_128_gcm()
        case 24: EVP_aes_192_gcm()
        default: EVP_aes_256_gcm()
        }
    }

    /// Sets the context up for `encrypt` with `nonce`; the key schedule is
    /// computed once per direction and kept.
    private func start(encrypt: Bool, nonce: UnsafeRawBufferPointer) throws(CryptoError) {
        guard nonce.count == Self.nonceByteCount else {
            throw CryptoError(.invalidArgument, "An AES-GCM nonce is \(Self.nonceByteCount) bytes; this one has \(nonce.count).")
        }
        let iv = nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let status: Int32
        if encrypting == encrypt {
            // Same cipher and key: only the nonce changes (EVP documents
            // NULL cipher and key as "keep the ones set").
            status = EVP_CipherInit_ex(context, nil, nil, nil, iv, encrypt ? 1 : 0)
        } else {
            status = key.withUnsafeBytes { keyBytes in
                EVP_CipherInit_ex(context, cipher(), nil, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), iv, encrypt ? 1 : 0)
            }
        }
        guard status == 1 else {
            encrypting = nil
            throw CryptoError(.libraryFailure, "EVP_CipherInit_ex failed for AES-GCM")
        }
        encrypting = encrypt
    }

    /// Starts a message with `nonce`, takes `aad`, and encrypts or decrypts
    /// `input` into `output` (the same size); the tag comes after.
    private func crypt(encrypt: Bool, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                       nonce: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer) throws(CryptoError) {
        try start(encrypt: encrypt, nonce: nonce)
        try addAssociatedData(aad)
        guard input.count > 0 else { return }
        var length: Int32 = 0
        guard EVP_CipherUpdate(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                               input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CipherUpdate failed for AES-GCM")
        }
    }

    private func addAssociatedData(_ aad: UnsafeRawBufferPointer) throws(CryptoError) {
        guard aad.count > 0 else { return }
        var length: Int32 = 0
        // With a NULL output, EVP_CipherUpdate takes the bytes as associated data.
        guard EVP_CipherUpdate(context, nil, &length, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CipherUpdate (associated data) failed for AES-GCM")
        }
    }

    /// Encrypts `plaintext` into `ciphertext` (the same size) under a new
    /// random nonce written to `nonce`, and writes the tag to `tag`.
    public func seal(_ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
                     nonce: UnsafeMutableRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
                     tag: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard nonce.count == Self.nonceByteCount else {
            throw CryptoError(.invalidArgument, "An AES-GCM nonce is \(Self.nonceByteCount) bytes; the buffer has \(nonce.count).")
        }
        _ = Self.countsForks
        let generation = Self.forkGeneration
        if noncePoolOffset == noncePool.count || noncePoolGeneration != generation {
            SecureRandom.fill(noncePool)
            noncePoolOffset = 0
            noncePoolGeneration = generation
        }
        let start = noncePool.baseAddress! + noncePoolOffset
        nonce.baseAddress!.copyMemory(from: start, byteCount: Self.nonceByteCount)
        // A nonce handed out is gone from the pool.
        memset(start, 0, Self.nonceByteCount)
        noncePoolOffset += Self.nonceByteCount
        try seal(plaintext, nonce: UnsafeRawBufferPointer(nonce), authenticating: aad, ciphertext: ciphertext, tag: tag)
    }

    /// Seals with a nonce the caller chose: for known-answer tests only. A
    /// nonce used twice under one key reveals the XOR of the plaintexts and
    /// lets anyone forge tags.
    package func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
                      ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard ciphertext.count == plaintext.count, tag.count == Self.tagByteCount else {
            throw CryptoError(.invalidArgument, "AES-GCM output buffers: ciphertext \(plaintext.count) bytes and tag \(Self.tagByteCount) bytes are needed.")
        }
        try crypt(encrypt: true, plaintext, into: ciphertext, nonce: nonce, authenticating: aad)
        var finalLength: Int32 = 0
        guard EVP_CipherFinal_ex(context, nil, &finalLength) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagByteCount), tag.baseAddress) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CipherFinal_ex failed for AES-GCM")
        }
    }

    /// Decrypts `ciphertext` into `plaintext` (the same size) and checks
    /// the tag over it and `aad`.
    ///
    /// - Throws: ``CryptoError/Code/authenticationFailed`` when the tag does
    ///   not match; `plaintext` is then zeroed.
    public func open(_ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                     authenticating aad: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard plaintext.count == ciphertext.count, tag.count == Self.tagByteCount else {
            throw CryptoError(.invalidArgument, "AES-GCM: a \(Self.tagByteCount)-byte tag and a plaintext buffer of \(ciphertext.count) bytes are needed.")
        }
        try crypt(encrypt: false, ciphertext, into: plaintext, nonce: nonce, authenticating: aad)
        // The expected tag is set before EVP_CipherFinal_ex, which compares it.
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagByteCount), UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1 else {
            throw CryptoError(.libraryFailure, "EVP_CTRL_AEAD_SET_TAG failed for AES-GCM")
        }
        var finalLength: Int32 = 0
        guard EVP_CipherFinal_ex(context, nil, &finalLength) == 1 else {
            if plaintext.count > 0 { OPENSSL_cleanse(plaintext.baseAddress, plaintext.count) }
            throw CryptoError(.authenticationFailed, "AES-GCM: the tag does not match (wrong key, or the value or its associated data changed).")
        }
    }

    /// Seals into one array: nonce (12 bytes) || ciphertext || tag (16 bytes).
    public func seal(_ plaintext: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.nonceByteCount + plaintext.count + Self.tagByteCount)
        let n = Self.nonceByteCount, c = plaintext.count
        try CryptoError.typed { try out.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) in
                try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) in
                    try seal(p, authenticating: a, nonce: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]),
                             ciphertext: UnsafeMutableRawBufferPointer(rebasing: buffer[n..<(n + c)]),
                             tag: UnsafeMutableRawBufferPointer(rebasing: buffer[(n + c)...]))
                }
            }
        } }
        return out
    }

    /// Opens what ``seal(_:authenticating:)`` returned.
    public func open(_ sealed: [UInt8], authenticating aad: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        let n = Self.nonceByteCount, t = Self.tagByteCount
        guard sealed.count >= n + t else {
            throw CryptoError(.invalidArgument, "An AES-GCM sealed value is at least \(n + t) bytes; this one has \(sealed.count).")
        }
        var out = [UInt8](repeating: 0, count: sealed.count - n - t)
        try CryptoError.typed { try out.withUnsafeMutableBytes { (plaintext: UnsafeMutableRawBufferPointer) in
            try sealed.withUnsafeBytes { (s: UnsafeRawBufferPointer) in
                try aad.withUnsafeBytes { (a: UnsafeRawBufferPointer) in
                    try open(UnsafeRawBufferPointer(rebasing: s[n..<(s.count - t)]), nonce: UnsafeRawBufferPointer(rebasing: s[0..<n]),
                             tag: UnsafeRawBufferPointer(rebasing: s[(s.count - t)...]), authenticating: a, into: plaintext)
                }
            }
        } }
        return out
    }
}
