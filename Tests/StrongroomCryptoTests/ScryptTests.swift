import StrongroomCrypto
import Testing

/// scrypt (RFC 7914), which wraps key files under a passphrase: the RFC's
/// own test vectors (§12), and the bounds that keep a file from asking for
/// unbounded memory.
@Suite("scrypt known answers")
struct ScryptTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let password: String
        let salt: String
        let log2N: UInt8, r: UInt8, p: UInt8
        let expected: String
        var testDescription: String { "N=2^\(log2N) r=\(r) p=\(p)" }
    }

    // RFC 7914 §12 (the fourth, N = 2^20, takes a gigabyte and is left out).
    static let vectors: [Vector] = [
        Vector(password: "", salt: "", log2N: 4, r: 1, p: 1,
               expected: "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        Vector(password: "password", salt: "NaCl", log2N: 10, r: 8, p: 16,
               expected: "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        Vector(password: "pleaseletmein", salt: "SodiumChloride", log2N: 14, r: 8, p: 1,
               expected: "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    ]

    @Test(arguments: vectors)
    func knownAnswer(_ vector: Vector) throws {
        let derived = try Scrypt.deriveKey(from: SecureBytes(copying: vector.password.utf8), salt: Array(vector.salt.utf8),
                                           parameters: Scrypt.Parameters(log2N: vector.log2N, r: vector.r, p: vector.p),
                                           byteCount: vector.expected.count / 2)
        #expect(derived.withUnsafeBytes { Hex.encode($0) } == vector.expected)
    }

    @Test func theInteractiveCostIs128MiBAndParametersBeyondAGibibyteAreRefused() throws {
        #expect(Scrypt.Parameters.interactive.memory >= 128 << 20 && Scrypt.Parameters.interactive.memory < 129 << 20)
        // RFC 7914's largest example, 1 GiB, is the most a file may ask for.
        #expect(try Scrypt.Parameters(log2N: 20, r: 8, p: 1).memory > 1 << 30)
        // Review: N < 2^(16 r) (RFC 7914 §2, which OpenSSL enforces), and the work N × r × p at most RFC 7914's largest example's.
        for (log2N, r, p) in [(UInt8(21), UInt8(8), UInt8(1)), (20, 9, 1), (0, 8, 1), (31, 1, 1), (10, 0, 1), (10, 8, 0), (10, 8, 17), (30, 255, 255),
                              (17, 1, 1), (16, 1, 1), (20, 8, 2), (20, 8, 16), (17, 8, 9)] {
            #expect(throws: CryptoError.self, "N=2^\(log2N) r=\(r) p=\(p)") { try Scrypt.Parameters(log2N: log2N, r: r, p: p) }
        }
    }

    @Test func anotherSaltOrPassphraseDerivesAnotherKey() throws {
        let parameters = try Scrypt.Parameters(log2N: 10, r: 8, p: 1)
        func derive(_ password: String, _ salt: String) throws -> String {
            try Scrypt.deriveKey(from: SecureBytes(copying: password.utf8), salt: Array(salt.utf8), parameters: parameters, byteCount: 32)
                .withUnsafeBytes { Hex.encode($0) }
        }
        let base = try derive("passphrase", "salt-1")
        #expect(try derive("passphrase", "salt-1") == base)
        #expect(try derive("passphrase", "salt-2") != base)
        #expect(try derive("passphrasf", "salt-1") != base)
        #expect(throws: CryptoError.self) {
            try Scrypt.deriveKey(from: SecureBytes(copying: [1]), salt: [], parameters: parameters, byteCount: 0)
        }
    }
}
