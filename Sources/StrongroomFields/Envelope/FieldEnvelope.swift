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
    static func plaintextByteCount(_ value: DatabaseValue) -> Int {
        precondition(!value.isNull, "NULL is never sealed")
        return 1 + payloadByteCount(value)
    }

    static func writePlaintext(_ value: DatabaseValue, to out: inout Writer) {
        out.write(valueType(value))
        writePayload(value, to: &out)
    }

    /// u32(number of parts) || each part: type || u32(len payload) ||
    /// payload. (NULL, 0x00 || u32(0), is refused before sealing: see
    /// FieldCipher.seal.)
    static func rowKeyByteCount(_ rowKey: [DatabaseValue]) -> Int {
        var count = 4
        for part in rowKey { count += typedByteCount(part) }
        return count
    }

    static func writeRowKey(_ rowKey: [DatabaseValue], to out: inout Writer) {
        out.write(bigEndian: UInt32(rowKey.count))
        for part in rowKey { writeTyped(part, to: &out) }
    }

    /// One value as the row key writes each part: type (0 for NULL) ||
    /// u32(len payload) || payload.
    static func typedByteCount(_ value: DatabaseValue) -> Int {
        5 + payloadByteCount(value)
    }

    static func writeTyped(_ value: DatabaseValue, to out: inout Writer) {
        out.write(value.isNull ? 0 : valueType(value))
        out.write(bigEndian: UInt32(payloadByteCount(value)))
        writePayload(value, to: &out)
    }

    private static func valueType(_ value: DatabaseValue) -> UInt8 {
        switch value {
        case .null: 0
        case .integer: ValueType.integer.rawValue
        case .real: ValueType.real.rawValue
        case .text: ValueType.text.rawValue
        case .blob: ValueType.blob.rawValue
        }
    }

    private static func payloadByteCount(_ value: DatabaseValue) -> Int {
        switch value {
        case .null: 0
        case .integer, .real: 8
        case .text(let s): s.utf8.count
        case .blob(let b): b.count
        }
    }

    private static func writePayload(_ value: DatabaseValue, to out: inout Writer) {
        switch value {
        case .null: break
        case .integer(let n): out.write(bigEndian: UInt64(bitPattern: n))
        case .real(let d): out.write(bigEndian: d.bitPattern)
        case .text(var s): s.withUTF8 { out.write(UnsafeRawBufferPointer($0)) }
        case .blob(let b): b.withUnsafeBytes { out.write($0) }
        }
    }

    /// Writes encodings into memory sized beforehand (with the counts
    /// above): sealing neither grows arrays nor copies a value twice. A
    /// write past the end traps rather than overrun the buffer.
    struct Writer {
        private(set) var position: UnsafeMutableRawPointer
        private let end: UnsafeMutableRawPointer

        init(_ buffer: UnsafeMutableRawBufferPointer) {
            position = buffer.baseAddress!
            end = buffer.baseAddress! + buffer.count
        }

        /// True when exactly the whole buffer was written.
        var isAtEnd: Bool { position == end }

        private mutating func advance(_ count: Int) -> UnsafeMutableRawPointer {
            precondition(end - position >= count, "an encoding is longer than its byte count")
            defer { position += count }
            return position
        }

        mutating func write(_ byte: UInt8) {
            advance(1).storeBytes(of: byte, as: UInt8.self)
        }

        mutating func write(bigEndian value: UInt32) {
            advance(4).storeBytes(of: value.bigEndian, as: UInt32.self)
        }

        mutating func write(bigEndian value: UInt64) {
            advance(8).storeBytes(of: value.bigEndian, as: UInt64.self)
        }

        mutating func write(_ bytes: UnsafeRawBufferPointer) {
            guard let start = bytes.baseAddress, bytes.count > 0 else { return }
            advance(bytes.count).copyMemory(from: start, byteCount: bytes.count)
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
            // Never repaired: text that is not UTF-8 is no value Strongroom
            // writes. ASCII (most text) is valid UTF-8 as it is, and
            // String(decoding:) makes it through its specialized path:
            // String(validating:) on raw bytes takes a generic one that
            // looks up type metadata on every call.
            if payload.allSatisfy({ $0 < 0x80 }) { return .text(String(decoding: payload, as: UTF8.self)) }
            return String(validating: payload, as: UTF8.self).map(DatabaseValue.text)
        case .blob:
            return .blob(Array(payload))
        }
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
}
