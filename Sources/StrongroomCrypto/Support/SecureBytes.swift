internal import CCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A fixed-size buffer of secret bytes that is zeroed when it is released.
///
/// The bytes are reachable only through ``withUnsafeBytes(_:)``; the buffer's
/// `description` never shows them, and `==` runs in constant time.
///
/// ```swift
/// let key = SecureBytes(randomCount: 32)
/// key.withUnsafeBytes { bytes in /* hand them to C */ }
/// ```
///
/// The storage is allocated once and never grows or moves, so no copy of the
/// secret is left behind in memory that was freed without being wiped.
/// On release it is cleared with `OPENSSL_cleanse`, which the compiler cannot
/// optimise away.
public final class SecureBytes: @unchecked Sendable {
    // Sendable: the storage is written only inside `init` and is immutable after.
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes.
    public let count: Int

    /// Creates a buffer of `count` bytes filled by `initializer`, which writes
    /// directly into the final storage (no intermediate copy).
    public init(count: Int, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0)
        self.count = count
        storage = Self.allocateUndumped(byteCount: max(count, 1))
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        // Every stored property is set: if `initializer` throws, Swift runs
        // `deinit`, which wipes and frees the storage (freeing it here too
        // would free it twice).
        try initializer(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Copies `bytes` into secure storage. The caller remains responsible for
    /// wiping its own copy.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { buffer in
            var i = 0
            for byte in bytes {
                buffer[i] = byte
                i += 1
            }
        }
    }

    /// Creates `count` bytes from the operating system's cryptographic random
    /// generator (OpenSSL `RAND_bytes`).
    public convenience init(randomCount count: Int) {
        self.init(count: count) { buffer in SecureRandom.fill(buffer) }
    }

    deinit {
        SecureMemory.zero(storage)
        Self.deallocateUndumped(storage)
    }

    /// Whole pages, kept out of core dumps (`MADV_DONTDUMP`): a dump taken
    /// while a key is live does not hold it. On a system without it, an
    /// ordinary allocation.
    private static func allocateUndumped(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        #if os(Linux)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = (byteCount + page - 1) / page * page
        var start: UnsafeMutableRawPointer?
        if posix_memalign(&start, page, size) == 0, let start {
            _ = madvise(start, size, MADV_DONTDUMP)
            return UnsafeMutableRawBufferPointer(start: start, count: size)
        }
        #endif
        return .allocate(byteCount: byteCount, alignment: 16)
    }

    private static func deallocateUndumped(_ storage: UnsafeMutableRawBufferPointer) {
        #if os(Linux)
        // The pages go back to the allocator, which may hand them to anything.
        _ = madvise(storage.baseAddress, storage.count, MADV_DODUMP)
        free(storage.baseAddress)
        #else
        storage.deallocate()
        #endif
    }

    /// Calls `body` with the secret bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }
}

extension SecureBytes: Equatable {
    /// Compares in constant time (OpenSSL `CRYPTO_memcmp`) when the lengths match.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                guard a.count == b.count else { return false }
                if a.count == 0 { return true }
                return CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
            }
        }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Says how many bytes there are, never what they are.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    /// The same redacted description.
    public var debugDescription: String { description }
}
