public import Strongroom

extension Configuration {
    /// Seals `columns` with `keyring` on every connection opened with this
    /// configuration: the app then writes and reads plain values.
    ///
    /// - `Connection/insert(_:into:)` seals the declared columns of the
    ///   row, bound to its row key (`rowKeys`; after assigning an
    ///   `INTEGER PRIMARY KEY` SQLite would have assigned), and fills the
    ///   blind index of each indexed column.
    /// - A read opens a sealed value only into a property the application
    ///   declares sealed: a `SealedRecord`'s `SealedProperty`
    ///   list, a `TableRecord`'s `databaseSealedColumns` (`@Table` writes
    ///   them), or a `Row` fetched with `fetchAll(sql:arguments:opening:)`.
    ///   The value opens with the row key the record itself holds. Any
    ///   other read (a plain `Codable`, a `Row`, a single value) gets the
    ///   stored envelope bytes: decoding them as a `String` fails.
    /// - `Connection.update(_:)` seals an updated record's
    ///   columns the same way, and ``Strongroom/Connection/fetchAll(_:where:)``
    ///   looks rows up by a blind index or a deterministic column, the probe
    ///   computed in Swift under every key of the keyring.
    /// - The connection has no key-bearing SQL function (`strongroom_seal`,
    ///   `strongroom_open`, `strongroom_blind_index`, `strongroom_index`):
    ///   SQL that seals or opens runs in a migration with the field keyring
    ///   (`Migrator`'s `fieldKeyring`) or in `strongroom sql --field-keys`.
    ///
    /// ```swift
    /// struct Customer: Codable, SealedRecord {
    ///     var id: Int64?
    ///     var email: String
    ///     var phone: String?
    ///     static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("phone", of: "customer")]
    /// }
    ///
    /// var config = Configuration(key: databaseKey)
    /// config.seal([.indexed("email", in: "customer", indexColumn: "email_index"),
    ///              .randomized("phone", in: "customer")],
    ///             keyring: try FieldKeyring.load(from: "Keys/fields.keyring"),
    ///             rowKeys: ["customer": ["id"]])
    /// let queue = try DatabaseQueue(path: "app.db", configuration: config)
    /// try queue.write { db in try db.insert(Customer(id: nil, email: "ada@example.com", phone: "+44 1"), into: "customer") }
    /// let ada = try queue.read { db in try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [1]) }
    /// ```
    ///
    /// `rowKeys` declares each table's row key: the columns its randomized
    /// and indexed values are bound to (its primary key, as the
    /// application's schema declares it; `@Table`'s
    /// `tableDefinition.primaryKey`). It is required for every table with
    /// such a column, and never read from the database, where whoever holds
    /// the database key could make another column the key: a value opens
    /// only with the declared columns' values, as the record holds them.
    ///
    /// With a `context` (a tenant or database identifier, see
    /// ``FieldContext``), values are bound to it too; a database that
    /// records another context is refused. Without one, the context the
    /// database records, if any, is used: a database-key holder can rewrite
    /// that one, so pass the context to rely on it.
    ///
    /// `indexes` are the blind indexes beyond each `indexed` column's own
    /// (``BlindIndex``): inserts fill them, and
    /// ``Strongroom/Connection/fetchAll(_:where:)`` looks rows up through them.
    /// Each index covers at least one of `columns`; a definition that is not
    /// one (see ``BlindIndex/validate()``) fails every connection's opening
    /// with its ``FieldError``.
    ///
    /// `signedRows` are the tables whose rows are signed (``SignedRow``):
    /// inserts and updates sign each row over its declared plain columns and
    /// its sealed columns' envelopes, and a read that opens a sealed
    /// property of such a table checks the row's signature first.
    public mutating func seal(_ columns: [SealedColumn], indexes: [BlindIndex] = [], keyring: FieldKeyring, context: FieldContext? = nil,
                              rowKeys: [String: [String]] = [:], signedRows: [SignedRow] = []) {
        prepareConnection { db throws(StrongroomError) in
            do throws(FieldError) {
                try BlindIndex.validate(indexes, of: columns)
                try Self.validateRowKeys(rowKeys, of: columns)
                try SignedRow.validate(signedRows, columns: columns, indexes: indexes, rowKeys: rowKeys)
            } catch {
                throw StrongroomError(.misuse, error.message, path: db.path)
            }
            try BlindIndex.refuseColumnsOfAnotherType(indexes, in: db)
            let cipher = FieldCipher(keyring: keyring, context: try FieldContext.effective(context, in: db))
            // The database must know this keyring: refused at open if not.
            try FieldKeyCheck.prepare(cipher, in: db)
            // The keyless functions only: the connection seals, updates and
            // looks up in Swift, and no SQL (the app's, or a view or trigger
            // someone planted) has a function that sees a key.
            for function in FieldFunctions.functions(cipher: cipher) where !FieldFunctions.keyBearing.contains(function.name) {
                try db.add(function: function)
            }
            db.columnTransform = SealingTransform(columns: columns, indexes: indexes, cipher: cipher, connection: db, rowKeys: rowKeys, signedRows: signedRows)
        }
    }

    /// The same; `views` is no longer needed and is ignored: a record read
    /// through a view declares the table each sealed property's value was
    /// sealed in (`SealedProperty`), and nothing about the view
    /// decides what opens.
    @available(*, deprecated, message: "Views need no declaration: a record read through one declares each sealed property's table with SealedProperty. Drop views:.")
    public mutating func seal(_ columns: [SealedColumn], indexes: [BlindIndex] = [], keyring: FieldKeyring, context: FieldContext? = nil, views: [String],
                              rowKeys: [String: [String]] = [:]) {
        seal(columns, indexes: indexes, keyring: keyring, context: context, rowKeys: rowKeys)
    }

    /// Every table with a column bound to its row has a declared row key,
    /// of distinct columns, none of them sealed.
    static func validateRowKeys(_ rowKeys: [String: [String]], of columns: [SealedColumn]) throws(FieldError) {
        var folded: [FoldedName: [String]] = [:]
        for (table, key) in rowKeys {
            if folded[table.sqliteFolded] != nil {
                throw FieldError(.misuse, "rowKeys names \(table) twice (names are compared without case, as SQLite compares them); give each table once.", table: table)
            }
            if key.isEmpty || Set(key.map(\.sqliteFolded)).count != key.count {
                throw FieldError(.misuse, "rowKeys gives \(table) the row key (\(key.joined(separator: ", "))): give its primary key's columns, each once, in order.", table: table)
            }
            folded[table.sqliteFolded] = key
        }
        for column in columns where column.mode != .deterministic {
            guard let key = folded[column.table.sqliteFolded] else {
                throw FieldError(.misuse, "\(column.table).\(column.column) is sealed \(column.mode.rawValue), bound to its row's key, and rowKeys declares no row key for \(column.table): declare it, seal(…, rowKeys: [\"\(column.table)\": [\"id\"]]) (the primary key your schema declares; never read from the database, where whoever holds the database key could move it).",
                                 table: column.table, column: column.column)
            }
            if key.contains(where: { $0.sqliteFolded == column.column.sqliteFolded }) {
                throw FieldError(.misuse, "\(column.table).\(column.column) is part of the row key declared for \(column.table), which sealed values are bound to: it cannot be sealed itself.", table: column.table, column: column.column)
            }
        }
    }
}

extension FieldContext {
    /// The context a connection binds values to: `given`, which must be the
    /// one the database records if it records one; else the recorded one.
    static func effective(_ given: FieldContext?, in db: Connection) throws(StrongroomError) -> FieldContext? {
        let recorded = try SealedColumnRegistry.context(in: db)
        if let given, let recorded, given != recorded {
            throw StrongroomError(.misuse, "\(db.path) binds its sealed values to the field context \(recorded), and this connection was configured with \(given): it is another tenant's database, or the wrong context was given.", path: db.path)
        }
        return given ?? recorded
    }
}
