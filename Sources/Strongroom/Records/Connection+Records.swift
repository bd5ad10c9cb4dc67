/// Reading and inserting ``TableRecord`` values.
extension Connection {
    /// Every row of `T`'s table.
    ///
    /// ```swift
    /// let artists = try db.fetchAll(Artist.self)
    /// ```
    public func fetchAll<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> [T] {
        try cachedStatement(sql: selectSQL(T.self)).fetchAll(type)
    }

    /// Every row of a query read into `T`.
    public func fetchAll<T: TableRecord>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// The first row of a query read into `T`, or nil.
    public func fetchOne<T: TableRecord>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// Every row of a query read into `T`, by position (for a type that is
    /// also `Decodable`).
    public func fetchAll<T: TableRecord & Decodable>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// The first row of a query read into `T`, by position, or nil (for a
    /// type that is also `Decodable`).
    public func fetchOne<T: TableRecord & Decodable>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// Inserts `record` into its table.
    ///
    /// ```swift
    /// try db.insert(Artist(id: 1, name: "AC/DC"))
    /// ```
    ///
    /// Binds each property straight to a cached INSERT statement; a table
    /// with sealed columns goes through the connection's ``ColumnTransform``.
    @inlinable
    public func insert<T: TableRecord>(_ record: T) throws(StrongroomError) {
        // Inlinable, so that binding is specialized for the record type.
        guard let statement = try recordInsertStatement(T.self) else {
            try insertThroughTransform(record)
            return
        }
        statement.reset()
        // A parameter the record leaves unbound is NULL, not the last record's value.
        statement.clearBindings()
        var binder = RecordBinder(statement: statement)
        try record.encode(to: &binder)
        while try statement.step() {}
    }

    /// The cached INSERT of `T`, or nil when the connection's transform
    /// handles inserts into its table (sealed columns). A record with
    /// sealed columns on a connection that does not seal them is refused.
    @usableFromInline
    func recordInsertStatement<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> Statement? {
        // The type inserted last on a connection without a transform is
        // checked first: no hashing in a loop of inserts. (Set only when no
        // transform is installed; installing one empties it.)
        let id = ObjectIdentifier(T.self)
        if let last = lastRecordInsert, last.type == id { return last.statement }
        // A transform's answers may change while it is installed: they are
        // asked on every insert, as `insert(_:into:)` does.
        if try insertsThroughTransform(T.self) { return nil }
        let statement: Statement
        if let cached = recordInsertCache[id] {
            statement = cached
        } else {
            statement = try prepare(sql: Self.insertSQL(into: T.databaseTableName, columns: T.databaseColumnNames))
            recordInsertCache[id] = statement
        }
        if columnTransform == nil { lastRecordInsert = (id, statement) }
        return statement
    }

    /// True when a record of type `T` goes through the column transform;
    /// throws when the record seals a column the connection does not seal.
    func insertsThroughTransform<T: TableRecord>(_ type: T.Type) throws(StrongroomError) -> Bool {
        let table = T.databaseTableName
        let transformed = columnTransform?.transformsInserts(into: table) ?? false
        // Every column the record seals must be one the connection seals
        // (opens on reading), or it would be written as plaintext.
        let unsealed = T.databaseSealedColumns.filter { columnTransform?.bindsToRowKey($0, of: table) == nil || !transformed }
        if !unsealed.isEmpty {
            throw StrongroomError(.misuse, "\(T.self) has sealed columns (\(unsealed.joined(separator: ", "))) that this connection does not seal in \(table): configure it with configuration.seal(…, keyring:) for them, or they would be written as plaintext.", path: path)
        }
        return transformed
    }

    /// Inserts a record whose table the column transform handles: its
    /// values are collected, then go through the transform's insert.
    @usableFromInline
    func insertThroughTransform<T: TableRecord>(_ record: T) throws(StrongroomError) {
        guard let transform = columnTransform else {
            throw StrongroomError(.misuse, "No column transform handles inserts into \(T.databaseTableName).", path: path)
        }
        var binder = RecordBinder(collecting: T.databaseColumnNames.count)
        try record.encode(to: &binder)
        try insert(columns: T.databaseColumnNames, values: binder.values, into: T.databaseTableName, through: transform)
    }

    /// `SELECT "a", "b", … FROM "table"` for `T`.
    /// `T`'s columns from its table; for a table whose rows the
    /// connection's transform signs, with the signature, the columns it
    /// covers and the row key after them, which the read checks each row's
    /// signature over.
    func selectSQL<T: TableRecord>(_ type: T.Type) -> String {
        var names = T.databaseColumnNames
        if let transform = columnTransform, let signed = transform.signedRowColumns(of: T.databaseTableName) {
            let key = T.databaseRowKey.isEmpty ? transform.declaredRowKey(of: T.databaseTableName) ?? [] : T.databaseRowKey
            for name in [signed.signature] + signed.covered + key where !names.contains(where: { $0.sqliteFolded == name.sqliteFolded }) {
                names.append(name)
            }
        }
        return "SELECT \(names.map(SQLScript.quotedIdentifier).joined(separator: ", ")) FROM \(SQLScript.quotedIdentifier(T.databaseTableName))"
    }
}
