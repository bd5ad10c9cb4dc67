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
    /// try db.rekey(to: newKey)
    /// ```
    ///
    /// The rewrite needs free disk space about the size of the database.
    /// Under a ``DatabasePool`` use ``DatabasePool/rekey(to:)``, which closes readers.
    ///
    /// - Throws: ``StrongroomError/Code/misuse`` for a plaintext, read-only or
    ///   in-memory connection or inside a transaction; ``StrongroomError/Code/busy``
    ///   when another connection holds the write lock; ``StrongroomError/Code/verificationFailed``
    ///   when the new key does not open the file afterwards.
    public func rekey(to newKey: DatabaseKey) throws(StrongroomError) {
        try checkOpen()
        guard isEncrypted else {
            throw StrongroomError(.misuse, "\(path) is plaintext; rekey cannot encrypt it. Encrypt it into a new file with PlaintextConversion.importPlaintext or `strongroom import`.", path: path)
        }
        guard !isReadOnly, path != ":memory:" else {
            throw StrongroomError(.misuse, "Rekey needs a writable database file; \(path) is open read-only or in memory.", path: path)
        }
        guard !isInsideTransaction else {
            throw StrongroomError(.misuse, "Rekey cannot run inside a transaction.", path: path)
        }
        // sqlite3_rekey reports success even when it cannot take the write
        // lock and rewrites nothing. Take and release the lock first, so a busy
        // database fails here with a clear error.
        try execute(sql: "BEGIN IMMEDIATE")
        try execute(sql: "COMMIT")
        let keyBytes = newKey.sqlcipherKeyBytes()
        let status = keyBytes.withUnsafeBytes { bytes in
            // sqlite3_rekey_v2 re-encrypts every page in one transaction and
            // switches this connection to the new key.
            sqlite3_rekey_v2(handle, "main", bytes.baseAddress, Int32(bytes.count))
        }
        guard status == SQLITE_OK else {
            throw lastError(status, sql: nil)
        }
        // Move re-encrypted pages from the WAL into the file, so no page under
        // the old key is left for a reader that opens the file alone.
        _ = try? fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        // Confirm with the same cipher settings as this connection.
        var check = Configuration(key: newKey)
        check.cipherPageSize = cipherPageSize
        check.kdfIterations = kdfIterations
        check.usesHMAC = usesHMAC
        check.readOnly = true
        check.createIfMissing = false
        check.logger = logger
        do {
            let confirmation = try Connection(path: path, configuration: check)
            confirmation.close()
        } catch {
            throw StrongroomError(.verificationFailed, "Rekey of \(path) reported success but the new key does not open the file (\(error.code.rawValue)); the rewrite did not take effect, so open it with the old key and retry.", path: path)
        }
        logger.info("rekeyed database", metadata: ["path": "\(path)"])
    }
}
