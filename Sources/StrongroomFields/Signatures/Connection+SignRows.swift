public import Strongroom

extension Connection {
    /// Signs every row of `table`, as it stands now, and returns how many
    /// it signed: for the rows a table holds when its ``SignedRow`` is first
    /// declared. It trusts the data it signs, so run it once, by hand, at a
    /// moment you trust the data (an administrative command of your app, as
    /// `customer-lookup --sign-rows` in the demo), with a connection
    /// configured with `Configuration.seal(…, signedRows:)`:
    ///
    /// ```swift
    /// let signed = try queue.write { db in try db.signUnsignedRows(of: "customer") }
    /// ```
    ///
    /// Never from code that runs on its own, such as a migration or the
    /// app's launch: whoever holds the database key can make the table look
    /// unsigned again (rebuild it without its signatures, delete the
    /// migration's history row) and have that code sign what they wrote.
    ///
    /// Refused, signing nothing, when any row of the table holds a signature
    /// already (a row without one was then changed outside the app: find out
    /// why, and restore it or write it again through the app), or when a
    /// row's randomized sealed value does not open under its row key (an
    /// envelope copied from another row). A deterministic envelope is bound
    /// to no row, so one swapped between rows cannot be told here: the data
    /// must be trusted as it stands. It runs in a savepoint: a failure signs
    /// nothing.
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
        let signedAlready = try connection.fetchOne(Int.self, sql: "SELECT count(*) FROM main.\(quoted(table)) WHERE \(quoted(layout.signatureColumn)) IS NOT NULL")
        if let signedAlready, signedAlready > 0 {
            throw FieldError(.misuse, "\(table)'s rows are signed already (\(signedAlready) in \(layout.signatureColumn)): a row without a signature was written or changed outside the app, and is not signed over. Find out why; restore the row, or write it again through the app. Nothing was signed.",
                             table: table, column: layout.signatureColumn)
        }
        let selected = (key + layout.covered).map(quoted).joined(separator: ", ")
        let rows = try connection.fetchAll(sql: "SELECT \(selected) FROM main.\(quoted(table)) WHERE \(quoted(layout.signatureColumn)) IS NULL")
        // The row only where it holds its key exactly.
        let match = key.enumerated().map { SQLScript.exactlyEqual(quoted($1), "?\($0 + 2)") }.joined(separator: " AND ")
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
