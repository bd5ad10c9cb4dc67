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
