import Strongroom

/// `ALTER TABLE … DROP COLUMN` and `ALTER TABLE … RENAME COLUMN`, recognized
/// so the runner can perform them as table rebuilds on an SQLite that lacks them.
enum AlterTableRewrite: Equatable {
    case dropColumn(table: String, column: String)
    case renameColumn(table: String, from: String, to: String)

    /// The rewrite `statement` needs on `sqliteVersion`, or nil when SQLite
    /// runs it natively (or it is not such a statement).
    static func parse(_ statement: String, sqliteVersion: SQLiteVersion) -> AlterTableRewrite? {
        let tokens = SQLTokenizer.tokenize(statement).filter { !($0.kind == .punctuation && $0.text == ";") }
        guard tokens.count >= 5, tokens[0].isKeyword("ALTER"), tokens[1].isKeyword("TABLE") else { return nil }
        var i = 2
        // An optional schema name: main only (the rebuild reads main's schema);
        // another is left to SQLite.
        if tokens.count > i + 2, tokens[i + 1].text == "." {
            guard tokens[i].name?.sqliteFolded == "main".sqliteFolded else { return nil }
            i += 2
        }
        guard let table = tokens[i].name else { return nil }
        var rest = Array(tokens[(i + 1)...])
        if rest.first?.isKeyword("DROP") == true, !sqliteVersion.hasDropColumn {
            rest.removeFirst()
            if rest.first?.isKeyword("COLUMN") == true { rest.removeFirst() }
            guard rest.count == 1, let column = rest[0].name else { return nil }
            return .dropColumn(table: table, column: column)
        }
        if rest.first?.isKeyword("RENAME") == true, !sqliteVersion.hasRenameColumn {
            rest.removeFirst()
            if rest.first?.isKeyword("COLUMN") == true { rest.removeFirst() }
            // `RENAME TO new_name` renames the table, which SQLite 3.15 does itself.
            guard rest.count == 3, rest[1].isKeyword("TO"), !rest[0].isKeyword("TO"),
                  let from = rest[0].name, let to = rest[2].name else { return nil }
            return .renameColumn(table: table, from: from, to: to)
        }
        return nil
    }
}
