import Strongroom
import StrongroomCrypto

/// The byte layout of a row signature (format 1), written down in
/// <doc:SealedValueFormat>: version (1) || kind 3 (1) || key id (4,
/// big-endian) || HMAC-SHA256 tag (32), 38 bytes.
///
/// The tag covers, under a key derived from the field key for the table
/// and its signature column:
///
///     version || kind || key id                      the signature's header
///     || "strongroom.field.v1" || u32 || table || u32 || signature column
///     || u32(n) || each row key part: type || u32(len) || payload
///     || u32(m) || each covered column, in byte order of its name:
///            u32(len name) || name || type || u32(len) || payload
///     [|| u32(len context) || context]
///
/// Names are bound in ASCII lower case, as SQLite compares them; a covered
/// value is taken as stored (a sealed column's envelope bytes).
enum RowSignature {
    /// The second byte: 1 and 2 are envelopes' algorithms.
    static let kind: UInt8 = 3
    static let byteCount = FieldEnvelope.headerByteCount + HMACSHA256.byteCount

    /// One signed table, as the application declared it, worked out once.
    final class Layout {
        let table: String
        let signatureColumn: String
        /// The columns the signature covers, in byte order of their bound names.
        let covered: [String]
        let boundCovered: [[UInt8]]
        let bound: FieldCipher.BoundColumn

        /// Where a write's columns hold the covered ones (nil: left out) and
        /// the signature, with the covered columns' affinities.
        struct Places {
            let names: [String]
            let covered: [Int?]
            /// True when the write gives every covered column.
            let coversAll: Bool
            let signature: Int?
            let affinities: [SealingTransform.Affinity?]
        }
        /// The last write's (``places(in:affinities:)``).
        var lastPlaces: Places?

        init(table: String, signatureColumn: String, covered: [String], cipher: FieldCipher) {
            self.table = table
            self.signatureColumn = signatureColumn
            let sorted = covered.map { (name: $0, bound: FieldEnvelope.boundName($0)) }.sorted { $0.bound.lexicographicallyPrecedes($1.bound) }
            self.covered = sorted.map(\.name)
            self.boundCovered = sorted.map(\.bound)
            self.bound = cipher.bound(table, signatureColumn)
        }

        /// `row`'s layout, covering its plain columns and every one of
        /// `columns` in its table.
        convenience init(_ row: SignedRow, sealing columns: [SealedColumn], cipher: FieldCipher) {
            let sealed = columns.filter { $0.table.sqliteFolded == row.table.sqliteFolded }.map(\.column)
            self.init(table: row.table, signatureColumn: row.signatureColumn, covered: row.columns + sealed, cipher: cipher)
        }
    }

    /// SQL true where `column` (quoted) holds a value shaped like a row
    /// signature: a BLOB of 38 bytes, version 1, kind 3.
    static func shapeSQL(_ column: String) -> String {
        "typeof(\(column)) = 'blob' AND length(\(column)) = \(byteCount) AND substr(\(column), 1, 2) = x'0103'"
    }
}

extension FieldCipher {
    /// The signature of one row: `values` are the stored values of
    /// `layout`'s covered columns, in its order; `rowKey` the row key's.
    func signRow(_ layout: RowSignature.Layout, covering values: [DatabaseValue], rowKey: [DatabaseValue]) throws(FieldError) -> DatabaseValue {
        if rowKey.isEmpty || rowKey.contains(where: \.isNull) {
            throw FieldError(.misuse, "\(layout.table): a row signature is bound to the row's key, and the row has \(rowKey.isEmpty ? "none" : "a NULL in it"); declare the primary key NOT NULL and give it a value.", table: layout.table, column: layout.signatureColumn)
        }
        let keyID = keyring.activeKeyID
        var out = [FieldEnvelope.version, RowSignature.kind]
        out.reserveCapacity(RowSignature.byteCount)
        FieldEnvelope.appendBigEndian(keyID, to: &out)
        out += [UInt8](repeating: 0, count: HMACSHA256.byteCount)
        let mac = try rowSigner(layout.bound, keyID: keyID)
        out.withUnsafeMutableBytes { raw in
            let header = UnsafeRawBufferPointer(rebasing: raw[0..<FieldEnvelope.headerByteCount])
            rowSignatureTag(layout, header: header, mac: mac, values: values, rowKey: rowKey,
                            into: UnsafeMutableRawBufferPointer(rebasing: raw[FieldEnvelope.headerByteCount...]))
        }
        return .blob(out)
    }

    /// Checks one row's stored signature; throws, naming the row, when it
    /// is missing, malformed, under a key the keyring lacks, or does not
    /// cover exactly these values under this row key.
    func verifyRow(_ signature: DatabaseValue, _ layout: RowSignature.Layout, covering values: [DatabaseValue], rowKey: [DatabaseValue]) throws(FieldError) {
        // Only an error names the row: built then, not for every row read.
        var row: String { Self.row(rowKey) ?? "without a key" }
        var place: String { "\(layout.table) row \(row)" }
        guard case .blob(let bytes) = signature else {
            throw FieldError(.tampered, "\(place) has \(signature.isNull ? "no row signature" : "a row signature that is not a BLOB") in \(layout.signatureColumn): the row was written or changed outside the app. Restore it from a backup, or write it again through the app; do not sign it as it stands.",
                             table: layout.table, column: layout.signatureColumn, row: row)
        }
        guard bytes.count == RowSignature.byteCount, bytes[0] == FieldEnvelope.version, bytes[1] == RowSignature.kind else {
            throw FieldError(.malformedEnvelope, "\(place): \(layout.signatureColumn) holds no row signature of format \(FieldEnvelope.version) (\(bytes.count) bytes; one is \(RowSignature.byteCount)).",
                             table: layout.table, column: layout.signatureColumn, row: row)
        }
        let keyID = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
        guard layout.bound.rowSigners.contains(keyID) || keyring.key(keyID) != nil else {
            throw FieldError(.unknownKeyID, "\(place) was signed under key \(keyID), which this keyring does not hold (it has \(keyring.keyIDs.map(String.init).joined(separator: ", "))); use the keyring it was signed with.",
                             table: layout.table, column: layout.signatureColumn, row: row)
        }
        let mac = try rowSigner(layout.bound, keyID: keyID)
        let matches = bytes.withUnsafeBytes { stored in
            withUnsafeTemporaryAllocation(byteCount: HMACSHA256.byteCount, alignment: 1) { tag in
                rowSignatureTag(layout, header: UnsafeRawBufferPointer(rebasing: stored[0..<FieldEnvelope.headerByteCount]), mac: mac,
                                values: values, rowKey: rowKey, into: tag)
                return ConstantTime.equal(UnsafeRawBufferPointer(tag), UnsafeRawBufferPointer(rebasing: stored[FieldEnvelope.headerByteCount...]))
            }
        }
        guard matches, !rowKey.contains(where: \.isNull) else {
            throw FieldError(.tampered, "\(place): its row signature does not verify: a column it covers (\(layout.covered.joined(separator: ", "))) or its key was changed outside the app, or the signature or values were copied from another row.",
                             table: layout.table, column: layout.signatureColumn, row: row)
        }
    }

    private func rowSignatureTag(_ layout: RowSignature.Layout, header: UnsafeRawBufferPointer, mac: HMACSHA256, values: [DatabaseValue], rowKey: [DatabaseValue],
                                 into tag: UnsafeMutableRawBufferPointer) {
        precondition(values.count == layout.covered.count, "a row signature's values are its covered columns'")
        var n = header.count + layout.bound.associatedDataPrefix.count + FieldEnvelope.rowKeyByteCount(rowKey) + 4 + contextPart.count
        for (name, value) in zip(layout.boundCovered, values) { n += 4 + name.count + FieldEnvelope.typedByteCount(value) }
        let message = scratch(byteCount: n)
        defer { finishScratch(plaintext: message) }
        var writer = FieldEnvelope.Writer(UnsafeMutableRawBufferPointer(rebasing: message[0..<n]))
        writer.write(header)
        layout.bound.associatedDataPrefix.withUnsafeBytes { writer.write($0) }
        FieldEnvelope.writeRowKey(rowKey, to: &writer)
        writer.write(bigEndian: UInt32(values.count))
        for (name, value) in zip(layout.boundCovered, values) {
            writer.write(bigEndian: UInt32(name.count))
            name.withUnsafeBytes { writer.write($0) }
            FieldEnvelope.writeTyped(value, to: &writer)
        }
        if !contextPart.isEmpty { contextPart.withUnsafeBytes { writer.write($0) } }
        precondition(writer.isAtEnd, "an encoding is shorter than its byte count")
        mac.authenticationCode(for: UnsafeRawBufferPointer(rebasing: message[0..<n]), into: tag)
    }
}
