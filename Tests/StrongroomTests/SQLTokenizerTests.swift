import Strongroom
import Testing

/// The tokenizer reads ASCII statements from their bytes and any other
/// statement scalar by scalar: both must give the same tokens, and a limit
/// must give the first tokens of the whole list.
@Suite("Tokenizing SQL")
struct SQLTokenizerTests {
    static let statements = [
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a1_$b TEXT, \"q\"\"x\" [br] `bt`, n DEFAULT 1_000x, v DEFAULT x'00ff')",
        "CREATE  VIRTUAL/**/TABLE IF NOT EXISTS main.f USING fts5(body, content = 'customer', $a(((, ?7, :n, @m, #k)",
        "SELECT 1.5e3, .5, 'it''s', x, -- a comment\n y FROM t WHERE z <> 3;",
        "UPDATE t SET a = ?1 || :b /* unterminated",
        "",
    ]

    /// Expected tokens of the first statement's start, kind by kind.
    @Test func readsWordsNumbersAndQuotesAsSQLiteDoes() {
        let tokens = SQLTokenizer.tokenize(Self.statements[0])
        let texts = tokens.map(\.text)
        #expect(Array(texts.prefix(12)) == ["CREATE", "TABLE", "t", "(", "id", "INTEGER", "PRIMARY", "KEY", ",", "a1_$b", "TEXT", ","])
        #expect(tokens.first { $0.text == "1_000x" }?.kind == .number)
        #expect(tokens.first { $0.text == "x'00ff'" }?.kind == .blob)
        #expect(tokens.first { $0.text == "\"q\"\"x\"" }?.identifier == "q\"x")
        #expect(tokens.first { $0.text == "[br]" }?.identifier == "br")
    }

    /// The same statement, followed by a comment past ASCII (read scalar by
    /// scalar) and without it (read from its bytes): the same tokens, at
    /// the same scalar offsets.
    @Test(arguments: statements)
    func asciiAndOtherTextGiveTheSameTokens(_ statement: String) {
        let ascii = SQLTokenizer.tokenize(statement)
        let marked = SQLTokenizer.tokenize(statement + "\n-- café ı \u{212A} \u{1F600}")
        #expect(ascii == marked)
    }

    @Test(arguments: statements)
    func aLimitGivesTheFirstTokens(_ statement: String) {
        let all = SQLTokenizer.tokenize(statement)
        for limit in 0...(all.count + 1) {
            #expect(SQLTokenizer.tokenize(statement, limit: limit) == Array(all.prefix(limit)))
        }
    }

    /// A vertical tab is no whitespace to SQLite's tokenizer (both engines
    /// answer `unrecognized token` to `SELECT<VT>1`): it is a token of its
    /// own, not a gap between two words. It still ends a Tcl `$name(…)`
    /// variable, as SQLite's `sqlite3Isspace` does there.
    @Test func aVerticalTabIsATokenAsToSQLite() {
        let tokens = SQLTokenizer.tokenize("CREATE\u{0B}VIRTUAL TABLE f USING fts4(x)")
        #expect(Array(tokens.prefix(3).map(\.text)) == ["CREATE", "\u{0B}", "VIRTUAL"])
        #expect(tokens[1].kind == .punctuation)
        let variable = SQLTokenizer.tokenize("SELECT $a(b\u{0B}c)")
        #expect(variable[1].text == "$a(b" && variable[1].kind == .variable)
        // The others SQLite skips.
        #expect(SQLTokenizer.tokenize("SELECT \t\n\u{0C}\r1").map(\.text) == ["SELECT", "1"])
    }

    /// Past ASCII, every scalar is part of a name (as to SQLite), and a
    /// name's text and offsets count scalars, not bytes.
    @Test func namesPastASCIIKeepTheirScalars() {
        let tokens = SQLTokenizer.tokenize("SELECT café, \u{0661}2, prımary FROM \u{212A}ept")
        #expect(tokens.map(\.text) == ["SELECT", "café", ",", "\u{0661}2", ",", "prımary", "FROM", "\u{212A}ept"])
        #expect(tokens.map(\.kind) == [.word, .word, .punctuation, .word, .punctuation, .word, .word, .word])
        #expect(tokens[1].range == 7..<11)
        #expect(tokens[7].range == 30..<34)
    }
}
