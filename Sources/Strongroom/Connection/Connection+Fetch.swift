/// Reading rows, values and records, and inserting records.
extension Connection {
    /// Every row of a query, as stored: a sealed column holds its envelope
    /// (``fetchAll(sql:arguments:opening:)`` opens declared ones).
    ///
    /// ```swift
    /// let rows = try db.fetchAll(sql: "SELECT name FROM person WHERE score > ?", arguments: [10])
    /// ```
    public func fetchAll(sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> [Row] {
        try cachedStatement(sql: sql).fetchAll(arguments: arguments)
    }

    /// Every row of a query, the sealed columns `properties` declares
    /// opened: each with the binding it names (table, column, and the
    /// result columns that hold the row key), never one read from the
    /// database.
    ///
    /// ```swift
    /// let rows = try db.fetchAll(sql: "SELECT id, phone FROM customer WHERE country = ?", arguments: [country],
    ///                            opening: [SealedProperty("phone", of: "customer")])
    /// let phone: String? = try rows[0].decode(column: "phone")
    /// ```
    ///
    /// See ``Statement/fetchAll(arguments:opening:)`` for the errors.
    public func fetchAll(sql: String, arguments: StatementArguments = .none, opening properties: [SealedProperty]) throws(StrongroomError) -> [Row] {
        try cachedStatement(sql: sql).fetchAll(arguments: arguments, opening: properties)
    }

    /// The values of the sealed property `property` in every row of a
    /// query, opened with its declared binding (its row key read from the
    /// columns the declaration names, which the query must select).
    ///
    /// ```swift
    /// let phones = try db.fetchAll(String?.self, sql: "SELECT id, phone FROM customer ORDER BY id",
    ///                              opening: SealedProperty("phone", of: "customer"))
    /// ```
    public func fetchAll<T: DatabaseValueConvertible>(_ type: T.Type, sql: String, arguments: StatementArguments = .none,
                                                      opening property: SealedProperty) throws(StrongroomError) -> [T] {
        var values: [T] = []
        for row in try fetchAll(sql: sql, arguments: arguments, opening: [property]) {
            values.append(try row.decode(T.self, column: property.name))
        }
        return values
    }

    /// The value of the sealed property `property` in the first row of a
    /// query, opened as ``fetchAll(_:sql:arguments:opening:)`` does; nil
    /// when there is no row or the value is NULL.
    public func fetchOne<T: DatabaseValueConvertible>(_ type: T.Type, sql: String, arguments: StatementArguments = .none,
                                                      opening property: SealedProperty) throws(StrongroomError) -> T? {
        guard let row = try fetchOne(sql: sql, arguments: arguments, opening: [property]) else { return nil }
        return try row.decode(T?.self, column: property.name)
    }

    /// The first row of a query, or nil; as stored.
    public func fetchOne(sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> Row? {
        try cachedStatement(sql: sql).fetchOne(arguments: arguments)
    }

    /// The first row of a query, or nil, the sealed columns `properties`
    /// declares opened (see ``fetchAll(sql:arguments:opening:)``).
    public func fetchOne(sql: String, arguments: StatementArguments = .none, opening properties: [SealedProperty]) throws(StrongroomError) -> Row? {
        try cachedStatement(sql: sql).fetchOne(arguments: arguments, opening: properties)
    }

    /// The first column of the first row of a query as stored, or nil when
    /// there is no row (``Statement/firstValue(arguments:)``), through the
    /// statement cache.
    package func firstValue(sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> DatabaseValue? {
        try cachedStatement(sql: sql).firstValue(arguments: arguments)
    }

    /// Every row of a query decoded into `T`.
    ///
    /// ```swift
    /// struct Person: Decodable { var id: Int; var name: String }
    /// let people = try db.fetchAll(Person.self, sql: "SELECT id, name FROM person")
    /// let names = try db.fetchAll(String.self, sql: "SELECT name FROM person")
    /// ```
    public func fetchAll<T: Decodable>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// The first row of a query decoded into `T`, or nil when there is no
    /// row (or, for a single value such as `String` or `Int`, when it is NULL;
    /// fetch `String?` to tell the two apart: `.some(nil)` is a NULL).
    ///
    /// ```swift
    /// let count = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM person") ?? 0
    /// let title = try db.fetchOne(String.self, sql: "SELECT title FROM movie WHERE id = ?", arguments: [7])   // nil: no row, or NULL
    /// ```
    public func fetchOne<T: Decodable>(_ type: T.Type, sql: String, arguments: StatementArguments = .none) throws(StrongroomError) -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// Inserts `record` into `table`, one column per encoded property.
    ///
    /// ```swift
    /// try db.insert(Person(id: 1, name: "Ada", email: nil), into: "person")
    /// ```
    ///
    /// Each record inserts the columns it encodes, one per coding key; a
    /// column it leaves out gets its default. The INSERT is built from the
    /// keys of the first record of each type and cached; a later record that
    /// encodes other keys (an `encode(to:)` that skips nil values) is
    /// inserted with a statement of its own keys, also cached.
    public func insert<Record: Encodable>(_ record: Record, into table: String) throws(StrongroomError) {
        let type = ObjectIdentifier(Record.self)
        let statement: Statement
        // The type and table inserted last on a connection without a
        // transform are checked first: no hashing in a loop of inserts.
        // (Set only when no transform is installed; installing one empties it.)
        if let last = lastEncodableInsert, last.type == type, KeyIndexCache.sameName(last.table, table) {
            statement = last.statement
        } else {
            if let transform = columnTransform, transform.transformsInserts(into: table) {
                try insert(record, into: table, through: transform)
                return
            }
            statement = try encodableInsertStatement(record, into: table)
        }
        let (bound, unbound) = try statement.bind(record: record, keeping: keptInsertContainer)
        guard bound == statement.parameterCount && unbound == 0 else {
            // Keys other than the first record's: none is dropped, none
            // left to the last record's binding, and none of this record's
            // values left bound in the cached statement.
            statement.clearBindings()
            try insertWithItsOwnKeys(record, into: table)
            return
        }
        while try statement.step() {}
    }

    /// The cached INSERT of `Record`'s keys into `table`, prepared from the
    /// keys `record` encodes the first time; remembered as the last one
    /// used when no transform is installed.
    private func encodableInsertStatement<Record: Encodable>(_ record: Record, into table: String) throws(StrongroomError) -> Statement {
        let cacheKey = InsertCacheKey(type: ObjectIdentifier(Record.self), table: ExactText(table))
        let statement: Statement
        if let cached = insertStatementCache[cacheKey] {
            statement = cached
        } else {
            let sink = KeyListSink()
            try encode(record, into: sink)
            guard !sink.keys.isEmpty else {
                throw StrongroomError(.misuse, "\(Record.self) encodes no property to insert.", path: path)
            }
            // Positional parameters: a coding key need not be a valid
            // parameter name (`first-name`); the statement maps keys to them.
            statement = try prepare(sql: Self.insertSQL(into: table, columns: sink.keys))
            statement.parametersByKey = Dictionary(sink.keys.enumerated().map { ($1, Int32($0 + 1)) }, uniquingKeysWith: { first, _ in first })
            insertStatementCache[cacheKey] = statement
        }
        if columnTransform == nil { lastEncodableInsert = (cacheKey.type, table, statement) }
        return statement
    }

    /// Encodes `record` into `sink`; a failure is a conversion error.
    func encode<Record: Encodable>(_ record: Record, into sink: some RecordSink) throws(StrongroomError) {
        do {
            try record.encode(to: RecordEncoder(sink: sink))
        } catch {
            throw StrongroomError(.conversion, "Cannot encode \(Record.self): \(error)", path: path)
        }
    }

    /// Inserts `record` with an INSERT of the keys it encodes, cached by
    /// table and column list.
    private func insertWithItsOwnKeys<Record: Encodable>(_ record: Record, into table: String) throws(StrongroomError) {
        let sink = ValueListSink()
        try encode(record, into: sink)
        guard !sink.keys.isEmpty else {
            throw StrongroomError(.misuse, "\(Record.self) encodes no property to insert.", path: path)
        }
        try insertStatement(into: table, columns: sink.keys).execute(arguments: StatementArguments(values: sink.values))
    }

    /// The cached `INSERT INTO table (columns…)`, with positional parameters.
    /// The last one used is compared first, byte for byte, before the
    /// cache's key is built: a run of inserts into one table hashes nothing.
    private func insertStatement(into table: String, columns: [String]) throws(StrongroomError) -> Statement {
        if let last = lastInsertStatement, last.matches(table: table, columns: columns) { return last.statement }
        let cacheKey = ([table] + columns).map(ExactText.init)
        let statement: Statement
        if let cached = insertStatementsByColumns[cacheKey] {
            statement = cached
        } else {
            statement = try prepare(sql: Self.insertSQL(into: table, columns: columns))
            insertStatementsByColumns[cacheKey] = statement
        }
        lastInsertStatement = LastInsertStatement(table: table, columns: columns, statement: statement)
        return statement
    }

    /// An insert into a table a ``ColumnTransform`` handles (sealed columns):
    /// the row is encoded to values, transformed, and inserted, all in one
    /// savepoint, so a primary key the transform assigns and the row that
    /// uses it are written together.
    private func insert<Record: Encodable>(_ record: Record, into table: String, through transform: any ColumnTransform) throws(StrongroomError) {
        let sink = ValueListSink()
        try encode(record, into: sink)
        try insert(columns: sink.keys, values: sink.values, into: table, through: transform)
    }

    /// Inserts one row of `values` through `transform`, so a primary key
    /// the transform assigns and the row that uses it are written together:
    /// in a savepoint, or, inside a transaction when the transform writes
    /// nothing of its own first (``ColumnTransform/writesBeforeInsert(into:connection:)``)
    /// and no trigger can run, as one INSERT statement. The transaction's
    /// lock (or its snapshot, which a write then refuses to outrun) keeps the
    /// key it read free, and SQLite undoes a failed INSERT alone: without
    /// triggers, it writes nothing before every constraint has passed.
    /// (With them, a trigger's `RAISE(FAIL)`, a FAIL conflict in its
    /// writes, or on SQLite 3.15.2 a function's error, leaves what the
    /// statement wrote before it in place; the savepoint takes it back.)
    func insert(columns: [String], values: [DatabaseValue], into table: String, through transform: any ColumnTransform) throws(StrongroomError) {
        let insertRow = { (db: Connection) throws in
            var columns = columns, values = values
            try transform.prepareInsert(into: table, columns: &columns, values: &values, connection: db)
            try db.insertStatement(into: table, columns: columns).execute(arguments: StatementArguments(values: values))
        }
        try write(into: table, through: transform, insertRow)
    }

    /// Runs `body`, one write of a row `transform` prepares (an insert or
    /// an update), in a savepoint; or, inside a transaction when the
    /// transform writes nothing of its own first and no trigger can run, as
    /// it is (see ``insert(columns:values:into:through:)``). An error that is
    /// not a ``StrongroomError`` (the transform's) becomes `sealedValue`.
    func write(into table: String, through transform: any ColumnTransform, _ body: (Connection) throws -> Void) throws(StrongroomError) {
        do {
            if isInsideTransaction, try !schemaMayHoldTriggers(), try !transform.writesBeforeInsert(into: table, connection: self) {
                try body(self)
            } else {
                try inSavepoint(body)
            }
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.sealedValue, "\(error)", path: path)
        }
    }

    /// False only when neither main's schema nor temp's holds a trigger:
    /// no row whose type is `trigger`, and none whose SQL mentions one
    /// (SQLite builds its schema from the SQL text, whatever the type
    /// column says). A name or a column that merely contains "trigger"
    /// answers true: a savepoint more, never one less. An INSERT into a
    /// table of main runs only main's and temp's triggers.
    func schemaMayHoldTriggers() throws(StrongroomError) -> Bool {
        try firstValue(sql: """
            SELECT EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'trigger' OR sql LIKE '%trigger%')
                OR EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'trigger' OR sql LIKE '%trigger%')
            """) != .integer(0)
    }

    /// `INSERT INTO "table" ("a", "b") VALUES (?1, ?2)`: positional
    /// parameters, as a column name need not be a valid parameter name.
    static func insertSQL(into table: String, columns: [String]) -> String {
        let names = columns.map(SQLScript.quotedIdentifier).joined(separator: ", ")
        let parameters = columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
        return "INSERT INTO \(SQLScript.quotedIdentifier(table)) (\(names)) VALUES (\(parameters))"
    }
}
