import Strongroom

/// A `CREATE TABLE` statement split into its column definitions and table
/// constraints, each kept as written, so it can be rewritten and reassembled.
struct CreateTableDefinition {
    struct Item {
        /// The text as written.
        var text: String
        /// The column name, or nil for a table constraint.
        var column: String?
        /// Where the item stands in the statement (unicode scalar offsets).
        var range: Range<Int> = 0..<0
    }

    /// `CREATE TABLE name (` up to (not including) the name; the name; then the rest.
    let table: String
    var items: [Item]
    /// What follows the closing parenthesis (`WITHOUT ROWID`, …).
    let suffix: String

    /// Parses `sql`; nil for `CREATE TABLE … AS SELECT` or text that is not a CREATE TABLE.
    init?(_ sql: String) {
        let tokens = SQLTokenizer.tokenize(sql)
        guard tokens.count > 3, tokens[0].isKeyword("CREATE") else { return nil }
        var i = 1
        while i < tokens.count && (tokens[i].isKeyword("TEMP") || tokens[i].isKeyword("TEMPORARY")) { i += 1 }
        guard i < tokens.count, tokens[i].isKeyword("TABLE") else { return nil }
        i += 1
        if i + 2 < tokens.count, tokens[i].isKeyword("IF"), tokens[i + 1].isKeyword("NOT"), tokens[i + 2].isKeyword("EXISTS") { i += 3 }
        if i + 2 < tokens.count, tokens[i + 1].text == "." { i += 2 }
        // SQLite takes a 'string' in the table name's place for the name too.
        guard i + 1 < tokens.count, let name = tokens[i].name, tokens[i + 1].text == "(" else { return nil }
        table = name
        // Split the parenthesized body at top-level commas.
        var depth = 0
        var itemStart = tokens[i + 1].range.upperBound
        var items: [Item] = []
        var closing: Int?
        var itemFirstToken: SQLToken?
        for token in tokens[(i + 2)...] {
            if token.text == "(" { depth += 1 }
            if token.text == ")" {
                if depth == 0 {
                    items.append(Self.item(sql, itemStart..<token.range.lowerBound, first: itemFirstToken))
                    closing = token.range.upperBound
                    break
                }
                depth -= 1
            }
            if token.text == "," && depth == 0 {
                items.append(Self.item(sql, itemStart..<token.range.lowerBound, first: itemFirstToken))
                itemStart = token.range.upperBound
                itemFirstToken = nil
                continue
            }
            if itemFirstToken == nil { itemFirstToken = token }
        }
        guard let closing else { return nil }
        self.items = items
        self.suffix = sql.scalars(closing..<sql.unicodeScalars.count).trimmingWhitespaceAndSemicolon()
    }

    private static func item(_ sql: String, _ range: Range<Int>, first: SQLToken?) -> Item {
        let trimmed = sql.scalars(range).trimmingWhitespaceAndSemicolon()
        guard let first else { return Item(text: trimmed, column: nil, range: range) }
        let constraintWords = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
        if first.kind == .word && constraintWords.contains(first.text.asciiUppercased) {
            return Item(text: trimmed, column: nil, range: range)
        }
        // SQLite takes a 'string' in a column name's place for the name.
        return Item(text: trimmed, column: first.name, range: range)
    }

    /// True when a constraint qualifies a column with the table's own name
    /// (`CHECK (t.x > 0)`): the new table cannot be built under a temporary name.
    var qualifiesColumnsWithItsName: Bool {
        items.contains { item in
            let tokens = SQLTokenizer.tokenize(item.text)
            return tokens.indices.dropLast().contains { tokens[$0].kind != .string && tokens[$0].names(table) && tokens[$0 + 1].text == "." }
        }
    }

    /// True for a table declared `WITHOUT ROWID`.
    var isWithoutRowid: Bool {
        let words = SQLTokenizer.tokenize(suffix)
        return words.contains { $0.isKeyword("WITHOUT") } && words.contains { $0.isKeyword("ROWID") }
    }

    /// The column names, in order.
    var columns: [String] { items.compactMap(\.column) }

    /// True when a column is `INTEGER PRIMARY KEY AUTOINCREMENT`.
    var usesAutoincrement: Bool {
        items.contains { item in SQLTokenizer.tokenize(item.text).contains { $0.isKeyword("AUTOINCREMENT") } }
    }

    /// The statement for a table named `name` with these items.
    /// Each item on a line of its own: an item may end with a `--` comment,
    /// and then its line ends before the comma (which the comment would take).
    func sql(named name: String) -> String {
        let body = items.map { "    " + $0.text + ($0.text.contains("--") ? "\n" : "") }.joined(separator: ",\n")
        return "CREATE TABLE \(SQLScript.quotedIdentifier(name)) (\n\(body)\n)" + (suffix.isEmpty ? "" : " " + suffix)
    }
}

extension String {
    func trimmingWhitespaceAndSemicolon() -> String {
        var scalars = Substring(self).unicodeScalars
        while let last = scalars.last, last.properties.isWhitespace || last == ";" { scalars.removeLast() }
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        return String(scalars)
    }

}
