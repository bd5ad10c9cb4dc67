internal import CSQLCipher

extension Connection {
    /// Re-encrypts every page of the database under `newKey`, then confirms it.
    ///
    /// SQLCipher's `sqlite3_rekey` rewrites the file in one write transaction,
    /// so a failure leaves the database readable with the old key. It also
    /// returns success when it did nothing (read-only file, plaintext database):
    /// Strongroom refuses those cases up front, checkpoints the WAL, and then
    /// opens a fresh connection with the new key; only when that connection
    /// reads the schema does `rekey` return.
    ///
    /// ```swift
    /// let newKey = DatabaseKey.generate()
    /// try KeyFile.write(newKey, to: "Keys/app-2.key")
    /// do {
    ///     try db.rekey(to: newKey)
    /// } catch let error as StrongroomError where error.code == .rekeyFailed {
    ///     // Nothing changed: the file still opens with the old key.
    ///     // `db` was closed; open the file again with the old key.
    /// }
    /// ```
    ///
    /// When the rewrite fails (a full disk, another connection holding a lock
    /// past the busy timeout), SQLCipher reports success anyway and leaves the
    /// connection writing under the new key while the file stays under the
    /// old one: its next write would make a file that opens with neither key.
    /// So a rekey that cannot be confirmed **closes this connection**, tries
    /// both keys on the file, and throws an error that says which one opens
    /// it. ``DatabaseQueue/rekey(to:)`` and ``DatabasePool/rekey(to:)`` then
    /// reopen their connections with that key and go on working.
    ///
    /// The rewrite needs free disk space about the size of the database.
    /// Under a ``DatabasePool`` use ``DatabasePool/rekey(to:)``, which closes readers.
    /// Release every ``Statement`` you prepared on the connection first: a
    /// statement still held would keep a failed rewrite's locks alive.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` for a plaintext, read-only or
    ///   in-memory connection, inside a transaction, or while a statement is
    ///   held; ``StrongroomError/Code/busy`` when another connection holds a
    ///   lock before the rewrite (nothing was changed, the connection stays
    ///   open), or kept every new connection out while the rekey was being
    ///   confirmed (the connection was closed; the message says what to try);
    ///   ``StrongroomError/Code/rekeyFailed`` when the
    ///   rewrite did not take effect: the file still opens with the old key,
    ///   and this connection was closed; ``StrongroomError/Code/verificationFailed``
    ///   when the rekey took effect but could only be confirmed after closing
    ///   this connection (the message says the new key opens the file), or
    ///   when neither key opens the file.
    public func rekey(to newKey: DatabaseKey) throws(StrongroomError) {
        if case .closed(let failure) = try rekeyOrClose(to: newKey) {
            throw failure.error
        }
    }

    /// Which key opens a file after a rekey that could not be confirmed.
    enum KeyThatOpens {
        case oldKey, newKey
    }

    /// A rekey that could not be confirmed on its connection, which was closed.
    struct RekeyFailure {
        /// The key that opens the file now; nil when neither does, or when a
        /// lock kept the checks out.
        let opensWith: KeyThatOpens?
        /// What to tell the caller.
        let error: StrongroomError
    }

    enum RekeyOutcome {
        /// Rekeyed and confirmed; the connection is open, on the new key.
        case rekeyed
        /// The connection was closed; see which key opens the file.
        case closed(RekeyFailure)
    }

    /// ``rekey(to:)`` for a queue or pool, which reopens its connection with
    /// the key that works. Throws only for refusals before the rewrite, when
    /// the connection is untouched.
    func rekeyOrClose(to newKey: DatabaseKey) throws(StrongroomError) -> RekeyOutcome {
        try checkOpen()
        guard isEncrypted, let oldKey = configuration.key else {
            throw StrongroomError(.misuse, "\(path) is plaintext; rekey cannot encrypt it. Encrypt it into a new file with PlaintextConversion.importPlaintext or `strongroom import`.", path: path)
        }
        guard !isReadOnly, path != ":memory:" else {
            throw StrongroomError(.misuse, "Rekey needs a writable database file; \(path) is open read-only or in memory.", path: path)
        }
        guard !isInsideTransaction else {
            throw StrongroomError(.misuse, "Rekey cannot run inside a transaction.", path: path)
        }
        // If the rewrite fails, this handle must close for real: a statement
        // held elsewhere would keep it (and its locks) alive as a zombie.
        let held = releaseCachedStatements()
        guard held == 0 else {
            throw StrongroomError(.misuse, "Rekey needs every prepared statement of this connection released; \(held) statement(s) are still held. Release them (let them go out of scope, or set them to nil) and retry.", path: path)
        }
        // sqlite3_rekey reports success even when it cannot take the write
        // lock and rewrites nothing. Take and release the lock first, so a busy
        // database fails here with a clear error, and nothing else changed.
        try execute(sql: "BEGIN IMMEDIATE")
        do {
            try execute(sql: "COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        let keyBytes = newKey.sqlcipherKeyBytes()
        let status = keyBytes.withUnsafeBytes { bytes in
            // sqlite3_rekey_v2 switches this connection's write key to the new
            // one and re-encrypts every page in one transaction. When a page
            // cannot be written it rolls back and keeps the new write key;
            // when the commit fails it switches the read key too and leaves
            // the transaction and its locks open. Either way it returns
            // SQLITE_OK (SQLCipher 3 and 4).
            sqlite3_rekey_v2(handle, "main", bytes.baseAddress, Int32(bytes.count))
        }
        if status == SQLITE_OK {
            // Move re-encrypted pages from the WAL into the file, so no page
            // under the old key is left for a reader that opens the file alone.
            _ = try? fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            if opens(with: newKey) == nil {
                logger.info("rekeyed database", metadata: ["path": "\(path)"])
                return .rekeyed
            }
        }
        // Not confirmed. This handle may write under one key and read under
        // the other (and may hold a lock that keeps the check below out):
        // it must not be used again.
        let reason = "a rekey could not be confirmed, and SQLCipher may have left it between two keys. Open the file again with the key the rekey error named."
        close(because: reason)
        let newKeyProbe = probe(with: newKey)
        if case .opens = newKeyProbe {
            logger.notice("rekey confirmed only after closing its connection", metadata: ["path": "\(path)"])
            return .closed(RekeyFailure(opensWith: .newKey, error: StrongroomError(.verificationFailed, "Rekey of \(path) took effect: the file now opens with the new key only. It could not be confirmed on this connection, which was closed; open the file again with the new key.", path: path)))
        }
        let oldKeyProbe = probe(with: oldKey)
        if case .opens = oldKeyProbe {
            logger.warning("rekey did not take effect", metadata: ["path": "\(path)", "sqlite_code": "\(status)"])
            return .closed(RekeyFailure(opensWith: .oldKey, error: StrongroomError(.rekeyFailed, "Rekey of \(path) did not take effect (the rewrite failed: the disk may be full, or another connection held a lock past the busy timeout): the file still opens with the old key, and nothing in it changed. This connection was closed, because SQLCipher leaves it between the two keys; open the file again with the old key, make room or stop the other writer, and retry.", path: path)))
        }
        if case .undetermined(let newKeyError) = newKeyProbe {
            return .closed(RekeyFailure(opensWith: nil, error: undetermined(newKeyError)))
        }
        if case .undetermined(let oldKeyError) = oldKeyProbe {
            return .closed(RekeyFailure(opensWith: nil, error: undetermined(oldKeyError)))
        }
        logger.error("rekey left a file that opens with neither key", metadata: ["path": "\(path)"])
        return .closed(RekeyFailure(opensWith: nil, error: StrongroomError(.verificationFailed, "Rekey of \(path) could not be confirmed, and the file now opens with neither key (new key: \(newKeyProbe.code); old key: \(oldKeyProbe.code)). This connection was closed. Keep both keys, and if no other program holds the file, restore it from a backup.", path: path)))
    }

    /// A check kept out by a lock: which key opens the file is not known.
    private func undetermined(_ error: StrongroomError) -> StrongroomError {
        logger.warning("rekey could not be confirmed", metadata: ["path": "\(path)", "code": "\(error.code.rawValue)"])
        return StrongroomError(.busy, "Rekey of \(path) could not be confirmed: another connection or process kept the file locked while it was checked (\(error.code.rawValue)). Which key opens it is not known yet: the new key if the rewrite committed, else the old one. This connection was closed; once the lock is gone, open the file with the new key, and if that key is refused, with the old one (a DatabaseQueue or DatabasePool does this itself at its next use).", path: path, sqliteCode: error.sqliteCode)
    }

    /// What opening the file with one key showed.
    private enum Probe {
        case opens
        /// The key does not open the file.
        case refused(StrongroomError)
        /// Something else (a lock, I/O) kept the check from telling.
        case undetermined(StrongroomError)

        var code: String {
            switch self {
            case .opens: "opens"
            case .refused(let error), .undetermined(let error): error.code.rawValue
            }
        }
    }

    private func probe(with key: DatabaseKey) -> Probe {
        guard let error = opens(with: key) else { return .opens }
        switch error.code {
        case .wrongKey, .notADatabase, .keyRequired, .corrupt: return .refused(error)
        default: return .undetermined(error)
        }
    }

    /// Opens the file with `key` and this connection's other settings, reads
    /// its schema, and closes it. Returns the error, or nil when it opens.
    private func opens(with key: DatabaseKey) -> StrongroomError? {
        var check = configuration
        check.encryption = .encrypted(key)
        check.readOnly = true
        check.createIfMissing = false
        do {
            let confirmation = try Connection(path: path, configuration: check)
            confirmation.close()
            return nil
        } catch {
            return error
        }
    }
}
