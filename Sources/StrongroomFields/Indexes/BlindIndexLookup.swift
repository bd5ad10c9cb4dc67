public import Strongroom

/// A lookup through a blind index: the rows whose columns equal the given
/// values, after the index's transformations (any case of an e-mail, for a
/// case-folded index).
///
/// ```swift
/// // One customer by sealed e-mail:
/// let ada = try db.fetchOne(Customer.self, where: .index("email_index", equals: "ada@example.com"))
/// // Every customer of a deterministic sealed column's value:
/// let british = try db.fetchAll(Customer.self, where: .column("country", equals: "UK"))
/// // A page of 20, in id order, after the last one shown (keyset pagination):
/// let page = try db.fetchAll(Customer.self, where: .index("name_born", equals: "Lovelace", "1815-12-10")
///                                                   .ordered(by: "id").after(lastID).limit(20))
/// ```
///
/// The index (the connection's, declared with
/// ``Strongroom/Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``) gives
/// the candidates through its SQL index; each is opened, and one whose
/// values do not match (a truncated index's false positive) is dropped
/// before `ORDER BY`'s order is used up and before `limit` counts it, so
/// both hold after the filtering.
///
/// Every probe is computed in Swift and bound, once under each key of the
/// keyring (rows not yet rotated keep the values of the key they were
/// sealed under): no SQL function on the connection sees a key.
public struct BlindIndexLookup: Sendable, Hashable {
    /// The index's name; for ``column(_:equals:)``, the deterministic column's.
    public let index: String
    /// True for a lookup by a deterministic sealed column's own value
    /// (``column(_:equals:)``), false for one through a blind index.
    public private(set) var isDeterministicColumn = false
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

    /// Rows whose deterministic sealed column `name` holds `value`: its
    /// envelope under each key of the keyring, compared as stored. (A
    /// deterministic column shows which rows share a value to whoever holds
    /// the database key; that is what makes it searchable.)
    public static func column(_ name: String, equals value: any DatabaseValueConvertible) -> BlindIndexLookup {
        var lookup = BlindIndexLookup(index: name, values: [value.databaseValue])
        lookup.isDeterministicColumn = true
        return lookup
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
    ///   (no ``Configuration/seal(_:indexes:keyring:context:rowKeys:signedRows:)``), the
    ///   index is not one of the table's, the values are not one per part, a
    ///   sealed column is named to order by, or `after` does not give one
    ///   value per ordering column; ``FieldError/Code/untransformable`` for a
    ///   value the index cannot take; `StrongroomError` from the query.
    public func fetchAll<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> [T] {
        let query = try BlindIndexQuery(T.self, lookup, on: self)
        let limit = lookup.limit ?? .max
        var rows: [T] = []
        guard limit > 0 else { return rows }
        // Closures, not the methods named: a method reference copies the
        // query into a context on the heap, every call.
        try cachedStatement(sql: query.sql).forEach(T.self, binding: { try query.bind($0) }, filter: { query.keeps($0) }) { record in
            rows.append(record)
            return rows.count < limit
        }
        return rows
    }

    /// The first row ``fetchAll(_:where:)`` would give, or nil.
    public func fetchOne<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> T? {
        let query = try BlindIndexQuery(T.self, lookup, on: self)
        if let limit = lookup.limit, limit <= 0 { return nil }
        return try cachedStatement(sql: query.sql).firstRecord(T.self, binding: { try query.bind($0) }, filter: { query.keeps($0) })
    }

    /// The rows of `table` that `lookup` finds, decoded into a plain
    /// `Codable` type that declares its sealed properties
    /// (`SealedRecord`): as ``fetchAll(_:where:)`` finds them for a
    /// `TableRecord`.
    ///
    /// ```swift
    /// let ada = try db.fetchOne(Customer.self, where: .index("email_index", equals: "ada@example.com"))
    /// ```
    ///
    /// `table`: by default the one table `T`'s sealed properties name.
    /// Candidates are read one at a time, up to the limit. The index's sealed
    /// columns are opened to drop false positives (with the table's declared
    /// row key) whether `T` declares them or not; one `T` does not declare
    /// reaches `T` as its envelope, as in any other read.
    public func fetchAll<T: Decodable & SealedRecord>(_ type: T.Type, from table: String? = nil, where lookup: BlindIndexLookup) throws -> [T] {
        try lookUp(T.self, from: table, lookup, first: false)
    }

    /// The first row ``fetchAll(_:from:where:)`` would give, or nil.
    public func fetchOne<T: Decodable & SealedRecord>(_ type: T.Type, from table: String? = nil, where lookup: BlindIndexLookup) throws -> T? {
        try lookUp(T.self, from: table, lookup, first: true).first
    }

    private func lookUp<T: Decodable & SealedRecord>(_ type: T.Type, from table: String?, _ lookup: BlindIndexLookup, first: Bool) throws -> [T] {
        let table = try table ?? Self.lookupTable(of: T.self)
        let query = try BlindIndexQuery(table: table, lookup, on: self)
        var limit = lookup.limit ?? .max
        if first { limit = min(limit, 1) }
        guard limit > 0 else { return [] }
        // The index's sealed columns T does not declare: opened for the
        // filter only.
        let undeclared = query.compiled.columns.filter { column in
            query.transform.isSealed(column, of: table) && !T.sealedProperties.contains { $0.name.sqliteFolded == column.sqliteFolded }
        }
        var found: [T] = []
        try cachedStatement(sql: query.sql).forEachRow(arguments: StatementArguments(values: query.arguments()), opening: T.sealedProperties) { row in
            guard query.keeps(row, opening: undeclared, of: table) else { return true }
            found.append(try row.decode(T.self))
            return found.count < limit
        }
        return found
    }

    /// The one table `T`'s sealed properties name.
    private static func lookupTable<T: SealedRecord>(of type: T.Type) throws -> String {
        let tables = T.sealedProperties.map(\.table)
        guard let table = tables.first, tables.allSatisfy({ $0.sqliteFolded == table.sqliteFolded }) else {
            throw FieldError(.misuse, "\(T.self)'s sealed properties name \(tables.isEmpty ? "no table" : "several tables (\(Set(tables).sorted().joined(separator: ", ")))"): name the table to look up in, fetchAll(\(T.self).self, from: \"table\", where: …).")
        }
        return table
    }

    /// The SQL a lookup runs, and `EXPLAIN QUERY PLAN`'s details of it
    /// (one line per step: `SEARCH customer USING INDEX customer_email_index (email_index=?)`).
    public func queryPlan<T: TableRecord>(_ type: T.Type, where lookup: BlindIndexLookup) throws -> (sql: String, plan: [String]) {
        let query = try BlindIndexQuery(T.self, lookup, on: self)
        let plan = try fetchAll(sql: "EXPLAIN QUERY PLAN " + query.sql, arguments: StatementArguments(values: query.arguments()))
            .map { try $0.decode(String.self, column: "detail") }
        return (query.sql, plan)
    }
}

/// A lookup made SQL, with what its rows are checked against.
struct BlindIndexQuery {
    /// The index, its keys and the SQL, made once per shape and connection.
    let compiled: Compiled
    /// The lookup's values, transformed; empty when one is NULL (no row
    /// holds a NULL index value: the lookup finds nothing).
    let probe: [DatabaseValue]
    /// The values of the ordering columns of the row to continue after.
    let after: [DatabaseValue]?
    let transform: SealingTransform

    var sql: String { compiled.sql }

    /// What the SQL depends on: compiled once per connection. Names are
    /// compared by their bytes, as SQLite compares them (Swift's `==` takes
    /// "é" and "e" + U+0301 for one string: two tables, for SQLite).
    struct Shape: Hashable {
        let table: ExactText, index: ExactText, orderBy: [ExactText], descending: Bool, after: Bool, isDeterministicColumn: Bool

        init(table: String, lookup: BlindIndexLookup) {
            isDeterministicColumn = lookup.isDeterministicColumn
            self.table = ExactText(table)
            index = ExactText(lookup.index)
            orderBy = lookup.orderBy.map(ExactText.init)
            descending = lookup.descending
            after = lookup.afterValues != nil
        }
    }

    /// A shape's index, keys and SQL, checked and made once: a class, so
    /// that each lookup shares it rather than copying its parts.
    final class Compiled {
        /// The shape's parts, read in place by ``matches(table:_:)``.
        private let table: ExactText, indexName: ExactText, orderBy: [ExactText], descending: Bool, after: Bool
        /// The deterministic column a ``BlindIndexLookup/column(_:equals:)``
        /// compares envelopes of (then `index` stands for it, and nothing is
        /// transformed).
        let deterministicColumn: SealedColumn?
        /// The number of the index's columns (a lookup gives one value each).
        let partCount: Int
        let index: BlindIndex
        let keys: FieldCipher.IndexKeys
        let sql: String
        /// The index's columns, whose positions `positions(in:)` finds.
        let columns: [String]
        /// Whether the index is one column that transforms nothing: a
        /// candidate's value is compared as stored, with no arrays.
        let comparesStored: Bool
        /// Whether the index is a sealed column's own (`indexed`), whose
        /// value ``FieldCipher/blindIndex(ofTransformed:for:keys:keyID:)`` computes.
        let isColumnIndex: Bool
        /// A declared index's value's size: key id and tag.
        let valueByteCount: Int
        /// Where `columns` are in the statement's rows, for the layout they
        /// were found in (a statement prepared again may have others).
        private var positions: (layout: RowLayout, columns: [Int32?])?

        init(shape: Shape, index: BlindIndex, keys: FieldCipher.IndexKeys, sql: String, deterministicColumn: SealedColumn? = nil) {
            self.deterministicColumn = deterministicColumn
            table = shape.table
            indexName = shape.index
            orderBy = shape.orderBy
            descending = shape.descending
            after = shape.after
            partCount = index.parts.count
            self.index = index
            self.keys = keys
            self.sql = sql
            columns = index.parts.map(\.column)
            comparesStored = index.parts.count == 1 && index.parts[0].transformations.isEmpty
            isColumnIndex = index.isColumnIndex
            valueByteCount = 4 + index.tagByteCount
        }

        /// Whether `lookup` on `table` has this shape, without making one
        /// (the common lookup: no order, no page).
        func matches(table: String, _ lookup: BlindIndexLookup) -> Bool {
            guard descending == lookup.descending, after == (lookup.afterValues != nil), orderBy.count == lookup.orderBy.count,
                  (deterministicColumn != nil) == lookup.isDeterministicColumn,
                  self.table == ExactText(table), indexName == ExactText(lookup.index) else { return false }
            for (a, b) in zip(orderBy, lookup.orderBy) where a != ExactText(b) { return false }
            return true
        }

        /// The statement column of each of the index's columns in rows of
        /// `layout` (nil: not selected), found as a record finds its
        /// properties' (``RowLayout/index(of:)``, SQLite's rules): the
        /// value checked is the value the record is made of.
        func positions(in layout: RowLayout) -> [Int32?] {
            if let positions, positions.layout === layout { return positions.columns }
            let found = columns.map { column in layout.index(of: column).map(Int32.init) }
            positions = (layout, found)
            return found
        }
    }

    init<T: TableRecord>(_ type: T.Type, _ lookup: BlindIndexLookup, on db: Connection) throws {
        try self.init(table: T.databaseTableName, lookup, on: db)
    }

    init(table: String, _ lookup: BlindIndexLookup, on db: Connection) throws {
        guard let transform = db.columnTransform as? SealingTransform else {
            throw FieldError(.misuse, "This connection seals no column: configure it with Configuration.seal(_:indexes:keyring:) to look rows up through a blind index.", table: table)
        }
        let compiled: Compiled
        if let last = transform.lastLookup, last.matches(table: table, lookup) {
            compiled = last
        } else {
            let shape = Shape(table: table, lookup: lookup)
            if let known = transform.lookups[shape] {
                compiled = known
            } else {
                compiled = try Self.compile(shape, transform: transform, db: db)
                transform.lookups[shape] = compiled
            }
            transform.lastLookup = compiled
        }
        // The index read in place (`let index = compiled.index` copies it,
        // each of its names and parts retained).
        guard lookup.values.count == compiled.partCount else {
            let index = compiled.index
            throw FieldError(.misuse, "Blind index \(index.name) covers \(index.parts.count) column\(index.parts.count == 1 ? "" : "s") (\(compiled.columns.joined(separator: ", "))), and the lookup gives \(lookup.values.count) value\(lookup.values.count == 1 ? "" : "s"); give one per column, in that order.", table: index.table)
        }
        if let after = lookup.afterValues, after.count != lookup.orderBy.count {
            throw FieldError(.misuse, "A lookup continues after a row given by the values of its ordering columns: give \(lookup.orderBy.count) (\(lookup.orderBy.joined(separator: ", "))).", table: compiled.index.table)
        }
        self.compiled = compiled
        self.transform = transform
        after = lookup.afterValues
        let probe = compiled.comparesStored
            ? (lookup.values[0].isNull ? nil : lookup.values) : try compiled.index.transformed(lookup.values)
        self.probe = probe ?? []
    }

    /// Binds the probe under every key of the keyring (during a rotation,
    /// rows keep the index values of the key they were sealed under), then
    /// ``after``'s values: a declared index's value from the stack.
    func bind(_ statement: Statement) throws {
        // The index read in place from `compiled` (`index` returns a copy,
        // each of its names and parts retained).
        let compiled = compiled
        var parameter: Int32 = 0
        for keyID in transform.probeKeyIDs {
            parameter += 1
            if probe.isEmpty {
                try statement.bind(.null, at: parameter)
            } else if let column = compiled.deterministicColumn {
                try statement.bind(transform.cipher.deterministicProbe(probe[0], table: column.table, column: column.column, keyID: keyID), at: parameter)
            } else if compiled.isColumnIndex {
                try statement.bind(transform.cipher.blindIndex(ofTransformed: probe, for: compiled.index, keys: compiled.keys, keyID: keyID), at: parameter)
            } else {
                // Key id and at most 16 bytes of tag: 20 bytes on the stack.
                try withUnsafeTemporaryAllocation(byteCount: compiled.valueByteCount, alignment: 1) { buffer in
                    try transform.cipher.writeBlindIndex(ofTransformed: probe, for: compiled.index, keys: compiled.keys, keyID: keyID, into: buffer)
                    try statement.bindBlob(bytes: UnsafeRawBufferPointer(buffer), at: parameter)
                }
            }
        }
        for value in after ?? [] {
            parameter += 1
            try statement.bind(value, at: parameter)
        }
    }

    /// The arguments ``bind(_:)`` binds, as values (`EXPLAIN QUERY PLAN`).
    func arguments() throws -> [DatabaseValue] {
        var arguments: [DatabaseValue] = []
        for keyID in transform.probeKeyIDs {
            if probe.isEmpty {
                arguments.append(.null)
            } else if let column = compiled.deterministicColumn {
                arguments.append(try transform.cipher.deterministicProbe(probe[0], table: column.table, column: column.column, keyID: keyID))
            } else {
                arguments.append(try transform.cipher.blindIndex(ofTransformed: probe, for: compiled.index, keys: compiled.keys, keyID: keyID))
            }
        }
        return arguments + (after ?? [])
    }

    /// Whether a candidate is a match: its index columns' values,
    /// transformed, equal the probe. A row whose values transform
    /// otherwise, or not at all, is a false positive (a truncated index's,
    /// or a planted index value).
    func keeps(_ row: RowView) -> Bool {
        // An envelope equal to a probe, byte for byte (SQLite compared them): no false positive.
        if compiled.deterministicColumn != nil { return true }
        let positions = compiled.positions(in: row.layout)
        if compiled.comparesStored {
            guard let probe = probe.first, let position = positions[0] else { return false }
            return BlindIndex.same(row.value(at: position), probe)
        }
        return matches(positions.map { $0.map(row.value(at:)) ?? .null })
    }

    /// Whether the index columns' `stored` values, transformed, equal the probe.
    private func matches(_ stored: [DatabaseValue]) -> Bool {
        if compiled.comparesStored {
            guard let probe = probe.first else { return false }
            return BlindIndex.same(stored[0], probe)
        }
        guard let transformed = try? compiled.index.transformed(stored) else { return false }
        return BlindIndex.matches(transformed, probe)
    }

    /// The same for a row read whole (its index columns found by name, as a
    /// record's properties are): those in `undeclared` are still sealed in
    /// the row, and opened here (a value that does not open is no match).
    func keeps(_ row: Row, opening undeclared: [String], of table: String) -> Bool {
        if compiled.deterministicColumn != nil { return true }
        var stored: [DatabaseValue] = []
        for column in compiled.columns {
            var value = row[column] ?? .null
            if undeclared.contains(where: { $0.sqliteFolded == column.sqliteFolded }) {
                let key = transform.bindsToRowKey(column, of: table) == true ? (transform.declaredRowKey(of: table) ?? []).map { row[$0] ?? .null } : []
                guard let opened = try? transform.open(value, column: column, table: table, context: key) else { return false }
                value = opened
            }
            stored.append(value)
        }
        return matches(stored)
    }

    /// The SQL of a shape, after checking the index, its columns and the order.
    private static func compile(_ shape: Shape, transform: SealingTransform, db: Connection) throws -> Compiled {
        let table = shape.table.text
        let indexes = transform.indexes[table.sqliteFolded] ?? []
        var deterministic: SealedColumn?
        if shape.isDeterministicColumn {
            guard let column = transform.sealedColumn(shape.index.text, of: table), column.mode == .deterministic else {
                throw FieldError(.misuse, "\(table).\(shape.index.text) is not a deterministic sealed column of this connection: only a deterministic column is looked up by its value (.column); look a randomized or indexed one up through a blind index (.index).", table: table, column: shape.index.text)
            }
            deterministic = column
        }
        guard let index = deterministic.map({ BlindIndex($0.column, on: $0.column, in: $0.table) })
                ?? indexes.first(where: { $0.name.sqliteFolded == shape.index.text.sqliteFolded }) else {
            let known = indexes.map(\.name)
            throw FieldError(.misuse, "\(table) has no blind index \(shape.index.text) on this connection (it has \(known.isEmpty ? "none" : known.joined(separator: ", "))); declare it with Configuration.seal(_:indexes:keyring:).", table: table)
        }
        let orderBy = shape.orderBy.map(\.text)
        for column in orderBy where transform.isSealed(column, of: table) {
            throw FieldError(.misuse, "\(table).\(column) is sealed: its envelopes have no order to sort by. Order by a plain column (the primary key, say).", table: table, column: column)
        }
        if shape.after && orderBy.isEmpty {
            throw FieldError(.misuse, "A lookup continues after a row given by the values of its ordering columns: order it (ordered(by:)) first.", table: table)
        }
        if shape.after {
            // (a, b) > (?, ?) is never true of a NULL: a page after would skip rows.
            let info = try db.fetchAll(sql: "PRAGMA main.table_info(\(SQLScript.quotedIdentifier(table)))")
            let keyed = try info.filter { try $0.decode(Int.self, column: "pk") > 0 }
            for column in orderBy {
                guard let row = try info.first(where: { try $0.decode(String.self, column: "name").sqliteFolded == column.sqliteFolded }) else { continue }
                let pk = try row.decode(Int.self, column: "pk"), type = try row.decode(String.self, column: "type")
                let isRowid = keyed.count == 1 && pk == 1 && type.asciiUppercased == "INTEGER"
                if try row.decode(Int.self, column: "notnull") == 0 && !isRowid {
                    throw FieldError(.misuse, "\(table).\(column) may be NULL, and a page after a row compares the ordering columns' values, which skips the rows where one is NULL. Continue pages by NOT NULL columns (the primary key, say).", table: table, column: column)
                }
            }
        }
        let quoted = SQLScript.quotedIdentifier
        let probes = transform.probeKeyIDs.count
        var sql = "SELECT * FROM main.\(quoted(table)) WHERE \(quoted(index.name)) " + (probes == 1 ? "= ?" : "IN (\(Array(repeating: "?", count: probes).joined(separator: ", ")))")
        if shape.after {
            let columns = orderBy.map(quoted)
            let left = columns.count == 1 ? columns[0] : "(\(columns.joined(separator: ", ")))"
            let right = columns.count == 1 ? "?" : "(\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            sql += " AND \(left) \(shape.descending ? "<" : ">") \(right)"
        }
        if !orderBy.isEmpty {
            sql += " ORDER BY " + orderBy.map { quoted($0) + (shape.descending ? " DESC" : "") }.joined(separator: ", ")
        }
        return Compiled(shape: shape, index: index, keys: transform.cipher.indexKeys(index), sql: sql, deterministicColumn: deterministic)
    }
}
