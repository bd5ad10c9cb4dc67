import Foundation
import StrongroomCrypto

/// A database key file: exactly the 64 lowercase hex characters of a raw
/// 256-bit key, optionally followed by one newline, readable by its owner only.
///
/// The format is SQLCipher's raw key literal without its `x'…'` wrapping, so
/// any SQLCipher tool can open the database with `PRAGMA key = "x'<contents>'";`.
///
/// ```swift
/// try KeyFile.write(DatabaseKey.generate(), to: "Keys/app.key")   // mode 0600, never overwrites
/// let key = try KeyFile.read(at: "Keys/app.key")
/// ```
public enum KeyFile {
    /// The number of hex characters in a key file.
    public static let hexCharacterCount = 64

    /// Reads the raw key stored at `path`.
    ///
    /// - Throws: ``StrongroomError/Code/notFound``; ``StrongroomError/Code/keyFilePermissions``
    ///   when group or others may read or write the file (the message gives the
    ///   `chmod` that fixes it); ``StrongroomError/Code/malformedKey`` when the
    ///   contents are not exactly 64 lowercase hex characters and an optional newline.
    ///   Errors never quote the file's contents.
    public static func read(at path: String) throws(StrongroomError) -> DatabaseKey {
        try read(at: path, what: "key file", createHint: "create one with `strongroom keygen --out \(path)`")
    }

    /// ``read(at:)`` of a key file another way names (`what`) and makes (`createHint`).
    static func read(at path: String, what: String, createHint: String) throws(StrongroomError) -> DatabaseKey {
        let maximum = hexCharacterCount + 1
        let text = try SecretFile.read(at: path, maximumSize: maximum, what: what, createHint: createHint, malformed: .malformedKey)
        guard text.count == hexCharacterCount || text.count == maximum else { throw malformed(path) }
        let key: SecureBytes? = text.withUnsafeBytes { bytes in
            if bytes.count == maximum && bytes[hexCharacterCount] != 0x0A { return nil }
            let hex = UnsafeRawBufferPointer(rebasing: bytes[0..<hexCharacterCount])
            guard hex.allSatisfy(Hex.isLowercaseHexDigit) else { return nil }
            return Hex.decodeSecret(hex)
        }
        guard let key else { throw malformed(path) }
        return try DatabaseKey.raw(key)
    }

    /// Writes `key` (a raw key) to a new file at `path` with mode 0600.
    ///
    /// The file appears atomically, complete or not at all: the key is written
    /// and synced to a temporary file in the same directory, which is then
    /// linked to `path`, and the directory is synced. An existing file is
    /// never overwritten.
    ///
    /// - Throws: ``StrongroomError/Code/outputExists`` when `path` exists;
    ///   ``StrongroomError/Code/cannotCreate`` when the directory is not writable;
    ///   ``StrongroomError/Code/misuse`` for a passphrase.
    public static func write(_ key: DatabaseKey, to path: String) throws(StrongroomError) {
        guard let raw = key.rawBytes else {
            throw StrongroomError(.misuse, "Only a raw key can be written to a key file, not a passphrase.", path: path)
        }
        try SecretFile.write(Hex.encodeSecret(raw, suffix: [0x0A]), to: path, replacing: false, what: "key file")
    }

    private static func malformed(_ path: String) -> StrongroomError {
        StrongroomError(.malformedKey, "The key file \(path) must hold exactly 64 lowercase hex characters (a 256-bit key), optionally followed by a newline; create a new one with `strongroom keygen`.", path: path)
    }
}
