public import StrongroomCrypto

/// The secret that opens an encrypted database: a raw 256-bit key or a passphrase.
///
/// A raw key opens a database at once; a passphrase is stretched by SQLCipher's
/// PBKDF2 (tens of milliseconds per connection; a ``DatabasePool`` pays it once).
/// Key bytes live in `SecureBytes` (StrongroomCrypto), zeroed when the last copy of the key is
/// released, and never appear in a description, a log line or an error.
///
/// ```swift
/// let key = DatabaseKey.generate()                       // new random raw key
/// let fromFile = try DatabaseKey.load(keyFile: "Keys/app.key")
/// let fromEnv = try DatabaseKey.fromEnvironment("APP_DB_KEY")
/// let secret = try DatabaseKey.passphraseFromStandardInput()
/// ```
///
/// Keys never come from command-line arguments: `argv` is visible to every
/// user of the machine through `/proc`.
public struct DatabaseKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    enum Material: Sendable {
        /// 32 raw key bytes.
        case raw(SecureBytes)
        /// 32 raw key bytes followed by the 16-byte salt of a known file.
        case rawWithSalt(SecureBytes)
        /// Passphrase bytes, stretched by SQLCipher.
        case passphrase(SecureBytes)
    }

    let material: Material

    /// Where this key came from: a key file, wrapped or not, a command, a
    /// credential… (``KeySource``; `status` reports it). Never the key itself.
    public internal(set) var source: KeySource

    init(material: Material, source: KeySource = .application) {
        self.material = material
        self.source = source
    }

    /// The size of a raw key, in bytes.
    public static let rawKeyByteCount = 32

    /// A raw 256-bit key from 32 bytes.
    ///
    /// - Throws: ``StrongroomError/Code/malformedKey`` when `bytes` is not 32 bytes long.
    public static func raw(_ bytes: some Collection<UInt8>) throws(StrongroomError) -> DatabaseKey {
        guard bytes.count == rawKeyByteCount else {
            throw StrongroomError(.malformedKey, "A raw database key is exactly \(rawKeyByteCount) bytes; this one has \(bytes.count).")
        }
        return DatabaseKey(material: .raw(SecureBytes(copying: bytes)))
    }

    /// A raw key taken over from secure storage (32 bytes).
    public static func raw(_ bytes: SecureBytes) throws(StrongroomError) -> DatabaseKey {
        guard bytes.count == rawKeyByteCount else {
            throw StrongroomError(.malformedKey, "A raw database key is exactly \(rawKeyByteCount) bytes; this one has \(bytes.count).")
        }
        return DatabaseKey(material: .raw(bytes))
    }

    /// A passphrase, stretched by SQLCipher's PBKDF2 when a connection opens.
    ///
    /// The bytes are copied into secure storage, but the `String` you pass
    /// cannot be wiped: prefer ``passphraseFromStandardInput()`` or
    /// ``passphrase(_:)-(SecureBytes)`` for secrets that must not linger.
    ///
    /// - Throws: ``StrongroomError/Code/keyMissing`` for an empty passphrase.
    public static func passphrase(_ text: String) throws(StrongroomError) -> DatabaseKey {
        try passphrase(SecureBytes(copying: text.utf8))
    }

    /// A passphrase taken over from secure storage.
    public static func passphrase(_ bytes: SecureBytes) throws(StrongroomError) -> DatabaseKey {
        guard bytes.count > 0 else {
            throw StrongroomError(.keyMissing, "The passphrase is empty; provide a non-empty passphrase.")
        }
        return DatabaseKey(material: .passphrase(bytes))
    }

    /// A new random raw key from OpenSSL's cryptographic generator.
    public static func generate() -> DatabaseKey {
        DatabaseKey(material: .raw(SecureBytes(randomCount: rawKeyByteCount)))
    }

    /// True for a passphrase, false for a raw key.
    public var isPassphrase: Bool {
        if case .passphrase = material { return true }
        return false
    }

    /// Says which kind of key this is, never its bytes.
    public var description: String {
        switch material {
        case .raw, .rawWithSalt: return "DatabaseKey(raw 256-bit, redacted)"
        case .passphrase: return "DatabaseKey(passphrase, redacted)"
        }
    }

    /// The same redacted description.
    public var debugDescription: String { description }

    /// The bytes SQLCipher's `sqlite3_key_v2` expects: the passphrase as is,
    /// or a raw key spelled `x'<hex>'` (SQLCipher treats any other bytes as a
    /// passphrase). Built in secure storage, never in a Swift `String`.
    func sqlcipherKeyBytes() -> SecureBytes {
        switch material {
        case .passphrase(let bytes):
            return bytes
        case .raw(let bytes), .rawWithSalt(let bytes):
            return Hex.encodeSecret(bytes, prefix: Array("x'".utf8), suffix: Array("'".utf8))
        }
    }

    /// The raw key bytes, when this is a raw key (for writing key files).
    var rawBytes: SecureBytes? {
        if case .raw(let bytes) = material { return bytes }
        return nil
    }
}
