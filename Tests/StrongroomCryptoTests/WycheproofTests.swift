import Foundation
import StrongroomCrypto
import Testing

/// Project Wycheproof's published vectors (Tests/StrongroomCryptoTests/Vectors,
/// Apache-2.0) through Strongroom's primitives: every valid case must give
/// the expected output, every invalid one must be refused.
@Suite("Wycheproof known answers")
struct WycheproofTests {
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        let tcId: Int
        let comment: String
        let result: String
        let key: String?
        let iv: String?
        let aad: String?
        let msg: String?
        let ct: String?
        let tag: String?
        let ikm: String?
        let salt: String?
        let info: String?
        let size: Int?
        let okm: String?
        var groupTagSize = 0
        var groupIVSize = 0

        enum CodingKeys: String, CodingKey {
            case tcId, comment, result, key, iv, aad, msg, ct, tag, ikm, salt, info, size, okm
        }

        var valid: Bool { result == "valid" }
        var testDescription: String { "tcId \(tcId) \(comment) (\(result))" }
    }

    struct Group: Decodable {
        let ivSize: Int?
        let tagSize: Int?
        let tests: [Case]
    }

    struct File: Decodable {
        let testGroups: [Group]
    }

    static func cases(_ name: String) -> [Case] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/\(name).json")
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data) else { return [] }
        return file.testGroups.flatMap { group in
            group.tests.map { test in
                var test = test
                test.groupTagSize = group.tagSize ?? 0
                test.groupIVSize = group.ivSize ?? 0
                return test
            }
        }
    }

    static func bytes(_ hex: String?) -> [UInt8] {
        guard let hex else { return [] }
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static let gcm = cases("aes_gcm_test")
    static let siv = cases("aes_siv_cmac_test")
    static let hkdf = cases("hkdf_sha256_test")
    static let hmac = cases("hmac_sha256_test")

    @Test func everyVectorFileLoaded() {
        #expect(Self.gcm.count == 316)
        #expect(Self.siv.count == 442)
        #expect(Self.hkdf.count == 86)
        #expect(Self.hmac.count == 174)
    }

    /// 96-bit nonces and 128-bit tags (the only ones Strongroom makes) are
    /// sealed and opened; any other nonce size is refused.
    @Test(arguments: gcm)
    func aesGCM(_ test: Case) throws {
        let gcm = try AESGCM(anyKey: SecureBytes(copying: Self.bytes(test.key)))
        let iv = Self.bytes(test.iv), aad = Self.bytes(test.aad), msg = Self.bytes(test.msg)
        let ct = Self.bytes(test.ct), tag = Self.bytes(test.tag)
        var opened = [UInt8](repeating: 0, count: ct.count)
        let open = {
            try ct.withUnsafeBytes { c in try iv.withUnsafeBytes { n in try tag.withUnsafeBytes { t in try aad.withUnsafeBytes { a in
                try opened.withUnsafeMutableBytes { p in try gcm.open(c, nonce: n, tag: t, authenticating: a, into: p) }
            } } } }
        }
        guard iv.count == AESGCM.nonceByteCount, tag.count == AESGCM.tagByteCount else {
            #expect((#expect(throws: CryptoError.self) { try open() })?.code == .invalidArgument)
            return
        }
        if test.valid {
            var sealed = [UInt8](repeating: 0, count: msg.count), sealedTag = [UInt8](repeating: 0, count: 16)
            try msg.withUnsafeBytes { m in try iv.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                try sealed.withUnsafeMutableBytes { c in try sealedTag.withUnsafeMutableBytes { t in
                    try gcm.seal(m, nonce: n, authenticating: a, ciphertext: c, tag: t)
                } }
            } } }
            #expect(sealed == ct)
            #expect(sealedTag == tag)
            try open()
            #expect(opened == msg)
        } else {
            let error = #expect(throws: CryptoError.self) { try open() }
            #expect(error?.code == .authenticationFailed)
            #expect(opened.allSatisfy { $0 == 0 }, "no unauthenticated plaintext is left in the buffer")
        }
    }

    /// Deterministic AES-SIV (RFC 5297) with one associated-data component.
    /// An empty plaintext is refused by design (OpenSSL 3.0 fails on it).
    @Test(arguments: siv)
    func aesSIV(_ test: Case) throws {
        let siv = try AESSIV(anyKey: SecureBytes(copying: Self.bytes(test.key)))
        let aad = Self.bytes(test.aad), msg = Self.bytes(test.msg), ct = Self.bytes(test.ct)
        if msg.isEmpty && test.valid {
            #expect((#expect(throws: CryptoError.self) { try siv.seal(msg, authenticating: aad) })?.code == .invalidArgument)
            #expect((#expect(throws: CryptoError.self) { try siv.open(ct, authenticating: aad) })?.code == .invalidArgument)
            return
        }
        if test.valid {
            #expect(try siv.seal(msg, authenticating: aad) == ct)
            #expect(try siv.open(ct, authenticating: aad) == msg)
        } else {
            #expect(throws: CryptoError.self) { try siv.open(ct, authenticating: aad) }
        }
    }

    @Test(arguments: hmac)
    func hmacSHA256(_ test: Case) throws {
        let hmac = try HMACSHA256(key: SecureBytes(copying: Self.bytes(test.key)))
        let full = hmac.authenticationCode(for: Self.bytes(test.msg))
        let truncated = Array(full.prefix(test.groupTagSize / 8))
        #expect(ConstantTime.equal(truncated, Self.bytes(test.tag)) == test.valid)
        // The context is reused: a second message under the same key gives the same answer.
        #expect(hmac.authenticationCode(for: Self.bytes(test.msg)) == full)
    }

    @Test(arguments: hkdf)
    func hkdfSHA256(_ test: Case) throws {
        let derive = {
            try HKDF.deriveKey(from: SecureBytes(copying: Self.bytes(test.ikm)), salt: Self.bytes(test.salt),
                               info: Self.bytes(test.info), byteCount: test.size ?? 0)
        }
        if test.valid {
            let okm = try derive()
            #expect(okm == SecureBytes(copying: Self.bytes(test.okm)))
        } else {
            #expect((#expect(throws: CryptoError.self) { try derive() })?.code == .invalidArgument)
        }
    }
}

/// What the vectors do not show: contexts reused across values, random
/// nonces, zeroed output after a failed open.
@Suite("AEAD contexts")
struct AEADContextTests {
    @Test func oneGCMInstanceSealsAndOpensManyValuesWithFreshNonces() throws {
        let gcm = try AESGCM(key: SecureBytes(randomCount: AESGCM.keyByteCount))
        var nonces = Set<[UInt8]>()
        for i in 0..<200 {
            let message = Array("value \(i)".utf8), aad = Array("t.c#\(i)".utf8)
            let sealed = try gcm.seal(message, authenticating: aad)
            nonces.insert(Array(sealed.prefix(AESGCM.nonceByteCount)))
            #expect(try gcm.open(sealed, authenticating: aad) == message)
            #expect(throws: CryptoError.self) { try gcm.open(sealed, authenticating: Array("t.c#x".utf8)) }
        }
        #expect(nonces.count == 200)
        #expect(throws: CryptoError.self) { try AESGCM(key: SecureBytes(randomCount: 16)) }
    }

    @Test func oneSIVInstanceIsDeterministicAcrossValues() throws {
        let key = SecureBytes(randomCount: AESSIV.keyByteCount)
        let reused = try AESSIV(key: key)
        for i in 0..<50 {
            let message = Array("ada\(i)@example.com".utf8), aad = Array("users.email".utf8)
            let first = try reused.seal(message, authenticating: aad)
            #expect(try AESSIV(key: key).seal(message, authenticating: aad) == first)
            #expect(try reused.open(first, authenticating: aad) == message)
            #expect(throws: CryptoError.self) { try reused.open(first, authenticating: Array("users.phone".utf8)) }
        }
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equal([], []))
    }
}
