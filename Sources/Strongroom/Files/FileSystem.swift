import Foundation

/// The few file-system calls the library makes beside SQLite's own: one
/// place for each, named after what it guarantees.
package enum FileSystem {
    /// Which file a path names now: its device and inode (`stat(2)`).
    package struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// Whether this process has `path` open although it was deleted: a link
    /// in `/proc/self/fd` reads "`path` (deleted)". False where there is no
    /// `/proc` (macOS).
    package static func processHoldsDeletedFile(_ path: String) -> Bool {
        let deleted = path + " (deleted)"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        return descriptors.contains { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) == deleted
        }
    }

    /// `path` made absolute against the working directory now, its
    /// directory's symlinks resolved, or nil when the directory does not exist.
    package static func absolute(_ path: String) -> String? {
        resolved(directory(of: path)).map { $0 + "/" + (path as NSString).lastPathComponent }
    }

    /// The file `path` names now, or nil when there is none.
    package static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// `path` with every symlink and `..` resolved (`realpath(3)`), or nil
    /// when it does not exist.
    package static func resolved(_ path: String) -> String? {
        realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
    }

    /// The directory holding `path` (`.` for a bare name).
    package static func directory(of path: String) -> String {
        // Not NSString.deletingLastPathComponent: swift-corelibs-foundation
        // (Swift 6.3) traps on a one-character path.
        func trimmingSlashes(_ text: Substring) -> Substring {
            var text = text
            while text.count > 1 && text.hasSuffix("/") { text = text.dropLast() }
            return text
        }
        let trimmed = trimmingSlashes(Substring(path))
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let directory = trimmingSlashes(trimmed[..<slash])
        return directory.isEmpty ? "/" : String(directory)
    }

    /// Syncs the directory holding `path`, so a name just linked or renamed
    /// there survives a power cut. A directory this process may write but not
    /// read (mode -wx) cannot be opened to sync: that is not an error.
    /// - Returns: the `errno` of a failed `fsync`, nil otherwise.
    @discardableResult
    package static func syncDirectory(of path: String) -> Int32? {
        let descriptor = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return fsync(descriptor) == 0 ? nil : errno
    }

    /// Syncs the file at `path` (`fsync`): what was written to it survives
    /// a power cut.
    /// - Returns: the `errno` of a failed `open` or `fsync`, nil otherwise.
    package static func sync(_ path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return fsync(descriptor) == 0 ? nil : errno
    }

    /// Creates `path` empty with exactly `mode` (whatever the umask) when
    /// nothing is there; returns whether it did. Never follows a link at
    /// `path` nor replaces a file.
    @discardableResult
    static func createEmpty(_ path: String, mode: mode_t) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        fchmod(descriptor, mode)
        return true
    }
}
