internal import CSQLCipher

/// SQLCipher's own log (SQLCipher 4.5.1 and later).
///
/// SQLCipher 4 writes lines such as `ERROR CORE sqlcipher_page_cipher: hmac
/// check failed for pgno=1` to the process's standard error when a key is
/// wrong or a page is damaged, before the application has said a word. Its
/// settings are process-wide, not per connection, so they cannot follow each
/// caller's `Logger`: Strongroom switches the log off once, before its first
/// connection, and reports what those lines meant through its own errors
/// (``StrongroomError/Code/wrongKey``, ``StrongroomError/Code/legacyCipherFormat``,
/// ``StrongroomError/Code/corrupt``) and the caller's `Logger`.
///
/// The switch is `PRAGMA cipher_log_source = NONE`: SQLCipher 4.6 sets the
/// log level back to WARN (and the target to stderr) whenever it activates
/// with the level at NONE, which happens again after its last keyed connection
/// closes, but it never resets the source filter. The level is set to NONE as
/// well, for SQLCipher versions without the filter. SQLCipher 3 has no such
/// log and ignores both pragmas.
enum SQLCipherLog {
    /// Filters out every SQLCipher log source, process-wide.
    static func silence() {
        var db: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            if let db { sqlite3_close_v2(db) }
            return
        }
        sqlite3_exec(db, "PRAGMA cipher_log_source = NONE; PRAGMA cipher_log_level = NONE", nil, nil, nil)
        sqlite3_close_v2(db)
    }
}
