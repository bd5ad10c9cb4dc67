import Strongroom

/// A table whose rows are signed: a MAC under the field keyring over the
/// row's plain `columns` and the envelopes of all its sealed columns,
/// bound to the row's declared key, in `signatureColumn`.
///
/// Sealing keeps a value secret from whoever holds the database key; a
/// signature keeps the row as the app wrote it. Declared with
/// ``Strongroom/Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``,
/// the table's rows are signed by every insert and update, and checked by
/// every read that opens one of its sealed properties, before any value of
/// the row is handed out. A database-key holder who changes a signed
/// plain column (a customer's `country`), swaps two rows' envelopes or
/// copies one row's columns into another gets a read that fails and names
/// the row: the `sealedValue` error.
///
/// ```swift
/// config.seal([.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("phone", in: "customer")],
///             keyring: keyring, rowKeys: ["customer": ["id"]],
///             signedRows: [SignedRow("customer", columns: ["name", "country"], signatureColumn: "row_signature")])
/// ```
///
/// The signature column is a BLOB column of the table (add it in a
/// migration); a record need not declare a property for it. A read of the
/// record must select it, the columns it covers and the row key (`SELECT *`
/// does). What a signature cannot do is on <doc:SigningRows>: an older
/// version of the same row put back whole, a deleted row, and the blind
/// indexes' leakage stay out of its reach.
public struct SignedRow: Sendable, Hashable {
    /// The table, as the schema names it.
    public let table: String
    /// The plain columns the signature covers, beside every sealed column
    /// of ``table``.
    public let columns: [String]
    /// The BLOB column that holds each row's signature.
    public let signatureColumn: String

    /// Signs `table`'s rows over `columns` and its sealed columns, in
    /// `signatureColumn`.
    public init(_ table: String, columns: [String], signatureColumn: String = "row_signature") {
        self.table = table
        self.columns = columns
        self.signatureColumn = signatureColumn
    }
}

extension SignedRow {
    /// Every declaration names a table with sealed columns and a declared
    /// row key, once; its columns are plain, distinct, none of them the row
    /// key, a blind index's column or the signature column.
    static func validate(_ signed: [SignedRow], columns: [SealedColumn], indexes: [BlindIndex], rowKeys: [String: [String]]) throws(FieldError) {
        var tables: Set<FoldedName> = []
        for row in signed {
            let table = row.table
            guard tables.insert(table.sqliteFolded).inserted else {
                throw FieldError(.misuse, "signedRows names \(table) twice; give each table once.", table: table)
            }
            let sealed = columns.filter { $0.table.sqliteFolded == table.sqliteFolded }
            guard !sealed.isEmpty else {
                throw FieldError(.misuse, "signedRows signs \(table), which has no sealed column: a signed row is checked when a read opens one of its sealed properties. Seal a column of \(table), or leave it out of signedRows.", table: table)
            }
            guard let key = rowKeys.first(where: { $0.key.sqliteFolded == table.sqliteFolded })?.value else {
                throw FieldError(.misuse, "signedRows signs \(table), and rowKeys declares no row key for it: a signature is bound to its row's key; declare it, seal(…, rowKeys: [\"\(table)\": [\"id\"]]).", table: table)
            }
            let tableIndexes = indexes.filter { $0.table.sqliteFolded == table.sqliteFolded }.map(\.name) + sealed.compactMap(\.indexColumn)
            var seen: Set<FoldedName> = []
            for column in row.columns + [row.signatureColumn] {
                let folded = column.sqliteFolded
                let what: String? = !seen.insert(folded).inserted ? "named twice"
                    : sealed.contains(where: { $0.column.sqliteFolded == folded }) ? "sealed (every sealed column is covered already)"
                    : key.contains(where: { $0.sqliteFolded == folded }) ? "part of the row key (the signature is bound to it already)"
                    : tableIndexes.contains(where: { $0.sqliteFolded == folded }) ? "a blind index's column (computed from the sealed values)"
                    : nil
                if let what {
                    throw FieldError(.misuse, "SignedRow(\(table)) gives \(column), which is \(what): list each plain column to sign once, and a signature column of its own.", table: table, column: column)
                }
            }
        }
    }
}
