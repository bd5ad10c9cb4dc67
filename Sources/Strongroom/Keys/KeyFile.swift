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
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            let err = errno
            switch err {
            case ENOENT:
                throw StrongroomError(.notFound, "No key file at \(path); create one with `strongroom keygen --out \(path)`.", path: path)
            case EACCES, EPERM:
                throw StrongroomError(.permissionDenied, "Permission denied reading the key file \(path); check its owner.", path: path)
            case ELOOP:
                throw StrongroomError(.keyFilePermissions, "The key file \(path) is a symbolic link; point to the real file.", path: path)
            default:
                throw StrongroomError(.malformedKey, "Cannot read the key file \(path): \(String(cString: strerror(err))).", path: path)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw StrongroomError(.malformedKey, "The key file \(path) is not a regular file.", path: path)
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StrongroomError(.keyFilePermissions, "The key file \(path) is readable or writable by group or others (mode \(mode)); run `chmod 600 \(path)`.", path: path)
        }
        let maximum = hexCharacterCount + 1
        guard info.st_size == Int64(hexCharacterCount) || info.st_size == Int64(maximum) else {
            throw malformed(path)
        }
        // Read into secure storage directly: no String copy of the key is made.
        var readCount = 0
        let text = SecureBytes(count: Int(info.st_size)) { buffer in
            while readCount < buffer.count {
                let n = Foundation.read(fd, buffer.baseAddress! + readCount, buffer.count - readCount)
                if n <= 0 { break }
                readCount += n
            }
        }
        guard readCount == text.count else { throw malformed(path) }
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
        if access(path, F_OK) == 0 {
            throw StrongroomError(.outputExists, "\(path) already exists; a key file is never overwritten. Choose another path or remove the old file deliberately.", path: path)
        }
        let directory = FileSystem.directory(of: path)
        let temporary = directory + "/.strongroom-key-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StrongroomError(.cannotCreate, "Cannot create a key file in \(directory): \(String(cString: strerror(errno))).", path: path)
        }
        var succeeded = false
        defer {
            close(fd)
            if !succeeded { unlink(temporary) }
        }
        // Enforce the mode whatever the umask.
        fchmod(fd, 0o600)
        let text = Hex.encodeSecret(raw, suffix: [0x0A])
        let written = text.withUnsafeBytes { bytes in Foundation.write(fd, bytes.baseAddress, bytes.count) }
        guard written == text.count, fsync(fd) == 0 else {
            throw StrongroomError(.cannotCreate, "Cannot write the key file \(path): \(String(cString: strerror(errno))).", path: path)
        }
        // link(2) fails with EEXIST instead of replacing: no overwrite, even in a race.
        if link(temporary, path) != 0 {
            let err = errno
            if err == EEXIST {
                throw StrongroomError(.outputExists, "\(path) already exists; a key file is never overwritten.", path: path)
            }
            throw StrongroomError(.cannotCreate, "Cannot create the key file \(path): \(String(cString: strerror(err))).", path: path)
        }
        unlink(temporary)
        succeeded = true
        // The new name lives in the directory: sync it too, or a power cut
        // can lose the only key of a database already encrypted with it.
        if let error = FileSystem.syncDirectory(of: path) {
            throw StrongroomError(.cannotCreate, "The key file \(path) was written, but its directory could not be synced (\(String(cString: strerror(error)))): it may not survive a power cut. Check the disk, and make sure the key is saved before using it.", path: path)
        }
    }

    private static func malformed(_ path: String) -> StrongroomError {
        StrongroomError(.malformedKey, "The key file \(path) must hold exactly 64 lowercase hex characters (a 256-bit key), optionally followed by a newline; create a new one with `strongroom keygen`.", path: path)
    }
}
