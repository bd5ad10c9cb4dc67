import Strongroom

/// The SQLite version under SQLCipher (`sqlite_version()`), to know which
/// ALTER TABLE forms it supports.
struct SQLiteVersion: Comparable, Sendable, CustomStringConvertible {
    let major: Int, minor: Int, patch: Int

    init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    init(_ text: String) {
        let parts = text.split(separator: ".").map { Int($0) ?? 0 }
        self.init(parts.count > 0 ? parts[0] : 0, parts.count > 1 ? parts[1] : 0, parts.count > 2 ? parts[2] : 0)
    }

    static func of(_ db: Connection) throws(StrongroomError) -> SQLiteVersion {
        SQLiteVersion(try db.fetchOne(String.self, sql: "SELECT sqlite_version()") ?? "0")
    }

    /// `ALTER TABLE … RENAME COLUMN` arrived in SQLite 3.25.
    var hasRenameColumn: Bool { self >= SQLiteVersion(3, 25) }
    /// `ALTER TABLE … DROP COLUMN` arrived in SQLite 3.35.
    var hasDropColumn: Bool { self >= SQLiteVersion(3, 35) }

    static func < (a: SQLiteVersion, b: SQLiteVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }

    var description: String { "\(major).\(minor).\(patch)" }
}
