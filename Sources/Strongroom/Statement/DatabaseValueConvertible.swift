public import Foundation

/// A type that converts to and from a ``DatabaseValue``, so it can be bound
/// as an argument and read from a row.
///
/// Conforming types: `Bool`, `Int`, `Int8`…`Int64`, `UInt8`…`UInt32`, `Double`,
/// `Float`, `String`, `[UInt8]`, `Data`, `Date`, `UUID`, ``DatabaseValue`` and
/// `Optional` of any of them (nil is NULL).
///
/// ```swift
/// extension Priority: DatabaseValueConvertible {
///     public var databaseValue: DatabaseValue { .integer(Int64(rawValue)) }
///     public static func fromDatabaseValue(_ value: DatabaseValue) -> Priority? {
///         guard case .integer(let n) = value else { return nil }
///         return Priority(rawValue: Int(n))
///     }
/// }
/// ```
public protocol DatabaseValueConvertible {
    /// The value to store.
    var databaseValue: DatabaseValue { get }
    /// The value read back, or nil when `value` does not convert.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
}

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        guard let wrapped = Wrapped.fromDatabaseValue(value) else { return nil }
        return .some(wrapped)
    }
}

/// Stored as INTEGER 0 or 1.
extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let n): return n != 0
        case .real(let d): return d != 0
        default: return nil
        }
    }
}

/// Integers are stored as INTEGER (64-bit signed).
public protocol DatabaseIntegerConvertible: FixedWidthInteger, DatabaseValueConvertible {}

extension DatabaseIntegerConvertible {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// An INTEGER in range, or a REAL with an integral value in range; else nil.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        switch value {
        case .integer(let n): return Self(exactly: n)
        case .real(let d): return Self(exactly: d)
        default: return nil
        }
    }
}

extension Int: DatabaseIntegerConvertible {}
extension Int8: DatabaseIntegerConvertible {}
extension Int16: DatabaseIntegerConvertible {}
extension Int32: DatabaseIntegerConvertible {}
extension Int64: DatabaseIntegerConvertible {}
extension UInt8: DatabaseIntegerConvertible {}
extension UInt16: DatabaseIntegerConvertible {}
extension UInt32: DatabaseIntegerConvertible {}

/// Stored as REAL.
extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .integer(let n): return Double(exactly: n)
        case .real(let d): return d
        default: return nil
        }
    }
}

/// Stored as REAL. Reading rounds to the nearest `Float`, but a value out of
/// `Float`'s range (it would become infinity, or zero) does not convert.
extension Float: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(Double(self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        let double: Double
        switch value {
        case .integer(let n): double = Double(n)
        case .real(let d): double = d
        default: return nil
        }
        let float = Float(double)
        guard float.isFinite == double.isFinite, (float == 0) == (double == 0) else { return nil }
        return float
    }
}

/// Stored as TEXT (UTF-8).
extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let s) = value { return s }
        return nil
    }
}

/// Stored as BLOB.
extension Array: DatabaseValueConvertible where Element == UInt8 {
    public var databaseValue: DatabaseValue { .blob(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
        switch value {
        case .blob(let b): return b
        case .text(let s): return Array(s.utf8)
        default: return nil
        }
    }
}

/// Stored as BLOB.
extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob([UInt8](self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        [UInt8].fromDatabaseValue(value).map { Data($0) }
    }
}

/// Stored as TEXT in its canonical uppercase form (`"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"`).
extension UUID: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(uuidString) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .text(let s): return UUID(uuidString: s)
        case .blob(let b) where b.count == 16:
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        default: return nil
        }
    }
}

/// Stored as TEXT `"YYYY-MM-DD HH:MM:SS.SSS"` in UTC, the format SQLite's own
/// date functions read and write, so `ORDER BY` sorts chronologically and
/// `date(column)` works. Millisecond precision.
///
/// Reading also accepts `"YYYY-MM-DD"`, `"YYYY-MM-DD HH:MM"`, `"YYYY-MM-DDTHH:MM:SS(.SSS)(Z)"`,
/// and INTEGER or REAL seconds since 1970. A date that text cannot hold
/// (before the year 0000 or after 9999) is stored as REAL seconds since 1970;
/// a TEXT column keeps that as SQLite's text of the number (15 significant
/// digits: milliseconds are lost beyond about the year 33,658), which reads
/// back too. Such dates do not sort among text dates, nor work with SQLite's
/// date functions.
extension Date: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue {
        DateStorage.canFormat(self) ? .text(DateStorage.format(self)) : .real(timeIntervalSince1970)
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .integer(let n): return Date(timeIntervalSince1970: TimeInterval(n))
        case .real(let d): return Date(timeIntervalSince1970: d)
        case .text(let s): return DateStorage.parse(s) ?? DateStorage.parseOutOfRangeSeconds(s)
        default: return nil
        }
    }
}

/// Date text in SQLite's format, without DateFormatter (which is slow and
/// locale-sensitive).
enum DateStorage {
    /// The seconds since 1970 the text holds: years 0000 to 9999.
    static let formattable = -62_167_219_200.0 ..< 253_402_300_800.0

    static func canFormat(_ date: Date) -> Bool { formattable.contains(date.timeIntervalSince1970) }

    /// The text of a date in ``formattable``.
    static func format(_ date: Date) -> String {
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = time_t(Int64((totalMilliseconds / 1000).rounded(.down)))
        let milliseconds = Int(totalMilliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2)) "
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))"
    }

    /// The text SQLite makes of the REAL seconds stored for a date outside
    /// ``formattable`` (in a TEXT column): only such a number is a date.
    static func parseOutOfRangeSeconds(_ text: String) -> Date? {
        // Decimal digits, a point, an exponent: what SQLite writes (Double(_:)
        // alone would also take hexadecimal text, 0x1p40).
        guard let first = text.utf8.first, first == 0x2D || (0x30...0x39).contains(first),
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x65 || $0 == 0x45 || $0 == 0x2B || $0 == 0x2D }),
              let seconds = Double(text), seconds.isFinite, !formattable.contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int32? {
            guard from + count <= bytes.count else { return nil }
            var n: Int32 = 0
            for b in bytes[from..<(from + count)] {
                guard b >= 0x30 && b <= 0x39 else { return nil }
                n = n * 10 + Int32(b - 0x30)
            }
            return n
        }
        guard let year = number(0, 4), bytes.count >= 10, bytes[4] == 0x2D, bytes[7] == 0x2D,
              let month = number(5, 2), let day = number(8, 2) else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        var fraction = 0.0
        if bytes.count > 10 {
            guard bytes[10] == 0x20 || bytes[10] == 0x54, let hour = number(11, 2), bytes.count >= 16,
                  bytes[13] == 0x3A, let minute = number(14, 2) else { return nil }
            parts.tm_hour = hour
            parts.tm_min = minute
            var index = 16
            if bytes.count > 16 && bytes[16] == 0x3A {
                guard let second = number(17, 2) else { return nil }
                parts.tm_sec = second
                index = 19
                if bytes.count > 19 && bytes[19] == 0x2E {
                    var scale = 0.1
                    index = 20
                    while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                        fraction += Double(bytes[index] - 0x30) * scale
                        scale /= 10
                        index += 1
                    }
                }
            }
            if index < bytes.count {
                guard bytes[index] == 0x5A, index == bytes.count - 1 else { return nil }
            }
        }
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }
}

/// An enum with raw values is stored as its raw value: declare the
/// conformance, with nothing to implement.
///
/// ```swift
/// enum Genre: String, DatabaseValueConvertible { case rock, jazz }
/// ```
///
/// A stored value that is no case reads as a conversion error.
extension DatabaseValueConvertible where Self: RawRepresentable, RawValue: DatabaseValueConvertible {
    /// The raw value's ``DatabaseValue``.
    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    /// The case whose raw value is stored, or nil.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        RawValue.fromDatabaseValue(value).flatMap(Self.init(rawValue:))
    }
}
