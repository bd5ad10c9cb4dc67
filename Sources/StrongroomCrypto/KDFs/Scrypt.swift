internal import CCrypto

/// scrypt, the memory-hard password-based key derivation of RFC 7914, through
/// OpenSSL `EVP_PBE_scrypt`.
///
/// Each guess at a passphrase costs `128 × r × N` bytes of memory and time in
/// proportion, which makes guessing on graphics cards or custom hardware far
/// dearer than with PBKDF2. Wrapped key files derive their wrapping key with it.
///
/// ```swift
/// let key = try Scrypt.deriveKey(from: passphrase, salt: salt,
///                                parameters: .interactive, byteCount: 32)
/// ```
public enum Scrypt {
    /// The cost parameters: `N = 2^log2N` (CPU and memory), `r` (block size)
    /// and `p` (parallelism).
    public struct Parameters: Sendable, Hashable {
        /// log2 of the CPU/memory cost N.
        public let log2N: UInt8
        /// The block size r.
        public let r: UInt8
        /// The parallelism p.
        public let p: UInt8

        /// The most memory one derivation may take for its table V (1 GiB,
        /// RFC 7914's largest example): parameters that ask for more are
        /// refused, so a file cannot make a reader exhaust memory.
        public static let maximumMemory = 1 << 30
        /// The most parallel lanes (p): each one costs the full time again.
        public static let maximumParallelism: UInt8 = 16
        /// The most work one derivation may take, N × r × p: RFC 7914's
        /// largest example (N = 2^20, r = 8, p = 1), about 3 s here, so that a
        /// file cannot make a reader spin for minutes.
        public static let maximumWork = 1 << 23

        /// N = 2^17, r = 8, p = 1: 128 MiB and about 0.4 s per derivation on
        /// this project's 2-core test machine; eight times RFC 7914's 2009
        /// figure for interactive logins (N = 2^14), half of `age`'s default (2^18).
        public static let interactive = Parameters(uncheckedLog2N: 17, r: 8, p: 1)

        /// Cost parameters, checked.
        ///
        /// - Throws: ``CryptoError/Code/invalidArgument`` unless 1 ≤ log2N ≤ 30,
        ///   N < 2^(16 r) (RFC 7914 §2), r ≥ 1, 1 ≤ p ≤ ``maximumParallelism``,
        ///   the table `128 × r × N` is at most ``maximumMemory`` and the work
        ///   N × r × p at most ``maximumWork``.
        public init(log2N: UInt8, r: UInt8, p: UInt8) throws(CryptoError) {
            guard log2N >= 1, log2N <= 30, r >= 1, p >= 1, p <= Self.maximumParallelism, Int(log2N) < 16 * Int(r),
                  128 * Int(r) << Int(log2N) <= Self.maximumMemory, (Int(r) * Int(p)) << Int(log2N) <= Self.maximumWork else {
                throw CryptoError(.invalidArgument, "scrypt parameters N = 2^\(log2N), r = \(r), p = \(p) are out of range (2 ≤ N < 2^(16 r), r ≥ 1, 1 ≤ p ≤ \(Self.maximumParallelism), a table of at most \(Self.maximumMemory >> 20) MiB, N × r × p at most 2^23).")
            }
            self.init(uncheckedLog2N: log2N, r: r, p: p)
        }

        private init(uncheckedLog2N: UInt8, r: UInt8, p: UInt8) {
            self.log2N = uncheckedLog2N
            self.r = r
            self.p = p
        }

        /// The bytes one derivation takes: V (128 × r × N) and B (128 × r × p).
        public var memory: Int { Self.memory(log2N: log2N, r: r, p: p) }

        private static func memory(log2N: UInt8, r: UInt8, p: UInt8) -> Int {
            128 * Int(r) * (1 << Int(log2N)) + 128 * Int(r) * Int(p)
        }
    }

    /// Derives `byteCount` bytes from `password` and `salt`.
    ///
    /// - Throws: ``CryptoError/Code/invalidArgument`` for an empty output;
    ///   ``CryptoError/Code/libraryFailure`` when OpenSSL refuses (memory).
    public static func deriveKey(from password: SecureBytes, salt: [UInt8], parameters: Parameters,
                                 byteCount: Int) throws(CryptoError) -> SecureBytes {
        guard byteCount > 0 else { throw CryptoError(.invalidArgument, "scrypt needs a positive output length") }
        var failed = false
        let out = password.withUnsafeBytes { pw in
            SecureBytes(count: byteCount) { out in
                // EVP_PBE_scrypt returns 1 on success; maxmem bounds what it
                // allocates (its default, 0, means 32 MiB), with room for its
                // own bookkeeping over V and B.
                let status = salt.withUnsafeBufferPointer { s in
                    EVP_PBE_scrypt(pw.baseAddress?.assumingMemoryBound(to: CChar.self), pw.count,
                                   s.baseAddress, s.count,
                                   UInt64(1) << UInt64(parameters.log2N), UInt64(parameters.r), UInt64(parameters.p),
                                   UInt64(parameters.memory + (1 << 20)),
                                   out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
                }
                failed = status != 1
            }
        }
        if failed {
            ERR_clear_error()
            throw CryptoError(.libraryFailure, "OpenSSL EVP_PBE_scrypt failed (N = 2^\(parameters.log2N), r = \(parameters.r), p = \(parameters.p): \(parameters.memory >> 20) MiB); is there enough memory?")
        }
        return out
    }
}
