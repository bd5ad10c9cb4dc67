public import Strongroom
import Foundation
public import StrongroomCrypto

/// The master keys that seal columns, apart from the database key: each has
/// an id, and one is active (new values are sealed under it). Per-column
/// subkeys are derived from them with HKDF (see <doc:SealedValueFormat>).
///
/// A keyring lives in its own file, owner-only like a database key file:
///
/// ```
/// strongroom field keyring 1
/// active 2
/// key 1 <64 lowercase hex characters>
/// key 2 <64 lowercase hex characters>
/// ```
///
/// ```swift
/// let keyring = FieldKeyring.generate()                  // key 1, active
/// try keyring.write(to: "Keys/fields.keyring")            // mode 0600, never overwrites
/// let loaded = try FieldKeyring.load(from: "Keys/fields.keyring")
/// let (rotated, newID) = loaded.addingKey()
/// try rotated.activating(newID).write(to: "Keys/fields.keyring", replacing: true)
/// ```
///
/// When other processes may change the same file, change it with
/// ``update(at:unwrappingWith:timeout:_:)``, which holds a lock from reading to writing.
///
/// Holding the database key reveals nothing sealed; holding the keyring
/// reveals nothing without the database key.
public struct FieldKeyring: Sendable {
    /// The key new values are sealed under.
    public let activeKeyID: UInt32
    private let keys: [UInt32: SecureBytes]

    /// The size of a master key, in bytes.
    public static let keyByteCount = 32

    /// The ids of every key, ascending.
    public var keyIDs: [UInt32] { keys.keys.sorted() }

    init(activeKeyID: UInt32, keys: [UInt32: SecureBytes]) {
        self.activeKeyID = activeKeyID
        self.keys = keys
    }

    /// A new keyring with one random key, id 1, active.
    public static func generate() -> FieldKeyring {
        FieldKeyring(activeKeyID: 1, keys: [1: SecureBytes(randomCount: keyByteCount)])
    }

    /// The master key with this id.
    func key(_ id: UInt32) -> SecureBytes? { keys[id] }

    /// The keyring with one more random key (the next id, or the lowest
    /// free one after id 4294967295), not yet active.
    public func addingKey() -> (keyring: FieldKeyring, keyID: UInt32) {
        let largest = keys.keys.max() ?? 0
        let id = largest < UInt32.max ? largest + 1 : (1...UInt32.max).first { keys[$0] == nil }!
        var more = keys
        more[id] = SecureBytes(randomCount: Self.keyByteCount)
        return (FieldKeyring(activeKeyID: activeKeyID, keys: more), id)
    }

    /// The keyring with `id` active.
    public func activating(_ id: UInt32) throws(FieldError) -> FieldKeyring {
        guard keys[id] != nil else {
            throw FieldError(.keyring, "The keyring has no key \(id); its keys are \(keyIDs.map(String.init).joined(separator: ", ")).")
        }
        return FieldKeyring(activeKeyID: id, keys: keys)
    }

    /// The keyring without key `id`, which must not be the active one.
    /// Retire a key only when no sealed value uses it any more.
    public func removingKey(_ id: UInt32) throws(FieldError) -> FieldKeyring {
        guard keys[id] != nil else { throw FieldError(.keyring, "The keyring has no key \(id).") }
        guard id != activeKeyID else { throw FieldError(.keyring, "Key \(id) is the active key; activate another before retiring it.") }
        var fewer = keys
        fewer[id] = nil
        return FieldKeyring(activeKeyID: activeKeyID, keys: fewer)
    }

    // MARK: File

    private static let header = Array("strongroom field keyring 1".utf8)
    /// Plenty for thousands of keys; a larger file is not a keyring.
    private static let maximumFileSize = 1 << 20

    /// Reads a keyring file, unwrapping it with a passphrase from
    /// `passphrase` when it is wrapped (`WrappedKeyFile`).
    ///
    /// - Throws: `StrongroomError` with `StrongroomError/Code/notFound`,
    ///   `StrongroomError/Code/keyFilePermissions` (group or others may
    ///   read it; the message gives the `chmod`),
    ///   `StrongroomError/Code/malformedKey` (the message names the line,
    ///   never its contents), `StrongroomError/Code/keyMissing` (wrapped, and
    ///   no passphrase given) or `StrongroomError/Code/wrongPassphrase`.
    public static func load(from path: String, unwrappingWith passphrase: PassphraseSource? = nil) throws(StrongroomError) -> FieldKeyring {
        try parse(WrappedKeyFile.open(try readFile(at: path), contents: .fieldKeyring, path: path, unwrappingWith: passphrase).bytes,
                  what: "field keyring \(path)", path: path)
    }

    /// The keyring a command prints: the text of a keyring file (see
    /// `KeyCommand`; at most 1 MiB).
    ///
    /// ```swift
    /// let keyring = try FieldKeyring.load(fromCommand: KeyCommand("vault kv get -field=keyring secret/app"))
    /// ```
    public static func load(fromCommand command: KeyCommand) throws(StrongroomError) -> FieldKeyring {
        // The command's output loses its last newline; the keyring's lines end in one.
        try parse(command.output(limit: maximumFileSize, what: "field keyring"), what: "field keyring printed by the command", path: nil)
    }

    /// The keyring in the systemd credential `name`: the file
    /// `$CREDENTIALS_DIRECTORY/name`, holding a keyring file's text, plain or
    /// wrapped (unwrapped with a passphrase from `passphrase`), with exactly
    /// the checks of `DatabaseKey.fromCredential(_:unwrappingWith:)`: a
    /// credentials directory private to the service, a credential that is
    /// a regular file, the user's own and owner-only. systemd decrypts it there
    /// at start-up, so no readable keyring lies on disk.
    ///
    /// ```sh
    /// systemd-creds encrypt --with-key=host --name=app-fields Keys/fields.keyring /etc/credstore.encrypted/app-fields
    /// ```
    ///
    /// ```ini
    /// [Service]
    /// LoadCredentialEncrypted=app-fields:/etc/credstore.encrypted/app-fields
    /// ```
    ///
    /// ```swift
    /// let keyring = try FieldKeyring.fromCredential("app-fields")
    /// let wrapped = try FieldKeyring.fromCredential("app-fields-wrapped",
    ///                                               unwrappingWith: .command(KeyCommand("pass show app/fields-wrap")))
    /// ```
    ///
    /// - Throws: `StrongroomError` with `StrongroomError/Code/keyMissing`
    ///   when `$CREDENTIALS_DIRECTORY` is not set (not a systemd service with
    ///   credentials), or the credential is wrapped and no passphrase given;
    ///   `StrongroomError/Code/notFound` when the directory or the credential
    ///   is missing (the message gives the unit's `LoadCredentialEncrypted=`
    ///   line); `StrongroomError/Code/keyFilePermissions` when group or others
    ///   may read the directory or the credential, or it is a symbolic link;
    ///   `StrongroomError/Code/misuse` for a name that is not one file name;
    ///   `StrongroomError/Code/malformedKey` when it does not hold a keyring
    ///   (the message names the line, never its contents);
    ///   `StrongroomError/Code/wrongPassphrase`. None quotes a key.
    public static func fromCredential(_ name: String, unwrappingWith passphrase: PassphraseSource? = nil) throws(StrongroomError) -> FieldKeyring {
        let path = try SystemdCredential.path(of: name, holding: "the field keyring")
        let file = try SecretFile.read(at: path, maximumSize: WrappedKeyFile.size(ofPlaintext: maximumFileSize), what: SystemdCredential.what,
                                       createHint: SystemdCredential.missingHint(name), malformed: .malformedKey)
        return try parse(WrappedKeyFile.open(file, contents: .fieldKeyring, path: path, unwrappingWith: passphrase).bytes,
                         what: "field keyring in the systemd credential \(name)", path: path)
    }

    private static func readFile(at path: String) throws(StrongroomError) -> SecureBytes {
        try SecretFile.read(at: path, maximumSize: WrappedKeyFile.size(ofPlaintext: maximumFileSize), what: "field keyring",
                            createHint: "create one with `strongroom keygen --field --out \(path)`", malformed: .malformedKey)
    }

    /// The keyring in `contents` (a keyring file's text); `what` names it in errors.
    private static func parse(_ contents: SecureBytes, what: String, path: String?) throws(StrongroomError) -> FieldKeyring {
        var active: UInt32?
        var keys: [UInt32: SecureBytes] = [:]
        var problem: String?
        contents.withUnsafeBytes { bytes in
            var lineNumber = 0
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                let line = UnsafeRawBufferPointer(rebasing: line)
                if lineNumber == 1 {
                    if !line.elementsEqual(header) { problem = "line 1 is not `strongroom field keyring 1`" }
                } else if line.isEmpty {
                    continue
                } else if line.starts(with: Array("active ".utf8)) {
                    guard active == nil, let id = Self.keyID(UnsafeRawBufferPointer(rebasing: line[7...])) else {
                        problem = "line \(lineNumber) is not one `active <id>`"; return
                    }
                    active = id
                } else if line.starts(with: Array("key ".utf8)) {
                    let fields = line[4...].split(separator: 0x20, omittingEmptySubsequences: false)
                    guard fields.count == 2, let id = Self.keyID(UnsafeRawBufferPointer(rebasing: fields[0])), keys[id] == nil,
                          fields[1].count == keyByteCount * 2, fields[1].allSatisfy(Hex.isLowercaseHexDigit),
                          let key = Hex.decodeSecret(UnsafeRawBufferPointer(rebasing: fields[1])) else {
                        problem = "line \(lineNumber) is not `key <id> <64 lowercase hex characters>` with a new id"; return
                    }
                    keys[id] = key
                } else {
                    problem = "line \(lineNumber) is not `active …` or `key …`"; return
                }
                if problem != nil { return }
            }
        }
        if let problem {
            throw StrongroomError(.malformedKey, "The \(what) is malformed: \(problem).", path: path)
        }
        guard let active, keys[active] != nil else {
            throw StrongroomError(.malformedKey, "The \(what) is malformed: its `active` line must name one of its keys.", path: path)
        }
        return FieldKeyring(activeKeyID: active, keys: keys)
    }

    /// An id: 1 to 4294967295 in decimal, no sign, no leading zero.
    private static func keyID(_ text: UnsafeRawBufferPointer) -> UInt32? {
        guard !text.isEmpty, text.count <= 10, text.first != 0x30, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt32(String(decoding: text, as: UTF8.self))
    }

    /// Changes the keyring file at `path` under an exclusive lock (a
    /// `flock` on `PATH.lock`, released when the process ends however it
    /// ends): reads it, applies `change`, writes the result in its place.
    /// Changes made at the same time by other processes are never lost. A
    /// wrapped keyring is unwrapped with a passphrase from `passphrase` and
    /// stays wrapped, under the same passphrase.
    ///
    /// ```swift
    /// let updated = try FieldKeyring.update(at: "Keys/fields.keyring") { $0.addingKey().keyring }
    /// ```
    @discardableResult
    public static func update(at path: String, unwrappingWith passphrase: PassphraseSource? = nil, timeout: Duration = .seconds(30),
                              _ change: (FieldKeyring) throws -> FieldKeyring) throws -> FieldKeyring {
        // A keyring that is not there is said to be so before the lock beside it is made.
        _ = try readFile(at: path)
        let lock: FileLock
        do {
            lock = try FileLock(path: path + ".lock", timeout: timeout)
        } catch .timedOut {
            throw StrongroomError(.busy, "Another process is changing the field keyring \(path); try again when it is done.", path: path)
        } catch .cannotOpen(let code) {
            throw StrongroomError(.cannotCreate, "Cannot take the lock beside the field keyring \(path): \(String(cString: strerror(code))).", path: path)
        }
        let opened = try WrappedKeyFile.open(try readFile(at: path), contents: .fieldKeyring, path: path, unwrappingWith: passphrase)
        let changed = try change(try parse(opened.bytes, what: "field keyring \(path)", path: path))
        try changed.write(to: path, replacing: true, wrappingWith: opened.wrapping?.passphrase,
                          parameters: opened.wrapping?.parameters ?? .interactive)
        withExtendedLifetime(lock) {}
        return changed
    }

    /// Writes the keyring to `path` with mode 0600, synced, appearing
    /// atomically. A new file never overwrites one; `replacing: true`
    /// replaces an existing keyring atomically (after adding or activating
    /// a key). With `passphrase`, the file is wrapped under it
    /// (`WrappedKeyFile`, scrypt with `parameters`).
    public func write(to path: String, replacing: Bool = false, wrappingWith passphrase: SecureBytes? = nil,
                      parameters: Scrypt.Parameters = .interactive) throws(StrongroomError) {
        var text = Self.header + Array("\nactive \(activeKeyID)\n".utf8)
        var lines: [SecureBytes] = []
        for id in keyIDs {
            lines.append(Hex.encodeSecret(keys[id]!, prefix: Array("key \(id) ".utf8), suffix: [0x0A]))
        }
        let total = text.count + lines.reduce(0) { $0 + $1.count }
        let contents = SecureBytes(count: total) { out in
            out.copyBytes(from: text)
            var offset = text.count
            for line in lines {
                line.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
                }
                offset += line.count
            }
        }
        text.removeAll()
        let file = try passphrase.map { passphrase throws(StrongroomError) in
            try WrappedKeyFile.wrap(contents, contents: .fieldKeyring, passphrase: passphrase, parameters: parameters)
        } ?? contents
        try SecretFile.write(file, to: path, replacing: replacing, what: passphrase == nil ? "field keyring" : "wrapped field keyring")
    }
}
