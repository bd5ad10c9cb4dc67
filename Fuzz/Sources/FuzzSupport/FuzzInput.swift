/// A fuzzer's bytes read front to back as structured values: a selector, a
/// number, a length-prefixed piece. Reads past the end give zeros and empty
/// pieces, so every input, however short, means something.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// True when every byte has been read.
    public var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// One of `count` choices (0 ..< count), from the next byte.
    public mutating func choice(_ count: Int) -> Int {
        Int(byte()) % count
    }

    /// The next 8 bytes, big-endian (missing bytes are zeros).
    public mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    /// The next `count` bytes, or fewer at the end.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return Array(bytes[min(position, end)..<end])
    }

    /// A piece of at most `maximum` bytes, its length given by the next byte.
    public mutating func piece(maximum: Int = 255) -> [UInt8] {
        bytes(Int(byte()) % (maximum + 1))
    }

    /// Every byte not read yet.
    public mutating func rest() -> [UInt8] {
        bytes(bytes.count - position)
    }
}
