public import Foundation
public import Strongroom

/// An error from the migration runner: a code to match, a sentence a user can
/// act on, and the migration, file and statement concerned.
///
/// ```swift
/// do {
///     try migrator.migrate(queue)
/// } catch let error as MigrationError where error.code == .migrationFailed {
///     print(error.version ?? 0, error.file ?? "", error.message)
/// }
/// ```
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for matching in `catch`. The raw value is stable.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A file name in the migrations directory is not `NNNN_description.sql`.
        case malformedName = "malformed_name"
        /// Two migrations share a version.
        case duplicateVersion = "duplicate_version"
        /// The migrations directory cannot be read.
        case directoryUnreadable = "directory_unreadable"
        /// A migration failed and was rolled back; the database is at the previous version.
        case migrationFailed = "migration_failed"
        /// A rebuild left rows that break a foreign key; the migration was rolled back.
        case foreignKeyViolation = "foreign_key_violation"
        /// A transactional migration contains `BEGIN`, `COMMIT`, `END` or
        /// `ROLLBACK`, or a Swift migration ended the runner's transaction.
        case transactionControl = "transaction_control"
        /// A table rebuild cannot be done as written (unknown column, column used by an index...).
        case unsupportedRebuild = "unsupported_rebuild"
        /// The database has applied versions this directory does not know: it is newer than the app.
        case databaseNewer = "database_newer"
        /// An applied migration's file changed since it was applied.
        case checksumMismatch = "checksum_mismatch"
        /// Another runner holds the migration lock and did not release it in time.
        case lockTimeout = "lock_timeout"
        /// A baseline or target version is not valid here.
        case invalidVersion = "invalid_version"
        /// The database could not be opened or read (see ``underlying``).
        case database = "database"
        /// The schema holds a trigger or view no migration creates that
        /// calls a sealed-column function: a run with the field keyring
        /// refuses to lend the functions to it (nothing was migrated).
        case untrustedSchema = "untrusted_schema"
    }

    /// What kind of failure, to match on.
    public let code: Code
    /// One sentence: what happened and what to do.
    public let message: String
    /// The migration version concerned.
    public let version: Int?
    /// The migration file concerned.
    public let file: String?
    /// The statement that failed (its text as written in the file).
    public let statement: String?
    /// The database error underneath, when there is one.
    public let underlying: StrongroomError?
    /// The versions the failing run applied before this error (each atomic,
    /// and kept), in order; empty when it applied none.
    public internal(set) var appliedBeforeFailure: [Int] = []

    /// An error with its code, message and context (migration, file, statement).
    public init(_ code: Code, _ message: String, version: Int? = nil, file: String? = nil, statement: String? = nil, underlying: StrongroomError? = nil) {
        self.code = code
        self.message = message
        self.version = version
        self.file = file
        self.statement = statement
        self.underlying = underlying
    }

    /// The message, with the migration and statement it concerns.
    public var description: String {
        var text = message
        if let statement { text += " (statement: \(statement))" }
        return text
    }

    static func database(_ error: StrongroomError) -> MigrationError {
        MigrationError(.database, error.message, underlying: error)
    }
}

/// `error.localizedDescription` gives the message and the statement.
extension MigrationError: LocalizedError {
    public var errorDescription: String? { description }
}
