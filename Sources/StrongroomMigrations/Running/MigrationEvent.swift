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
    /// The migration's version number.
    public let version: Int
    /// The migration's name.
    public let description: String
    /// Its SQL file, nil for a Swift migration.
    public let file: String?
    /// How many SQL statements it runs.
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

extension MigrationEvent: CustomStringConvertible {
    /// "migration 3 add email started (1 of 2)", "migration 3 finished in 12 ms", …
    public var description: String {
        switch self {
        case .migrationStarted(let version, let description, let index, let count):
            "migration \(version) \(description) started (\(index) of \(count))"
        case .statementStarted(let version, let index, let count):
            "migration \(version): statement \(index) of \(count)"
        case .rowsCopied(let version, let table, let rows):
            "migration \(version): \(rows) rows of \(table) copied"
        case .migrationFinished(let version, let duration):
            "migration \(version) finished in \(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) ms"
        }
    }
}

// `description` is the migration's name here, so the readable form is the
// debug description (which print and string interpolation use).
extension PlannedMigration: CustomDebugStringConvertible {
    /// "3 add email (V003__add_email.sql, 2 statements, rebuilds tables)".
    public var debugDescription: String {
        var details = file.flatMap { $0.split(separator: "/").last.map { [String($0)] } } ?? []
        details.append("\(statementCount) statement\(statementCount == 1 ? "" : "s")")
        if rebuildsTables { details.append("rebuilds tables") }
        return "\(version) \(description) (\(details.joined(separator: ", ")))"
    }
}
