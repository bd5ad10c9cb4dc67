/// Attaching other databases, encrypted or not.
extension Connection {
    /// Attaches the database at `path` as schema `name`, encrypted with `key`
    /// (or plaintext when `key` is nil). The key is bound as a parameter,
    /// never pasted into SQL text, and checked at once: a wrong key fails
    /// here, not at the first query.
    ///
    /// ```swift
    /// try db.attach("archive.db", as: "archive", key: try DatabaseKey.load(keyFile: "Keys/archive.key"))
    /// let old = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM archive.invoice")
    /// try db.detach("archive")
    /// ```
    ///
    /// The attached file uses SQLCipher's default cipher settings.
    ///
    /// - Throws: ``StrongroomError/Code/wrongKey`` when the key does not open
    ///   the file (it is then detached again).
    public func attach(_ path: String, as name: String, key: DatabaseKey?) throws(StrongroomError) {
        let keyBytes = key?.sqlcipherKeyBytes()
        let statement = try prepare(sql: "ATTACH DATABASE ?1 AS \(SQLScript.quotedIdentifier(name)) KEY ?2")
        try statement.bind(.text(path), at: 1)
        try statement.bindSecret(keyBytes, at: 2)
        // The key is bound without a copy: it must outlive the binding.
        defer {
            statement.clearBindings()
            withExtendedLifetime(keyBytes) {}
        }
        do {
            // SQLite reads the attached file's schema at ATTACH (or, at the
            // latest, here): a wrong key shows now.
            try statement.run()
            _ = try fetchOne(Int.self, sql: "SELECT count(*) FROM \(SQLScript.quotedIdentifier(name)).sqlite_master")
        } catch where error.code == .notADatabase {
            try? detach(name)
            throw StrongroomError(key == nil ? .keyRequired : .wrongKey,
                                  key == nil ? "\(path) is encrypted or is not a database; attach it with its key."
                                             : "The key does not open \(path): the key is wrong, or the file is not a SQLCipher database.", path: path)
        }
    }

    /// Detaches the schema `name` attached with ``attach(_:as:key:)``.
    public func detach(_ name: String) throws(StrongroomError) {
        try execute(sql: "DETACH DATABASE \(SQLScript.quotedIdentifier(name))")
    }
}
