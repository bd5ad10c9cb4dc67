#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A database written by Strongroom for someone to keep (an import, an
/// export, a backup): made under a temporary owner-only name beside the
/// destination, and given its name only once verified, never over an
/// existing file. A crash leaves no half-written file at the destination.
enum OutputFile {
    /// A new, empty, owner-only file in `destination`'s directory, created
    /// exclusively (`O_EXCL | O_NOFOLLOW`, mode 0600 whatever the umask).
    static func createTemporary(beside destination: String) throws(StrongroomError) -> String {
        let directory = FileSystem.directory(of: destination)
        removeStaleCopies(in: directory)
        // A short name: the destination's own may be near the length limit.
        let path = directory + "/\(temporaryPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StrongroomError(.cannotCreate, "Cannot create the output beside \(destination): \(String(cString: strerror(errno))). Check that the directory exists and is writable.", path: destination)
        }
        defer { close(descriptor) }
        fchmod(descriptor, 0o600)
        return path
    }

    private static let temporaryPrefix = ".strongroom-"

    /// Removes copies a killed import, export or backup left in `directory`: files
    /// named `.strongroom-PID-N.tmp` (and their journals) that belong to this
    /// user and whose process is gone. They may hold plaintext.
    private static func removeStaleCopies(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) && name.contains(".tmp") {
            let fields = name.dropFirst(temporaryPrefix.count).split(separator: "-")
            guard fields.count >= 2, let pid = pid_t(fields[0]), pid > 0, kill(pid, 0) == -1, errno == ESRCH else { continue }
            let path = directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == getuid() else { continue }
            unlink(path)
        }
    }

    /// Gives the verified copy its final name: link(2) never replaces an
    /// existing file (nor follows a symlink there); then the directory is synced.
    /// Where the file system has no hard links (FAT, some network shares), the
    /// name is reserved with O_EXCL first and the copy renamed over it.
    static func publish(_ temporary: String, at destination: String) throws(StrongroomError) {
        if link(temporary, destination) == 0 {
            unlink(temporary)
        } else {
            let err = errno
            if err == EEXIST {
                throw StrongroomError(.outputExists, "\(destination) appeared while the copy was made; it was not overwritten, and the copy was removed.", path: destination)
            }
            guard [EPERM, EOPNOTSUPP, ENOSYS, EMLINK].contains(err) else {
                throw StrongroomError(.cannotCreate, "Cannot create \(destination): \(String(cString: strerror(err))).", path: destination)
            }
            let reserved = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard reserved >= 0 else {
                let err = errno
                throw err == EEXIST || err == ELOOP
                    ? StrongroomError(.outputExists, "\(destination) appeared while the copy was made; it was not overwritten, and the copy was removed.", path: destination)
                    : StrongroomError(.cannotCreate, "Cannot create \(destination): \(String(cString: strerror(err))).", path: destination)
            }
            close(reserved)
            guard rename(temporary, destination) == 0 else {
                let err = errno
                unlink(destination)
                throw StrongroomError(.cannotCreate, "Cannot create \(destination): \(String(cString: strerror(err))).", path: destination)
            }
        }
        FileSystem.syncDirectory(of: destination)
    }

    static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            unlink(path + suffix)
        }
    }
}
