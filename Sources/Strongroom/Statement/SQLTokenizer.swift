import Foundation

/// A small SQL tokenizer: for the statements the migration runner rewrites
/// (`ALTER TABLE`, `CREATE TABLE`, `CREATE INDEX`, `CREATE TRIGGER`), and for
/// what the opening rules and the direct-only checks read of a statement
/// (``SQLTokens``). It keeps each token's position, so a statement can be
/// rebuilt from the original text.
package struct SQLToken: Equatable {
    package enum Kind: Equatable {
        /// A bare word: keyword or identifier.
        case word
        /// A quoted identifier: "x", `x` or [x].
        case quotedIdentifier
        /// A string literal 'x'.
        case string
        /// A blob literal x'00ff'.
        case blob
        case number
        /// A parameter: `?`, `?1`, `:name`, `@name`, `$name`, `#name`, and
        /// Tcl's `$name(…)`, which runs to the first `)` or space.
        case variable
        case punctuation
    }

    package let kind: Kind
    /// The token as written.
    package let text: String
    /// Offset range in the statement's unicode scalars.
    package let range: Range<Int>

    /// The identifier this token names (unquoted), or nil for literals and punctuation.
    package var identifier: String? {
        switch kind {
        case .word: return text
        case .quotedIdentifier:
            let inner = text.unicodeScalars.dropFirst().dropLast()
            var s = ""
            s.unicodeScalars.append(contentsOf: inner)
            // The first scalar tells the quote (a quote and a combining mark
            // after it are one Character: hasPrefix would not see the quote).
            let open = text.unicodeScalars.first
            if open == "\"" { return SQLScript.undoubling("\"", in: s) }
            if open == "`" { return SQLScript.undoubling("`", in: s) }
            return s
        default: return nil
        }
    }

    /// The name this token gives where SQLite's grammar expects a name: an
    /// identifier, or a 'string' (which SQLite accepts there).
    package var name: String? {
        guard kind == .string else { return identifier }
        var inner = ""
        inner.unicodeScalars.append(contentsOf: text.unicodeScalars.dropFirst().dropLast())
        return SQLScript.undoubling("'", in: inner)
    }

    /// True for a bare word equal to `keyword`, ignoring case.
    package func isKeyword(_ keyword: String) -> Bool {
        kind == .word && text.asciiUppercased == keyword
    }

    package func names(_ name: String) -> Bool {
        identifier?.sqliteFolded == name.sqliteFolded
    }
}

package enum SQLTokenizer {
    /// The tokens of `sql`, or its first `limit` tokens (what a caller that
    /// reads only a statement's first words needs: no token past them is
    /// made, though the statement is still copied into arrays first).
    package static func tokenize(_ sql: String, limit: Int = .max) -> [SQLToken] {
        let s = Array(sql.unicodeScalars)
        // ASCII text (most SQL) has one byte per scalar: a token's text is
        // made from its bytes, not appended scalar by scalar.
        let ascii = sql.utf8.count == s.count
        let utf8 = ascii ? Array(sql.utf8) : []
        var tokens: [SQLToken] = []
        var i = 0
        func text(_ a: Int, _ b: Int) -> String {
            if ascii { return String(decoding: utf8[a..<b], as: UTF8.self) }
            var out = ""
            out.unicodeScalars.append(contentsOf: s[a..<b])
            return out
        }
        // ASCII letters and digits without Unicode's property tables (which
        // agree with these for every scalar below 128); past ASCII, the
        // properties are read as before.
        func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 128 ? ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) : scalar.properties.isAlphabetic
        }
        func isDigit(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 128 ? ("0"..."9").contains(scalar) : scalar.properties.numericType != nil
        }
        while i < s.count && tokens.count < limit {
            let c = s[i]
            let next: Unicode.Scalar? = i + 1 < s.count ? s[i + 1] : nil
            // SQLite's whitespace between tokens: space, tab, newline, form
            // feed, carriage return (a vertical tab is a token, illegal to
            // SQLite). Any other scalar above 127 (a no-break space) is part
            // of a name, as it is to SQLite.
            if SQLScript.isSQLiteWhitespace(c) { i += 1; continue }
            if c == "-" && next == "-" {
                while i < s.count && s[i] != "\n" { i += 1 }
                continue
            }
            if c == "/" && next == "*" {
                i += 2
                while i < s.count && !(s[i] == "*" && i + 1 < s.count && s[i + 1] == "/") { i += 1 }
                i = min(i + 2, s.count)
                continue
            }
            let start = i
            if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                i += 1
                while i < s.count {
                    if s[i] == close {
                        if close != "]" && i + 1 < s.count && s[i + 1] == close { i += 2; continue }
                        break
                    }
                    i += 1
                }
                i = min(i + 1, s.count)
                tokens.append(SQLToken(kind: c == "'" ? .string : .quotedIdentifier, text: text(start, i), range: start..<i))
                continue
            }
            if (c == "x" || c == "X") && next == "'" {
                // A blob literal x'…' is one literal token, not the name x.
                i += 2
                while i < s.count && s[i] != "'" { i += 1 }
                i = min(i + 1, s.count)
                tokens.append(SQLToken(kind: .blob, text: text(start, i), range: start..<i))
                continue
            }
            if c.value > 127 || isLetter(c) || c == "_" {
                while i < s.count && (s[i].value > 127 || isLetter(s[i]) || isDigit(s[i]) || s[i] == "_" || s[i] == "$") { i += 1 }
                tokens.append(SQLToken(kind: .word, text: text(start, i), range: start..<i))
                continue
            }
            if c == "?" {
                i += 1
                while i < s.count && ("0"..."9").contains(s[i]) { i += 1 }
                tokens.append(SQLToken(kind: .variable, text: text(start, i), range: start..<i))
                continue
            }
            if c == "$" || c == "@" || c == ":" || c == "#" {
                // As SQLite's tokenizer reads one (CC_DOLLAR, CC_VARALPHA).
                func isIdChar(_ scalar: Unicode.Scalar) -> Bool {
                    scalar.value > 127 || scalar == "_" || scalar == "$" || ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                }
                var letters = 0
                i += 1
                while i < s.count {
                    if isIdChar(s[i]) {
                        letters += 1
                        i += 1
                    } else if s[i] == "(" && letters > 0 {
                        // To the first `)` or sqlite3Isspace (a vertical tab too).
                        repeat { i += 1 } while i < s.count && s[i] != ")" && !(s[i] == " " || (0x09...0x0D).contains(s[i].value))
                        if i < s.count && s[i] == ")" { i += 1 }
                        break
                    } else if s[i] == ":" && i + 1 < s.count && s[i + 1] == ":" {
                        i += 2
                    } else {
                        break
                    }
                }
                tokens.append(SQLToken(kind: letters > 0 || i > start + 1 ? .variable : .punctuation, text: text(start, i), range: start..<i))
                continue
            }
            if isDigit(c) {
                // `_` between digits: SQLite 3.46 reads 1_000 as one number.
                while i < s.count && (isDigit(s[i]) || s[i] == "." || s[i] == "_" || isLetter(s[i])) { i += 1 }
                tokens.append(SQLToken(kind: .number, text: text(start, i), range: start..<i))
                continue
            }
            i += 1
            tokens.append(SQLToken(kind: .punctuation, text: text(start, i), range: start..<i))
        }
        return tokens
    }
}

extension String {
    /// The unicode scalars in `range`, as a string.
    package func scalars(_ range: Range<Int>) -> String {
        let all = Array(unicodeScalars)
        var out = ""
        out.unicodeScalars.append(contentsOf: all[range.clamped(to: 0..<all.count)])
        return out
    }
}
