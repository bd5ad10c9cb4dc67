/// Progress of a migration run, delivered to the `progress` callback as it happens.
public enum MigrationEvent: Sendable {
    /// Migration `index` (1-based) of `count` is starting.
    case migrationStarted(version: Int, description: String, index: Int, count: Int)
    /// Statement `index` (1-based) of `count` of a migration is starting.
    case statementStarted(version: Int, index: Int, count: Int)
    /// A table rebuild copied `rows` rows.
    case rowsCopied(version: Int, table: String, rows: Int)
    /// A migration committed.
    case migrationFinished(version: Int, duration: Duration)
}

/// What a migration run did.
public struct MigrationReport: Sendable, Codable {
    /// The version before the run.
    public let fromVersion: Int
    /// The version after the run.
    public let toVersion: Int
    /// The migrations applied, in order.
    public let applied: [AppliedMigration]
}

/// A migration that would run, for a dry run.
public struct PlannedMigration: Sendable, Codable, Equatable {
    public let version: Int
    public let description: String
    public let file: String?
    public let statementCount: Int
    /// True when the migration rebuilds tables (foreign keys off, checked before commit).
    public let rebuildsTables: Bool
}

extension MigrationReport: CustomStringConvertible {
    /// "Migrated from version 0 to 5: 1 create customer (3 ms), …", or
    /// "Already at version 5: nothing to apply."
    public var description: String {
        guard !applied.isEmpty else { return "Already at version \(toVersion): nothing to apply." }
        return "Migrated from version \(fromVersion) to \(toVersion): "
            + applied.map { "\($0.version) \($0.description) (\($0.durationMs) ms)" }.joined(separator: ", ") + "."
    }
}
