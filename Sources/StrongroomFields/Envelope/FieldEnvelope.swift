import Strongroom

/// The byte layout of a sealed value (format version 1), written down in
/// <doc:SealedValueFormat>.
enum FieldEnvelope {
    static let version: UInt8 = 1

    enum Algorithm: UInt8 {
        /// nonce (12) || ciphertext || tag (16)
        case aes256GCM = 1
        /// synthetic IV (16) || ciphertext
        case aes256SIV = 2
    }

    /// version (1) || algorithm (1) || key id (4, big-endian)
    static let headerByteCount = 6
    /// The HKDF salt, and the label that starts the associated data.
    static let label = Array("strongroom.field.v1".utf8)
    /// A blind index: key id (4, big-endian) || HMAC-SHA256 truncated to 16 bytes.
    static let blindIndexTagByteCount = 16

    /// Plaintext value types (first byte of the plaintext).
    enum ValueType: UInt8 {
        case integer = 1, real = 2, text = 3, blob = 4
    }

    /// type || payload: integer and real as 8 big-endian bytes (two's
    /// complement, IEEE 754 bits), text as UTF-8, blob as is. Never empty.
    static func appendPlaintext(_ value: DatabaseValue, to out: inout [UInt8]) {
        switch value {
        case .null:
            preconditionFailure("NULL is never sealed")
        case .integer(let n):
            out.append(ValueType.integer.rawValue)
            appendBigEndian(UInt64(bitPattern: n), to: &out)
        case .real(let d):
            out.append(ValueType.real.rawValue)
            appendBigEndian(d.bitPattern, to: &out)
        case .text(let s):
            out.append(ValueType.text.rawValue)
            out.append(contentsOf: s.utf8)
        case .blob(let b):
            out.append(ValueType.blob.rawValue)
            out.append(contentsOf: b)
        }
    }

    static func decodePlaintext(_ bytes: UnsafeRawBufferPointer) -> DatabaseValue? {
        guard let first = bytes.first, let type = ValueType(rawValue: first) else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[1...])
        switch type {
        case .integer:
            guard payload.count == 8 else { return nil }
            return .integer(Int64(bitPattern: readBigEndian(payload)))
        case .real:
            guard payload.count == 8 else { return nil }
            return .real(Double(bitPattern: readBigEndian(payload)))
        case .text:
            return .text(String(decoding: payload, as: UTF8.self))
        case .blob:
            return .blob(Array(payload))
        }
    }

    @inline(__always)
    static func appendBigEndian(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    @inline(__always)
    static func appendBigEndian(_ value: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    static func readBigEndian(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A name as it is bound: SQLite compares names without ASCII case, so
    /// they are bound in ASCII lower case.
    static func boundName(_ name: String) -> [UInt8] {
        name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
    }

    /// type ‖ u32(len payload) ‖ payload. (NULL, 0x00 ‖ u32(0), is refused
    /// before sealing: see FieldCipher.seal.)
    static func appendRowKeyPart(_ value: DatabaseValue, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(0)
            appendBigEndian(UInt32(0), to: &out)
        case .integer(let n):
            out.append(ValueType.integer.rawValue)
            appendBigEndian(UInt32(8), to: &out)
            appendBigEndian(UInt64(bitPattern: n), to: &out)
        case .real(let d):
            out.append(ValueType.real.rawValue)
            appendBigEndian(UInt32(8), to: &out)
            appendBigEndian(d.bitPattern, to: &out)
        case .text(let s):
            out.append(ValueType.text.rawValue)
            appendBigEndian(UInt32(s.utf8.count), to: &out)
            out.append(contentsOf: s.utf8)
        case .blob(let b):
            out.append(ValueType.blob.rawValue)
            appendBigEndian(UInt32(b.count), to: &out)
            out.append(contentsOf: b)
        }
    }
}
