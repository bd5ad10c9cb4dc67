/// What the opening rules and the direct-only checks read of a statement's
/// own text, from ``SQLTokenizer``'s tokens, without a database: the
/// function calls it makes, whether it names a `SELECT *`'s columns with a
/// column list, and the text compared as SQL (not as bytes).
struct SQLTokens {
    let sql: String
    let tokens: [SQLToken]

    init(_ sql: String) {
        self.sql = sql
        self.tokens = SQLTokenizer.tokenize(sql)
    }

    /// `token` as two statements are compared: a name folded as SQLite folds
    /// names (ASCII letters only), anything else as written.
    static func compared(_ token: SQLToken) -> String {
        token.identifier.map { "name " + AuthorizerPolicy.asciiLowercased($0) } ?? token.text
    }

    private func isPunctuation(_ i: Int, _ text: String) -> Bool {
        i >= 0 && i < tokens.count && tokens[i].kind == .punctuation && tokens[i].text == text
    }

    private func isKeyword(_ i: Int, _ keyword: String) -> Bool {
        i >= 0 && i < tokens.count && tokens[i].isKeyword(keyword)
    }

    /// True when the text starts with `EXPLAIN` (which only lists a program).
    var isExplain: Bool { isKeyword(0, "EXPLAIN") }

    /// How many times the text calls `function` (a name, then `(`), with
    /// `function` in ASCII lower case. Mentions in literals and comments,
    /// and names not followed by `(`, do not count.
    func calls(of function: String) -> Int {
        tokens.indices.filter { i in
            tokens[i].identifier.map(AuthorizerPolicy.asciiLowercased) == function && isPunctuation(i + 1, "(")
        }.count
    }

    /// True when the text gives a column list to a SELECT that takes `*`
    /// (`WITH c(a, b) AS (SELECT * …)`, `CREATE VIEW v(a, b) AS SELECT * …`):
    /// the names then follow the table's column order, not its names. (Any
    /// `name(…) AS (` together with a `*` that starts a result column or
    /// follows a `.` in one: a cautious reading, which may see one where a
    /// `*` belongs to another SELECT of the text.)
    var columnListOverStar: Bool {
        let hasColumnList = tokens.indices.contains { i in
            guard tokens[i].identifier != nil, isPunctuation(i + 1, "(") else { return false }
            // name ( a , b ) AS (
            var j = i + 2
            while j < tokens.count, tokens[j].identifier != nil || isPunctuation(j, ",") { j += 1 }
            return isPunctuation(j, ")") && isKeyword(j + 1, "AS") && (isPunctuation(j + 2, "(") || isKeyword(j + 2, "SELECT"))
        }
        return hasColumnList && tokens.indices.contains { i in
            isPunctuation(i, "*") && (isKeyword(i - 1, "SELECT") || isKeyword(i - 1, "DISTINCT") || isKeyword(i - 1, "ALL")
                                      || isPunctuation(i - 1, ",") || isPunctuation(i - 1, "."))
        }
    }
}

/// A `CREATE VIEW` statement, cut where SQLite cuts it: the view's name,
/// its optional column list, and the SELECT after `AS`.
struct ViewDefinition {
    /// The view's name, folded.
    let name: ExactText
    /// What follows the name (the column list, `AS`, the SELECT), as
    /// ``SQLTokens/compared(_:)`` gives each token, without trailing
    /// semicolons: the view's meaning. SQLite stores `CREATE VIEW ` and the
    /// text from the name on, so `TEMP`, `IF NOT EXISTS` and a schema name
    /// are not part of it. Compared byte for byte: to SQLite, `'Zoë'` and
    /// the same name in NFD are two strings, which Swift's `==` takes for one.
    let body: [ExactText]
    /// The SQL of a query whose rows and columns are the view's.
    let query: String
    /// True for a column list over a `SELECT *` (see ``SQLTokens/columnListOverStar``).
    let columnListOverStar: Bool

    init?(_ sql: String) {
        let text = SQLTokens(sql)
        let tokens = text.tokens
        var i = 0
        func keyword(_ word: String) -> Bool {
            guard i < tokens.count, tokens[i].isKeyword(word) else { return false }
            i += 1
            return true
        }
        func punctuation(_ symbol: String) -> Bool { i < tokens.count && tokens[i].kind == .punctuation && tokens[i].text == symbol }
        guard keyword("CREATE") else { return nil }
        _ = keyword("TEMP") || keyword("TEMPORARY")
        guard keyword("VIEW") else { return nil }
        if keyword("IF") { guard keyword("NOT"), keyword("EXISTS") else { return nil } }
        guard i < tokens.count, var name = tokens[i].identifier else { return nil }
        i += 1
        if punctuation("."), i + 1 < tokens.count, let unqualified = tokens[i + 1].identifier {
            name = unqualified
            i += 2
        }
        self.name = ExactText(AuthorizerPolicy.asciiLowercased(name))
        var meaning = Array(tokens[i...])
        while meaning.last?.kind == .punctuation && meaning.last?.text == ";" { meaning.removeLast() }
        self.body = meaning.map { ExactText(SQLTokens.compared($0)) }
        self.columnListOverStar = text.columnListOverStar
        // The column list, if any, then AS and the SELECT.
        var columnList: String?
        if punctuation("(") {
            let open = i
            var depth = 0
            while i < tokens.count {
                if punctuation("(") { depth += 1 }
                if punctuation(")") { depth -= 1; if depth == 0 { break } }
                i += 1
            }
            guard i < tokens.count else { return nil }
            columnList = sql.scalars(tokens[open].range.lowerBound..<tokens[i].range.upperBound)
            i += 1
        }
        guard keyword("AS"), i < tokens.count, let last = meaning.last else { return nil }
        let select = sql.scalars(tokens[i - 1].range.upperBound..<last.range.upperBound)
        if let columnList {
            query = "WITH strongroom_declared_view\(columnList) AS (\(select)) SELECT * FROM strongroom_declared_view"
        } else {
            query = "SELECT * FROM (\(select))"
        }
    }
}
