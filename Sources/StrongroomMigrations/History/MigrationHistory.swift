public import Foundation
import Strongroom

/// The history table, kept inside the database so it survives export and rekey.
///
/// ```sql
/// CREATE TABLE strongroom_migrations(
///     version INTEGER PRIMARY KEY, description TEXT NOT NULL, checksum TEXT NOT NULL,
///     applied_at TEXT NOT NULL, duration_ms INTEGER NOT NULL, tool_version TEXT NOT NULL,
///     schema_hash TEXT NOT NULL, kind TEXT NOT NULL)   -- kind: 'migrate' or 'baseline'
/// ```
public struct AppliedMigration: Sendable, Codable, Equatable {
    /// The migration's version number.
    public let version: Int
    /// The migration's name (from its file name, `V003__add_email.sql` → "add email").
    public let description: String
    /// SHA-256 of the migration's SQL as applied: an edited file no longer matches.
    public let checksum: String
    /// UTC, `YYYY-MM-DD HH:MM:SS.SSS`.
    public let appliedAt: Date
    /// How long it ran, in milliseconds.
    public let durationMs: Int
    /// The Strongroom version that applied it.
    public let toolVersion: String
    /// SHA-256 of the schema right after this migration (see ``SchemaSnapshot``).
    public let schemaHash: String
    /// `migrate`, or `baseline` for a version recorded without running it.
    public let kind: String

    enum CodingKeys: String, CodingKey {
        case version, description, checksum
        case appliedAt = "applied_at", durationMs = "duration_ms", toolVersion = "tool_version"
        case schemaHash = "schema_hash", kind
    }
}

enum MigrationHistory {
    static let table = "strongroom_migrations"

    static func exists(_ db: Connection) throws(StrongroomError) -> Bool {
        try db.fetchOne(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) == 1
    }

    static func create(_ db: Connection) throws(StrongroomError) {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(table)(
                version INTEGER PRIMARY KEY,
                description TEXT NOT NULL,
                checksum TEXT NOT NULL,
                applied_at TEXT NOT NULL,
                duration_ms INTEGER NOT NULL,
                tool_version TEXT NOT NULL,
                schema_hash TEXT NOT NULL,
                kind TEXT NOT NULL DEFAULT 'migrate')
            """)
    }

    static func applied(_ db: Connection) throws(StrongroomError) -> [AppliedMigration] {
        guard try exists(db) else { return [] }
        return try db.fetchAll(AppliedMigration.self, sql: "SELECT * FROM \(table) ORDER BY version")
    }

    static func currentVersion(_ db: Connection) throws(StrongroomError) -> Int {
        guard try exists(db) else { return 0 }
        return try db.fetchOne(Int.self, sql: "SELECT coalesce(max(version), 0) FROM \(table)") ?? 0
    }

    static func record(_ entry: AppliedMigration, in db: Connection) throws(StrongroomError) {
        try db.insert(entry, into: table)
    }
}

// `description` is the migration's name here, so the readable form is the
// debug description (which print and string interpolation use).
extension AppliedMigration: CustomDebugStringConvertible {
    /// "3 add email, applied 2026-11-22T15:01:02Z in 12 ms (migrate, checksum 1a2b3c4d…)".
    public var debugDescription: String {
        "\(version) \(description), applied \(appliedAt.formatted(.iso8601)) in \(durationMs) ms (\(kind), checksum \(checksum.prefix(8))…)"
    }
}
