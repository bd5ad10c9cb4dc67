public import Strongroom

extension Configuration {
    /// Seals `columns` with `keyring` on every connection opened with this
    /// configuration: the app then writes and reads plain values.
    ///
    /// - `Connection/insert(_:into:)` seals the declared columns of the
    ///   row (after assigning an `INTEGER PRIMARY KEY` SQLite would have
    ///   assigned, so that values can be bound to it), and fills the blind
    ///   index of each indexed column.
    /// - Every read (rows, `Decodable` records, single values) opens the
    ///   sealed columns it selects. A query that selects a randomized sealed
    ///   column must also select its table's primary key.
    /// - The SQL functions of ``addFieldFunctions(keyring:context:)`` are there too,
    ///   for updates and lookups in SQL.
    ///
    /// ```swift
    /// var config = Configuration(key: databaseKey)
    /// config.seal([.indexed("email", in: "customer", indexColumn: "email_index"),
    ///              .randomized("phone", in: "customer")],
    ///             keyring: try FieldKeyring.load(from: "Keys/fields.keyring"))
    /// let queue = try DatabaseQueue(path: "app.db", configuration: config)
    /// try queue.write { db in try db.insert(Customer(id: nil, email: "ada@example.com", phone: "+44 1"), into: "customer") }
    /// let ada = try queue.read { db in
    ///     try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE email_index = strongroom_blind_index(?, 'customer', 'email')",
    ///                     arguments: ["ada@example.com"])
    /// }
    /// ```
    ///
    /// Writes through SQL (`UPDATE`) do not pass through here: seal in the
    /// statement with `strongroom_seal(…)`.
    ///
    /// Reads open sealed columns only under the names the application's own
    /// SQL gives them: read straight from their table, or through one of
    /// `views`, the `CREATE VIEW` statements the application's migrations
    /// run (compared as SQL with what the database stores, and with what
    /// the connection loaded). A query through any other view, a rewritten
    /// one, or a temporary one fails with
    /// `StrongroomError.Code.untrustedSchema` and opens nothing:
    ///
    /// ```swift
    /// config.seal(columns, keyring: keyring,
    ///             views: ["CREATE VIEW customer_card AS SELECT id, name, email FROM customer"])
    /// ```
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
    /// `rowKeys` pins each table's row key: the columns its randomized
    /// values are bound to (its primary key, as the application declares
    /// it; `@Table`'s `tableDefinition.primaryKey`). Without a pin, the key
    /// is read from the database, where whoever holds the database key can
    /// make another column the primary key and put a plain `id` holding
    /// other rows' numbers beside it: a value would then open under the key
    /// that was moved, and the app would take it for another row's. With
    /// one, values open only with the pinned columns' values (a moved key
    /// fails to authenticate, on every read path), and an insert into a
    /// table whose primary key is not the pinned one fails with
    /// `StrongroomError.Code.untrustedSchema`:
    ///
    /// ```swift
    /// config.seal(Customer.tableDefinition.sealedColumns, keyring: keyring,
    ///             rowKeys: ["customer": Customer.tableDefinition.primaryKey])
    /// ```
    public mutating func seal(_ columns: [SealedColumn], indexes: [BlindIndex] = [], keyring: FieldKeyring, context: FieldContext? = nil, views: [String] = [],
                              rowKeys: [String: [String]] = [:]) {
        prepareConnection { db throws(StrongroomError) in
            do throws(FieldError) {
                try BlindIndex.validate(indexes, of: columns)
            } catch {
                throw StrongroomError(.misuse, error.message, path: db.path)
            }
            try BlindIndex.refuseColumnsOfAnotherType(indexes, in: db)
            let cipher = FieldCipher(keyring: keyring, context: try FieldContext.effective(context, in: db))
            // The database must know this keyring: refused at open if not.
            try FieldKeyCheck.prepare(cipher, in: db)
            for function in FieldFunctions.functions(cipher: cipher, declared: columns, indexes: indexes) {
                try db.add(function: function)
            }
            db.columnTransform = SealingTransform(columns: columns, indexes: indexes, cipher: cipher, connection: db, views: views, rowKeys: rowKeys)
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
