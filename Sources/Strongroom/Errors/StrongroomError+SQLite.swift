internal import CSQLCipher

extension StrongroomError {
    /// Maps an SQLite result code to a typed error with an actionable message.
    ///
    /// `message` is SQLite's own text (`sqlite3_errmsg`), which never contains
    /// bound values or key material.
    static func sqlite(_ resultCode: Int32, message sqliteMessage: String, path: String?, sql: String?) -> StrongroomError {
        let primary = resultCode & 0xFF
        let code: Code
        var message = sqliteMessage
        switch resultCode {
        case 2067 /* SQLITE_CONSTRAINT_UNIQUE */: code = .uniqueConstraint
        case 1555 /* SQLITE_CONSTRAINT_PRIMARYKEY */:
            // SQLite words a duplicate INTEGER PRIMARY KEY as "UNIQUE constraint failed".
            code = .primaryKeyConstraint
            message += " (a duplicate PRIMARY KEY)"
        case 787 /* SQLITE_CONSTRAINT_FOREIGNKEY */: code = .foreignKeyConstraint
        case 1299 /* SQLITE_CONSTRAINT_NOTNULL */: code = .notNullConstraint
        case 1032 /* SQLITE_READONLY_DBMOVED */:
            code = .fileMoved
            message += ": the database file was deleted, moved or replaced while open; open it again at its path"
        case 275 /* SQLITE_CONSTRAINT_CHECK */: code = .checkConstraint
        default:
            switch primary {
            case SQLITE_CONSTRAINT: code = .constraint
            case SQLITE_BUSY, SQLITE_LOCKED:
                code = .busy
                message += ": another connection or process holds a lock on the database; retry later or raise the busy timeout"
            case SQLITE_READONLY:
                code = .readOnly
                message += ": the database or this connection is read-only"
            case SQLITE_CORRUPT where message.hasPrefix("malformed database schema"):
                // SQLite 3.46 refuses schema rows SQLite 3.15 loaded: a temp
                // object or a reserved name in the main schema, a row whose
                // type or name disagrees with its SQL.
                code = .corrupt
                message += ": SQLite \(String(cString: sqlite3_libversion())) refuses to load this row of the database's schema, which only damage or a write with PRAGMA writable_schema puts there. Nothing was run; restore the file from a backup, and find out who edited its schema"
            case SQLITE_CORRUPT:
                code = .corrupt
                message += ": the database is damaged (in an encrypted database, a page failed its HMAC check: it was changed outside SQLCipher or damaged on disk); restore it from a backup"
            case SQLITE_NOTADB:
                code = .notADatabase
            case SQLITE_FULL:
                code = .diskFull
                message += ": the disk, the file system's quota or the database's max_page_count is full; the statement was rolled back (and its transaction, unless you manage it yourself), so nothing of it was written. Free space, then run it again"
            case SQLITE_IOERR:
                code = .ioError
                message += ": the operating system failed a read, write or sync; a write in progress was rolled back, nothing committed is lost. Check the disk and the file system, then run it again"
            case SQLITE_PERM, SQLITE_AUTH:
                code = .permissionDenied
            case SQLITE_CANTOPEN:
                code = .cannotCreate
            case SQLITE_INTERRUPT:
                code = .interrupted
                message += ": the statement was interrupted (sqlite3_interrupt); what it began was rolled back"
            case SQLITE_MISUSE, SQLITE_RANGE:
                code = .misuse
            default:
                code = .sqlite
            }
        }
        return StrongroomError(code, message, path: path, sql: sql, sqliteCode: resultCode)
    }
}
