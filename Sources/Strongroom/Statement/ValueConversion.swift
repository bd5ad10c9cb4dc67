/// How values read from the database convert to Swift types: one policy for
/// single values (`fetchOne(Int.self, …)`), record properties (`Decodable`)
/// and ``Row/decode(_:at:)``.
///
/// SQLite stores each value in one of five storage classes (NULL, INTEGER,
/// REAL, TEXT, BLOB), whatever the column's declared type. FMDB and the C API
/// coerce between them silently, and lose information doing it: TEXT `'abc'`
/// reads as the integer 0, REAL 2.5 as 2. Strongroom does not.
///
/// | Swift type | ``strict`` (the default) reads | ``lossless`` also reads |
/// |---|---|---|
/// | `Int`, `Int64`, … | INTEGER in range; REAL with an integral value (`2.0`) | TEXT that is exactly an integer (`'42'`, `'-7'`; not `'042'`, `' 42'`, `'1e3'`) or an integral decimal (`'2.0'`) |
/// | `Double` | REAL; INTEGER a `Double` holds exactly | TEXT that is exactly a decimal `Double` prints back (`'2.5'`) or an integer |
/// | `Float` | REAL, INTEGER, rounded to `Float`, within its range (never to infinity or zero) | as `Double` |
/// | `Bool` | INTEGER, REAL (0 is false) | TEXT `'0'`, `'1'`, … as integers |
/// | `String` | TEXT that is valid UTF-8 (other TEXT reads as a BLOB of its bytes, never repaired) | INTEGER (`"42"`), REAL (`"2.5"`, as Swift prints it), BLOB that is valid UTF-8 and not shaped like a sealed value's envelope |
/// | `Data`, `[UInt8]` | BLOB; TEXT as its UTF-8 bytes | |
/// | `Date`, `UUID` | see their ``DatabaseValueConvertible`` conformances | |
///
/// NULL reads as nil into an optional, and as nil from a single-value fetch
/// (`fetchOne(Int.self, …)`); into a non-optional property it is an error.
///
/// A value that does not convert is a ``StrongroomError/Code/conversion``
/// error naming the column and its storage class (never the value), and
/// saying how to convert: a `CAST` in the query, the Swift type that reads the
/// value as it is stored, or this policy when it would convert the value.
///
/// ```swift
/// var configuration = Configuration(key: key)
/// configuration.valueConversion = .lossless
/// let db = try Connection(path: "legacy.db", configuration: configuration)
/// let year = try db.fetchOne(Int.self, sql: "SELECT year FROM movie")   // TEXT '1979' → 1979
/// ```
public enum ValueConversion: Sendable, Hashable {
    /// Only conversions that keep the value's storage class, or that are
    /// exact between INTEGER and REAL.
    case strict
    /// Also conversions between storage classes that lose nothing: the
    /// value converted back gives the stored value again.
    case lossless
}

extension DatabaseValue {
    /// `self` converted to `type` under `policy`, or nil.
    func converted(to type: any DatabaseValueConvertible.Type, _ policy: ValueConversion) -> (any DatabaseValueConvertible)? {
        if let value = type.fromDatabaseValue(self) { return value }
        guard policy == .lossless else { return nil }
        for alternative in losslessAlternatives {
            if let value = type.fromDatabaseValue(alternative) { return value }
        }
        return nil
    }

    /// `self` as a `T` under `policy`, or a conversion error that names
    /// `column` and says how to convert (never the value).
    func convert<T: DatabaseValueConvertible>(to type: T.Type, _ policy: ValueConversion, column: String,
                                              path: String? = nil, sql: String? = nil) throws(StrongroomError) -> T {
        guard let result = converted(to: T.self, policy) else {
            throw StrongroomError(.conversion, conversionAdvice(column: column, to: T.self, policy: policy), path: path, sql: sql)
        }
        return result as! T
    }

    /// Whether ``ValueConversion/lossless`` converts `self` to `type`.
    func convertsLosslessly(to type: any DatabaseValueConvertible.Type) -> Bool {
        converted(to: type, .lossless) != nil
    }

    /// The same value in other storage classes, where converting back gives
    /// `self` again.
    var losslessAlternatives: [DatabaseValue] {
        switch self {
        case .null:
            return []
        case .integer(let n):
            return [.text(String(n))]
        case .real(let d):
            return d.isNaN ? [] : [.text("\(d)")]
        case .text(let s):
            if let n = Int64(s), String(n) == s { return [.integer(n)] }
            if let d = Double(s), d.isFinite, "\(d)" == s { return [.real(d)] }
            return []
        case .blob(let bytes):
            // A sealed value's envelope is never text, whatever its bytes.
            guard !looksSealed, let s = String(validating: bytes, as: UTF8.self) else { return [] }
            return [.text(s)]
        }
    }
}
