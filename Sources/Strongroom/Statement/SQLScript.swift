internal import CSQLCipher
import Foundation

/// Splits SQL text into statements the way SQLite's own tokenizer sees them.
///
/// Semicolons inside string literals, quoted identifiers, comments and
/// trigger bodies (`CREATE TRIGGER … BEGIN …; …; END;`) do not end a
/// statement. The split uses `sqlite3_complete`, so it needs no database and
/// no schema: a script whose later statements use tables created by earlier
/// ones splits correctly.
///
/// ```swift
/// let statements = SQLScript.statements(in: """
///     CREATE TABLE t(x TEXT); -- a comment; with a semicolon
///     INSERT INTO t VALUES ('a;b');
///     """)
/// // ["CREATE TABLE t(x TEXT);", "-- a comment; with a semicolon\nINSERT INTO t VALUES ('a;b');"]
/// ```
public enum SQLScript {
    /// The statements of `text`, each ending with its semicolon (a last
    /// statement without one is returned as is). Comments before a statement
    /// stay with it; text that holds only comments and whitespace is dropped.
    public static func statements(in text: String) -> [String] {
        var statements: [String] = []
        var current: [UInt8] = []
        for byte in text.utf8 {
            current.append(byte)
            guard byte == UInt8(ascii: ";") else { continue }
            // sqlite3_complete returns 1 when the text ends a complete statement:
            // the semicolon is not inside a literal, a comment or a trigger body.
            let complete = (current + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { sqlite3_complete($0.baseAddress) }
            }
            if complete == 1 {
                appendIfMeaningful(current, to: &statements)
                current.removeAll(keepingCapacity: true)
            }
        }
        appendIfMeaningful(current, to: &statements)
        return statements
    }

    private static func appendIfMeaningful(_ bytes: [UInt8], to statements: inout [String]) {
        // Trimmed of SQLite's whitespace only: sqlite3_complete takes any
        // other character (a vertical tab, U+00A0) for part of a statement.
        var start = 0, end = bytes.count
        while start < end && sqliteWhitespace.contains(bytes[start]) { start += 1 }
        while end > start && sqliteWhitespace.contains(bytes[end - 1]) { end -= 1 }
        let text = String(decoding: bytes[start..<end], as: UTF8.self)
        if !strippingComments(text).trimmingWhitespace().isEmpty {
            statements.append(text)
        }
    }

    /// Space, tab, line feed, form feed, carriage return: what SQLite's
    /// tokenizer and `sqlite3_complete` skip between tokens.
    private static let sqliteWhitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0C, 0x0D]

    /// Whether SQLite's tokenizer skips `scalar` as whitespace.
    static func isSQLiteWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && sqliteWhitespace.contains(UInt8(scalar.value))
    }

    /// `column = parameter` that holds only for the same value, byte for
    /// byte and of the same type (not 12 for '12', nor 'A' for 'a' under
    /// NOCASE); the plain `=` first, which can use the column's index.
    /// `column` is quoted already.
    package static func exactlyEqual(_ column: String, _ parameter: String) -> String {
        "\(column) = \(parameter) AND \(column) = \(parameter) COLLATE BINARY AND typeof(\(column)) = typeof(\(parameter))"
    }

    /// `name` quoted as an SQL identifier: `"name"`, inner quotes doubled.
    ///
    /// ```swift
    /// SQLScript.quotedIdentifier("order")     // "\"order\""
    /// ```
    public static func quotedIdentifier(_ name: String) -> String {
        "\"" + doubling("\"", in: name) + "\""
    }

    /// The text of a `sqlite_master.sql` value, as SQLite reads it to load
    /// the schema: TEXT as is, a BLOB's bytes as UTF-8 (a row written with
    /// `writable_schema` may hold either, and both load), else empty.
    package static func schemaText(_ value: DatabaseValue) -> String {
        switch value {
        case .text(let text): text
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        default: ""
        }
    }

    /// `text` quoted as an SQL string literal: `'text'`, inner quotes doubled.
    package static func quotedLiteral(_ text: String) -> String {
        "'" + doubling("'", in: text) + "'"
    }

    /// `text` with every `quote` doubled, scalar by scalar. (Swift compares
    /// Characters: a quote followed by a combining mark is one Character, and
    /// `replacingOccurrences(of:with:)` would leave that quote single.)
    package static func doubling(_ quote: Unicode.Scalar, in text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(scalar)
            if scalar == quote { out.append(scalar) }
        }
        return String(out)
    }

    /// `text` with every doubled `quote` made single, scalar by scalar (the
    /// inverse of ``doubling(_:in:)``).
    package static func undoubling(_ quote: Unicode.Scalar, in text: String) -> String {
        var out = String.UnicodeScalarView()
        var previousWasQuote = false
        for scalar in text.unicodeScalars {
            if scalar == quote && previousWasQuote {
                previousWasQuote = false
                continue
            }
            out.append(scalar)
            previousWasQuote = scalar == quote
        }
        return String(out)
    }

    /// An SQL condition on `column` that is true for the names of user
    /// objects: SQLite reserves names starting with `sqlite_` in any case.
    /// (`NOT LIKE 'sqlite_%'` would also skip `sqliteUsers`: in LIKE, `_`
    /// matches any character.)
    package static func isUserObjectName(column: String = "name") -> String {
        "lower(substr(\(column), 1, 7)) <> 'sqlite_'"
    }

    /// `text` with `-- …` and `/* … */` comments removed and every run of
    /// whitespace outside string literals and quoted identifiers folded to one
    /// space (or none, next to `( ) , ;`): what SQLite executes, without the
    /// cosmetics.
    public static func normalized(_ text: String) -> String {
        strippingComments(text, foldWhitespace: true).trimmingWhitespace()
    }

    static func strippingComments(_ text: String, foldWhitespace: Bool = false) -> String {
        var out: [Unicode.Scalar] = []
        let scalars = Array(text.unicodeScalars)
        var i = 0
        var pendingSpace = false
        // Whitespace next to ( ) , ; separates nothing, so folding drops it.
        func separates(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
            !"(),;".unicodeScalars.contains(a) && !"(),;".unicodeScalars.contains(b)
        }
        func emit(_ scalar: Unicode.Scalar) {
            if pendingSpace, let last = out.last, !foldWhitespace || separates(last, scalar) { out.append(" ") }
            pendingSpace = false
            out.append(scalar)
        }
        while i < scalars.count {
            let c = scalars[i]
            let next: Unicode.Scalar? = i + 1 < scalars.count ? scalars[i + 1] : nil
            if c == "-" && next == "-" {
                while i < scalars.count && scalars[i] != "\n" { i += 1 }
                pendingSpace = true
                continue
            }
            if c == "/" && next == "*" {
                i += 2
                while i < scalars.count && !(scalars[i] == "*" && i + 1 < scalars.count && scalars[i + 1] == "/") { i += 1 }
                i += 2
                pendingSpace = true
                continue
            }
            if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                emit(c)
                i += 1
                while i < scalars.count {
                    out.append(scalars[i])
                    if scalars[i] == close {
                        // A doubled quote inside a literal is an escaped quote.
                        if close != "]" && i + 1 < scalars.count && scalars[i + 1] == close {
                            out.append(scalars[i + 1])
                            i += 2
                            continue
                        }
                        break
                    }
                    i += 1
                }
                i += 1
                continue
            }
            if c.properties.isWhitespace {
                if foldWhitespace {
                    pendingSpace = true
                } else {
                    out.append(c)
                }
                i += 1
                continue
            }
            emit(c)
            i += 1
        }
        var result = ""
        result.unicodeScalars.append(contentsOf: out)
        return result
    }
}
