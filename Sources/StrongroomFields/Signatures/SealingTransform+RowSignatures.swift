import Strongroom

/// Row signatures (``SignedRow``) on the write and read paths of a
/// connection's ``SealingTransform``.
extension SealingTransform {
    /// Signs the row an insert or update is about to write, when its table's
    /// rows are signed: over the covered columns' values as they will be
    /// stored (sealed ones sealed), bound to `rowKey`. The signature goes in
    /// its column (replacing what the write gives there, else appended).
    ///
    /// An insert gives every covered column. An update gives all of them
    /// (the row is signed again) or none (the signature stays as it is).
    func sign(_ names: inout [String], _ values: inout [DatabaseValue], table: String, shape: InsertShape, rowKey: [DatabaseValue], updating: Bool) throws {
        guard let layout = signedRows[shape.folded] else { return }
        let places = layout.places(in: names, affinities: shape.key.columnAffinities)
        let positions = places.covered, signatureAt = places.signature
        // Worked out (and allocated) only when a covered column is left out.
        let missing = places.coversAll ? [] : zip(layout.covered, positions).filter { $1 == nil }.map(\.0)
        if updating && missing.count == layout.covered.count {
            // Nothing signed changes: the row's signature still holds.
            if let signatureAt {
                throw FieldError(.misuse, "Updating \(table) writes \(names[signatureAt]), its row signature's column, and none of the columns it covers (\(layout.covered.joined(separator: ", "))): leave it out; it is computed from them.", table: table, column: names[signatureAt])
            }
            return
        }
        guard missing.isEmpty else {
            throw FieldError(.misuse, "\(updating ? "Updating" : "Inserting into") \(table) leaves out \(missing.joined(separator: ", ")), which its row signature covers: give every column it covers (\(layout.covered.joined(separator: ", ")))\(updating ? ", or none" : ""), so that the row is signed over what is stored.",
                             table: table, column: missing[0])
        }
        var covered: [DatabaseValue] = []
        covered.reserveCapacity(positions.count)
        for (k, position) in positions.enumerated() {
            let value = values[position!], column = layout.covered[k]
            // Stored converted (an integer into a TEXT column), the value would no longer be the one signed.
            if !value.isNull, let affinity = places.affinities[k], !affinity.keeps(value) {
                throw FieldError(.misuse, "\(updating ? "Updating" : "Inserting into") \(table): \(column), which its row signature covers, is given as a value SQLite would store converted to its column's type, and the signature would not verify; give \(column) a value of that type.", table: table, column: column)
            }
            covered.append(value)
        }
        let signature = try cipher.signRow(layout, covering: covered, rowKey: rowKey)
        if let signatureAt {
            values[signatureAt] = signature
        } else {
            names.append(layout.signatureColumn)
            values.append(signature)
        }
    }

    // MARK: ColumnTransform

    func signedRowColumns(of table: String) -> SignedRowColumns? {
        signedRows[table.sqliteFolded].map { SignedRowColumns(covered: $0.covered, signature: $0.signatureColumn) }
    }

    /// The table's layout is looked up here, once per statement.
    func rowSignatureVerifier(of table: String) -> RowSignatureVerifier? {
        guard let layout = signedRows[table.sqliteFolded] else { return nil }
        return { [cipher] signature, covered, rowKey in try cipher.verifyRow(signature, layout, covering: covered, rowKey: rowKey) }
    }
}

extension RowSignature.Layout {
    /// Where a write of `names` holds each covered column and the
    /// signature, and each covered column's affinity: the last write's,
    /// kept while the names are the same (a record type writes the same
    /// columns every time).
    func places(in names: [String], affinities: [FoldedName: SealingTransform.Affinity]) -> Places {
        if let last = lastPlaces, SealingTransform.sameNames(last.names, names) { return last }
        let folded = names.map(\.sqliteFolded)
        let positions = covered.map { folded.firstIndex(of: $0.sqliteFolded) }
        let places = Places(names: names, covered: positions, coversAll: !positions.contains(nil),
                            signature: folded.firstIndex(of: signatureColumn.sqliteFolded),
                            affinities: covered.map { affinities[$0.sqliteFolded] })
        lastPlaces = places
        return places
    }
}
