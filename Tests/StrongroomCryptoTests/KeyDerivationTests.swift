import StrongroomCrypto
import Testing

/// Known answers from RFC 6070 (PBKDF2-HMAC-SHA1) and RFC 7914 §11
/// (PBKDF2-HMAC-SHA256), plus SQLCipher's own use of PBKDF2.
@Suite("PBKDF2 known answers")
struct KeyDerivationTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let password: String
        let salt: String
        let hash: PBKDF2.Hash
        let iterations: Int
        let expected: String
        var testDescription: String { "\(hash) c=\(iterations) dkLen=\(expected.count / 2)" }
    }

    static let vectors: [Vector] = [
        // RFC 6070 §2
        Vector(password: "password", salt: "salt", hash: .sha1, iterations: 1, expected: "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        Vector(password: "password", salt: "salt", hash: .sha1, iterations: 2, expected: "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        Vector(password: "password", salt: "salt", hash: .sha1, iterations: 4096, expected: "4b007901b765489abead49d926f721d065a429c1"),
        Vector(password: "passwordPASSWORDpassword", salt: "saltSALTsaltSALTsaltSALTsaltSALTsalt", hash: .sha1, iterations: 4096,
               expected: "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
        // RFC 7914 §11
        Vector(password: "passwd", salt: "salt", hash: .sha256, iterations: 1,
               expected: "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
    ]

    @Test(arguments: vectors)
    func knownAnswer(_ vector: Vector) throws {
        let derived = try PBKDF2.deriveKey(
            from: SecureBytes(copying: vector.password.utf8), salt: Array(vector.salt.utf8),
            hash: vector.hash, iterations: vector.iterations, byteCount: vector.expected.count / 2)
        let hex = derived.withUnsafeBytes { Hex.encode($0) }
        #expect(hex == vector.expected)
    }

    @Test func rejectsNonsenseParameters() {
        #expect(throws: CryptoError.self) {
            try PBKDF2.deriveKey(from: SecureBytes(copying: [1]), salt: [], hash: .sha1, iterations: 0, byteCount: 32)
        }
    }
}

@Suite("SHA-256, hex and secure bytes")
struct PrimitiveTests {
    @Test func sha256KnownAnswers() {
        // FIPS 180-2 Appendix B.1 and the empty message.
        #expect(Hex.encode(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var incremental = SHA256()
        incremental.update(Array("a".utf8))
        incremental.update(Array("bc".utf8))
        #expect(Hex.encode(incremental.finalize()) == Hex.encode(SHA256.hash(Array("abc".utf8))))
    }

    @Test func sha256RestartsOnOneContext() {
        var hash = SHA256()
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        for message in ["abc", "", "abc"] {
            hash.update(Array(message.utf8))
            digest.withUnsafeMutableBytes { hash.finalizeAndRestart(into: $0) }
            #expect(digest == SHA256.hash(Array(message.utf8)))
        }
    }

    @Test func secureBytesCompareAndDescribeSafely() {
        let a = SecureBytes(copying: [1, 2, 3])
        #expect(a == SecureBytes(copying: [1, 2, 3]))
        #expect(a != SecureBytes(copying: [1, 2, 4]))
        #expect(a != SecureBytes(copying: [1, 2]))
        #expect("\(a)" == "SecureBytes(3 bytes, redacted)")
        let random = SecureBytes(randomCount: 32)
        #expect(random.count == 32)
        #expect(random != SecureBytes(randomCount: 32))
    }

    /// An initializer that throws must free the storage once: the throw
    /// path and `deinit` both freed it (glibc aborts on the second free).
    @Test func secureBytesWhoseInitializerThrowsAreFreedOnce() {
        struct Refused: Error {}
        for _ in 0..<100 {
            #expect(throws: Refused.self) {
                _ = try SecureBytes(count: 48) { buffer in
                    buffer[0] = 1
                    throw Refused()
                }
            }
        }
        // The allocator is still sound.
        #expect(SecureBytes(randomCount: 48).count == 48)
    }

    @Test func hexRoundTripAndRejection() throws {
        let text = Array("00ff10Ab".utf8)
        let decoded = try #require(text.withUnsafeBytes { Hex.decodeSecret($0) })
        #expect(decoded == SecureBytes(copying: [0x00, 0xFF, 0x10, 0xAB]))
        #expect(Array("abc".utf8).withUnsafeBytes { Hex.decodeSecret($0) } == nil)
        #expect(Array("zz".utf8).withUnsafeBytes { Hex.decodeSecret($0) } == nil)
        let literal = Hex.encodeSecret(SecureBytes(copying: [0xAB, 0x01]), prefix: Array("x'".utf8), suffix: Array("'".utf8))
        #expect(literal == SecureBytes(copying: Array("x'ab01'".utf8)))
    }
}
