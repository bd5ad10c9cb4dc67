import Foundation
package import StrongroomCrypto

/// Files that hold secrets (database key files, field keyrings): read into
/// secure storage only when they are regular, owner-only files reached
/// without a symlink; written owner-only, synced, and made to appear
/// atomically. Errors name the file and never quote its contents.
package enum SecretFile {
    /// Reads the file at `path` (at most `maximumSize` bytes) into secure storage.
    ///
    /// `what` names the file in messages ("key file", "field keyring");
    /// `createHint` says how to make a new one.
    package static func read(at path: String, maximumSize: Int, what: String, createHint: String,
                             malformed: StrongroomError.Code) throws(StrongroomError) -> SecureBytes {
        // O_NONBLOCK: a FIFO put in a key file's place must not hang the reader
        // (it is refused below as not a regular file); reads of a regular file ignore it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            let err = errno
            switch err {
            case ENOENT:
                throw StrongroomError(.notFound, "No \(what) at \(path); \(createHint).", path: path)
            case EACCES, EPERM:
                throw StrongroomError(.permissionDenied, "Permission denied reading the \(what) \(path); check its owner.", path: path)
            case ELOOP:
                throw StrongroomError(.keyFilePermissions, "The \(what) \(path) is a symbolic link; point to the real file.", path: path)
            default:
                throw StrongroomError(malformed, "Cannot read the \(what) \(path): \(String(cString: strerror(err))).", path: path)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw StrongroomError(malformed, "The \(what) \(path) is not a regular file.", path: path)
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StrongroomError(.keyFilePermissions, "The \(what) \(path) is readable or writable by group or others (mode \(mode)); run `chmod 600 \(path)`.", path: path)
        }
        // As ssh demands of its keys: the file is the user's own, and its
        // directory lets no one else replace it.
        let user = geteuid()
        if info.st_uid != user {
            throw StrongroomError(.keyFilePermissions, "The \(what) \(path) belongs to user \(info.st_uid), not to the user running this program (\(user)): that user could read it or put another key in its place. Run as its owner, or `chown \(user) \(path)`.", path: path)
        }
        try checkDirectory(of: path, user: user, what: what)
        guard info.st_size <= Int64(maximumSize) else {
            throw StrongroomError(malformed, "The \(what) \(path) is larger than a \(what) can be (\(info.st_size) bytes).", path: path)
        }
        // Read into secure storage directly: no String copy of the secret is made.
        var readCount = 0
        let contents = SecureBytes(count: Int(info.st_size)) { buffer in
            while readCount < buffer.count {
                let n = Foundation.read(fd, buffer.baseAddress! + readCount, buffer.count - readCount)
                if n <= 0 { break }
                readCount += n
            }
        }
        guard readCount == contents.count else {
            throw StrongroomError(malformed, "The \(what) \(path) changed while it was read; try again.", path: path)
        }
        return contents
    }

    /// The directory a secret file is in must belong to the user (or root)
    /// and let no one else write to it (unless sticky, as /tmp is: no one
    /// may then rename or remove another's file).
    private static func checkDirectory(of path: String, user: uid_t, what: String) throws(StrongroomError) {
        let directory = FileSystem.directory(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else { return }  // the file was opened; its directory is there
        if info.st_uid != user && info.st_uid != 0 {
            throw StrongroomError(.keyFilePermissions, "The directory \(directory) of the \(what) \(path) belongs to user \(info.st_uid), who could put another file in its place; keep \(what)s in a directory of your own (`chown \(user) \(directory)`).", path: path)
        }
        if info.st_mode & 0o022 != 0 && info.st_mode & S_ISVTX == 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StrongroomError(.keyFilePermissions, "The directory \(directory) of the \(what) \(path) may be written by group or others (mode \(mode)), who could put another file in its place; run `chmod go-w \(directory)`.", path: path)
        }
    }

    /// Makes `directory` and any missing parent, owner-only (0700), as
    /// ssh-keygen makes ~/.ssh, each synced into its parent; an existing
    /// directory is left as it is.
    private static func makeOwnerOnlyDirectory(_ directory: String, for path: String, what: String) throws(StrongroomError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) { return }
        let parent = FileSystem.directory(of: directory)
        if parent != directory { try makeOwnerOnlyDirectory(parent, for: path, what: what) }
        if mkdir(directory, 0o700) == 0 {
            chmod(directory, 0o700)   // whatever the umask
            // The new name lives in the parent: a power cut must not lose it.
            if let error = FileSystem.syncDirectory(of: directory) {
                throw StrongroomError(.cannotCreate, "The directory \(directory) was made, but its parent could not be synced (\(String(cString: strerror(error)))).", path: path)
            }
        } else if errno != EEXIST {
            throw StrongroomError(.cannotCreate, "Cannot create the directory \(directory) for a \(what): \(String(cString: strerror(errno))).", path: path)
        }
    }

    /// Writes `contents` to `path` with mode 0600: written and synced to a
    /// temporary file in the same directory, which then takes the name
    /// (`link(2)`, which never replaces a file, or with `replacing`,
    /// `rename(2)`, which replaces it atomically), and the directory is synced.
    /// A missing directory is made, owner-only.
    package static func write(_ contents: SecureBytes, to path: String, replacing: Bool, what: String) throws(StrongroomError) {
        if !replacing && access(path, F_OK) == 0 {
            throw StrongroomError(.outputExists, "\(path) already exists; a \(what) is never overwritten. Choose another path or remove the old file deliberately.", path: path)
        }
        let directory = FileSystem.directory(of: path)
        try makeOwnerOnlyDirectory(directory, for: path, what: what)
        let temporary = directory + "/.strongroom-key-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StrongroomError(.cannotCreate, "Cannot create a \(what) in \(directory): \(String(cString: strerror(errno))).", path: path)
        }
        var succeeded = false
        defer {
            close(fd)
            if !succeeded { unlink(temporary) }
        }
        // Enforce the mode whatever the umask.
        fchmod(fd, 0o600)
        let written = contents.withUnsafeBytes { bytes in Foundation.write(fd, bytes.baseAddress, bytes.count) }
        guard written == contents.count, fsync(fd) == 0 else {
            throw StrongroomError(.cannotCreate, "Cannot write the \(what) \(path): \(String(cString: strerror(errno))).", path: path)
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                throw StrongroomError(.cannotCreate, "Cannot replace the \(what) \(path): \(String(cString: strerror(errno))).", path: path)
            }
        } else {
            // link(2) fails with EEXIST instead of replacing: no overwrite, even in a race.
            if link(temporary, path) != 0 {
                let err = errno
                if err == EEXIST {
                    throw StrongroomError(.outputExists, "\(path) already exists; a \(what) is never overwritten.", path: path)
                }
                throw StrongroomError(.cannotCreate, "Cannot create the \(what) \(path): \(String(cString: strerror(err))).", path: path)
            }
            unlink(temporary)
        }
        succeeded = true
        // The new name lives in the directory: sync it too, or a power cut
        // can lose the only key of data already encrypted with it.
        if let error = FileSystem.syncDirectory(of: path) {
            throw StrongroomError(.cannotCreate, "The \(what) \(path) was written, but its directory could not be synced (\(String(cString: strerror(error)))): it may not survive a power cut. Check the disk, and make sure the key is saved before using it.", path: path)
        }
    }
}
