import StrongroomCrypto

/// The row count and content hash of one table.
///
/// The hash does not depend on the order of the rows: each row is hashed
/// with its values' types (SHA-256), the row hashes are added together
/// modulo 2^256, and the sum and the row count are hashed again. It is
/// computed in one pass, in constant memory, and in parts that add up (a
/// table can be hashed by several connections at once).
public struct TableDigest: Sendable, Hashable, Codable {
    /// The table name.
    public let name: String
    /// The number of rows.
    public let rowCount: Int
    /// SHA-256 (hex) over the multiset of the table's rows.
    public let sha256: String
}

/// The order-independent sum of row hashes: 256-bit addition of each row's
/// SHA-256 (read as a little-endian number), and the row count.
struct RowHashSum: Sendable {
    private(set) var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private(set) var count = 0

    /// Adds one 32-byte row hash.
    mutating func add(_ hash: UnsafeRawBufferPointer) {
        add(hash.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian,
            hash.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian,
            hash.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
            hash.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
        count += 1
    }

    /// Adds the rows of another part of the same table.
    mutating func add(_ other: RowHashSum) {
        add(other.words.0, other.words.1, other.words.2, other.words.3)
        count += other.count
    }

    private mutating func add(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) {
        var carry: Bool
        (words.0, carry) = words.0.addingReportingOverflow(a)
        (words.1, carry) = Self.add(words.1, b, carry)
        (words.2, carry) = Self.add(words.2, c, carry)
        (words.3, _) = Self.add(words.3, d, carry)
    }

    private static func add(_ x: UInt64, _ y: UInt64, _ carryIn: Bool) -> (UInt64, Bool) {
        let (sum, overflow) = x.addingReportingOverflow(y)
        let (withCarry, overflowCarry) = sum.addingReportingOverflow(carryIn ? 1 : 0)
        return (withCarry, overflow || overflowCarry)
    }

    /// The table's digest: SHA-256 of a version label, the row count and the sum.
    func digest(name: String) -> TableDigest {
        var hash = SHA256()
        hash.update(Array("strongroom table digest v2".utf8))
        var fields = [UInt64(count).bigEndian, words.0.littleEndian, words.1.littleEndian, words.2.littleEndian, words.3.littleEndian]
        fields.withUnsafeMutableBytes { hash.update(UnsafeRawBufferPointer($0)) }
        return TableDigest(name: name, rowCount: count, sha256: Hex.encode(hash.finalize()))
    }
}

extension TableDigest: CustomStringConvertible {
    /// "customer: 59 rows, sha256 55f8d575…".
    public var description: String { "\(name): \(rowCount) rows, sha256 \(sha256.prefix(16))…" }
}
