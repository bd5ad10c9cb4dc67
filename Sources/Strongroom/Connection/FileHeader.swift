import Foundation

/// What the first bytes of a database file say, read before SQLite touches it.
///
/// A plaintext SQLite file starts with the 16 bytes `SQLite format 3\0`; a
/// SQLCipher file starts with its random 16-byte salt, so the two can be told
/// apart without a key.
enum FileHeader {
    enum Kind: Equatable {
        /// The file does not exist.
        case missing
        /// The file exists and is empty (a new database).
        case empty
        /// A plaintext SQLite database.
        case plaintext
        /// Something else: a SQLCipher database, or not a database at all.
        case opaque(size: Int64)
    }

    static let plaintextMagic: [UInt8] = Array("SQLite format 3\0".utf8)

    /// Reads the kind of `path`. Throws when the file exists but cannot be read.
    static func kind(of path: String) throws(StrongroomError) -> Kind {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            switch errno {
            case ENOENT: return .missing
            case EACCES, EPERM:
                throw StrongroomError(.permissionDenied, "Permission denied reading \(path); check the file's owner and mode.", path: path)
            default:
                throw StrongroomError(.notADatabase, "Cannot read \(path): \(String(cString: strerror(errno))).", path: path)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StrongroomError(.notADatabase, "Cannot inspect \(path).", path: path)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw StrongroomError(.notADatabase, "\(path) is a directory, not a database file.", path: path)
        }
        if info.st_size == 0 { return .empty }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        if count == 16 && header == plaintextMagic { return .plaintext }
        return .opaque(size: Int64(info.st_size))
    }

    /// The first 16 bytes of a SQLCipher file: the salt of its key derivation.
    static func salt(of path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 16), data.count == 16 else { return nil }
        let bytes = [UInt8](data)
        return bytes == plaintextMagic ? nil : bytes
    }
}
