import Foundation

/// Receives the values a record encodes, one per coding key.
protocol RecordSink: AnyObject {
    func put(_ value: DatabaseValue, forKey key: String) throws
}

/// Encodes an `Encodable` record into a sink: straight into a statement's
/// named parameters (the fast path), or into a list of keys.
///
/// ``DatabaseValueConvertible`` properties are stored as themselves; any other
/// `Encodable` property is stored as JSON text. `nil` is stored as NULL.
struct RecordEncoder<Sink: RecordSink>: Encoder {
    let sink: Sink
    /// Where the container of the sink's last record is kept, when the
    /// sink's owner keeps one (a connection's cached INSERT statements).
    var kept: KeptEncodingContainer? = nil
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let kept, let container = kept.container(for: sink, keyedBy: Key.self) { return container }
        return makeContainer(keyedBy: type)
    }

    /// A new container, kept when the sink's owner keeps one. Apart, so the
    /// metadata it needs is not looked up when a kept container serves.
    @inline(never)
    private func makeContainer<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let container = KeyedEncodingContainer(KeyedContainer<Key>(sink: sink))
        kept?.keep(container, for: sink)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnsupportedContainer(message: "A record encodes into a keyed container (a struct or class), not an array.")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        UnsupportedContainer(message: "A record encodes into a keyed container (a struct or class), not a single value.")
    }

    static func databaseValue<T: Encodable>(of value: T) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible {
            return convertible.databaseValue
        }
        let data = try JSONEncoder().encode(value)
        return .text(String(decoding: data, as: UTF8.self))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let sink: Sink
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { try sink.put(.null, forKey: key.stringValue) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try sink.put(.integer(value ? 1 : 0), forKey: key.stringValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { try sink.put(.text(value), forKey: key.stringValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try sink.put(.real(value), forKey: key.stringValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try sink.put(.real(Double(value)), forKey: key.stringValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try sink.put(.integer(value), forKey: key.stringValue) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try sink.put(try Self.integer(value, key), forKey: key.stringValue) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try sink.put(.integer(Int64(value)), forKey: key.stringValue) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try sink.put(try Self.integer(value, key), forKey: key.stringValue) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try sink.put(try RecordEncoder.databaseValue(of: value), forKey: key.stringValue)
        }

        // Synthesized Encodable skips nil optionals through encodeIfPresent;
        // store them as NULL instead, so every key reaches the statement.
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) } }

        static func integer<T: BinaryInteger>(_ value: T, _ key: Key) throws -> DatabaseValue {
            guard let n = Int64(exactly: value) else {
                throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "\(key.stringValue) does not fit a 64-bit SQLite integer."))
            }
            return .integer(n)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            FailingSink.keyedContainer(message: "Nested containers are not stored in columns; give the property a Codable type (stored as JSON).")
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            UnsupportedContainer(message: "Nested containers are not stored in columns; give the property a Codable type (stored as JSON).")
        }
        mutating func superEncoder() -> any Encoder { RecordEncoder(sink: sink) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(sink: sink) }
    }
}

/// The keyed container a sink's last record encoded into, kept for the next
/// record with the same coding keys.
///
/// Making a container costs three lookups of generic metadata and an
/// allocation, for every record (the record's `encode(to:)` is not
/// specialized for the encoder: it reaches it as `any Encoder`). The
/// container holds nothing but its sink, so one made for a sink serves
/// every record that sink receives.
///
/// The container holds its sink strongly, so the sink must not own this
/// object (a cycle): the connection owns it, for the INSERT statements it
/// caches, and forgets it with them.
final class KeptEncodingContainer {
    private var sink: ObjectIdentifier?
    private var keys: ObjectIdentifier?
    /// A `KeyedEncodingContainer`: a struct of one reference, its box.
    private var box: AnyObject?

    /// The container kept for `sink` and `Key`, if any. The identities
    /// compared are alive: the kept box holds the sink, and a type's
    /// metadata is never freed.
    @inline(__always)
    func container<Key: CodingKey>(for sink: AnyObject, keyedBy: Key.Type) -> KeyedEncodingContainer<Key>? {
        guard let box, self.sink == ObjectIdentifier(sink), keys == ObjectIdentifier(Key.self) else { return nil }
        return unsafeBitCast(box, to: KeyedEncodingContainer<Key>.self)
    }

    /// Keeps `container`, made for `sink`, in place of the last one.
    func keep<Key: CodingKey>(_ container: KeyedEncodingContainer<Key>, for sink: AnyObject) {
        box = unsafeBitCast(container, to: AnyObject.self)
        self.sink = ObjectIdentifier(sink)
        keys = ObjectIdentifier(Key.self)
    }

    /// Releases the container (and so its sink).
    func forget() {
        box = nil
        sink = nil
        keys = nil
    }
}

/// A container that fails on first use, for shapes a row cannot hold.
struct UnsupportedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    let message: String
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    private func fail() -> EncodingError { EncodingError.invalidValue((), .init(codingPath: [], debugDescription: message)) }
    mutating func encodeNil() throws { throw fail() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw fail() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        FailingSink.keyedContainer(message: message)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { RecordEncoder(sink: FailingSink(message: message)) }
}

/// A sink that refuses every value: what a container a row cannot hold writes
/// to, so the record fails to encode instead of losing or flattening values.
final class FailingSink: RecordSink {
    let message: String
    init(message: String) { self.message = message }
    func put(_ value: DatabaseValue, forKey key: String) throws {
        throw EncodingError.invalidValue(key, .init(codingPath: [], debugDescription: message))
    }

    static func keyedContainer<Key: CodingKey>(message: String) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordEncoder<FailingSink>.KeyedContainer<Key>(sink: FailingSink(message: message)))
    }
}

/// A statement is the sink of the records bound to it: each encoded key is
/// bound to the statement parameter of the same name.
///
/// No object is made per record: the encoder holds the statement itself,
/// strongly, so an encoder that a record's `encode(to:)` keeps past the call
/// never reaches a freed statement.
extension Statement: RecordSink {
    @inline(__always)
    func put(_ value: DatabaseValue, forKey key: String) throws {
        guard let index = encodingKeys.index(for: key, resolve: { parameterIndex(named: $0) }) else {
            return // A property the statement does not use.
        }
        try bind(value, at: index)
        encodingKeys.markBound(index)
    }
}

/// Collects the keys a record encodes, in order.
final class KeyListSink: RecordSink {
    var keys: [String] = []
    func put(_ value: DatabaseValue, forKey key: String) throws {
        if !keys.contains(key) { keys.append(key) }
    }
}

/// Collects the keys and values a record encodes, in order (a later value
/// of the same key replaces the earlier one).
final class ValueListSink: RecordSink {
    var keys: [String] = []
    var values: [DatabaseValue] = []
    func put(_ value: DatabaseValue, forKey key: String) throws {
        if let index = keys.firstIndex(of: key) {
            values[index] = value
        } else {
            keys.append(key)
            values.append(value)
        }
    }
}
