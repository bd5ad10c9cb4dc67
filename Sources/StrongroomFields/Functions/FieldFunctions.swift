public import Strongroom
import Foundation

/// The SQL functions of sealed columns, for the tools' connections only:
/// the migration runner's (`Migrator`'s `fieldKeyring`, for its run),
/// the CLI's (`strongroom sql --field-keys`, `migrate --field-keys`), and
/// ``ColumnSealing`` (while it seals or opens in place). An app connection
/// (``Strongroom/Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``)
/// carries none of the key-bearing ones: it seals, updates and looks up in
/// Swift (`insert`, `update`, `fetchAll(_:where:)`), so SQL (its own, or a
/// view or trigger whoever holds the database key planted) has no function
/// that sees a key.
///
/// | function | returns |
/// |---|---|
/// | `strongroom_seal(value, table, column, mode, key...)` | the envelope of `value` (`mode`: `'randomized'`, `'deterministic'` or `'indexed'`; `key...`: the row's primary key columns, in order) |
/// | `strongroom_open(envelope, table, column, key...)` | the value; an envelope of the other mode than the column's (as the tool's declarations say, else told by the call: key columns for randomized, none for deterministic) is refused |
/// | `strongroom_blind_index(value, table, column [, key_id])` | the blind index under the active key (or `key_id`) |
/// | `strongroom_index(table, index, value...)` | the value of a blind index (``BlindIndex``) the tool declares, under the active key, for the values of its columns |
/// | `strongroom_key_id(envelope)` | the id of the key an envelope was sealed under, or NULL (keyless: on app connections too) |
/// | `strongroom_transform(transformations, value)` | `value` after the ``BlindIndexTransformation``s named, comma-separated (`'trim,nfkc-casefold'`) (keyless: on app connections too) |
///
/// Encrypting an existing plaintext column in place, in a migration run
/// with the field keyring (`strongroom migrate --field-keys`, or
/// `Migrator`'s `fieldKeyring`):
///
/// ```sql
/// UPDATE customer SET email = strongroom_seal(email, 'customer', 'email', 'randomized', CustomerId);
/// ```
///
/// The key-bearing functions are direct-only: SQLite refuses them in a
/// view, a trigger, a CHECK, a DEFAULT or an index (`SQLITE_DIRECTONLY`
/// on SQLite 3.30 and later; on SQLCipher 3.4.1's SQLite 3.15.2, the
/// connection's authorizer and schema scan). A function that fails (a
/// tampered envelope, an unknown key id) fails its statement with the
/// ``FieldError`` message, which names table, column and row.
extension Configuration {
    /// No longer available: an app connection carries no key-bearing SQL
    /// function. See "Moving to declared bindings".
    @available(*, unavailable, message: "App connections carry no key-bearing SQL function: update records with Connection.update(_:), look rows up with fetchAll(_:where:) (.index or .column), and run SQL that seals or opens in a migration with Migrator.fieldKeyring, or with `strongroom sql --field-keys`.")
    public mutating func addFieldFunctions(keyring: FieldKeyring, context: FieldContext? = nil) {
        fatalError("unavailable")
    }

    /// Adds the sealed-column SQL functions, with `keyring`, to every
    /// connection opened with this configuration: for the CLI's own
    /// connections, which run the operator's SQL. `columns` and `indexes`
    /// are the tool's declarations (the modes `strongroom_open` checks, the
    /// blind indexes `strongroom_index` computes).
    package mutating func addFieldFunctionsForTools(keyring: FieldKeyring, context: FieldContext? = nil, columns: [SealedColumn] = [], indexes: [BlindIndex] = []) {
        prepareConnection { db throws(StrongroomError) in
            let cipher = FieldCipher(keyring: keyring, context: try FieldContext.effective(context, in: db))
            try FieldKeyCheck.prepare(cipher, in: db)
            for function in FieldFunctions.functions(cipher: cipher, declared: columns, indexes: indexes) {
                try db.add(function: function)
            }
        }
    }
}

extension FieldFunctions {
    /// Runs `body` with the functions, under `keyring`, on `db`, and removes
    /// the key-bearing ones after it, whatever it throws: what the
    /// migration runner lends a connection, which may be an app's.
    ///
    /// The context is the application's: `context`, else the one `db`
    /// seals with (`Configuration.seal(…, context:)`, which it checked
    /// against the recorded one when it opened), else the recorded one; a
    /// given context other than the connection's, or than the one the
    /// database records now, is refused. The modes and blind indexes are
    /// those the connection declares.
    package static func lending<T>(_ keyring: FieldKeyring, context given: FieldContext?, to db: Connection, _ body: () throws -> T) throws -> T {
        let app = db.columnTransform as? SealingTransform
        let context: FieldContext?
        if let app {
            // The connection's context as it opened (none included), which
            // the database must still record: one recorded since is not the
            // application's.
            if let given, given != app.cipher.context {
                throw FieldError(.misuse, "The migrator binds values to the field context \(given), and the connection it migrates seals with \(app.cipher.context.map { "\($0)" } ?? "none"): give both the same context. Nothing was migrated.")
            }
            if let recorded = try SealedColumnRegistry.context(in: db), recorded != app.cipher.context {
                throw FieldError(.misuse, "\(db.path) records the field context \(recorded) now, and its connection seals with \(app.cipher.context.map { "\($0)" } ?? "none"): the record changed since it opened (whoever holds the database key can write it). Nothing was migrated; check the database, then open it again.")
            }
            context = app.cipher.context
        } else {
            context = try FieldContext.effective(given, in: db)
        }
        let cipher = FieldCipher(keyring: keyring, context: context)
        try FieldKeyCheck.prepare(cipher, in: db)
        return try lending(cipher, to: db, columns: app?.declaredColumns ?? [], indexes: app?.indexes.values.flatMap { $0 } ?? [], body)
    }

    /// The same, with `cipher`.
    static func lending<T>(_ cipher: FieldCipher, to db: Connection, columns: [SealedColumn] = [], indexes: [BlindIndex] = [],
                           _ body: () throws -> T) throws -> T {
        let functions = functions(cipher: cipher, declared: columns, indexes: indexes)
        // Removed whatever happens from here on, those added before a failed add too.
        defer {
            // A removal SQLite refuses leaves the functions on the
            // connection: close it rather than leave them there.
            for function in functions where keyBearing.contains(function.name) && (try? db.remove(function: function)) == nil { db.close() }
        }
        for function in functions { try db.add(function: function) }
        return try body()
    }
}

package enum FieldFunctions {
    /// The functions that hold the keyring: on the tools' connections only.
    static let keyBearing: Set<String> = ["strongroom_seal", "strongroom_open", "strongroom_blind_index", "strongroom_index"]

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
