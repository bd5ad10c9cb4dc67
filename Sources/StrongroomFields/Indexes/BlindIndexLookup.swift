public import Strongroom

/// A lookup through a blind index: the rows whose columns equal the given
/// values, after the index's transformations (any case of an e-mail, for a
/// case-folded index).
///
/// ```swift
/// // One customer by sealed e-mail:
/// let ada = try db.fetchOne(Customer.self, where: .index("email_index", equals: "ada@example.com"))
/// // A page of 20, in id order, after the last one shown (keyset pagination):
/// let page = try db.fetchAll(Customer.self, where: .index("name_born", equals: "Lovelace", "1815-12-10")
///                                                   .ordered(by: "id").after(lastID).limit(20))
/// ```
///
/// The index (the connection's, declared with
/// ``Strongroom/Configuration/seal(_:indexes:keyring:context:views:)``) gives
/// the candidates through its SQL index; each is opened, and one whose
/// values do not match (a truncated index's false positive) is dropped
/// before `ORDER BY`'s order is used up and before `limit` counts it, so
/// both hold after the filtering.
public struct BlindIndexLookup: Sendable, Hashable {
    /// The index's name.
    public let index: String
    /// One value per part of the index, in its order, before transformation.
    public let values: [DatabaseValue]
    /// The columns the rows come in the order of (plain columns: a sealed
    /// one has no order SQLite could use); none for the index's own order.
    public private(set) var orderBy: [String] = []
    /// Whether the order is descending.
    public private(set) var descending = false
    /// The values of ``orderBy``'s columns of the last row already read: the
    /// lookup starts after it.
    public private(set) var afterValues: [DatabaseValue]?
    /// At most this many rows.
    public private(set) var limit: Int?

    /// Rows whose columns match `values` through index `name`.
    public static func index(_ name: String, equals first: any DatabaseValueConvertible, _ rest: any DatabaseValueConvertible...) -> BlindIndexLookup {
        var values = [first.databaseValue]
        if !rest.isEmpty {
            values.reserveCapacity(1 + rest.count)
            for value in rest { values.append(value.databaseValue) }
        }
        return BlindIndexLookup(index: name, values: values)
    }

    /// The same, for values given as an array.
    public static func index(_ name: String, equals values: [DatabaseValue]) -> BlindIndexLookup {
        BlindIndexLookup(index: name, values: values)
    }

    /// In the order of `columns` (ascending, or descending).
    public func ordered(by columns: String..., descending: Bool = false) -> BlindIndexLookup {
        var copy = self
        copy.orderBy = columns
        copy.descending = descending
        return copy
    }

    /// After the row whose ``orderBy`` columns hold `values`.
    public func after(_ first: any DatabaseValueConvertible, _ rest: any DatabaseValueConvertible...) -> BlindIndexLookup {
        var copy = self
        copy.afterValues = [first.databaseValue] + rest.map(\.databaseValue)
        return copy
    }

    /// At most `count` rows.
    public func limit(_ count: Int) -> BlindIndexLookup {
        var copy = self
        copy.limit = count
        return copy
    }
}

extension Connection {
    /// The rows of `T`'s table that `lookup` finds, read into `T`: the
    /// index's candidates, false positives dropped, in ``BlindIndexLookup/orderBy``
    /// order, at most ``BlindIndexLookup/limit``.
    ///
    /// - Throws: ``FieldError/Code/misuse`` when the connection does not seal
    ///   (no ``Configuration/seal(_:indexes:keyring:context:views:)``), the
    ///   index is not one of the table's, the values are not one per part, a
    ///   sealed column is named to order by, or `after` does not give one
    ///   value per ordering column; ``FieldError/Code/untransformable`` for a
    ///   value the index cannot take; `StrongroomError` from the query.
    public func fetchAll<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> [T] {
        var rows: [T] = []
        try forEach(T.self, where: lookup) { rows.append($0); return true }
        return rows
    }

    /// The first row ``fetchAll(_:where:)`` would give, or nil.
    public func fetchOne<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> T? {
        var first: T?
        try forEach(T.self, where: lookup.limit(1)) { first = $0; return false }
        return first
    }

    /// The SQL a lookup runs, and `EXPLAIN QUERY PLAN`'s details of it
    /// (one line per step: `SEARCH customer USING INDEX customer_email_index (email_index=?)`).
    public func queryPlan<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> (sql: String, plan: [String]) {
        let query = try BlindIndexQuery(T.self, lookup, on: self)
        let plan = try fetchAll(sql: "EXPLAIN QUERY PLAN " + query.sql, arguments: StatementArguments(values: query.arguments))
            .map { try $0.decode(String.self, column: "detail") }
        return (query.sql, plan)
    }

    private func forEach<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup, _ body: (T) throws -> Bool) throws {
        let query = try BlindIndexQuery(T.self, lookup, on: self)
        if let limit = lookup.limit, limit <= 0 { return }
        let compiled = query.compiled, probe = query.probe
        let statement = try cachedStatement(sql: compiled.sql)
        var count = 0
        try statement.forEach(T.self, arguments: StatementArguments(values: query.arguments), filter: { row in
            // A row whose values transform otherwise, or not at all, is a
            // false positive (a truncated index's, or a planted value).
            // By name: a record's row view numbers its properties, not the columns.
            if let column = compiled.untransformedColumn {
                guard let probe = probe.first, let stored = row[column] else { return false }
                return BlindIndex.same(stored, probe)
            }
            let stored = compiled.columns.map { row[$0] ?? .null }
            guard let transformed = try? compiled.index.transformed(stored) else { return false }
            return BlindIndex.matches(transformed, probe)
        }) { record in
            count += 1
            return try body(record) && count < (lookup.limit ?? .max)
        }
    }
}

/// A lookup made SQL, with what its rows are checked against.
struct BlindIndexQuery {
    /// The index, its keys and the SQL, made once per shape and connection.
    let compiled: Compiled
    /// The lookup's values, transformed.
    let probe: [DatabaseValue]
    let arguments: [DatabaseValue]

    var index: BlindIndex { compiled.index }
    var sql: String { compiled.sql }

    /// What the SQL depends on: compiled once per connection.
    struct Shape: Hashable {
        let table: String, index: String, orderBy: [String], descending: Bool, after: Bool
    }

    /// A shape's index, keys and SQL, checked and made once: a class, so
    /// that each lookup shares it rather than copying its parts.
    final class Compiled {
        let index: BlindIndex
        let keys: FieldCipher.IndexKeys
        let sql: String
        /// The index's columns, to read each candidate's values by name.
        let columns: [String]
        /// The one column of an index that transforms nothing: a candidate's
        /// value is compared as stored, with no arrays.
        let untransformedColumn: String?

        init(index: BlindIndex, keys: FieldCipher.IndexKeys, sql: String) {
            self.index = index
            self.keys = keys
            self.sql = sql
            columns = index.parts.map(\.column)
            untransformedColumn = index.parts.count == 1 && index.parts[0].transformations.isEmpty ? index.parts[0].column : nil
        }
    }

    init<T: TableRecord>(_ type: T.Type, _ lookup: BlindIndexLookup, on db: Connection) throws {
        guard let transform = db.columnTransform as? SealingTransform else {
            throw FieldError(.misuse, "This connection seals no column: configure it with Configuration.seal(_:indexes:keyring:) to look rows up through a blind index.", table: T.databaseTableName)
        }
        let shape = Shape(table: T.databaseTableName, index: lookup.index, orderBy: lookup.orderBy, descending: lookup.descending, after: lookup.afterValues != nil)
        let compiled: Compiled
        if let known = transform.lookups[shape] {
            compiled = known
        } else {
            compiled = try Self.compile(shape, transform: transform, db: db)
            transform.lookups[shape] = compiled
        }
        let index = compiled.index
        guard lookup.values.count == index.parts.count else {
            throw FieldError(.misuse, "Blind index \(index.name) covers \(index.parts.count) column\(index.parts.count == 1 ? "" : "s") (\(compiled.columns.joined(separator: ", "))), and the lookup gives \(lookup.values.count) value\(lookup.values.count == 1 ? "" : "s"); give one per column, in that order.", table: index.table)
        }
        if let after = lookup.afterValues, after.count != lookup.orderBy.count {
            throw FieldError(.misuse, "A lookup continues after a row given by the values of its ordering columns: give \(lookup.orderBy.count) (\(lookup.orderBy.joined(separator: ", "))).", table: index.table)
        }
        self.compiled = compiled
        // No row holds a NULL index value: a lookup of NULL finds nothing.
        let probe = compiled.untransformedColumn != nil
            ? (lookup.values[0].isNull ? nil : lookup.values) : try index.transformed(lookup.values)
        self.probe = probe ?? []
        // The probe under every key of the keyring: during a rotation, rows
        // keep the index values of the key they were sealed under.
        let keyIDs = transform.probeKeyIDs
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(keyIDs.count + (lookup.afterValues?.count ?? 0))
        for keyID in keyIDs {
            arguments.append(try probe.map { probe throws(FieldError) in
                try transform.cipher.blindIndex(ofTransformed: probe, for: index, keys: compiled.keys, keyID: keyID)
            } ?? .null)
        }
        if let after = lookup.afterValues { arguments += after }
        self.arguments = arguments
    }

    /// The SQL of a shape, after checking the index, its columns and the order.
    private static func compile(_ shape: Shape, transform: SealingTransform, db: Connection) throws -> Compiled {
        let table = shape.table
        let indexes = transform.indexes[table.sqliteFolded] ?? []
        guard let index = indexes.first(where: { $0.name.sqliteFolded == shape.index.sqliteFolded }) else {
            let known = indexes.map(\.name)
            throw FieldError(.misuse, "\(table) has no blind index \(shape.index) on this connection (it has \(known.isEmpty ? "none" : known.joined(separator: ", "))); declare it with Configuration.seal(_:indexes:keyring:).", table: table)
        }
        for column in shape.orderBy where transform.isSealed(column, of: table) {
            throw FieldError(.misuse, "\(table).\(column) is sealed: its envelopes have no order to sort by. Order by a plain column (the primary key, say).", table: table, column: column)
        }
        if shape.after && shape.orderBy.isEmpty {
            throw FieldError(.misuse, "A lookup continues after a row given by the values of its ordering columns: order it (ordered(by:)) first.", table: table)
        }
        if shape.after {
            // (a, b) > (?, ?) is never true of a NULL: a page after would skip rows.
            let info = try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))")
            let keyed = try info.filter { try $0.decode(Int.self, column: "pk") > 0 }
            for column in shape.orderBy {
                guard let row = try info.first(where: { try $0.decode(String.self, column: "name").sqliteFolded == column.sqliteFolded }) else { continue }
                let pk = try row.decode(Int.self, column: "pk"), type = try row.decode(String.self, column: "type")
                let isRowid = keyed.count == 1 && pk == 1 && type.uppercased() == "INTEGER"
                if try row.decode(Int.self, column: "notnull") == 0 && !isRowid {
                    throw FieldError(.misuse, "\(table).\(column) may be NULL, and a page after a row compares the ordering columns' values, which skips the rows where one is NULL. Continue pages by NOT NULL columns (the primary key, say).", table: table, column: column)
                }
            }
        }
        let quoted = SQLScript.quotedIdentifier
        let probes = transform.probeKeyIDs.count
        var sql = "SELECT * FROM main.\(quoted(table)) WHERE \(quoted(index.name)) " + (probes == 1 ? "= ?" : "IN (\(Array(repeating: "?", count: probes).joined(separator: ", ")))")
        if shape.after {
            let columns = shape.orderBy.map(quoted)
            let left = columns.count == 1 ? columns[0] : "(\(columns.joined(separator: ", ")))"
            let right = columns.count == 1 ? "?" : "(\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            sql += " AND \(left) \(shape.descending ? "<" : ">") \(right)"
        }
        if !shape.orderBy.isEmpty {
            sql += " ORDER BY " + shape.orderBy.map { quoted($0) + (shape.descending ? " DESC" : "") }.joined(separator: ", ")
        }
        return Compiled(index: index, keys: transform.cipher.indexKeys(index), sql: sql)
    }
}
