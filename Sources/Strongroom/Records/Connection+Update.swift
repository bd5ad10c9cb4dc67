/// Updating a row from a record: the row its key names gets every other
/// column the record holds.
extension Connection {
    /// Updates the row of `record`'s table that the record's row key names
    /// with the record's other columns.
    ///
    /// ```swift
    /// var ada = try db.fetchOne(Customer.self, sql: "SELECT * FROM customer WHERE id = ?", arguments: [1])!
    /// ada.email = "ada.lovelace@example.com"
    /// try db.update(ada)
    /// ```
    ///
    /// The row key is the one the application declares: for a table with
    /// sealed columns, the connection's (`Configuration.seal(…, rowKeys:)`),
    /// which ``TableRecord/databaseRowKey`` must agree with; else
    /// ``TableRecord/databaseRowKey``, or the table's primary key. A table
    /// with sealed columns goes through the connection's ``ColumnTransform``
    /// (``ColumnTransform/prepareUpdate(of:columns:values:rowKey:connection:)``):
    /// each sealed value is sealed in Swift, bound to the row's key, and its
    /// blind indexes computed again, in one savepoint (inside your
    /// transaction, as one UPDATE when nothing else is written first and the
    /// schema holds no trigger, as ``insert(_:into:)`` does). The row is found
    /// only where it holds the key exactly (byte for byte, of the same type).
    /// No SQL function on the connection sees a key.
    ///
    /// - Throws: ``StrongroomError/Code/notFound`` when no row has the
    ///   record's key (nothing is written); ``StrongroomError/Code/misuse``
    ///   for a record that lacks a key column, a row key the application
    ///   does not declare, or sealed columns the connection does not seal;
    ///   a constraint's code (a unique blind index's value taken).
    public func update<T: TableRecord>(_ record: T) throws(StrongroomError) {
        let table = T.databaseTableName
        let transform = try insertsThroughTransform(T.self) ? columnTransform : nil
        let key = try updateKey(of: table, given: T.databaseRowKey, by: "\(T.self)'s databaseRowKey", transform: transform)
        var binder = RecordBinder(collecting: T.databaseColumnNames.count)
        try record.encode(to: &binder)
        try update(columns: T.databaseColumnNames, values: binder.values, in: table, rowKey: key, of: "\(T.self)", through: transform)
    }

    /// Updates the row of `table` that `rowKey`'s columns of `record` name
    /// with the other columns `record` encodes (a column it does not encode
    /// keeps its value).
    ///
    /// ```swift
    /// struct Contact: Codable { var id: Int64; var phone: String? }
    /// try db.update(Contact(id: 1, phone: "+44 20 7946 0000"), in: "customer")
    /// ```
    ///
    /// `rowKey`: the columns that name the row; by default the row key the
    /// connection declares for a table with sealed columns
    /// (`Configuration.seal(…, rowKeys:)`), else the table's primary key.
    /// Sealed columns are sealed and their blind indexes computed as
    /// ``update(_:)`` does; an update that gives some of a blind index's
    /// columns must give all of them.
    public func update<Record: Encodable>(_ record: Record, in table: String, rowKey: [String]? = nil) throws(StrongroomError) {
        let transform = columnTransform.flatMap { $0.transformsInserts(into: table) ? $0 : nil }
        let key = try updateKey(of: table, given: rowKey ?? [], by: "rowKey:", transform: transform)
        let sink = ValueListSink()
        try encode(record, into: sink)
        try update(columns: sink.keys, values: sink.values, in: table, rowKey: key, of: "\(Record.self)", through: transform)
    }

    /// The row key an update names its row by: the declared one of a table
    /// the transform handles (`given` must agree), else `given`, else the
    /// table's primary key (a table with no sealed column: no value is
    /// bound to it).
    private func updateKey(of table: String, given: [String], by source: String, transform: (any ColumnTransform)?) throws(StrongroomError) -> [String] {
        if let transform, let declared = transform.declaredRowKey(of: table) {
            if !given.isEmpty && given.map(\.sqliteFolded) != declared.map(\.sqliteFolded) {
                throw StrongroomError(.misuse, "\(source) names the row key (\(given.joined(separator: ", "))) and the connection declares (\(declared.joined(separator: ", "))) for \(table), whose sealed values are bound to it: declare the same key in both.", path: path)
            }
            return declared
        }
        if !given.isEmpty { return given }
        // Read once per table and schema version: a plain table's key, where
        // nothing is sealed (no value is bound to it).
        let version = try cachedStatement(sql: "PRAGMA main.schema_version").fetchOne(Int64.self) ?? 0
        if let known = primaryKeysByTable[ExactText(table)], known.schemaVersion == version { return known.columns }
        var columns: [(position: Int, name: String)] = []
        for row in try fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))") {
            let position = try row.decode(Int.self, column: "pk")
            if position > 0 { columns.append((position, try row.decode(String.self, column: "name"))) }
        }
        let key = columns.sorted { $0.position < $1.position }.map(\.name)
        guard !key.isEmpty else {
            throw StrongroomError(.misuse, "\(table) has no primary key to find the row to update by: name the columns that do (update(_:in:rowKey:), or the record's databaseRowKey).", path: path)
        }
        primaryKeysByTable[ExactText(table)] = (version, key)
        return key
    }

    /// Updates the row whose `rowKey` columns hold the record's values:
    /// through `transform` in a savepoint (what it writes first and the
    /// row together), or as one UPDATE.
    func update(columns: [String], values: [DatabaseValue], in table: String, rowKey: [String], of what: String,
                through transform: (any ColumnTransform)?) throws(StrongroomError) {
        let folded = columns.map(\.sqliteFolded)
        for column in rowKey where !folded.contains(column.sqliteFolded) {
            throw StrongroomError(.misuse, "\(what) has no \(column), of the row key (\(rowKey.joined(separator: ", "))) that names the row of \(table) to update: give it.", path: path)
        }
        let keyFolded = Set(rowKey.map(\.sqliteFolded))
        guard folded.contains(where: { !keyFolded.contains($0) }) else {
            throw StrongroomError(.misuse, "\(what) holds only \(table)'s row key (\(rowKey.joined(separator: ", "))): there is no column to update.", path: path)
        }
        let updateRow = { (db: Connection) throws in
            var columns = columns, values = values
            try transform?.prepareUpdate(of: table, columns: &columns, values: &values, rowKey: rowKey, connection: db)
            let key = rowKey.map { column in columns.firstIndex { $0.sqliteFolded == column.sqliteFolded }! }
            let set = columns.indices.filter { !keyFolded.contains(columns[$0].sqliteFolded) }
            // Sealed values are bound to the key's stored bytes: the row must
            // hold them exactly (SQLite's `=` takes 'ADA' for 'ada' under
            // COLLATE NOCASE, and 1 for 1.0).
            let statement = try db.updateStatement(table: table, set: set.map { columns[$0] }, key: rowKey, exactly: transform != nil)
            try statement.execute(arguments: StatementArguments(values: (set + key).map { values[$0] }))
            guard db.changesCount > 0 else {
                let described = zip(rowKey, key.map { values[$0] }).map { "\($0) = \($1)" }.joined(separator: ", ")
                throw StrongroomError(.notFound, "No row of \(table) has \(described): nothing was updated. Insert it, or check the key.", path: db.path)
            }
        }
        if let transform {
            try write(into: table, through: transform, updateRow)
        } else {
            do {
                try updateRow(self)
            } catch let error as StrongroomError {
                throw error
            } catch {
                throw StrongroomError(.sqlite, "\(error)", path: path)
            }
        }
    }

    /// The cached `UPDATE "table" SET "a" = ?1, … WHERE "k" = ?n`;
    /// `exactly`: the key's values compared byte for byte and by type too
    /// (after the plain `=`, which can use the key's index).
    private func updateStatement(table: String, set: [String], key: [String], exactly: Bool) throws(StrongroomError) -> Statement {
        let cacheKey = ([table] + key + [exactly ? "=" : ""] + set).map(ExactText.init)
        if let cached = updateStatementsByColumns[cacheKey] { return cached }
        let quoted = SQLScript.quotedIdentifier
        let assignments = set.enumerated().map { "\(quoted($1)) = ?\($0 + 1)" }.joined(separator: ", ")
        let condition = key.enumerated().map { position, column in
            let parameter = "?\(set.count + position + 1)", name = quoted(column)
            return exactly ? SQLScript.exactlyEqual(name, parameter) : "\(name) = \(parameter)"
        }.joined(separator: " AND ")
        let statement = try prepare(sql: "UPDATE \(quoted(table)) SET \(assignments) WHERE \(condition)")
        updateStatementsByColumns[cacheKey] = statement
        return statement
    }
}
