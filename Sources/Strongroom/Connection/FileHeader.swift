internal import CSQLCipher
import Foundation

/// What a database file is, told without Strongroom opening the file itself.
///
/// Closing *any* descriptor of a file releases every POSIX lock the process
/// holds on it, SQLite's included: opening and closing a database file beside
/// SQLite could silently drop another connection's lock. So the size comes
/// from `stat(2)`, and the first bytes are read through SQLite's own file
/// handle (`SQLITE_FCNTL_FILE_POINTER`) after `sqlite3_open_v2`.
///
/// A plaintext SQLite file starts with the 16 bytes `SQLite format 3\0`; a
/// SQLCipher file starts with its random 16-byte salt, or, with SQLCipher 4's
/// plaintext header (``PlaintextHeader``), with SQLite's header again. Byte 20
/// of that header, the bytes each page reserves at its end, tells the two
/// apart: SQLCipher reserves at least 16 (each page's IV, then its HMAC), and
/// SQLite reserves none unless an extension asks for a few (the checksum VFS: 8).
enum FileHeader {
    enum Kind: Equatable {
        /// The file does not exist.
        case missing
        /// The file exists and is empty (a new database).
        case empty
        /// A plaintext SQLite database.
        case plaintext
        /// A SQLCipher database with a plaintext header (SQLCipher 4).
        case plaintextHeader
        /// Something else: a SQLCipher database, or not a database at all.
        case opaque(size: Int64)
    }

    static let plaintextMagic: [UInt8] = Array("SQLite format 3\0".utf8)

    /// How many bytes ``kind(size:header:)`` looks at: SQLite's whole header.
    static let headerSize = 100

    /// Where SQLite's header keeps the bytes each page reserves.
    static let reservedBytesOffset = 20

    /// The fewest bytes a page of SQLCipher reserves: its 16-byte IV.
    static let sqlcipherMinimumReserve: UInt8 = 16

    /// The size of the file at `path`, or nil when it does not exist.
    static func size(of path: String) throws(StrongroomError) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            switch errno {
            case ENOENT: return nil
            case EACCES, EPERM:
                throw StrongroomError(.permissionDenied, "Permission denied reaching \(path); check the directory's permissions.", path: path)
            default:
                throw StrongroomError(.notADatabase, "Cannot inspect \(path): \(String(cString: strerror(errno))).", path: path)
            }
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw StrongroomError(.notADatabase, "\(path) is a directory, not a database file.", path: path)
        }
        if access(path, R_OK) != 0 {
            throw StrongroomError(.permissionDenied, "Permission denied reading \(path); check the file's owner and mode.", path: path)
        }
        return Int64(info.st_size)
    }

    /// The first `count` bytes of the main database file of `db`, read with
    /// SQLite's own descriptor, or nil.
    static func firstBytes(of db: OpaquePointer, count: Int) -> [UInt8]? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        // SQLITE_FCNTL_FILE_POINTER hands back the sqlite3_file of the main
        // database: the raw file, below SQLCipher's page codec.
        guard sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods, let read = methods.pointee.xRead else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), 0) }
        return status == SQLITE_OK ? bytes : nil
    }

    /// The first bytes of the main database of `db`, a file of `size` bytes:
    /// SQLite's header (``headerSize``), or as much of it as the file holds;
    /// nil under 16 bytes (too short to tell anything).
    static func leadingBytes(of db: OpaquePointer, size: Int64?) -> [UInt8]? {
        guard let size, size >= Int64(plaintextMagic.count) else { return nil }
        return firstBytes(of: db, count: Int(min(size, Int64(headerSize))))
    }

    /// The kind of a file of `size` bytes (nil: missing) whose first bytes
    /// (up to ``headerSize``) are `header`.
    static func kind(size: Int64?, header: [UInt8]?) -> Kind {
        guard let size else { return .missing }
        if size == 0 { return .empty }
        guard let header, header.count >= plaintextMagic.count, Array(header.prefix(plaintextMagic.count)) == plaintextMagic else {
            return .opaque(size: size)
        }
        if header.count > reservedBytesOffset, header[reservedBytesOffset] >= sqlcipherMinimumReserve {
            return .plaintextHeader
        }
        return .plaintext
    }
}
