internal import CSQLCipher

extension Connection {
    /// Refuses a write that would go to files no one else can see: the
    /// database file deleted, moved or replaced since it was opened (its
    /// directory removed, say), or, in WAL mode, its `-wal` deleted or
    /// replaced under the connection. SQLite writes on into such files
    /// without a word (the rollback journal catches a moved database; WAL
    /// mode does not), and what it writes is lost when the connection closes.
    ///
    /// For a deleted `-wal`, the transactions committed in it are first
    /// copied into the database file (a checkpoint through the file still
    /// open), so that they are not lost; the connection must then be closed
    /// and opened again (``DatabaseQueue`` and ``DatabasePool`` do it).
    /// Runs before every `IMMEDIATE` or `EXCLUSIVE` transaction: two
    /// `stat(2)` calls.
    func refuseWritesToMovedFiles() throws(StrongroomError) {
        guard path != ":memory:", !path.isEmpty else { return }
        // SQLITE_FCNTL_HAS_MOVED: the unix VFS sets the int to 1 when the
        // path no longer names the file the connection has open.
        var moved: Int32 = 0
        if sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK, moved != 0 {
            throw StrongroomError(.fileMoved, "\(path) was deleted, moved or replaced while open (was its directory removed?): a write now would go to a file no one can open again, so it was refused. Open the database at its path again.", path: path)
        }
        guard let recorded = walIdentity else { return }
        let now = FileSystem.identity(of: path + "-wal")
        if now == recorded { return }
        // Gone because the connection left WAL mode is no fault.
        if now == nil, (try? fetchOne(String.self, sql: "PRAGMA journal_mode"))?.lowercased() != "wal" {
            walIdentity = nil
            return
        }
        walIdentity = nil
        // PASSIVE: copy every committed frame the readers allow into the
        // database file, through the -wal still open; the columns are
        // (busy, frames in the log, frames checkpointed).
        let result = try? fetchOne(sql: "PRAGMA wal_checkpoint(PASSIVE)")
        let frames = result.flatMap { try? $0.decode(Int.self, at: 1) }
        let copied = result.flatMap { try? $0.decode(Int.self, at: 2) }
        let saved = frames != nil && frames == copied
        throw StrongroomError(.fileMoved, "The -wal file of \(path) was deleted or replaced while the database was open: a write now would go to a file no one can open again, so it was refused. " + (saved
            ? "Every transaction committed before was copied into the database file. Open the database again (a queue or pool does it at its next use) and run the write again."
            : "The transactions committed in it could not all be copied into the database file (a reader holds an older snapshot); close every connection to it in this process at once, without deleting files, then open it again."),
            path: path)
    }

    /// Remembers the `-wal` file after a commit (nil outside WAL mode).
    func recordWALIdentity() {
        guard path != ":memory:", !path.isEmpty else { return }
        walIdentity = FileSystem.identity(of: path + "-wal")
    }
}
