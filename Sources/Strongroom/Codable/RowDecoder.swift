import Foundation

/// Decodes one row into a `Decodable` value, reading columns by coding key.
///
/// Properties whose type is ``DatabaseValueConvertible`` read their column
/// directly; any other `Decodable` property is read from JSON text.
struct RowDecoder: Decoder {
    let source: ColumnReader
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        let keyType = ObjectIdentifier(Key.self)
        if source.cachedContainerKeyType == keyType, let cached = source.cachedContainer {
            // Made below for this same Key type. Read through the holder's
            // own method: naming KeyedDecodingContainer<Key> here would look
            // its metadata up at run time on every row (~330 instructions).
            return unsafeDowncast(cached, to: CachedContainer<KeyedDecodingContainer<Key>>.self).container()
        }
        return makeContainer(keyedBy: type)
    }

    /// A new keyed container, kept by the source for the next rows. Apart,
    /// so that the metadata this needs is not looked up on the cached path.
    @inline(never)
    private func makeContainer<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        let container = KeyedDecodingContainer(KeyedContainer<Key>(source: source))
        source.cacheContainer(CachedContainer(container), for: ObjectIdentifier(Key.self))
        return container
    }

    /// Holds the keyed container made for one `CodingKey` type, for the next
    /// rows. Its method is generic over the container through the holder's
    /// own class metadata, which the object carries: a caller pays no
    /// runtime metadata lookup to get the container back.
    final class CachedContainer<Container> {
        private let value: Container
        init(_ value: Container) { self.value = value }
        // Not inlined: inlined into a caller generic over Key, the copy
        // would look up the container's metadata again.
        @inline(never)
        func container() -> Container { value }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "A row decodes into a keyed container (a struct or class), not an array."))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        if source.isDetached {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: RowDecoder.detachedAdvice))
        }
        guard source.columnCount > 0 else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "The row has no column."))
        }
        return SingleValueContainer(source: source, index: 0)
    }

    /// Decodes `T` from the source's current row.
    @inline(__always)
    static func decode<T: Decodable>(_ type: T.Type, from source: ColumnReader) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            return try decodeConvertible(convertible, at: 0, source: source, key: nil) as! T
        }
        return try T(from: RowDecoder(source: source))
    }

    /// The value at `index` as `type` under the reader's ``ValueConversion``
    /// policy: single values, and every property whose stored class is not
    /// the one its type reads directly.
    static func decodeConvertible(_ type: any DatabaseValueConvertible.Type, at index: Int32, source: ColumnReader, key: (any CodingKey)?) throws -> any DatabaseValueConvertible {
        // Detached, every column reads as NULL, which an optional would
        // take for a value.
        if source.isDetached {
            throw DecodingError.valueNotFound(type, .init(codingPath: key.map { [$0] } ?? [], debugDescription: detachedAdvice))
        }
        let value = source.databaseValue(at: index)
        guard let result = value.converted(to: type, source.conversion) else {
            let path = key.map { [$0] } ?? []
            if value.isNull {
                throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Column \(source.columnName(at: index)) is NULL; declare the property optional to accept NULL."))
            }
            throw DecodingError.typeMismatch(type, .init(codingPath: path, debugDescription: value.conversionAdvice(column: source.columnName(at: index), to: type, policy: source.conversion)))
        }
        return result
    }

    /// Why a decoder or container kept past `init(from:)` reads nothing.
    static let detachedAdvice = "The statement this decoder read from is no longer there (released, or prepared again): read every value inside init(from:), not from a decoder or container kept after it returned."

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let source: ColumnReader
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] {
            (0..<Int32(source.columnCount)).compactMap { Key(stringValue: source.columnName(at: $0)) }
        }

        func contains(_ key: Key) -> Bool { source.columnIndex(forKey: key.stringValue) != nil }

        @inline(__always)
        private func column(_ key: Key) throws -> Int32 {
            guard let index = source.columnIndex(forKey: key.stringValue) else {
                try attached(key)
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "The row has no column named \(key.stringValue)."))
            }
            return index
        }

        /// Throws when the source is detached from its statement (no key
        /// is found then, and none must pass for a missing optional).
        private func attached(_ key: Key) throws {
            if source.isDetached {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: RowDecoder.detachedAdvice))
            }
        }

        /// The slow path: the value through the conversion policy, and
        /// every error (NULL, a storage class that does not convert).
        private func converted<T: DatabaseValueConvertible>(_ type: T.Type, _ index: Int32, _ key: Key) throws -> T {
            try RowDecoder.decodeConvertible(type, at: index, source: source, key: key) as! T
        }

        // The fast path: `stored` reads the value when it is stored in the
        // class the type reads directly (one SQLite call); anything else,
        // NULL included, goes through the conversion policy.

        @inline(__always)
        private func value<T: DatabaseValueConvertible>(_ key: Key, _ stored: (Int32) -> T?) throws -> T {
            let index = try column(key)
            if let value = stored(index) { return value }
            return try converted(T.self, index, key)
        }

        /// The same for an optional property: one column lookup instead of
        /// the default contains + decodeNil + decode; a missing column or
        /// NULL is nil.
        @inline(__always)
        private func valueIfPresent<T: DatabaseValueConvertible>(_ key: Key, _ stored: (Int32) -> T?) throws -> T? {
            guard let index = source.columnIndex(forKey: key.stringValue) else {
                try attached(key)
                return nil
            }
            if let value = stored(index) { return value }
            return source.isNull(at: index) ? nil : try converted(T.self, index, key)
        }

        private func int64(_ key: Key) throws -> Int64 { try value(key) { source.int64(at: $0) } }

        private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
            let index = try column(key)
            let stored: Int64
            if let value = source.int64(at: index) {
                stored = value
            } else if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try RowDecoder.decodeConvertible(convertible, at: index, source: source, key: key) as! T
            } else {
                stored = try converted(Int64.self, index, key)
            }
            guard let value = T(exactly: stored) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "Column \(key.stringValue) holds an integer out of the range of \(T.self).")
            }
            return value
        }

        private func double(_ key: Key) throws -> Double { try value(key) { source.double(at: $0) } }
        private func text(_ key: Key) throws -> String { try value(key) { source.text(at: $0) } }
        private func bool(_ key: Key) throws -> Bool { try value(key) { source.int64(at: $0).map { $0 != 0 } } }
        private func float(_ key: Key) throws -> Float {
            try value(key) { source.double(at: $0).flatMap { Float.fromDatabaseValue(.real($0)) } }
        }

        func decodeNil(forKey key: Key) throws -> Bool { source.isNull(at: try column(key)) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try bool(key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try text(key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try double(key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try int64(key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try RowDecoder.decodeConvertible(convertible, at: try column(key), source: source, key: key) as! T
            }
            // Any other Decodable value is stored as JSON text.
            return try JSONDecoder().decode(T.self, from: Data(try text(key).utf8))
        }


        @inline(__always)
        private func presentColumn(_ key: Key) throws -> Int32? {
            guard let index = source.columnIndex(forKey: key.stringValue) else {
                try attached(key)
                return nil
            }
            return source.isNull(at: index) ? nil : index
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try valueIfPresent(key) { source.text(at: $0) } }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try valueIfPresent(key) { source.int64(at: $0) } }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try valueIfPresent(key) { source.int64(at: $0).flatMap(Int.init(exactly:)) } }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try valueIfPresent(key) { source.double(at: $0) } }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try valueIfPresent(key) { source.int64(at: $0).map { $0 != 0 } } }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try presentColumn(key) == nil ? nil : try decode(type, forKey: key) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "Nested containers are not stored in columns; give the property a Codable type (stored as JSON)."))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "Nested containers are not stored in columns; give the property a Codable type (stored as JSON)."))
        }
        func superDecoder() throws -> any Decoder { RowDecoder(source: source) }
        func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(source: source) }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let source: ColumnReader
        let index: Int32
        var codingPath: [any CodingKey] { [] }

        // Detached: not NULL, so that the decode that follows says why it fails.
        func decodeNil() -> Bool { !source.isDetached && source.isNull(at: index) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try RowDecoder.decodeConvertible(convertible, at: index, source: source, key: nil) as! T
            }
            let text = try RowDecoder.decodeConvertible(String.self, at: index, source: source, key: nil) as! String
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        }
    }
}
