import Foundation
public import StrongroomCrypto

/// A key file (or a field keyring) encrypted under a passphrase, so that the
/// file on disk is of no use without the passphrase: `strongroom keygen --wrap`,
/// `strongroom key wrap`, `strongroom key rewrap`.
///
/// The wrapping key is derived from the passphrase with scrypt (RFC 7914),
/// memory-hard, over a random salt; the plain file's bytes are sealed with
/// AES-256-GCM under it, the whole header authenticated as associated data.
/// The format, byte by byte (`Keys/README.md` gives it too):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 25 | `strongroom wrapped key 1` and a newline (ASCII): magic and format version |
/// | 25 | 1 | contents: 1 a database key file, 2 a field keyring |
/// | 26 | 1 | KDF: 1 scrypt |
/// | 27 | 1 | log2 N |
/// | 28 | 1 | r |
/// | 29 | 1 | p |
/// | 30 | 16 | salt |
/// | 46 | 12 | nonce |
/// | 58 | n | ciphertext of the plain file's n bytes |
/// | 58 + n | 16 | GCM tag |
///
/// wrapping key = scrypt(passphrase, salt, N, r, p, 32 bytes);
/// ciphertext ‖ tag = AES-256-GCM(wrapping key, nonce, plaintext, associated data = bytes 0..<58).
///
/// Every reader of a key file or keyring (``KeyFile/read(at:unwrappingWith:)``,
/// ``DatabaseKey/fromCredential(_:unwrappingWith:)``, `FieldKeyring.load`) takes
/// a wrapped one, asking its ``PassphraseSource`` only then.
///
/// ```swift
/// try KeyFile.write(DatabaseKey.generate(), to: "Keys/app.key", wrappingWith: passphrase)
/// let key = try KeyFile.read(at: "Keys/app.key", unwrappingWith: .standardInput)
/// try WrappedKeyFile.rewrap(at: "Keys/app.key", from: .standardInput, to: newPassphrase)
/// ```
///
/// A plain file is wrapped by reading it and writing it anew with a passphrase
/// (``KeyFile/write(_:to:wrappingWith:parameters:)``, `FieldKeyring.write(to:replacing:wrappingWith:parameters:)`):
///
/// ```swift
/// try KeyFile.write(try KeyFile.read(at: "Keys/app.key"), to: "Keys/app.key.wrapped", wrappingWith: passphrase)
/// ```
public enum WrappedKeyFile {
    /// What a wrapped file holds.
    public enum Contents: UInt8, Sendable {
        /// A database key file (64 hex characters and a newline).
        case databaseKey = 1
        /// A field keyring (`strongroom field keyring 1` …).
        case fieldKeyring = 2

        var name: String { self == .databaseKey ? "key file" : "field keyring" }
    }

    /// The first line of every wrapped file.
    static let magic = Array("strongroom wrapped key 1\n".utf8)
    static let saltByteCount = 16
    /// The header: magic, contents, KDF, N, r, p, salt, nonce.
    static let headerByteCount = magic.count + 5 + saltByteCount + AESGCM.nonceByteCount
    private static let scryptKDF: UInt8 = 1

    /// The size of the wrapped file of `plaintextByteCount` bytes.
    package static func size(ofPlaintext plaintextByteCount: Int) -> Int {
        headerByteCount + plaintextByteCount + AESGCM.tagByteCount
    }

    /// True when `contents` (a whole file) begins as a wrapped file does.
    static func isWrapped(_ contents: SecureBytes) -> Bool {
        contents.withUnsafeBytes { $0.starts(with: magic) }
    }

    /// True when the file at `path` is a wrapped key file or keyring (its
    /// first line is the magic). Reads only that line; checks nothing else.
    public static func isWrapped(at path: String) -> Bool {
        // Never through a link, never blocking on a FIFO: only a regular file can be wrapped.
        let fd = Foundation.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        // Into secure storage: of a plain key file, these are 25 of its hex digits.
        var count = 0
        let first = SecureBytes(count: magic.count) { buffer in count = read(fd, buffer.baseAddress, buffer.count) }
        return count == magic.count && first.withUnsafeBytes { $0.elementsEqual(magic) }
    }

    /// Seals `plaintext` (a plain file's bytes) under `passphrase`.
    package static func wrap(_ plaintext: SecureBytes, contents: Contents, passphrase: SecureBytes,
                     parameters: Scrypt.Parameters) throws(StrongroomError) -> SecureBytes {
        guard passphrase.count > 0 else {
            throw StrongroomError(.keyMissing, "The passphrase to wrap the \(contents.name) is empty; give a non-empty one.")
        }
        var salt = [UInt8](repeating: 0, count: saltByteCount)
        salt.withUnsafeMutableBytes { SecureRandom.fill($0) }
        let key = try derive(passphrase, salt: salt, parameters: parameters)
        let header = magic + [contents.rawValue, scryptKDF, parameters.log2N, parameters.r, parameters.p] + salt
        var failure: CryptoError?
        let file = SecureBytes(count: size(ofPlaintext: plaintext.count)) { out in
            out.copyBytes(from: header)
            let h = headerByteCount, c = plaintext.count
            do {
                let gcm = try AESGCM(key: key)
                // The nonce is drawn into its place first; the associated data is the whole header, nonce included.
                let nonce = UnsafeMutableRawBufferPointer(rebasing: out[header.count..<h])
                SecureRandom.fill(nonce)
                try plaintext.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(CryptoError) in
                    try gcm.seal(p, nonce: UnsafeRawBufferPointer(nonce), authenticating: UnsafeRawBufferPointer(rebasing: out[0..<h]),
                                 ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[h..<(h + c)]),
                                 tag: UnsafeMutableRawBufferPointer(rebasing: out[(h + c)...]))
                }
            } catch {
                failure = error as? CryptoError ?? CryptoError(.libraryFailure, "\(error)")
            }
        }
        if let failure {
            throw StrongroomError(.misuse, "The \(contents.name) could not be wrapped: \(failure.message)")
        }
        return file
    }

    /// What a wrapped file's header says, checked before any passphrase is asked for.
    struct Header {
        let salt: [UInt8]
        let parameters: Scrypt.Parameters

        /// The header of `file`, which must be a whole wrapped file holding `contents`.
        init(of file: SecureBytes, contents: Contents, path: String) throws(StrongroomError) {
            let what = "wrapped \(contents.name)"
            guard file.count >= WrappedKeyFile.size(ofPlaintext: 0) else {
                throw StrongroomError(.malformedKey, "The \(what) \(path) is truncated or damaged (its header is not whole); restore it from a backup.", path: path)
            }
            let fields: (contents: UInt8, kdf: UInt8, log2N: UInt8, r: UInt8, p: UInt8, salt: [UInt8]) = file.withUnsafeBytes { bytes in
                let m = magic.count
                return (bytes[m], bytes[m + 1], bytes[m + 2], bytes[m + 3], bytes[m + 4], Array(bytes[(m + 5)..<(m + 5 + saltByteCount)]))
            }
            guard fields.contents == contents.rawValue else {
                let other = Contents(rawValue: fields.contents).map { "a wrapped \($0.name)" } ?? "not a wrapped \(contents.name) this version knows"
                throw StrongroomError(.malformedKey, "\(path) is \(other), not a wrapped \(contents.name); give the right file.", path: path)
            }
            guard fields.kdf == scryptKDF else {
                throw StrongroomError(.malformedKey, "The \(what) \(path) names a key derivation this version does not know (\(fields.kdf)); it was written by a newer Strongroom, or is damaged.", path: path)
            }
            do {
                parameters = try Scrypt.Parameters(log2N: fields.log2N, r: fields.r, p: fields.p)
            } catch {
                throw StrongroomError(.malformedKey, "The \(what) \(path) asks for scrypt parameters out of range (N = 2^\(fields.log2N), r = \(fields.r), p = \(fields.p)); it is damaged, or not made by Strongroom: restore it from a backup.", path: path)
            }
            salt = fields.salt
        }
    }

    private static func decrypt(_ file: SecureBytes, header: Header, contents: Contents, passphrase: SecureBytes,
                                path: String) throws(StrongroomError) -> SecureBytes {
        let key = try derive(passphrase, salt: header.salt, parameters: header.parameters)
        let h = headerByteCount, c = file.count - size(ofPlaintext: 0)
        var opened = true
        let plaintext = SecureBytes(count: c) { out in
            file.withUnsafeBytes { bytes in
                do {
                    try AESGCM(key: key).open(UnsafeRawBufferPointer(rebasing: bytes[h..<(h + c)]),
                                              nonce: UnsafeRawBufferPointer(rebasing: bytes[(h - AESGCM.nonceByteCount)..<h]),
                                              tag: UnsafeRawBufferPointer(rebasing: bytes[(h + c)...]),
                                              authenticating: UnsafeRawBufferPointer(rebasing: bytes[0..<h]), into: out)
                } catch {
                    opened = false
                }
            }
        }
        guard opened else {
            throw StrongroomError(.wrongPassphrase, "The passphrase does not unwrap the wrapped \(contents.name) \(path), or the file was altered or cut short; try the passphrase again, or restore the file from a backup.", path: path)
        }
        return plaintext
    }

    /// A file's plain bytes, and for a wrapped file, what wrapped it.
    package struct Opened {
        /// The plain file's bytes.
        package let bytes: SecureBytes
        /// The passphrase and scrypt parameters it was wrapped with; nil for a plain file.
        package let wrapping: (passphrase: SecureBytes, parameters: Scrypt.Parameters)?
    }

    /// The plain bytes of `file`: unwrapped with a passphrase from `source`
    /// when it is wrapped, as they are otherwise.
    package static func open(_ file: SecureBytes, contents: Contents, path: String,
                             unwrappingWith source: PassphraseSource?) throws(StrongroomError) -> Opened {
        guard isWrapped(file) else { return Opened(bytes: file, wrapping: nil) }
        // A damaged or truncated header is refused before anyone is asked for a passphrase.
        let header = try Header(of: file, contents: contents, path: path)
        guard let source else {
            throw StrongroomError(.keyMissing, "The \(contents.name) \(path) is wrapped under a passphrase, and no passphrase was given to unwrap it.", path: path)
        }
        let passphrase = try source.passphrase()
        let bytes = try decrypt(file, header: header, contents: contents, passphrase: passphrase, path: path)
        return Opened(bytes: bytes, wrapping: (passphrase, header.parameters))
    }

    private static func derive(_ passphrase: SecureBytes, salt: [UInt8], parameters: Scrypt.Parameters) throws(StrongroomError) -> SecureBytes {
        do {
            return try Scrypt.deriveKey(from: passphrase, salt: salt, parameters: parameters, byteCount: AESGCM.keyByteCount)
        } catch {
            throw StrongroomError(.misuse, error.message)
        }
    }

    /// Reads the wrapped file at `path` (a key file or a keyring), checked as
    /// any secret file, with its contents kind.
    static func readWrapped(at path: String) throws(StrongroomError) -> (file: SecureBytes, contents: Contents) {
        let file = try SecretFile.read(at: path, maximumSize: size(ofPlaintext: 1 << 20), what: "wrapped key file",
                                       createHint: "make one with `strongroom keygen --wrap --out \(path)`", malformed: .malformedKey)
        guard isWrapped(file) else {
            throw StrongroomError(.misuse, "\(path) is not a wrapped key file or keyring; wrap it with `strongroom key wrap`.", path: path)
        }
        let kind = file.count > magic.count ? file.withUnsafeBytes { Contents(rawValue: $0[magic.count]) } : .databaseKey
        guard let kind else {
            throw StrongroomError(.malformedKey, "\(path) is not a wrapped key file or keyring this version knows.", path: path)
        }
        return (file, kind)
    }

    /// Changes the passphrase of the wrapped file at `path`: unwraps it with
    /// the passphrase from `source`, wraps it again under `newPassphrase`
    /// (a new salt and nonce), and replaces the file atomically under a lock
    /// (`PATH.lock`). The key inside, and so every database or sealed value
    /// under it, is unchanged: nothing else is rewritten.
    ///
    /// - Throws: ``StrongroomError/Code/wrongPassphrase`` when the old passphrase
    ///   does not unwrap it (the file is left as it was), and the errors of
    ///   reading and writing key files.
    @discardableResult
    public static func rewrap(at path: String, from source: PassphraseSource, to newPassphrase: SecureBytes,
                              parameters: Scrypt.Parameters = .interactive) throws(StrongroomError) -> Contents {
        let lock: FileLock
        do throws(FileLock.Failure) {
            lock = try FileLock(path: path + ".lock", timeout: .seconds(30))
        } catch {
            switch error {
            case .timedOut:
                throw StrongroomError(.busy, "Another process is changing \(path); try again when it is done.", path: path)
            case .cannotOpen(let code):
                throw StrongroomError(.cannotCreate, "Cannot take the lock beside \(path): \(String(cString: strerror(code))).", path: path)
            }
        }
        let (file, contents) = try readWrapped(at: path)
        let plain = try open(file, contents: contents, path: path, unwrappingWith: source).bytes
        try SecretFile.write(try wrap(plain, contents: contents, passphrase: newPassphrase, parameters: parameters),
                             to: path, replacing: true, what: "wrapped \(contents.name)")
        withExtendedLifetime(lock) {}
        return contents
    }
}
