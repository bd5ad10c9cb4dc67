import Strongroom

/// Reading what a virtual table keeps, for sealing in place: whether a
/// statement of the schema creates one, its module and arguments read as
/// SQLite's FTS3/4 and FTS5 read them, its shadow tables, and whether an
/// FTS index keeps its own copy of a column's terms (`content=`).
extension ColumnSealing {
    /// The suffixes of the shadow tables the module of the virtual table
    /// created by `sql` keeps its data in (`notes_content`, `notes_segdir`…):
    /// FTS3/4's, FTS5's, R-tree's and Geopoly's; none for another module.
    static func shadowSuffixes(of sql: String) -> [String] {
        switch virtualTable(sql)?.module {
        case "fts3", "fts4": return ["content", "segments", "segdir", "docsize", "stat"]
        case "fts5": return ["data", "idx", "content", "docsize", "config"]
        case "rtree", "rtree_i32", "geopoly": return ["node", "rowid", "parent"]
        default: return []
        }
    }

    /// Whether the virtual table created by `sql` may index `column` of
    /// `table` as external content: an FTS4 or FTS5 table whose `content=`
    /// option names the table, or names a view (or another table) that
    /// reads the column, as SQLite compiles a read of every column from it,
    /// or names nothing this file can read (a view dropped, a table renamed
    /// after the index was built: it keeps the terms it indexed). Which of
    /// the content's columns the index holds is not worked out from its
    /// arguments (FTS4 takes every column when none is listed, and reads a
    /// name past characters that cannot start one): any such index of the
    /// table counts. (FTS3 has no such option: there `content` is a
    /// column, and the table keeps its own copy.) The option is read as
    /// each module reads it: ``fts4Option(_:in:)``, the last one counting,
    /// and ``fts5Option(_:in:)``.
    static func indexesExternally(_ sql: String, column: String, of table: String, in db: Connection) throws -> ExternalContent? {
        guard let created = virtualTable(sql), created.module == "fts4" || created.module == "fts5" else { return nil }
        let scalars = Array(sql.unicodeScalars)
        var content: String?
        for argument in created.arguments {
            if created.module == "fts4" {
                if let (key, value) = fts4Option(argument, in: scalars), key.asciiLowercased == "content" { content = value }
            } else if let (key, value) = fts5Option(argument, in: scalars), !key.isEmpty, "content".hasPrefix(key.asciiLowercased) {
                content = value
            }
        }
        guard let content, !content.isEmpty else { return nil }
        if content.sqliteFolded == table.sqliteFolded { return .reads(content) }
        guard let reads = try? db.columnsRead(by: "SELECT * FROM main.\(SQLScript.quotedIdentifier(content))") else { return .unreadable(content) }
        return reads.contains { $0.table.sqliteFolded == table.sqliteFolded && $0.column.sqliteFolded == column.sqliteFolded } ? .reads(content) : nil
    }

    /// An FTS index's external content that counts against sealing.
    enum ExternalContent {
        /// The table, or a view or table that reads the column.
        case reads(String)
        /// A name nothing readable here answers to: gone since the index was
        /// built, or calling a function, collation or module this
        /// connection lacks.
        case unreadable(String)
    }

    /// An argument of a virtual table as FTS4 reads an option (fts3.c's
    /// `fts3IsSpecialColumn` and `sqlite3Fts3Dequote`): SQLite passes the
    /// text from the argument's first token to its last; FTS4 splits it at
    /// its first `=`, and takes what follows whole (`content=Cust Data`
    /// names "Cust Data", `content= v` names " v"), unless it starts with a
    /// quote: then only up to the closing one (`content="customer" x` names
    /// "customer"). Nil when the argument has no `=`.
    static func fts4Option(_ argument: [SQLToken], in scalars: [Unicode.Scalar]) -> (key: String, value: String)? {
        guard let first = argument.first, let last = argument.last else { return nil }
        let text = scalars[first.range.lowerBound..<last.range.upperBound]
        guard let equals = text.firstIndex(of: "=") else { return nil }
        var key = ""
        key.unicodeScalars.append(contentsOf: text[..<equals])
        let raw = text[text.index(after: equals)...]
        guard let opening = raw.first, "['\"`".unicodeScalars.contains(opening) else {
            var value = ""
            value.unicodeScalars.append(contentsOf: raw)
            return (key, value)
        }
        return (key, dequoted(raw).value)
    }

    /// An argument of a virtual table as FTS5 reads an option
    /// (fts5_config.c's `sqlite3Fts5ConfigParse`): a bare word (ASCII
    /// letters, digits, `_`, any non-ASCII character), spaces, `=`, spaces,
    /// and a bare or quoted word, nothing after it; FTS5 refuses anything
    /// else. Nil when the argument is not an option.
    static func fts5Option(_ argument: [SQLToken], in scalars: [Unicode.Scalar]) -> (key: String, value: String)? {
        guard let first = argument.first, let last = argument.last else { return nil }
        var rest = scalars[first.range.lowerBound..<last.range.upperBound]
        func isBare(_ scalar: Unicode.Scalar) -> Bool {
            !scalar.isASCII || scalar == "_" || ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        }
        func skipSpaces() { while rest.first == " " { rest = rest.dropFirst() } }
        let keyEnd = rest.firstIndex { !isBare($0) } ?? rest.endIndex
        guard keyEnd > rest.startIndex else { return nil }
        var key = ""
        key.unicodeScalars.append(contentsOf: rest[..<keyEnd])
        rest = rest[keyEnd...]
        skipSpaces()
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst()
        skipSpaces()
        guard let opening = rest.first else { return nil }
        var value = ""
        if "['\"`".unicodeScalars.contains(opening) {
            let (unquoted, end) = dequoted(rest)
            value = unquoted
            rest = rest[end...]
        } else {
            let valueEnd = rest.firstIndex { !isBare($0) } ?? rest.endIndex
            guard valueEnd > rest.startIndex else { return nil }
            value.unicodeScalars.append(contentsOf: rest[..<valueEnd])
            rest = rest[valueEnd...]
        }
        return rest.isEmpty ? (key, value) : nil
    }

    /// The text of a quoted word at the start of `text` (its first scalar
    /// a quote: `'`, `"`, `` ` ``, or `[` closed by `]`; a doubled closing
    /// quote stands for one), and where it ends; an unclosed one runs to
    /// the end, as FTS4 and FTS5 read it.
    static func dequoted(_ text: ArraySlice<Unicode.Scalar>) -> (value: String, end: Int) {
        var value = ""
        guard let opening = text.first else { return (value, text.endIndex) }
        let closing: Unicode.Scalar = opening == "[" ? "]" : opening
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let scalar = text[index]
            index = text.index(after: index)
            if scalar == closing {
                guard index < text.endIndex, text[index] == closing else { return (value, index) }
                index = text.index(after: index)
            }
            value.unicodeScalars.append(scalar)
        }
        return (value, index)
    }

    /// The module (in lower case) and arguments (each its tokens) of the
    /// stored `CREATE VIRTUAL TABLE name USING module(arguments)`, read with
    /// SQLite's own rules for comments, quotes and names.
    static func virtualTable(_ sql: String) -> (module: String, arguments: [[SQLToken]])? {
        let tokens = SQLTokenizer.tokenize(sql)
        guard let using = tokens.firstIndex(where: { $0.isKeyword("USING") }), using + 1 < tokens.count,
              let module = tokens[using + 1].name else { return nil }
        var arguments: [[SQLToken]] = [], current: [SQLToken] = [], depth = 0
        var index = using + 2
        guard index < tokens.count, tokens[index].kind == .punctuation, tokens[index].text == "(" else { return (module.asciiLowercased, []) }
        index += 1
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if token.kind == .punctuation {
                if token.text == "(" { depth += 1 }
                if token.text == ")" {
                    if depth == 0 { break }
                    depth -= 1
                }
                if token.text == "," && depth == 0 {
                    arguments.append(current)
                    current = []
                    continue
                }
            }
            current.append(token)
        }
        arguments.append(current)
        return (module.asciiLowercased, arguments.filter { !$0.isEmpty })
    }

    /// The name the stored `CREATE VIRTUAL TABLE [IF NOT EXISTS]
    /// [schema.]name …` gives its table, as SQLite reads it.
    static func virtualTableName(_ sql: String) -> String? {
        // CREATE VIRTUAL TABLE [IF NOT EXISTS] [schema .] name: 9 tokens at most.
        var tokens = SQLTokenizer.tokenize(sql, limit: 9).dropFirst(3)
        if tokens.first?.isKeyword("IF") == true { tokens = tokens.dropFirst(3) }
        guard var name = tokens.first?.name else { return nil }
        tokens = tokens.dropFirst()
        if let dot = tokens.first, dot.kind == .punctuation, dot.text == ".", let second = tokens.dropFirst().first?.name { name = second }
        return name
    }

    /// Whether the stored `sql` of a table creates a virtual table: its
    /// first two tokens are CREATE and VIRTUAL.
    static func isVirtualTable(_ sql: String) -> Bool {
        let tokens = SQLTokenizer.tokenize(sql, limit: 2)
        return tokens.count == 2 && tokens.first!.isKeyword("CREATE") && tokens.last!.isKeyword("VIRTUAL")
    }
}
