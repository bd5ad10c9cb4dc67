import Foundation
public import StrongroomCrypto

/// A database key file: exactly the 64 lowercase hex characters of a raw
/// 256-bit key, optionally followed by one newline, readable by its owner only;
/// or the same wrapped under a passphrase (``WrappedKeyFile``).
///
/// The plain format is SQLCipher's raw key literal without its `x'…'` wrapping, so
/// any SQLCipher tool can open the database with `PRAGMA key = "x'<contents>'";`.
///
/// ```swift
/// try KeyFile.write(DatabaseKey.generate(), to: "Keys/app.key")   // mode 0600, never overwrites
/// let key = try KeyFile.read(at: "Keys/app.key")
/// ```
public enum KeyFile {
    /// The number of hex characters in a key file.
    public static let hexCharacterCount = 64

    /// Reads the raw key stored at `path`, unwrapping it with a passphrase
    /// from `passphrase` when the file is wrapped (``WrappedKeyFile``).
    ///
    /// - Throws: ``StrongroomError/Code/notFound``; ``StrongroomError/Code/keyFilePermissions``
    ///   when group or others may read or write the file (the message gives the
    ///   `chmod` that fixes it); ``StrongroomError/Code/malformedKey`` when the
    ///   contents are not exactly 64 lowercase hex characters and an optional newline,
    ///   or a wrapped file is truncated; ``StrongroomError/Code/keyMissing`` for a
    ///   wrapped file and no `passphrase`; ``StrongroomError/Code/wrongPassphrase``
    ///   when the passphrase does not unwrap it. Errors never quote the file's contents.
    public static func read(at path: String, unwrappingWith passphrase: PassphraseSource? = nil) throws(StrongroomError) -> DatabaseKey {
        try read(at: path, what: "key file", createHint: "create one with `strongroom keygen --out \(path)`",
                 unwrappingWith: passphrase, source: (.keyFile, .wrappedKeyFile))
    }

    /// ``read(at:unwrappingWith:)`` of a key file another way names (`what`) and makes (`createHint`).
    static func read(at path: String, what: String, createHint: String, unwrappingWith passphrase: PassphraseSource?,
                     source: (plain: KeySource, wrapped: KeySource)) throws(StrongroomError) -> DatabaseKey {
        let maximum = hexCharacterCount + 1
        let file = try SecretFile.read(at: path, maximumSize: WrappedKeyFile.size(ofPlaintext: maximum), what: what,
                                       createHint: createHint, malformed: .malformedKey)
        let opened = try WrappedKeyFile.open(file, contents: .databaseKey, path: path, unwrappingWith: passphrase)
        guard let key = parseHex(opened.bytes) else {
            throw StrongroomError(.malformedKey, "The \(what) \(path) must hold exactly 64 lowercase hex characters (a 256-bit key), optionally followed by a newline; create a new one with `strongroom keygen`.", path: path)
        }
        var loaded = try DatabaseKey.raw(key)
        loaded.source = opened.wrapping == nil ? source.plain : source.wrapped
        return loaded
    }

    /// The key in `text`: 64 lowercase hex characters and an optional newline, or nil.
    static func parseHex(_ text: SecureBytes) -> SecureBytes? {
        text.withUnsafeBytes { bytes in
            guard bytes.count == hexCharacterCount || (bytes.count == hexCharacterCount + 1 && bytes[hexCharacterCount] == 0x0A) else { return nil }
            let hex = UnsafeRawBufferPointer(rebasing: bytes[0..<hexCharacterCount])
            guard hex.allSatisfy(Hex.isLowercaseHexDigit) else { return nil }
            return Hex.decodeSecret(hex)
        }
    }

    /// Writes `key` (a raw key) to a new file at `path` with mode 0600;
    /// with `passphrase`, wrapped under it (``WrappedKeyFile``, scrypt with
    /// `parameters`).
    ///
    /// The file appears atomically, complete or not at all: the key is written
    /// and synced to a temporary file in the same directory, which is then
    /// linked to `path`, and the directory is synced. An existing file is
    /// never overwritten.
    ///
    /// ```swift
    /// try KeyFile.write(DatabaseKey.generate(), to: "Keys/app.key", wrappingWith: passphrase)
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/outputExists`` when `path` exists;
    ///   ``StrongroomError/Code/cannotCreate`` when the directory is not writable;
    ///   ``StrongroomError/Code/misuse`` for a passphrase key;
    ///   ``StrongroomError/Code/keyMissing`` for an empty wrapping passphrase.
    public static func write(_ key: DatabaseKey, to path: String, wrappingWith passphrase: SecureBytes? = nil,
                             parameters: Scrypt.Parameters = .interactive) throws(StrongroomError) {
        guard let raw = key.rawBytes else {
            throw StrongroomError(.misuse, "Only a raw key can be written to a key file, not a passphrase.", path: path)
        }
        var contents = Hex.encodeSecret(raw, suffix: [0x0A])
        if let passphrase {
            contents = try WrappedKeyFile.wrap(contents, contents: .databaseKey, passphrase: passphrase, parameters: parameters)
        }
        try SecretFile.write(contents, to: path, replacing: false, what: passphrase == nil ? "key file" : "wrapped key file")
    }
}
