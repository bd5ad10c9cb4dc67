/// A name folded as SQLite folds names, compared scalar by scalar.
package struct FoldedName: Hashable, Sendable {
    package let scalars: [Unicode.Scalar]
}

extension String {
    /// The name as SQLite compares names: ASCII letters folded, every other
    /// character only equal to itself ("é" is not "É", nor "e" followed by
    /// a combining accent, which Swift's `==` on strings would take for "é").
    package var sqliteFolded: FoldedName {
        FoldedName(scalars: unicodeScalars.map { scalar in
            ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
        })
    }
}

extension String {
    /// The text with ASCII letters in upper case and every other scalar as
    /// it is: how SQLite compares keywords and type names
    /// (`sqlite3StrICmp`). Swift's `uppercased()` maps Unicode case, which
    /// SQLite never does: a column named `prımary` (dotless ı) or a table
    /// named `uſing` (long s) would read as PRIMARY or USING.
    package var asciiUppercased: String {
        var out = ""
        out.unicodeScalars.append(contentsOf: unicodeScalars.map { ("a"..."z").contains($0) ? Unicode.Scalar($0.value - 32)! : $0 })
        return out
    }

    /// The text with ASCII letters in lower case and every other scalar as
    /// it is (see ``asciiUppercased``).
    package var asciiLowercased: String {
        var out = ""
        out.unicodeScalars.append(contentsOf: unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 })
        return out
    }
}
