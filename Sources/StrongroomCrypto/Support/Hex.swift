/// Hexadecimal encoding of secret and public bytes.
public enum Hex {
    /// Lowercase hex of `bytes`. For public values (salts, digests) only.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = ""
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }

    /// Decodes lowercase or uppercase hex into secure storage, or returns nil
    /// when `text` is not an even number of hex digits. The input is not echoed
    /// anywhere.
    public static func decodeSecret(_ text: UnsafeRawBufferPointer) -> SecureBytes? {
        guard text.count % 2 == 0 else { return nil }
        var valid = true
        let result = SecureBytes(count: text.count / 2) { out in
            for i in 0..<(text.count / 2) {
                guard let hi = value(of: text[2 * i]), let lo = value(of: text[2 * i + 1]) else {
                    valid = false
                    return
                }
                out[i] = hi << 4 | lo
            }
        }
        return valid ? result : nil
    }

    /// Writes the lowercase hex of `secret` into new secure storage, with
    /// `prefix` and `suffix` bytes around it (for `x'…'` key literals).
    public static func encodeSecret(_ secret: SecureBytes, prefix: [UInt8] = [], suffix: [UInt8] = []) -> SecureBytes {
        secret.withUnsafeBytes { bytes in
            SecureBytes(count: prefix.count + bytes.count * 2 + suffix.count) { out in
                var i = 0
                for b in prefix { out[i] = b; i += 1 }
                for byte in bytes {
                    out[i] = asciiDigits[Int(byte >> 4)]
                    out[i + 1] = asciiDigits[Int(byte & 0x0F)]
                    i += 2
                }
                for b in suffix { out[i] = b; i += 1 }
            }
        }
    }

    /// True when `byte` is one of `0-9a-f` (lowercase only).
    public static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
    }

    private static let digits: [Character] = Array("0123456789abcdef")
    private static let asciiDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x61...0x66: return byte - 0x61 + 10
        case 0x41...0x46: return byte - 0x41 + 10
        default: return nil
        }
    }
}
