import Strongroom

/// The schema objects of the main database, in creation order, with the
/// columns of every table and view: what a rebuild saves, rewrites and
/// recreates.
struct SchemaCatalog {
    struct Object {
        enum Kind: String { case table, index, view, trigger }
        let kind: Kind
        let name: String
        /// The table (or view) an index or trigger belongs to; a table's or view's own name.
        let tableName: String
        let sql: String

        /// Kind and folded name: a trigger may share its name with a table.
        var key: Key { Key(kind: kind, name: name.sqliteFolded) }

        struct Key: Hashable {
            let kind: Kind
            let name: FoldedName
        }
    }

    /// Objects with SQL (not automatic indexes), by `rowid` of `sqlite_master`:
    /// the order in which they can be created again.
    let objects: [Object]
    private var columnsByName: [FoldedName: [String]] = [:]

    init(_ db: Connection) throws {
        objects = try db.fetchAll(sql: """
            SELECT type, name, tbl_name, sql FROM main.sqlite_master
            WHERE sql IS NOT NULL AND type IN ('table', 'index', 'view', 'trigger') ORDER BY rowid
            """).compactMap { row in
            guard let kind = Object.Kind(rawValue: try row.decode(String.self, at: 0)) else { return nil }
            return Object(kind: kind, name: try row.decode(String.self, at: 1), tableName: try row.decode(String.self, at: 2), sql: try row.decode(String.self, at: 3))
        }
        for object in objects where object.kind == .table || object.kind == .view {
            // PRAGMA table_info gives a view's column names as SQLite computes them.
            let columns = try db.fetchAll(sql: "PRAGMA table_info(\(SQLScript.quotedIdentifier(object.name)))")
                .map { try $0.decode(String.self, column: "name") }
            columnsByName[object.name.sqliteFolded] = columns
        }
    }

    /// The table or view called `name` (SQLite compares names without case).
    func object(named name: String) -> Object? {
        objects.first { ($0.kind == .table || $0.kind == .view) && $0.name.sqliteFolded == name.sqliteFolded }
    }

    /// The columns of the table or view called `name`, nil when there is none.
    func columns(of name: String) -> [String]? {
        columnsByName[name.sqliteFolded]
    }

    /// Indexes, triggers and views that must be dropped before `tables` are
    /// rebuilt and created again after, in creation order: the tables'
    /// indexes and triggers, every view or trigger whose SQL names one of
    /// them, and so on through views over views (and triggers on those views).
    ///
    /// Dropping them all first is what makes a rebuild work on SQLite 3.26 and
    /// later too, where `ALTER TABLE … RENAME` re-checks every view and
    /// trigger in the schema and fails on one that names a dropped table.
    func dependents(of tables: [String]) -> [Object] {
        var names = Set(tables.map { $0.sqliteFolded })
        var chosen = Set<FoldedName>()
        // The names each view and trigger mentions (an index can only use its
        // own table's columns).
        let mentioned = objects.map { object in
            // A 'string' counts: SQLite takes one for a table's name in FROM.
            object.kind == .index || object.kind == .table ? [] : Set(SQLTokenizer.tokenize(object.sql).compactMap { $0.name?.sqliteFolded })
        }
        var grew = true
        while grew {
            grew = false
            for (object, mentions) in zip(objects, mentioned) where object.kind != .table && !chosen.contains(object.name.sqliteFolded) {
                if names.contains(object.tableName.sqliteFolded) || !mentions.isDisjoint(with: names) {
                    chosen.insert(object.name.sqliteFolded)
                    if object.kind == .view { names.insert(object.name.sqliteFolded) }
                    grew = true
                }
            }
        }
        // Triggers on one table fire in an order that follows their creation:
        // recreating one means recreating all of that table's, in order.
        let tablesWithChosenTriggers = Set(objects.filter { $0.kind == .trigger && chosen.contains($0.name.sqliteFolded) }.map(\.tableName.sqliteFolded))
        return objects.filter { object in
            object.kind != .table && (chosen.contains(object.name.sqliteFolded)
                || (object.kind == .trigger && tablesWithChosenTriggers.contains(object.tableName.sqliteFolded)))
        }
    }
}
