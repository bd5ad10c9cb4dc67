import Foundation

/// SQL text cut into tokens the way SQLite's tokenizer cuts it, without a
/// database: enough to compare two statements as SQL (not as bytes) and to
/// find the function calls a statement's own text makes.
///
/// Whitespace and comments are dropped. Words and quoted identifiers are
/// folded to ASCII lower case (SQLite's names are case-insensitive in ASCII);
/// string and blob literals, numbers and parameters are kept as written.
struct SQLTokens {
    enum Kind: Equatable {
        /// A bare word (a keyword or a name), or a quoted identifier: its
        /// name, folded.
        case name
        case string
        case blob
        case number
        case parameter
        /// Any other character (operators and punctuation, one at a time).
        case symbol
    }

    struct Token: Equatable {
        let kind: Kind
        /// The folded name, the literal as written, or the symbol.
        let text: String
        /// Where the token ends in the text's UTF-8 bytes.
        let end: Int
        static func == (a: Token, b: Token) -> Bool { a.kind == b.kind && a.text == b.text }
    }

    let tokens: [Token]

    init(_ sql: String) {
        let bytes = Array(sql.utf8)
        var tokens: [Token] = []
        var i = 0
        func isNameByte(_ b: UInt8) -> Bool {
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x5F || b == 0x24 || b >= 0x80
        }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        func folded(_ range: Range<Int>) -> String {
            String(decoding: bytes[range].map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        /// The end of a quoted run starting at `start` (a doubled closing
        /// quote is an escaped one, except for `]`).
        func quotedEnd(_ start: Int, close: UInt8) -> Int {
            var j = start + 1
            while j < bytes.count {
                if bytes[j] == close {
                    if close != UInt8(ascii: "]"), j + 1 < bytes.count, bytes[j + 1] == close { j += 2; continue }
                    return j + 1
                }
                j += 1
            }
            return bytes.count
        }
        while i < bytes.count {
            let c = bytes[i]
            let next: UInt8? = i + 1 < bytes.count ? bytes[i + 1] : nil
            switch c {
            case 0x20, 0x09, 0x0A, 0x0C, 0x0D:
                i += 1
            case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
                while i < bytes.count && bytes[i] != 0x0A { i += 1 }
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                i += 2
                while i < bytes.count && !(bytes[i] == UInt8(ascii: "*") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i = min(i + 2, bytes.count)
            case UInt8(ascii: "'"):
                let end = quotedEnd(i, close: c)
                tokens.append(Token(kind: .string, text: text(i..<end), end: end))
                i = end
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let end = quotedEnd(i, close: c == UInt8(ascii: "[") ? UInt8(ascii: "]") : c)
                let inner = (i + 1)..<max(i + 1, end - 1)
                let quote = String(UnicodeScalar(c == UInt8(ascii: "[") ? UInt8(ascii: "]") : c))
                tokens.append(Token(kind: .name, text: folded(inner).replacingOccurrences(of: quote + quote, with: quote), end: end))
                i = end
            case _ where c | 0x20 == UInt8(ascii: "x") && next == UInt8(ascii: "'"):
                let end = quotedEnd(i + 1, close: UInt8(ascii: "'"))
                tokens.append(Token(kind: .blob, text: folded(i..<end), end: end))
                i = end
            case _ where (0x30...0x39).contains(c) || (c == UInt8(ascii: ".") && next.map({ (0x30...0x39).contains($0) }) ?? false):
                var j = i + 1
                while j < bytes.count {
                    let b = bytes[j]
                    if isNameByte(b) || b == UInt8(ascii: ".") { j += 1; continue }
                    // An exponent's sign: 1e-5.
                    if (b == UInt8(ascii: "-") || b == UInt8(ascii: "+")), bytes[j - 1] | 0x20 == UInt8(ascii: "e") { j += 1; continue }
                    break
                }
                tokens.append(Token(kind: .number, text: folded(i..<j), end: j))
                i = j
            case UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"):
                var j = i + 1
                while j < bytes.count && isNameByte(bytes[j]) { j += 1 }
                tokens.append(Token(kind: .parameter, text: text(i..<j), end: j))
                i = j
            default:
                if isNameByte(c) {
                    var j = i + 1
                    while j < bytes.count && isNameByte(bytes[j]) { j += 1 }
                    tokens.append(Token(kind: .name, text: folded(i..<j), end: j))
                    i = j
                } else {
                    tokens.append(Token(kind: .symbol, text: text(i..<(i + 1)), end: i + 1))
                    i += 1
                }
            }
        }
        self.tokens = tokens
    }

    /// True when the text gives a column list to a SELECT that takes `*`
    /// (`WITH c(a, b) AS (SELECT * …)`, `CREATE VIEW v(a, b) AS SELECT * …`):
    /// the names then follow the table's column order, not its names. (Any
    /// `name(…) AS (` together with a `*` that starts a result column or
    /// follows a `.` in one: a cautious reading, which may see one where a
    /// `*` belongs to another SELECT of the text.)
    var columnListOverStar: Bool {
        func symbol(_ i: Int, _ s: String) -> Bool { i >= 0 && i < tokens.count && tokens[i].kind == .symbol && tokens[i].text == s }
        func word(_ i: Int, _ w: String) -> Bool { i >= 0 && i < tokens.count && tokens[i].kind == .name && tokens[i].text == w }
        var hasColumnList = false
        for (i, token) in tokens.enumerated() where token.kind == .name && symbol(i + 1, "(") {
            // name ( a , b ) AS (
            var j = i + 2
            while j < tokens.count, tokens[j].kind == .name || symbol(j, ",") { j += 1 }
            if symbol(j, ")") && word(j + 1, "as") && (symbol(j + 2, "(") || word(j + 2, "select")) { hasColumnList = true; break }
        }
        guard hasColumnList else { return false }
        for (i, token) in tokens.enumerated() where token.kind == .symbol && token.text == "*" {
            if word(i - 1, "select") || word(i - 1, "distinct") || word(i - 1, "all") || symbol(i - 1, ",") || symbol(i - 1, ".") { return true }
        }
        return false
    }

    /// How many times the text calls `function` (a name, then `(`), with
    /// `function` in ASCII lower case. Mentions in literals and comments,
    /// and names not followed by `(`, do not count.
    func calls(of function: String) -> Int {
        var count = 0
        for (index, token) in tokens.enumerated() where token.kind == .name && token.text == function {
            if index + 1 < tokens.count, tokens[index + 1].kind == .symbol, tokens[index + 1].text == "(" { count += 1 }
        }
        return count
    }
}

/// A `CREATE VIEW` statement, cut where SQLite cuts it: the view's name,
/// its optional column list, and the SELECT after `AS`.
struct ViewDefinition {
    /// The view's name, folded.
    let name: String
    /// What follows the name (the column list, `AS`, the SELECT), as tokens,
    /// without trailing semicolons: the view's meaning. SQLite stores
    /// `CREATE VIEW ` and the text from the name on, so `TEMP`, `IF NOT
    /// EXISTS` and a schema name are not part of it.
    let body: [SQLTokens.Token]
    /// The SQL of a query whose rows and columns are the view's.
    let query: String
    /// True for a column list over a `SELECT *` (see `SQLTokens.columnListOverStar`).
    let columnListOverStar: Bool

    init?(_ sql: String) {
        let tokens = SQLTokens(sql).tokens
        var i = 0
        func word(_ w: String) -> Bool {
            guard i < tokens.count, tokens[i].kind == .name, tokens[i].text == w else { return false }
            i += 1
            return true
        }
        guard word("create") else { return nil }
        _ = word("temp") || word("temporary")
        guard word("view") else { return nil }
        if word("if") { guard word("not"), word("exists") else { return nil } }
        guard i < tokens.count, tokens[i].kind == .name else { return nil }
        var name = tokens[i].text
        i += 1
        if i + 1 < tokens.count, tokens[i] == SQLTokens.Token(kind: .symbol, text: ".", end: 0), tokens[i + 1].kind == .name {
            name = tokens[i + 1].text
            i += 2
        }
        self.name = name
        self.columnListOverStar = SQLTokens(sql).columnListOverStar
        var body = Array(tokens[i...])
        while body.last?.kind == .symbol && body.last?.text == ";" { body.removeLast() }
        self.body = body
        // The column list, if any, then AS and the SELECT.
        let bytes = Array(sql.utf8)
        var columnList: String?
        if i < tokens.count, tokens[i].kind == .symbol, tokens[i].text == "(" {
            var depth = 0
            let open = i
            while i < tokens.count {
                if tokens[i].kind == .symbol && tokens[i].text == "(" { depth += 1 }
                if tokens[i].kind == .symbol && tokens[i].text == ")" { depth -= 1; if depth == 0 { break } }
                i += 1
            }
            guard i < tokens.count else { return nil }
            let start = tokens[open].end - 1
            columnList = String(decoding: bytes[start..<tokens[i].end], as: UTF8.self)
            i += 1
        }
        guard word("as"), i < tokens.count else { return nil }
        var end = bytes.count
        if let lastSemicolon = tokens.last(where: { $0.kind != .symbol || $0.text != ";" }) { end = lastSemicolon.end }
        let select = String(decoding: bytes[tokens[i - 1].end..<end], as: UTF8.self)
        if let columnList {
            query = "WITH strongroom_declared_view\(columnList) AS (\(select)) SELECT * FROM strongroom_declared_view"
        } else {
            query = "SELECT * FROM (\(select))"
        }
    }
}
