public import Strongroom

extension Connection {
    /// Signs every row of `table` that holds no signature yet, as it stands
    /// now, and returns how many it signed: for the rows a table holds when
    /// its ``SignedRow`` is first declared. Run it once, in the migration
    /// that adds the signature column, with a connection configured with
    /// `Configuration.seal(…, signedRows:)`.
    ///
    /// ```swift
    /// migrator.registerMigration("sign customer rows") { db in
    ///     try db.execute(sql: "ALTER TABLE customer ADD COLUMN row_signature BLOB")
    ///     try db.signUnsignedRows(of: "customer")
    /// }
    /// ```
    ///
    /// Each row's sealed values must open under its row key first: an
    /// envelope copied from another row is refused, not signed. The plain
    /// values are signed as they are, so run it before anyone without the
    /// field keyring could have changed them; afterwards a row without a
    /// signature is one to investigate, not to sign. It runs in a savepoint:
    /// a failure signs nothing.
    @discardableResult
    public func signUnsignedRows(of table: String) throws -> Int {
        guard let transform = columnTransform as? SealingTransform else {
            throw FieldError(.misuse, "Signing the rows of \(table) needs a connection configured with configuration.seal(…, signedRows:), which this one is not.", table: table)
        }
        return try inSavepoint { db in try transform.signUnsignedRows(of: table, connection: db) }
    }
}

extension SealingTransform {
    func signUnsignedRows(of table: String, connection: Connection) throws -> Int {
        guard let layout = signedRows[table.sqliteFolded] else {
            throw FieldError(.misuse, "\(table)'s rows are not signed on this connection: declare SignedRow(\"\(table)\", …) in configuration.seal(…, signedRows:).", table: table)
        }
        let key = try primaryKey(of: table).columns
        let quoted = SQLScript.quotedIdentifier
        let selected = (key + layout.covered).map(quoted).joined(separator: ", ")
        let rows = try connection.fetchAll(sql: "SELECT \(selected) FROM main.\(quoted(table)) WHERE \(quoted(layout.signatureColumn)) IS NULL")
        // The row only where it holds its key exactly (not 12 for '12', nor 'A' for 'a' under NOCASE).
        let match = key.enumerated().map { position, column in
            "\(quoted(column)) = ?\(position + 2) AND \(quoted(column)) = ?\(position + 2) COLLATE BINARY AND typeof(\(quoted(column))) = typeof(?\(position + 2))"
        }.joined(separator: " AND ")
        let update = try connection.prepare(sql: "UPDATE main.\(quoted(table)) SET \(quoted(layout.signatureColumn)) = ?1 WHERE \(match) AND \(quoted(layout.signatureColumn)) IS NULL")
        for row in rows {
            let values = (0..<row.count).map { row[$0] }
            let rowKey = Array(values[..<key.count]), covered = Array(values[key.count...])
            for (column, stored) in zip(layout.covered, covered) {
                guard let sealed = sealedColumn(column, of: table) else { continue }
                _ = try cipher.open(stored, table: table, column: column, rowKey: sealed.mode == .deterministic ? [] : rowKey, mode: sealed.mode)
            }
            let signature = try cipher.signRow(layout, covering: covered, rowKey: rowKey)
            try update.execute(arguments: StatementArguments([signature as any DatabaseValueConvertible] + rowKey.map { $0 as any DatabaseValueConvertible }))
        }
        return rows.count
    }
}
