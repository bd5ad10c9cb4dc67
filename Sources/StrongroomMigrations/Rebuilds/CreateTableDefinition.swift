import Strongroom

/// A `CREATE TABLE` statement split into its column definitions and table
/// constraints, each kept as written, so it can be rewritten and reassembled.
struct CreateTableDefinition {
    struct Item {
        /// The text as written.
        var text: String
        /// The column name, or nil for a table constraint.
        var column: String?
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
        guard i + 1 < tokens.count, let name = tokens[i].identifier, tokens[i + 1].text == "(" else { return nil }
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
                    items.append(Self.item(sql.scalars(itemStart..<token.range.lowerBound), first: itemFirstToken))
                    closing = token.range.upperBound
                    break
                }
                depth -= 1
            }
            if token.text == "," && depth == 0 {
                items.append(Self.item(sql.scalars(itemStart..<token.range.lowerBound), first: itemFirstToken))
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

    private static func item(_ text: String, first: SQLToken?) -> Item {
        let trimmed = text.trimmingWhitespaceAndSemicolon()
        guard let first else { return Item(text: trimmed, column: nil) }
        let constraintWords = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
        if first.kind == .word && constraintWords.contains(first.text.uppercased()) {
            return Item(text: trimmed, column: nil)
        }
        return Item(text: trimmed, column: first.identifier)
    }

    /// The column names, in order.
    var columns: [String] { items.compactMap(\.column) }

    /// The table constraints (PRIMARY KEY (…), FOREIGN KEY …, …).
    var constraints: [String] { items.filter { $0.column == nil }.map(\.text) }

    /// True when a column is `INTEGER PRIMARY KEY AUTOINCREMENT`.
    var usesAutoincrement: Bool {
        items.contains { item in SQLTokenizer.tokenize(item.text).contains { $0.isKeyword("AUTOINCREMENT") } }
    }

    /// The statement for a table named `name` with these items.
    func sql(named name: String) -> String {
        let body = items.map(\.text).joined(separator: ", ")
        return "CREATE TABLE \(SQLScript.quotedIdentifier(name)) (\(body))" + (suffix.isEmpty ? "" : " " + suffix)
    }
}

extension String {
    func trimmingWhitespaceAndSemicolon() -> String {
        var scalars = Substring(self).unicodeScalars
        while let last = scalars.last, last.properties.isWhitespace || last == ";" { scalars.removeLast() }
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        return String(scalars)
    }

    /// `self` with every identifier token naming `old` replaced by `new` (quoted),
    /// from scalar offset `start` on. String literals are left alone.
    func renamingIdentifier(_ old: String, to new: String, from start: Int = 0) -> String {
        var result = ""
        var position = 0
        let all = Array(unicodeScalars)
        for token in SQLTokenizer.tokenize(self) where token.range.lowerBound >= start && token.kind != .string && token.names(old) {
            result.unicodeScalars.append(contentsOf: all[position..<token.range.lowerBound])
            result += SQLScript.quotedIdentifier(new)
            position = token.range.upperBound
        }
        result.unicodeScalars.append(contentsOf: all[position..<all.count])
        return result
    }

    /// True when an identifier token names `name` from scalar offset `start` on.
    func mentionsIdentifier(_ name: String, from start: Int = 0) -> Bool {
        SQLTokenizer.tokenize(self).contains { $0.range.lowerBound >= start && $0.kind != .string && $0.names(name) }
    }
}
