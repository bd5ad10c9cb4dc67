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
    /// The text with ASCII letters in upper case, to compare with SQL
    /// keywords and type names as SQLite does (`sqlite3StrICmp` folds only
    /// ASCII). Swift's `uppercased()` maps Unicode case, which SQLite never
    /// does: a column named `prımary` (dotless ı) or a table named `uſing`
    /// (long s) read as PRIMARY or USING. And Swift's `==` takes some
    /// scalars for others (KELVIN SIGN for K, GREEK QUESTION MARK for `;`),
    /// so every scalar past ASCII is written out as `\U{hex}` (and `\` as
    /// `\\`): the result equals an ASCII keyword only when the text is one,
    /// and two texts give the same result only when SQLite folds them alike.
    package var asciiUppercased: String { asciiFolded(upper: true) }

    /// ``asciiUppercased``, with ASCII letters in lower case.
    package var asciiLowercased: String { asciiFolded(upper: false) }

    private func asciiFolded(upper: Bool) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(unicodeScalars.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "a"..."z" where upper: out.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
            case "A"..."Z" where !upper: out.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
            case "\\": out += "\\\\"
            case _ where !scalar.isASCII: out += (upper ? "\\U{" : "\\u{") + String(scalar.value, radix: 16, uppercase: upper) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
