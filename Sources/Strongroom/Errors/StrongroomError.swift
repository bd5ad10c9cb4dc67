public import Foundation

/// An error from Strongroom: a code to match, a sentence a user can act on,
/// and context. It never contains key material.
///
/// ```swift
/// do {
///     let db = try Connection(path: "app.db", configuration: .init(key: key))
/// } catch let error as StrongroomError where error.code == .wrongKey {
///     // ask for the key again
/// } catch let error as StrongroomError where error.code.isConstraintViolation {
///     // ...
/// }
/// ```
///
/// The SQL of a failing statement is kept in ``sql``; the values bound to it are
/// never kept, since they may be personal data.
public struct StrongroomError: Error, Sendable, Hashable {
    /// What went wrong, for matching in `catch`. The raw value is stable and is
    /// what the CLI prints in `--json` output.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The key does not decrypt the database (or the file is not a SQLCipher database).
        case wrongKey = "wrong_key"
        /// The key opens the file only with SQLCipher 3's settings, and the linked
        /// SQLCipher is 4 or later: a file written by SQLCipher 3 (Debian 12's
        /// libsqlcipher, for one). Upgrade it once (`strongroom upgrade`,
        /// ``DatabaseUpgrade``), or open it with
        /// ``Configuration/cipherCompatibility`` set to ``CipherFormat/sqlcipher3``.
        case legacyCipherFormat = "legacy_cipher_format"
        /// The file is in the linked SQLCipher's format already: an upgrade
        /// has nothing to do, and changed nothing.
        case alreadyCurrent = "already_current"
        /// The file is encrypted (or not a database) and no key was given.
        case keyRequired = "key_required"
        /// A key was given but the file is a plaintext SQLite database.
        case plaintextDatabase = "plaintext_database"
        /// The file is not a database, is truncated, or is corrupt.
        case notADatabase = "not_a_database"
        /// The database reads, but its content is damaged (`SQLITE_CORRUPT`).
        case corrupt = "corrupt"
        /// The file does not exist (and creating it was not asked for).
        case notFound = "not_found"
        /// The operating system refused access to the file.
        case permissionDenied = "permission_denied"
        /// Another connection or process holds a lock (`SQLITE_BUSY`, `SQLITE_LOCKED`).
        case busy = "busy"
        /// The database or connection is read-only.
        case readOnly = "read_only"
        /// The disk, the file system's quota or the database's
        /// `max_page_count` is full (`SQLITE_FULL`): the statement was rolled
        /// back (with its transaction, unless the caller manages it) and
        /// nothing of it was written; free space and run it again.
        case diskFull = "disk_full"
        /// The operating system failed a read, a write or an `fsync`
        /// (`SQLITE_IOERR`), also while opening: a write in progress was
        /// rolled back; check the disk and the file system, then run it again.
        case ioError = "io_error"
        /// The database file, or its `-wal`, was deleted or replaced while
        /// open (its directory removed, the file moved): a write would not
        /// reach the file at the path, so it was refused. What was committed
        /// in a deleted `-wal` is first copied into the database file. A
        /// queue or pool that meets it closes; open the database again once
        /// every connection to it has closed.
        case fileMoved = "file_moved"
        /// A UNIQUE constraint failed. A duplicate primary key is
        /// ``primaryKeyConstraint`` although SQLite's text says "UNIQUE
        /// constraint failed"; match both with ``isUniquenessViolation``.
        case uniqueConstraint = "unique_constraint"
        /// A PRIMARY KEY constraint failed (a duplicate key, `INTEGER PRIMARY
        /// KEY` included). See ``isUniquenessViolation``.
        case primaryKeyConstraint = "primary_key_constraint"
        /// A FOREIGN KEY constraint failed.
        case foreignKeyConstraint = "foreign_key_constraint"
        /// A NOT NULL constraint failed.
        case notNullConstraint = "not_null_constraint"
        /// A CHECK constraint failed.
        case checkConstraint = "check_constraint"
        /// Another constraint failed (trigger RAISE, rowid, ...).
        case constraint = "constraint"
        /// The linked library is plain SQLite, not SQLCipher: nothing would be encrypted.
        case sqlcipherUnavailable = "sqlcipher_unavailable"
        /// A key file is readable by group or others.
        case keyFilePermissions = "key_file_permissions"
        /// A key file (or key in the environment) does not hold exactly 64 lowercase hex characters.
        case malformedKey = "malformed_key"
        /// No key was found where one was expected (unset variable, empty input,
        /// a wrapped key file with no passphrase to unwrap it).
        case keyMissing = "key_missing"
        /// A key command (``KeyCommand``) could not start, failed, died of a
        /// signal or outlasted its time limit; its own messages went to standard error.
        case keyCommandFailed = "key_command_failed"
        /// The passphrase does not unwrap a wrapped key file or keyring, or the
        /// file was altered after it was written (the two cannot be told apart).
        case wrongPassphrase = "wrong_passphrase"
        /// An output file already exists and will not be overwritten.
        case outputExists = "output_exists"
        /// An output file could not be created.
        case cannotCreate = "cannot_create"
        /// A check after an operation (rekey, import, export) did not hold.
        case verificationFailed = "verification_failed"
        /// A rekey did not take effect: the database still opens with its old
        /// key only, and nothing in it changed. The connection that tried was
        /// closed (a ``DatabaseQueue`` or ``DatabasePool`` reopens its own).
        case rekeyFailed = "rekey_failed"
        /// The API was used in a way it does not support.
        case misuse = "misuse"
        /// A value a ``ColumnTransform`` stores in another form (a sealed
        /// column) could not be opened: the message says why, and names
        /// the table, column and row.
        case sealedValue = "sealed_value"
        /// A value read from the database does not convert to the requested type.
        case conversion = "conversion"
        /// SQL the application did not write (a trigger, a view, a CHECK
        /// constraint, a DEFAULT, an index, found in the database's schema)
        /// calls a function only the application's own statements may call
        /// (``DatabaseFunction/isDirectOnly``, such as the sealed-column
        /// functions). Nothing was run; the message names the schema object:
        /// remove it, or find out who added it.
        case untrustedSchema = "untrusted_schema"
        /// The field keyring is not the one the database's sealed values were
        /// sealed with: a key id it holds has another key than the one the
        /// database recorded a check value for. Nothing was opened or
        /// written; the message names the key id: use the right keyring.
        case wrongFieldKeyring = "wrong_field_keyring"
        /// What the database records of its sealed columns and blind
        /// indexes (the registry the command-line tools read) does not match
        /// the signature made under the field keyring: a row was rewritten,
        /// added or deleted by someone without the keyring, or no signature
        /// covers it yet. Nothing was written; the message names the row:
        /// check it, then confirm the registry (`strongroom fields confirm`).
        case untrustedRegistry = "untrusted_registry"
        /// A caller found no connection free within the bounds on waiting
        /// (``Configuration/maximumWaiters``, ``Configuration/maximumWait``):
        /// nothing was run. The message names the bound; a service answers
        /// 503 with Retry-After, or raises the bound.
        case connectionUnavailable = "connection_unavailable"
        /// The ``DatabaseQueue`` or ``DatabasePool`` was closed
        /// (``DatabasePool/close()``, ``DatabasePool/asyncClose()``): nothing
        /// was run. Open a new one.
        case closed = "closed"
        /// A statement was stopped by `sqlite3_interrupt` (an async access
        /// whose task was cancelled reports `CancellationError` instead);
        /// its transaction was rolled back.
        case interrupted = "interrupted"
        /// Any other SQLite error; ``StrongroomError/sqliteCode`` tells which.
        case sqlite = "sqlite"

        /// True for a duplicate value: ``uniqueConstraint`` or ``primaryKeyConstraint``.
        ///
        /// ```swift
        /// catch let error as StrongroomError where error.code.isUniquenessViolation { … }
        /// ```
        public var isUniquenessViolation: Bool {
            self == .uniqueConstraint || self == .primaryKeyConstraint
        }

        /// True for every kind of constraint violation.
        public var isConstraintViolation: Bool {
            switch self {
            case .uniqueConstraint, .primaryKeyConstraint, .foreignKeyConstraint,
                 .notNullConstraint, .checkConstraint, .constraint:
                return true
            default:
                return false
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// One sentence that says what happened and what to do.
    public let message: String
    /// The file concerned, when there is one.
    public let path: String?
    /// The SQL that failed, when there is one. Bound values are never kept.
    public let sql: String?
    /// SQLite's extended result code, when SQLite reported the error.
    public let sqliteCode: Int32?

    /// An error with its code, message and context (never a secret).
    ///
    public init(_ code: Code, _ message: String, path: String? = nil, sql: String? = nil, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sql = sql
        self.sqliteCode = sqliteCode
    }
}

/// `error.localizedDescription` (how Swift programs usually print errors)
/// gives the message and the SQL, never "The operation could not be completed".
extension StrongroomError: LocalizedError {
    public var errorDescription: String? { description }
}

extension StrongroomError {
    /// A write attempted inside a read-only block, said as such.
    func insideRead() -> StrongroomError {
        guard code == .readOnly else { return self }
        return StrongroomError(.readOnly, "Writes are not allowed inside read (it reads one snapshot and runs with PRAGMA query_only); use write. SQLite said: \(message)", path: path, sql: sql, sqliteCode: sqliteCode)
    }
}

extension StrongroomError: CustomStringConvertible {
    /// The message, followed by the SQL when there is some.
    public var description: String {
        var text = message
        if let sql { text += " (SQL: \(sql))" }
        return text
    }
}
