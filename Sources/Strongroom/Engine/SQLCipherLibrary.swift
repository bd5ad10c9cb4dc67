internal import CSQLCipher

/// The SQLCipher library linked into this program.
///
/// Strongroom runs on SQLCipher 3 (Debian 12's libsqlcipher, 3.4.1 on SQLite
/// 3.15.2) and on SQLCipher 4 (Debian 12's bookworm-backports, Debian 13,
/// Ubuntu 24.04: 4.5 and 4.6 on SQLite 3.4x). What differs between them, for
/// an application, is the file format new databases get (``nativeFormat``) and
/// the SQL the newer SQLite accepts.
///
/// ```swift
/// if SQLCipherLibrary.nativeFormat == .sqlcipher4 { … }
/// print(SQLCipherLibrary.version, SQLCipherLibrary.sqliteVersion)  // "4.6.1 community", "3.46.1"
/// ```
public enum SQLCipherLibrary {
    /// `PRAGMA cipher_version`, e.g. `"3.4.1"` or `"4.6.1 community"`; empty
    /// when the linked library is not SQLCipher (every open then fails with
    /// ``StrongroomError/Code/sqlcipherUnavailable``).
    public static let version: String = {
        guard let db = try? Connection.inMemory() else { return "" }
        return db.cipherVersion
    }()

    /// The SQLite version SQLCipher is built on (`sqlite3_libversion()`), e.g. `"3.15.2"`.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// `sqlite3_libversion_number()`, e.g. 3015002.
    public static var sqliteVersionNumber: Int { Int(sqlite3_libversion_number()) }

    /// The format this SQLCipher writes new databases in, and the one it
    /// opens without ``Configuration/cipherCompatibility``.
    public static var nativeFormat: CipherFormat? { CipherFormat.native(cipherVersion: version) }
}
