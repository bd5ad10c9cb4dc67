import Strongroom

/// Row signatures (``SignedRow``) through a rotation: re-sealing a value
/// changes the envelope its row's signature covers, so the row is signed
/// again, under the active key, after its signature verifies.
extension FieldRotation {
    /// The layouts of `signedRows` (covering `columns` of each table), by
    /// folded table name; refuses a rotated table whose rows hold
    /// signatures none of them declares.
    static func signingLayouts(_ signedRows: [SignedRow], columns: [SealedColumn], cipher: FieldCipher,
                               in queue: DatabaseQueue) throws -> [FoldedName: RowSignature.Layout] {
        var layouts: [FoldedName: RowSignature.Layout] = [:]
        // The sealed columns the database holds (the registry, verified, and
        // every column of envelopes): a signature covers all of a table's.
        let held = signedRows.isEmpty ? [] : try queue.read { db in try SealedValueSearch.sealedColumns(in: db, keyring: cipher.keyring) }
        for row in signedRows {
            let sealed = columns.filter { $0.table.sqliteFolded == row.table.sqliteFolded }.map(\.column)
            guard !sealed.isEmpty else { continue }
            let left = held.filter { column in
                column.table.sqliteFolded == row.table.sqliteFolded && !sealed.contains { $0.sqliteFolded == column.column.sqliteFolded }
            }.map(\.column)
            if !left.isEmpty {
                throw FieldError(.misuse, "\(row.table)'s rows are signed over all its sealed columns, and the database holds sealed values in \(left.joined(separator: ", ")) (the registry records them, or every value there is an envelope), which this rotation does not give. If the app seals them, give every sealed column of \(row.table) to the rotation, as the configuration declares them; if it does not seal them, those envelopes were put there from elsewhere: find out how, and remove them. Nothing was re-sealed.",
                                 table: row.table, column: left[0])
            }
            layouts[row.table.sqliteFolded] = RowSignature.Layout(row, sealing: columns, cipher: cipher)
        }
        // The rotated tables' columns that hold row signatures: each must be
        // a declared signature column.
        var tables: [FoldedName: String] = [:]
        for column in columns where tables[column.table.sqliteFolded] == nil { tables[column.table.sqliteFolded] = column.table }
        for (folded, table) in tables {
            for column in try queue.read({ db in try signatureColumns(of: table, in: db) }) {
                guard let layout = layouts[folded], layout.signatureColumn.sqliteFolded == column.sqliteFolded else {
                    throw FieldError(.misuse, "\(table).\(column) holds row signatures, which re-sealing \(table)'s values would break, and this rotation declares no SignedRow for it: rotate from the app, FieldRotation.rotate(…, signedRows:) with the declarations its configuration gives. Nothing was re-sealed.",
                                     table: table, column: column)
                }
            }
        }
        return layouts
    }

    /// The columns of `table` that hold a value shaped like a row signature
    /// (<doc:SealedValueFormat>).
    static func signatureColumns(of table: String, in db: Connection) throws(StrongroomError) -> [String] {
        let quoted = SQLScript.quotedIdentifier
        var found: [String] = []
        for row in try db.fetchAll(sql: "PRAGMA main.table_info(\(quoted(table)))") {
            let name = try row.decode(String.self, column: "name"), column = quoted(name)
            let holds = try db.fetchOne(Int.self, sql: """
                SELECT count(*) FROM (SELECT 1 FROM main.\(quoted(table)) WHERE \(RowSignature.shapeSQL(column)) LIMIT 1)
                """)
            if holds == 1 { found.append(name) }
        }
        return found
    }

    /// The new signature of the row `target` names (with `arguments`):
    /// its stored signature checked over what it holds, then computed with
    /// `column`'s value replaced by `value`.
    static func resign(_ layout: RowSignature.Layout, cipher: FieldCipher, in db: Connection, where target: String,
                       _ arguments: [any DatabaseValueConvertible], rowKey: [DatabaseValue], replacing column: String,
                       with value: DatabaseValue) throws -> DatabaseValue {
        let quoted = SQLScript.quotedIdentifier
        let selected = (layout.covered + [layout.signatureColumn]).map(quoted).joined(separator: ", ")
        guard let row = try db.fetchAll(sql: "SELECT \(selected) FROM main.\(quoted(layout.table)) WHERE \(target)", arguments: StatementArguments(arguments)).first else {
            throw FieldError(.misuse, "\(layout.table) row \(FieldCipher.row(rowKey) ?? "") was not found again while it was re-sealed.", table: layout.table)
        }
        var covered = (0..<layout.covered.count).map { row[$0] }
        try cipher.verifyRow(row[layout.covered.count], layout, covering: covered, rowKey: rowKey)
        if let position = layout.covered.firstIndex(where: { $0.sqliteFolded == column.sqliteFolded }) { covered[position] = value }
        return try cipher.signRow(layout, covering: covered, rowKey: rowKey)
    }

    /// Signs again, under the active key, every row of `layout`'s table
    /// whose signature is under another key, `batchSize` rows per
    /// transaction; returns how many.
    static func resignStale(_ layout: RowSignature.Layout, cipher: FieldCipher, in queue: DatabaseQueue, batchSize: Int) throws -> Int {
        let quoted = SQLScript.quotedIdentifier
        let key = try queue.read { db in try primaryKey(of: layout.table, in: db) }
        var activeBytes: [UInt8] = []
        FieldEnvelope.appendBigEndian(cipher.keyring.activeKeyID, to: &activeBytes)
        let signature = quoted(layout.signatureColumn)
        let selected = (key + layout.covered + [layout.signatureColumn]).map(quoted).joined(separator: ", ")
        let target = key.map { "\(quoted($0)) IS ?" }.joined(separator: " AND ")
        var total = 0
        while true {
            let count: Int = try queue.write { db in
                let rows = try db.fetchAll(sql: "SELECT \(selected) FROM main.\(quoted(layout.table)) WHERE typeof(\(signature)) = 'blob' AND substr(\(signature), 3, 4) <> ?1 LIMIT ?2",
                                           arguments: [activeBytes, batchSize])
                for row in rows {
                    let values = (0..<row.count).map { row[$0] }
                    let rowKey = Array(values[..<key.count]), covered = Array(values[key.count..<(key.count + layout.covered.count)])
                    try cipher.verifyRow(values[values.count - 1], layout, covering: covered, rowKey: rowKey)
                    let signed = try cipher.signRow(layout, covering: covered, rowKey: rowKey)
                    try db.execute(sql: "UPDATE main.\(quoted(layout.table)) SET \(signature) = ? WHERE \(target)",
                                   arguments: StatementArguments([signed as any DatabaseValueConvertible] + rowKey.map { $0 as any DatabaseValueConvertible }))
                }
                return rows.count
            }
            total += count
            if count < batchSize { return total }
        }
    }
}
