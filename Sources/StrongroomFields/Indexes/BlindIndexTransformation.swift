import Strongroom
import Foundation

/// What a blind index hashes instead of the exact value: a lookup then
/// finds every row whose value transforms to the same thing (any case of an
/// e-mail, a phone number however it was typed, everyone born in 1980).
///
/// A transformation is part of the index's definition, and of its key: two
/// indexes that transform differently never share index values. Each has a
/// stable name (``name``), which the format page (<doc:SealedValueFormat>)
/// specifies with test vectors, so that another implementation computes
/// the same index values.
///
/// | name | takes | gives |
/// |---|---|---|
/// | `trim` | TEXT | the text without leading and trailing White_Space |
/// | `nfkc-casefold` | TEXT | NFKC, then Unicode full case folding, then NFKC |
/// | `digits` | TEXT, INTEGER | the ASCII digits `0`–`9` only; none is an error |
/// | `prefix:N` | TEXT, INTEGER | the first N Unicode scalars (all of a shorter value) |
/// | `suffix:N` | TEXT, INTEGER | the last N Unicode scalars (all of a shorter value) |
/// | `year` | a date | `YYYY` |
/// | `year-month` | a date | `YYYY-MM` |
///
/// An INTEGER given to a text transformation is taken as its decimal text.
/// A date is TEXT starting `YYYY-MM-DD` (a real calendar day, then nothing,
/// or a space or `T` and anything), or INTEGER or REAL seconds since 1970
/// (UTC): how Strongroom stores `Date`. A value a transformation does not
/// take (a date that is not a date, a BLOB) is an error naming the column
/// and the row, never an empty index.
///
/// ```swift
/// let email = BlindIndex("email_folded", on: "email", in: "customer", bits: 16,
///                        transformations: [.trimmed, .normalizedCaseFolded])
/// ```
public enum BlindIndexTransformation: Sendable, Hashable {
    /// Leading and trailing white space removed (`trim`).
    case trimmed
    /// Unicode NFKC, full case folding (Unicode 14.0's CaseFolding.txt,
    /// statuses C and F), NFKC again (`nfkc-casefold`): `Straße`, `STRASSE`
    /// and `ｓｔｒａｓｓｅ` are one value.
    case normalizedCaseFolded
    /// The ASCII digits only (`digits`): `+44 (0)20 7946-0018` is `4402079460018`.
    case digitsOnly
    /// The first `count` Unicode scalars (`prefix:N`).
    case prefix(Int)
    /// The last `count` Unicode scalars (`suffix:N`): the last four digits of a card.
    case suffix(Int)
    /// A date's year (`year`).
    case year
    /// A date's year and month (`year-month`).
    case yearMonth

    /// The stable name, as the format page and the CLI spell it.
    public var name: String {
        switch self {
        case .trimmed: "trim"
        case .normalizedCaseFolded: "nfkc-casefold"
        case .digitsOnly: "digits"
        case .prefix(let n): "prefix:\(n)"
        case .suffix(let n): "suffix:\(n)"
        case .year: "year"
        case .yearMonth: "year-month"
        }
    }

    /// The transformation a name spells (``name``), or nil.
    public init?(name: String) {
        switch name {
        case "trim": self = .trimmed
        case "nfkc-casefold": self = .normalizedCaseFolded
        case "digits": self = .digitsOnly
        case "year": self = .year
        case "year-month": self = .yearMonth
        default:
            let parts = name.split(separator: ":", omittingEmptySubsequences: false)
            // Decimal digits only, no sign and no leading zero: one spelling per length.
            guard parts.count == 2, let digits = parts.last, !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  digits.first != "0" || digits.count == 1, let n = Int(digits), n >= 1, n <= Self.maximumLength else { return nil }
            switch parts[0] {
            case "prefix": self = .prefix(n)
            case "suffix": self = .suffix(n)
            default: return nil
            }
        }
    }

    /// The largest N of `prefix:N` and `suffix:N`.
    public static let maximumLength = 4096

    /// Every name a transformation can have, for error messages.
    static let names = "trim, nfkc-casefold, digits, prefix:N, suffix:N (N from 1 to \(maximumLength)), year, year-month"

    /// Why `value` is refused, or the transformed value. NULL is never given.
    func apply(_ value: DatabaseValue) -> Result<DatabaseValue, Refusal> {
        switch self {
        case .trimmed:
            guard case .text(let text) = value else { return .failure(.notText) }
            let scalars = text.unicodeScalars
            // Most values have nothing to trim: kept as they are. (A last
            // UTF-8 byte under 0x80 is a whole ASCII scalar.)
            let utf8 = text.utf8
            if let first = utf8.first, let last = utf8.last, first < 0x80, last < 0x80,
               !Self.isWhitespace(Unicode.Scalar(first)), !Self.isWhitespace(Unicode.Scalar(last)) { return .success(value) }
            guard let first = scalars.firstIndex(where: { !Self.isWhitespace($0) }) else { return .success(.text("")) }
            let last = scalars.lastIndex(where: { !Self.isWhitespace($0) })!
            return .success(.text(String(scalars[first...last])))
        case .normalizedCaseFolded:
            guard case .text(let text) = value else { return .failure(.notText) }
            guard Self.assignedInUnicode14(text) else { return .failure(.unassigned) }
            return .success(.text(Self.normalizedCaseFolded(text)))
        case .digitsOnly:
            guard let text = Self.text(of: value) else { return .failure(.notText) }
            let digits = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x30 && $0.value <= 0x39 }))
            return digits.isEmpty ? .failure(.noDigits) : .success(.text(digits))
        case .prefix(let n):
            guard let text = Self.text(of: value) else { return .failure(.notText) }
            return .success(.text(String(String.UnicodeScalarView(text.unicodeScalars.prefix(n)))))
        case .suffix(let n):
            guard let text = Self.text(of: value) else { return .failure(.notText) }
            return .success(.text(String(String.UnicodeScalarView(text.unicodeScalars.suffix(n)))))
        case .year, .yearMonth:
            guard let (year, month) = Self.yearAndMonth(of: value) else { return .failure(.notADate) }
            let yearText = year >= 0 && year < 10_000 ? Self.padded(year, 4) : String(year)
            return .success(.text(self == .year ? yearText : yearText + "-" + Self.padded(month, 2)))
        }
    }

    /// Why a transformation refused a value (the message names no value).
    enum Refusal: Error {
        case notText, noDigits, notADate, unassigned

        func message(_ transformation: BlindIndexTransformation) -> String {
            switch self {
            case .notText: "\(transformation.name) takes TEXT\(transformation.takesIntegers ? " or INTEGER" : ""), and the value is of another type"
            case .noDigits: "digits found no digit 0-9 in the value"
            case .notADate: "\(transformation.name) takes a date (TEXT YYYY-MM-DD…, or INTEGER or REAL seconds since 1970), and the value is not one"
            case .unassigned: "nfkc-casefold takes characters Unicode 14.0 assigns, and the value holds one assigned later (or none), whose normalization depends on the platform"
            }
        }
    }

    private var takesIntegers: Bool {
        switch self {
        case .digitsOnly, .prefix, .suffix: true
        default: false
        }
    }

    private static func text(of value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): text
        case .integer(let n): String(n)
        default: nil
        }
    }

    /// Unicode's White_Space property; in ASCII, tab to carriage return and
    /// the space, told without the property table.
    @inline(__always)
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x80 ? scalar.value == 0x20 || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    /// Whether every scalar is one Unicode 14.0 assigns (NFKC of those is
    /// the same in every Unicode version since: the normalization stability
    /// policy; of a later one, it depends on the platform's data).
    static func assignedInUnicode14(_ text: String) -> Bool {
        // ASCII, told by its bytes, is assigned.
        text.utf8.allSatisfy { $0 < 0x80 } || text.unicodeScalars.allSatisfy { $0.value < 0x80 || !CaseFolding.isUnassigned($0.value) }
    }

    /// NFKC, full case folding, NFKC.
    static func normalizedCaseFolded(_ text: String) -> String {
        // ASCII is its own NFKC, and folds by A-Z to a-z alone: read and
        // written as contiguous bytes.
        var text = text
        var isASCII = false
        // nil when there is nothing to lower (or the text is not ASCII).
        let lowered: String? = text.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            isASCII = true
            guard bytes.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                for i in bytes.indices { out[i] = bytes[i] >= 0x41 && bytes[i] <= 0x5A ? bytes[i] + 0x20 : bytes[i] }
                return bytes.count
            }
        }
        if isASCII { return lowered ?? text }
        let normalized = text.precomposedStringWithCompatibilityMapping
        var folded = String.UnicodeScalarView()
        let table = CaseFolding.table
        for scalar in normalized.unicodeScalars {
            if let mapped = table[scalar.value] { folded.append(contentsOf: mapped) } else { folded.append(scalar) }
        }
        return String(folded).precomposedStringWithCompatibilityMapping
    }

    private static func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The UTC year and month of a date as Strongroom stores one.
    static func yearAndMonth(of value: DatabaseValue) -> (Int, Int)? {
        switch value {
        case .text(let text):
            let b = Array(text.utf8.prefix(11))
            guard b.count >= 10, b[4] == 0x2D, b[7] == 0x2D, b.count == 10 || b[10] == 0x20 || b[10] == 0x54 else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var n = 0
                for i in range {
                    guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                    n = n * 10 + Int(b[i] - 0x30)
                }
                return n
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
                  (1...12).contains(month), day >= 1, day <= daysIn(month, of: year) else { return nil }
            return (year, month)
        case .integer(let seconds):
            // ⌊seconds / 86400⌋ in integers: exact for every Int64.
            let days = seconds / 86_400 - (seconds % 86_400 < 0 ? 1 : 0)
            return civil(days: days)
        case .real(let seconds):
            guard seconds.isFinite else { return nil }
            let days = (seconds / 86_400).rounded(.down)
            // Beyond ±2^52 days a Double no longer counts whole days.
            guard abs(days) < 4_503_599_627_370_496 else { return nil }
            return civil(days: Int64(days))
        default:
            return nil
        }
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The proleptic Gregorian year and month of day `days` since 1970-01-01
    /// (Howard Hinnant's civil_from_days, exact for every Int64 day count
    /// ⌊seconds / 86400⌋ gives).
    private static func civil(days: Int64) -> (Int, Int)? {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month))
    }
}

extension BlindIndexTransformation: Codable {
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let transformation = BlindIndexTransformation(name: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(name)' is not a blind index transformation (\(Self.names))"))
        }
        self = transformation
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
