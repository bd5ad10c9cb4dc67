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
            // `cached` is the box of a KeyedDecodingContainer<Key> made below.
            return unsafeBitCast(cached, to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(KeyedContainer<Key>(source: source))
        // KeyedDecodingContainer wraps a single class reference (its box); cache
        // that reference only when the layout says so.
        if MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size {
            source.cacheContainer(unsafeBitCast(container, to: AnyObject.self), for: keyType)
        }
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "A row decodes into a keyed container (a struct or class), not an array."))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
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

    static func decodeConvertible(_ type: any DatabaseValueConvertible.Type, at index: Int32, source: ColumnReader, key: (any CodingKey)?) throws -> any DatabaseValueConvertible {
        let value = source.databaseValue(at: index)
        guard let result = type.fromDatabaseValue(value) else {
            let path = key.map { [$0] } ?? []
            if value.isNull {
                throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Column \(source.columnName(at: index)) is NULL; declare the property optional to accept NULL."))
            }
            throw DecodingError.typeMismatch(type, .init(codingPath: path, debugDescription: value.conversionAdvice(column: source.columnName(at: index), to: type)))
        }
        return result
    }

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
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "The row has no column named \(key.stringValue)."))
            }
            return index
        }

        private func nullValue<T>(_ key: Key, _ type: T.Type) -> DecodingError {
            DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "Column \(key.stringValue) is NULL; declare the property optional to accept NULL."))
        }

        @inline(__always)
        private func int64(_ key: Key) throws -> Int64 {
            guard let value = source.int64(at: try column(key)) else { throw nullValue(key, Int64.self) }
            return value
        }

        private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
            guard let value = T(exactly: try int64(key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "Column \(key.stringValue) holds an integer out of the range of \(T.self).")
            }
            return value
        }

        @inline(__always)
        private func double(_ key: Key) throws -> Double {
            guard let value = source.double(at: try column(key)) else { throw nullValue(key, Double.self) }
            return value
        }

        @inline(__always)
        private func text(_ key: Key) throws -> String {
            guard let value = source.text(at: try column(key)) else { throw nullValue(key, String.self) }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { source.isNull(at: try column(key)) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try int64(key) != 0 }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try text(key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try double(key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try double(key)) }
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


        // Optional properties: one column lookup instead of the default
        // contains + decodeNil + decode. A missing column decodes as nil.
        @inline(__always)
        private func presentColumn(_ key: Key) -> Int32? {
            guard let index = source.columnIndex(forKey: key.stringValue), !source.isNull(at: index) else { return nil }
            return index
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { source.columnIndex(forKey: key.stringValue).flatMap { source.int64(at: $0) }.map { $0 != 0 } }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { source.columnIndex(forKey: key.stringValue).flatMap { source.text(at: $0) } }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { source.columnIndex(forKey: key.stringValue).flatMap { source.double(at: $0) } }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { source.columnIndex(forKey: key.stringValue).flatMap { source.int64(at: $0) } }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { presentColumn(key) == nil ? nil : try decode(type, forKey: key) }

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

        func decodeNil() -> Bool { source.isNull(at: index) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try RowDecoder.decodeConvertible(convertible, at: index, source: source, key: nil) as! T
            }
            guard let text = source.text(at: index) else {
                throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "Column \(source.columnName(at: index)) is NULL."))
            }
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        }
    }
}
