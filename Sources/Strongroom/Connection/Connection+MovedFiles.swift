internal import CSQLCipher

extension Connection {
    /// Refuses a write that would go to files no longer at the path: the
    /// database file deleted, moved or replaced since it was opened (its
    /// directory removed, say), or, in WAL mode, its `-wal` deleted or
    /// replaced under the connection. SQLite writes on into such files
    /// without a word (the rollback journal catches a moved database; WAL
    /// mode does not), and what it writes there is lost.
    ///
    /// For a deleted `-wal`, the transactions committed in it are first
    /// copied into the database file (a checkpoint through the file still
    /// open). The connection must not write again: a new `-wal` beside a
    /// connection still reading the old one would share its `-shm` index,
    /// and a crash would lose what was written there. ``DatabaseQueue`` and
    /// ``DatabasePool`` close and refuse further use; open the database
    /// again once every connection to it has closed.
    ///
    /// Runs before every `IMMEDIATE` or `EXCLUSIVE` transaction: two
    /// `stat(2)` calls (SQLite's own, of the database file, and one of the
    /// `-wal`); `/proc/self/fd` is read only when the `-wal` is not the file
    /// the connection wrote last.
    func refuseWritesToMovedFiles() throws(StrongroomError) {
        try checkOpen()
        guard let walPath = absoluteWALPath else { return }
        // SQLITE_FCNTL_HAS_MOVED: the unix VFS sets the int to 1 when the
        // path no longer names the file the connection has open.
        var moved: Int32 = 0
        if sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK, moved != 0 {
            throw StrongroomError(.fileMoved, "\(path) is no longer the file this connection opened (it was deleted, moved or replaced; was its directory removed?): a write now would not reach the file at that path, so it was refused. Close every connection to it, then open the database again.", path: path)
        }
        guard let recorded = walIdentity else { return }
        let now = FileSystem.identity(of: walPath)
        if now == recorded { return }
        // A -wal that changed is a fault only when this process still holds
        // the old one, deleted: leaving WAL mode and coming back, or a file
        // system that gives a new inode, is not.
        guard FileSystem.processHoldsDeletedFile(walPath) else {
            walIdentity = now
            return
        }
        walIdentity = nil
        var saved = false
        if now == nil {
            // PASSIVE: copy every committed frame the readers allow into the
            // database file, through the -wal still open; the columns are
            // (busy, frames in the log, frames checkpointed), -1 when busy.
            // A pool's background checkpoint, if one runs, ends first.
            let checkpoint = { try? self.fetchOne(sql: "PRAGMA wal_checkpoint(PASSIVE)") }
            if let result = walHookTarget.map({ $0.excluding(checkpoint) }) ?? checkpoint(),
               let busy = try? result.decode(Int.self, at: 0), let frames = try? result.decode(Int.self, at: 1),
               let copied = try? result.decode(Int.self, at: 2) {
                saved = busy == 0 && frames >= 0 && frames == copied
            }
        }
        // A -wal replaced by another file is not checkpointed: the -shm may
        // already describe the new one.
        throw StrongroomError(.fileMoved, "The -wal file of \(path) was \(now == nil ? "deleted" : "replaced") while the database was open: a write now would go to a file that is not at its path, so it was refused. " + (saved
            ? "Every transaction committed before was copied into the database file. Close every connection to the database, then open it again and run the write again."
            : "The transactions committed in it could not all be copied into the database file; close every connection to it in this process without deleting files, then open it again and check it (PRAGMA integrity_check)."),
            path: path)
    }

    /// After a commit: remembers the `-wal` file when none is remembered
    /// yet (the commit that created it). Once remembered, the check before
    /// each write keeps it up to date, and a commit costs no `stat(2)`.
    func recordWALIdentity() {
        guard walIdentity == nil, let walPath = absoluteWALPath else { return }
        walIdentity = FileSystem.identity(of: walPath)
    }

    /// The size in bytes of the journal file SQLite holds open for the main
    /// database (in WAL mode, its `-wal`), or nil when it holds none: asked
    /// of SQLite's own file object (`SQLITE_FCNTL_JOURNAL_POINTER`, then its
    /// `xFileSize`, an `fstat(2)` of the open descriptor), so that no path is
    /// looked up, and a `chdir` since the open changes nothing.
    package var journalFileSize: Int? {
        guard !isClosed else { return nil }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods, let fileSize = methods.pointee.xFileSize else { return nil }
        var size: sqlite3_int64 = 0
        guard fileSize(file, &size) == SQLITE_OK else { return nil }
        return Int(size)
    }
}
