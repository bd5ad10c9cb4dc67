public import Strongroom
import Foundation

/// The SQL functions of sealed columns, for migrations, the CLI and any SQL:
///
/// | function | returns |
/// |---|---|
/// | `strongroom_seal(value, table, column, mode, key...)` | the envelope of `value` (`mode`: `'randomized'`, `'deterministic'` or `'indexed'`; `key...`: the row's primary key columns, in order) |
/// | `strongroom_open(envelope, table, column, key...)` | the value; an envelope of the other mode than the column's (declared with ``Configuration/seal(_:indexes:keyring:context:rowKeys:)``, else told by the call: key columns for randomized, none for deterministic) is refused |
/// | `strongroom_blind_index(value, table, column [, key_id])` | the blind index under the active key (or `key_id`) |
/// | `strongroom_key_id(envelope)` | the id of the key an envelope was sealed under, or NULL |
/// | `strongroom_index(table, index, value...)` | the value of a blind index (``BlindIndex``) declared on the connection, under the active key, for the values of its columns |
/// | `strongroom_transform(transformations, value)` | `value` after the ``BlindIndexTransformation``s named, comma-separated (`'trim,nfkc-casefold'`) |
///
/// A lookup through a truncated index in SQL drops the false positives
/// itself, with the same transformations (what
/// `Connection.fetchAll(_:where:)` does in Swift):
///
/// ```sql
/// SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer
///  WHERE email_folded = strongroom_index('customer', 'email_folded', :probe)
///    AND strongroom_transform('trim,nfkc-casefold', strongroom_open(email, 'customer', 'email', id))
///        = strongroom_transform('trim,nfkc-casefold', :probe)
///  ORDER BY id LIMIT 10;
/// ```
///
/// Encrypting an existing plaintext column in place, in a migration:
///
/// ```sql
/// UPDATE customer SET email = strongroom_seal(email, 'customer', 'email', 'randomized', CustomerId);
/// ```
///
/// Each connection gets its own ``FieldCipher``. A function that fails
/// (a tampered envelope, an unknown key id) fails its statement with the
/// ``FieldError`` message, which names table, column and row.
extension Configuration {
    /// Adds the sealed-column SQL functions, with `keyring`, to every
    /// connection opened with this configuration.
    ///
    /// ```swift
    /// var config = Configuration(key: databaseKey)
    /// config.addFieldFunctions(keyring: try FieldKeyring.load(from: "Keys/fields.keyring"))
    /// ```
    ///
    /// `context`: as for ``Configuration/seal(_:indexes:keyring:context:rowKeys:)``.
    public mutating func addFieldFunctions(keyring: FieldKeyring, context: FieldContext? = nil) {
        prepareConnection { db throws(StrongroomError) in
            let cipher = FieldCipher(keyring: keyring, context: try FieldContext.effective(context, in: db))
            try FieldKeyCheck.prepare(cipher, in: db)
            for function in FieldFunctions.functions(cipher: cipher) {
                try db.add(function: function)
            }
        }
    }
}

enum FieldFunctions {
    /// The functions, with `cipher`; `declared` (the columns a
    /// configuration seals) gives `strongroom_open` each column's mode.
    static func functions(cipher: FieldCipher, declared: [SealedColumn] = [], indexes: [BlindIndex] = []) -> [DatabaseFunction] {
        let modes = Dictionary(declared.map { ([$0.table.sqliteFolded, $0.column.sqliteFolded], $0.mode) }, uniquingKeysWith: { a, _ in a })
        let indexesByName = Dictionary((declared.compactMap(\.columnIndex) + indexes).map { ([$0.table.sqliteFolded, $0.name.sqliteFolded], $0) },
                                       uniquingKeysWith: { a, _ in a })
        return [
            // Not pure: its value changes with the active key.
            DatabaseFunction("strongroom_index", directOnly: true) { arguments in
                guard arguments.count >= 3, case .text(let table) = arguments[0], case .text(let name) = arguments[1] else {
                    throw FieldError(.misuse, "strongroom_index takes (table, index, value...): the table and the index's name as text, then one value per column of the index.")
                }
                guard let index = indexesByName[[table.sqliteFolded, name.sqliteFolded]] else {
                    throw FieldError(.misuse, "strongroom_index: \(table) has no blind index \(name) on this connection (declare it with Configuration.seal(_:indexes:keyring:), or record it with `strongroom fields index add`).", table: table)
                }
                guard arguments.count - 2 == index.parts.count else {
                    throw FieldError(.misuse, "strongroom_index: \(index) takes \(index.parts.count) value(s), one per column, and was given \(arguments.count - 2).", table: table)
                }
                return try cipher.blindIndex(of: Array(arguments[2...]), for: index)
            },
            // Keyless, but direct-only all the same: the schema never needs it.
            DatabaseFunction("strongroom_transform", argumentCount: 2, directOnly: true) { arguments in
                guard case .text(let names) = arguments[0] else {
                    throw FieldError(.misuse, "strongroom_transform takes (transformations, value): the transformations' names as text, comma-separated.")
                }
                var transformations: [BlindIndexTransformation] = []
                for name in names.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let transformation = BlindIndexTransformation(name: name.trimmingCharacters(in: .whitespaces)) else {
                        throw FieldError(.misuse, "strongroom_transform: '\(name)' is not a transformation (\(BlindIndexTransformation.names)).")
                    }
                    transformations.append(transformation)
                }
                let probe = BlindIndex("strongroom_transform", in: "", parts: [.init("value", transformations)])
                return try probe.transformed([arguments[1]])?.first ?? .null
            },
            DatabaseFunction("strongroom_seal", directOnly: true) { arguments in
                let (table, column) = try names(arguments, "strongroom_seal", minimum: 4)
                guard case .text(let modeName) = arguments[3], let mode = SealingMode(rawValue: modeName.lowercased()) else {
                    throw FieldError(.misuse, "strongroom_seal: the 4th argument is the mode: 'randomized', 'deterministic' or 'indexed'.", table: table, column: column)
                }
                return try cipher.seal(arguments[0], table: table, column: column, rowKey: Array(arguments[4...]), mode: mode)
            },
            // Not pure: SQLite would then accept it in an index, which would
            // keep the plaintext readable with the database key alone.
            DatabaseFunction("strongroom_open", directOnly: true) { arguments in
                let (table, column) = try names(arguments, "strongroom_open", minimum: 3)
                let rowKey = Array(arguments[3...])
                // The column's declared mode; else the call's shape says it: a
                // row key for a randomized value, none for a deterministic one.
                let mode = modes[[table.sqliteFolded, column.sqliteFolded]] ?? (rowKey.isEmpty ? .deterministic : .randomized)
                return try cipher.open(arguments[0], table: table, column: column, rowKey: rowKey, mode: mode)
            },
            // Not pure either: its value changes with the active key.
            DatabaseFunction("strongroom_blind_index", directOnly: true) { arguments in
                let (table, column) = try names(arguments, "strongroom_blind_index", minimum: 3)
                var keyID: UInt32?
                if arguments.count == 4 {
                    guard case .integer(let id) = arguments[3], let id32 = UInt32(exactly: id) else {
                        throw FieldError(.misuse, "strongroom_blind_index: the 4th argument, if any, is a key id.", table: table, column: column)
                    }
                    keyID = id32
                } else if arguments.count > 4 {
                    throw FieldError(.misuse, "strongroom_blind_index takes (value, table, column [, key_id]).", table: table, column: column)
                }
                return try cipher.blindIndex(arguments[0], table: table, column: column, keyID: keyID)
            },
            DatabaseFunction("strongroom_key_id", argumentCount: 1, pure: true) { arguments in
                FieldCipher.keyID(of: arguments[0]).map { .integer(Int64($0)) } ?? .null
            },
        ]
    }

    private static func names(_ arguments: [DatabaseValue], _ function: String, minimum: Int) throws(FieldError) -> (String, String) {
        guard arguments.count >= minimum, case .text(let table) = arguments[1], case .text(let column) = arguments[2] else {
            throw FieldError(.misuse, "\(function): the 2nd and 3rd arguments are the table and column names, as text.")
        }
        return (table, column)
    }
}
