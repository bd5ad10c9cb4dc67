public import Strongroom
public import StrongroomFields

/// A set of tables: the model an app declares (from `@Table` types or
/// written by hand), or the schema a database holds.
///
/// ```swift
/// let model = DatabaseSchema(Artist.self, Album.self, Track.self)
/// try model.sql.write(toFile: "Migrations/schema.sql", atomically: true, encoding: .utf8)
///
/// try queue.read { db in try model.validate(db) }   // after migrating
/// ```
public struct DatabaseSchema: Sendable, Hashable {
    /// The tables, sorted by name.
    public private(set) var tables: [TableDefinition]
    /// For a schema read from a database: each table's `CREATE TABLE` as
    /// SQLite keeps it, by folded name, so a plan can tell what a rebuild
    /// from the model would drop. Not part of equality.
    var createTableSQL: [FoldedName: String] = [:]

    /// Schemas are equal when their tables are.
    public static func == (a: DatabaseSchema, b: DatabaseSchema) -> Bool { a.tables == b.tables }

    /// Hashes the tables.
    public func hash(into hasher: inout Hasher) { hasher.combine(tables) }

    /// A schema of `tables`.
    public init(tables: [TableDefinition]) {
        self.tables = tables.sorted { $0.name.sqliteFolded.scalars.lexicographicallyPrecedes($1.name.sqliteFolded.scalars) }
    }

    /// The schema of the tables of `types`.
    public init(_ types: any TableModel.Type...) {
        self.init(types)
    }

    /// The schema of the tables of `types`.
    public init(_ types: [any TableModel.Type]) {
        self.init(tables: types.map { $0.tableDefinition })
    }

    /// The table called `name`, if any.
    public func table(_ name: String) -> TableDefinition? {
        tables.first { $0.name.sqliteFolded == name.sqliteFolded }
    }

    /// Every sealed column, as `Configuration.seal(_:keyring:rowKeys:)` takes them.
    public var sealedColumns: [SealedColumn] { tables.flatMap(\.sealedColumns) }

    /// The row key of each table with sealed columns (its declared primary
    /// key), as `Configuration.seal(_:keyring:rowKeys:)` takes them.
    public var rowKeys: [String: [String]] {
        tables.reduce(into: [:]) { keys, table in keys.merge(table.rowKeys) { first, _ in first } }
    }

    /// Every blind index beyond the indexed columns' own.
    public var blindIndexes: [BlindIndex] { tables.flatMap(\.blindIndexes) }
}

extension DatabaseSchema {
    /// The text after the top-level WHERE of an index's CREATE INDEX.
    static func whereClause(ofIndex index: String, in db: Connection) throws(StrongroomError) -> String? {
        guard let sql = try db.fetchOne(String.self, sql: "SELECT sql FROM main.sqlite_master WHERE type = 'index' AND name = ?", arguments: [index]) else { return nil }
        let tokens = SQLTokenizer.tokenize(sql)
        var depth = 0
        for token in tokens {
            if token.kind == .punctuation && token.text == "(" { depth += 1 }
            if token.kind == .punctuation && token.text == ")" { depth -= 1 }
            if depth == 0 && token.isKeyword("WHERE") {
                let scalars = Array(sql.unicodeScalars)
                var rest = ""
                rest.unicodeScalars.append(contentsOf: scalars[token.range.upperBound...])
                return SQLScript.normalized(rest)
            }
        }
        return nil
    }

    /// The tables and indexes of the main database of `db`, read from
    /// SQLite's own account of them (`PRAGMA table_info`, `index_list`,
    /// `foreign_key_list`), and which columns are sealed (from the sealed
    /// columns' registry). Strongroom's own tables are left out.
    public static func read(from db: Connection) throws(StrongroomError) -> DatabaseSchema {
        let names = try db.tableNames().filter { !$0.lowercased().hasPrefix("strongroom_") }
        let sealed = try SealedColumnRegistry.columns(in: db)
        let blindIndexes: [BlindIndex]
        do {
            blindIndexes = try BlindIndexRegistry.entries(in: db).map(\.index).filter { !$0.isIndexedColumnsOwn }
        } catch let error as StrongroomError {
            throw error
        } catch {
            throw StrongroomError(.misuse, "\(error)", path: db.path)
        }
        var tables: [TableDefinition] = []
        var sql: [FoldedName: String] = [:]
        for name in names {
            var table = try readTable(name, sealed: sealed.filter { $0.table.sqliteFolded == name.sqliteFolded }, db: db)
            table.blindIndexes = blindIndexes.filter { $0.table.sqliteFolded == name.sqliteFolded }
            tables.append(table)
            sql[name.sqliteFolded] = try db.fetchOne(String.self, sql: "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", arguments: [name])
        }
        var schema = DatabaseSchema(tables: tables)
        schema.createTableSQL = sql
        return schema
    }

    private static func readTable(_ name: String, sealed: [SealedColumn], db: Connection) throws(StrongroomError) -> TableDefinition {
        let quoted = SQLScript.quotedIdentifier(name)
        var columns: [ColumnDefinition] = []
        var keyed: [(position: Int, name: String)] = []
        for row in try db.fetchAll(sql: "PRAGMA table_info(\(quoted))") {
            let column = try row.decode(String.self, column: "name")
            let seal = sealed.first { $0.column.sqliteFolded == column.sqliteFolded }
            columns.append(ColumnDefinition(column, type: try row.decode(String.self, column: "type"),
                                            notNull: try row.decode(Int.self, column: "notnull") != 0,
                                            defaultSQL: try row.decode(String?.self, column: "dflt_value"),
                                            sealing: seal?.mode, sealedIndexColumn: seal?.indexColumn))
            let position = try row.decode(Int.self, column: "pk")
            if position > 0 { keyed.append((position, column)) }
        }
        var uniqueKeys: [[String]] = []
        var indexes: [IndexDefinition] = []
        for row in try db.fetchAll(sql: "PRAGMA index_list(\(quoted))") {
            let index = try row.decode(String.self, column: "name")
            let origin = try row.decode(String.self, column: "origin")
            let indexed = try db.fetchAll(sql: "PRAGMA index_info(\(SQLScript.quotedIdentifier(index)))")
                .sorted { (try? $0.decode(Int.self, column: "seqno")) ?? 0 < (try? $1.decode(Int.self, column: "seqno")) ?? 0 }
            var indexColumns: [String] = []
            for column in indexed { indexColumns.append(try column.decode(String?.self, column: "name") ?? "<expression>") }
            switch origin {
            case "u":
                // One key per set of columns, and none that is the primary
                // key's: two indexes differ in SQLite by their collations,
                // which the model does not hold (see `TableDefinition.distinctUniqueKeys`).
                let folded = indexColumns.map(\.sqliteFolded)
                if folded != keyed.sorted(by: { $0.position < $1.position }).map(\.name.sqliteFolded),
                   !uniqueKeys.contains(where: { $0.map(\.sqliteFolded) == folded }) {
                    uniqueKeys.append(indexColumns)
                }
            case "c":
                // A partial index (PRAGMA index_list's `partial`, SQLite 3.8.9): the expression after its WHERE.
                var isPartial = false
                if row.columnNames.contains("partial") { isPartial = try row.decode(Int.self, column: "partial") != 0 }
                let condition = isPartial ? try Self.whereClause(ofIndex: index, in: db) : nil
                indexes.append(IndexDefinition(index, columns: indexColumns, unique: try row.decode(Int.self, column: "unique") != 0, whereSQL: condition))
            default: break   // "pk": the primary key, read from table_info
            }
        }
        var foreignKeys: [Int: ForeignKeyDefinition] = [:]
        for row in try db.fetchAll(sql: "PRAGMA foreign_key_list(\(quoted))") {
            let id = try row.decode(Int.self, column: "id")
            let from = try row.decode(String.self, column: "from")
            let to = try row.decode(String?.self, column: "to")
            if foreignKeys[id] == nil {
                foreignKeys[id] = ForeignKeyDefinition(
                    [], references: try row.decode(String.self, column: "table"),
                    onDelete: ForeignKeyAction(rawValue: try row.decode(String.self, column: "on_delete")) ?? .noAction,
                    onUpdate: ForeignKeyAction(rawValue: try row.decode(String.self, column: "on_update")) ?? .noAction)
            }
            foreignKeys[id]!.columns.append(from)
            if let to { foreignKeys[id]!.referencedColumns.append(to) }
        }
        return TableDefinition(name, columns: columns, primaryKey: keyed.sorted { $0.position < $1.position }.map(\.name),
                               uniqueKeys: uniqueKeys.sorted { $0.joined(separator: ",") < $1.joined(separator: ",") },
                               foreignKeys: foreignKeys.keys.sorted().reversed().map { foreignKeys[$0]! },
                               indexes: indexes.sorted { $0.name < $1.name })
    }
}
