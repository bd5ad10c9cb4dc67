internal import CSQLCipher

/// Which result columns of a statement may be opened by the connection's
/// ``ColumnTransform``: the whole rule, in one place.
///
/// SQLite names a result column's origin (`sqlite3_column_table_name`,
/// `…_origin_name`) *through* views, while the name the row hands the
/// value out under is the view's (`sqlite3_column_name`). Whoever holds the
/// database key can rewrite a view with plain SQL (or, on SQLite 3.15, plant
/// a TEMP view over a table's name), so that an opened e-mail leaves as
/// `name`. A statement's sealed columns are therefore opened only when:
///
/// 1. each comes from a table of the `main` schema, and
/// 2. each view the statement reads is one the application declared
///    (``ColumnTransform/declaredViews``): in `main`, stored with the
///    declared text (compared as SQL), and, as this connection loaded it,
///    handing out the same columns, from the same origins, under the same
///    names as the declaration (on SQLite 3.15 a connection keeps running the
///    schema it loaded after the stored text is put back).
///
/// A column read straight from its table, under its own name or an alias
/// the statement's own text gives it (in a subquery or a common table
/// expression of its own too), always opens. Anything else fails the read
/// with ``StrongroomError/Code/untrustedSchema``, naming the view, before a
/// value is opened. Checked once per statement, when it is prepared (or
/// prepared again after a schema change): the statement is compiled a
/// second time, and the authorizer records each table and view it reads.
enum OpeningRules {
    /// - Parameters:
    ///   - columns: the columns the statement opens. With none, only the
    ///     declared views it reads are checked (rewritten to hand out text
    ///     of the adversary's where the application expects opened values).
    ///   - reads: what the statement reads, as compiled on its connection.
    static func check(_ statement: Statement, opening columns: [OpeningPlan.Column], reads: [ReadAccess], transform: any ColumnTransform) throws(StrongroomError) {
        let connection = statement.connection
        let sealed = columns.isEmpty ? "a declared view's columns" : columns.map { "\($0.table).\($0.column)" }.joined(separator: ", ") + (columns.count == 1 ? ", which is sealed," : ", which are sealed,")
        func refuse(_ message: String) -> StrongroomError {
            StrongroomError(.untrustedSchema, message, path: connection.path, sql: statement.sql)
        }
        for column in columns {
            let schema = sqlite3_column_database_name(statement.handle, Int32(column.index)).map { String(cString: $0) } ?? "main"
            guard AuthorizerPolicy.asciiLowercased(schema) == "main" else {
                throw refuse("The query reads \(column.table).\(column.column), which is sealed, from the schema \"\(schema)\": only the tables of main are opened. Nothing was opened; read main.\(column.table).")
            }
        }
        if !columns.isEmpty && SQLTokens(statement.sql).columnListOverStar {
            throw refuse("The query reads \(sealed) and names the columns of a SELECT * with a column list (a common table expression's): each name takes the column at its position in the table, and whoever holds the database key can rebuild the table in another order. Name the columns in the SELECT instead. Nothing was opened.")
        }
        // Every view the statement reads, and every object the views read,
        // as loaded and as declared: a declaration compiles through objects
        // the adversary may have changed too (an inner view, or a TEMP view
        // over a table's name), so each is checked in turn.
        let declarations = transform.declaredViews.map { ($0, ViewDefinition($0)) }
        // Opening nothing, a statement is checked from the declared views it reads.
        var pending = reads.filter { !$0.writes && (!columns.isEmpty || connection.declaredViewNames.contains(ExactText(AuthorizerPolicy.asciiLowercased($0.table)))) }
            .map { [$0.schema, $0.table] }
        var seen: Set<[String]> = []
        while let next = pending.popLast() {
            let schema = next[0], name = next[1]
            guard seen.insert(next.map(AuthorizerPolicy.asciiLowercased)).inserted else { continue }
            // A table (of any schema) hands its columns out under their own names.
            if connection.hasTable(name, in: schema) { continue }
            // Not a table: a view (SQLite reports no read of a subquery's or a
            // common table expression's columns). One that does not compile
            // on its own reads what only the statement supplies (on SQLite
            // 3.15 a view may read the query's common table expressions):
            // it cannot be checked.
            guard let (live, liveReads) = try? resultColumns(of: "SELECT * FROM \(SQLScript.quotedIdentifier(schema)).\(SQLScript.quotedIdentifier(name))", in: connection) else {
                throw refuse("The query reads \(sealed) through the view \"\(name)\", which does not compile on its own (it reads something only this query supplies, such as one of its common table expressions), so it cannot be checked. Nothing was opened; find out who changed \"\(name)\".")
            }
            guard AuthorizerPolicy.asciiLowercased(schema) == "main" else {
                throw refuse("The query reads \(sealed) through the \(AuthorizerPolicy.asciiLowercased(schema) == "temp" ? "temporary" : "attached") view \"\(name)\" (schema \(schema)): only views of main that the application declared are read through (PRAGMA writable_schema can plant a TEMP view over a table's name on SQLite 3.15). Nothing was opened; read main.<table> directly, and find out who added \"\(name)\".")
            }
            guard let declared = declarations.lazy.compactMap(\.1).first(where: { $0.name == ExactText(AuthorizerPolicy.asciiLowercased(name)) }) else {
                if let bad = declarations.first(where: { $0.1 == nil }) {
                    throw StrongroomError(.misuse, "A declared view is not a CREATE VIEW statement: \(bad.0)", path: connection.path, sql: statement.sql)
                }
                throw refuse("The query reads \(sealed) through the view \"\(name)\", which the application did not declare: a view decides the names its columns leave under, and whoever holds the database key can rewrite one. Nothing was opened. Read the table directly, or declare the view's CREATE VIEW statement (Configuration.seal(_:indexes:keyring:context:views:rowKeys:) in StrongroomFields).")
            }
            // (Opening nothing, a reordered table moves only stored values:
            // one that moves a sealed column under another name is opened,
            // and refused here then.)
            if declared.columnListOverStar && !columns.isEmpty {
                throw refuse("The declared view \"\(name)\" names the columns of a SELECT * with a column list: each name takes the column at its position in the table, and whoever holds the database key can rebuild the table in another order. Name the columns in the SELECT instead. Nothing was opened.")
            }
            let stored = try connection.fetchAll(String.self, sql: "SELECT CAST(sql AS TEXT) FROM main.sqlite_master WHERE type = 'view' AND name = ?1 COLLATE NOCASE", arguments: [name])
            guard stored.count == 1, let storedView = ViewDefinition(stored[0]), storedView.name == declared.name, storedView.body == declared.body else {
                throw refuse("The view \"\(name)\" stored in the database is not the one the application declared: someone with the database key rewrote it (or a migration changed it without its declaration). Nothing was opened; compare the schema with the migrations (strongroom verify) and find out who changed it.")
            }
            guard let (expected, declaredReads) = try? resultColumns(of: declared.query, in: connection), expected == live else {
                throw refuse("The view \"\(name)\" as this connection loaded it hands out other columns, or the same names from other columns, than its declaration does, though its stored text reads as declared: what it reads was changed too, or (on SQLite 3.15, where a connection keeps running the schema it loaded) someone rewrote it and put the text back. Nothing was opened; find out who changed it, and open a new connection.")
            }
            pending += (liveReads + declaredReads).filter { !$0.writes }.map { [$0.schema, $0.table] }
        }
    }

    /// A ``TableRecord``'s sealed properties (``TableRecord/databaseSealedColumns``)
    /// take only their own column, opened, and the record's row key is the
    /// one each was opened with. Whoever holds the database key can rename
    /// the table and put a view of its name in its place, whose `apiKey` is
    /// text of theirs: nothing is opened there, so the rules above never
    /// run; this one does, once per statement and record type, on every
    /// path a record is read by (``TableRecord``, `Decodable`, a ``Row``).
    ///
    /// For each sealed property, the query's column of that name must be:
    /// the only one of that name (a join's `SELECT *` can hand out two, and
    /// the adversary can add a plain one to the joined table: SQLite calls
    /// the name ambiguous); opened; and, when it comes from the record's
    /// own table, that table's column of that name (not another sealed
    /// column under an alias). The record's property for each row key
    /// column must be the column the value was opened with, or the record
    /// would hold a value opened in another row under this row's key.
    ///
    /// - Parameter isTable: whether a name is a table for the connection
    ///   (TEMP first, as queries resolve names): a column not opened is
    ///   ``StrongroomError/Code/untrustedSchema`` when the record's table
    ///   is no longer a table (a view stands in its place), and
    ///   ``StrongroomError/Code/misuse`` when it is (the query selects
    ///   something else under the name). Without it (a ``Row`` decoded
    ///   after its statement), `untrustedSchema`.
    static func checkSealedProperties<T: TableRecord>(of type: T.Type, layout: RowLayout, path: String?, sql: String?,
                                                       everyColumn: Bool = false, isTable: ((String) -> Bool)?) throws(StrongroomError) {
        let table = T.databaseTableName
        let sealed = T.databaseSealedColumns
        func refuse(_ code: StrongroomError.Code, _ message: String) -> StrongroomError {
            StrongroomError(code, message + " Nothing was read.", path: path, sql: sql)
        }
        guard let opened = layout.opened else {
            throw refuse(.misuse, "\(T.self) has sealed columns (\(sealed.map { "\(table).\($0)" }.joined(separator: ", "))) and this connection opens none: configure it with configuration.seal(…, keyring:) for them. A connection without the field keyring reads no record with sealed columns (read the stored values as Data with SQL instead).")
        }
        for name in sealed {
            guard let index = layout.index(of: name) else {
                // A record read by position fails on a missing column as it
                // decodes; a Decodable finds its properties by coding keys,
                // which may name another column (`api_key AS apiKey`).
                guard everyColumn else { continue }
                throw refuse(.misuse, "The query selects no column \(name), which \(T.self) reads as sealed: a Decodable read finds its properties by their coding keys, and whatever column those name cannot be checked as \(table).\(name) opened. Select \(name) under its own name, or read \(T.self) as a TableRecord (by position).")
            }
            if layout.isAmbiguous(name) {
                let spellings = layout.columnNames.filter { $0.sqliteFolded == name.sqliteFolded }
                throw refuse(.misuse, "The query hands out \(spellings.count) columns named \(name) (\(spellings.joined(separator: ", "))), and \(T.self) reads \(name) as sealed: SQLite calls such a name ambiguous, and whoever holds the database key can add a plain column of that name to a joined table. Select \(table).\(name) once, by name, rather than * over the join.")
            }
            guard let column = opened.first(where: { $0.index == index }) else {
                if let isTable, isTable(table) {
                    throw refuse(.misuse, "\(T.self) reads \(name) as sealed, and the query's column \(name) is not \(table).\(name) opened (an expression, or a column this connection does not open). Select the sealed column itself (SELECT * FROM \(table), or \(table).\(name)).")
                }
                throw refuse(.untrustedSchema, "\(T.self) reads \(name) as sealed, and the query's column \(name) is not \(table).\(name) opened\(isTable == nil ? "" : ": \"\(table)\" is no longer a table (a view stands under its name)"). Whoever holds the database key can put a view in a table's place to hand out text of theirs as a sealed value. Find out who changed \"\(table)\" (strongroom verify compares the schema with the migrations), or, if the query is yours, select the sealed column itself.")
            }
            if column.table.sqliteFolded == table.sqliteFolded && column.column.sqliteFolded != name.sqliteFolded {
                throw refuse(.misuse, "\(T.self) reads \(name) as sealed, and the query hands it \(table).\(column.column), another sealed column. Select \(table).\(name) under that name.")
            }
            // The row key (a deterministic value is bound to none).
            guard !column.contextNames.isEmpty else { continue }
            guard column.table.sqliteFolded == table.sqliteFolded else {
                // Another table's value (a join, or a record over a view):
                // which row of that table it is of is told by that table's
                // row key, which whoever holds the database key can move to
                // another column (a column the record reads, a NATURAL
                // JOIN's, a composite key's columns in another order). Only
                // the application's pin says which columns it is; the
                // record then reads them, under whatever names.
                guard column.rowKeyIsPinned else {
                    throw refuse(.misuse, "\(T.self) holds \(name), a sealed value of \(column.table), which is not its own table (\(table)): which row of \(column.table) the value is of is told by that table's row key, and whoever holds the database key can make another column the key unless the application pins it. Pin it: Configuration.seal(_:indexes:keyring:context:views:rowKeys:) in StrongroomFields, with rowKeys: [\"\(column.table)\": [the key columns your schema declares]] (not read from this database: its key may be the adversary's).")
                }
                let read = Set(T.databaseColumnNames.compactMap { layout.index(of: $0) })
                for (k, keyName) in column.contextNames.enumerated() where read.isDisjoint(with: column.keyIndexes[k]) {
                    let keyIndex = column.contextIndexes[k]
                    throw refuse(.misuse, "\(T.self)'s sealed \(name) comes from \(column.table), opened with its row key \(column.table).\(keyName) (the query's column \(keyIndex + 1), \(layout.columnNames[keyIndex])), which \(T.self) does not read: the record could not say which row of \(column.table) its value is of. Read that column with the record, under any name.")
                }
                continue
            }
            let declared = T.databaseRowKey
            if !declared.isEmpty, declared.map(\.sqliteFolded) != column.contextNames.map(\.sqliteFolded) {
                throw refuse(.untrustedSchema, "\(table)'s primary key is (\(column.contextNames.joined(separator: ", "))) in the database, and \(T.self) declares its row key (\(declared.joined(separator: ", "))): whoever holds the database key can rebuild the table with another column as its key, and a plain \(declared[0]) beside it, so that a record holds a value of one row under another row's key. Find out who changed \"\(table)\" (strongroom verify compares the schema with the migrations).")
            }
            for (keyName, keyIndex) in zip(column.contextNames, column.contextIndexes) {
                guard let property = T.databaseColumnNames.first(where: { $0.sqliteFolded == keyName.sqliteFolded }) else {
                    throw refuse(.misuse, "\(T.self)'s sealed \(name) is bound to the row key \(table).\(keyName), which is none of \(T.self)'s properties: the record could not say which row its value belongs to (whoever holds the database key can make another column the key). Declare the row key (databaseRowKey; @Table does) and read it with the record.")
                }
                guard let propertyIndex = layout.index(of: property), propertyIndex != keyIndex else { continue }
                throw refuse(.misuse, "\(T.self) reads \(property) from the query's column \(propertyIndex + 1) (\(layout.columnNames[propertyIndex])), but its sealed \(name) was opened with the row key \(column.table).\(keyName), column \(keyIndex + 1): the record would hold a value of one row under another row's key. Select \(column.table).\(keyName) once, by name (a joined table may have a column of that name, planted or not), rather than * over the join.")
            }
        }
    }

    /// One result column: the name it leaves under, and where it comes
    /// from, as SQLite's bytes with ASCII letters folded (never repaired
    /// or compared with Swift's `==`, which takes an NFC and an NFD
    /// spelling for one name).
    struct ResultColumn: Equatable {
        let name: [UInt8]
        let origin: [[UInt8]]?
    }

    /// A name's bytes as SQLite folds names: ASCII letters only.
    private static func folded(_ name: UnsafePointer<CChar>) -> [UInt8] {
        var bytes: [UInt8] = []
        var next = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
        while next.pointee != 0 {
            bytes.append(next.pointee >= 0x41 && next.pointee <= 0x5A ? next.pointee + 0x20 : next.pointee)
            next += 1
        }
        return bytes
    }

    /// The columns `sql` hands out, compiled on `connection` (never run),
    /// and what it reads.
    private static func resultColumns(of sql: String, in connection: Connection) throws(StrongroomError) -> ([ResultColumn], [ReadAccess]) {
        try connection.inspect(sql: sql) { handle throws(StrongroomError) in
            (0..<sqlite3_column_count(handle)).map { i in
                let origin = [sqlite3_column_database_name(handle, i), sqlite3_column_table_name(handle, i), sqlite3_column_origin_name(handle, i)]
                return ResultColumn(name: folded(sqlite3_column_name(handle, i)),
                                    origin: origin.contains(where: { $0 == nil }) ? nil : origin.map { folded($0!) })
            }
        }
    }
}
