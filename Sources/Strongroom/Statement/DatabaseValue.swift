/// One SQLite value: NULL, an integer, a real, text or a blob.
///
/// ```swift
/// let value: DatabaseValue = .text("hello")
/// ```
public enum DatabaseValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed INTEGER.
    case integer(Int64)
    /// An 8-byte IEEE floating-point REAL.
    case real(Double)
    /// UTF-8 TEXT.
    case text(String)
    /// A BLOB of bytes.
    case blob([UInt8])

    /// True for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// The value as text: `NULL`, the number, the text itself, or `<n bytes>` for a BLOB.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let v): return v
        case .blob(let v): return "<\(v.count) bytes>"
        }
    }
}

/// SQLite's five storage classes, without the value.
package enum StorageClass {
    case null, integer, real, text, blob
}

extension DatabaseValue {
    var storageClass: StorageClass {
        switch self {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }
}

extension DatabaseValue {
    /// Whether `self` and `other` are the same stored value, as SQLite and
    /// a sealed value's row key see them: the same storage class, text
    /// byte for byte (Swift's `==` takes an NFC and an NFD spelling, two
    /// keys, for one), a REAL bit for bit.
    func isStored(as other: DatabaseValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern
        case (.text(let a), .text(let b)): ExactText(a) == ExactText(b)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }
}
