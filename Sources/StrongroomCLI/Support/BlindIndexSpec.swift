import ArgumentParser
import StrongroomFields

/// A blind index written on the command line (`import --index`, `fields
/// index add`): `TABLE.NAME=PART[+PART…][/BITS[/unique]]`, each PART
/// `COLUMN[:TRANSFORM[,TRANSFORM…]]`.
///
/// ```
/// customer.email_folded=email:trim,nfkc-casefold/16
/// customer.name_born=last_name:nfkc-casefold+birth_date:year/12
/// customer.email_unique=email/128/unique
/// ```
enum BlindIndexSpec {
    static let syntax = "TABLE.NAME=COLUMN[:TRANSFORM,…][+COLUMN[:TRANSFORM,…]…][/BITS[/unique]] (transformations: trim, nfkc-casefold, digits, prefix:N, suffix:N, year, year-month)"

    static func parse(_ spec: String) throws -> BlindIndex {
        func fail(_ why: String) -> ValidationError { ValidationError("Blind index '\(spec)': \(why). Write \(syntax).") }
        guard let equals = spec.firstIndex(of: "=") else { throw fail("no '='") }
        let names = spec[..<equals].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard names.count == 2, !names[0].isEmpty, !names[1].isEmpty else { throw fail("the part before '=' is TABLE.NAME") }
        var rest = spec[spec.index(after: equals)...].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var unique = false
        if rest.count == 3 {
            guard rest[2] == "unique" else { throw fail("after the bits, only '/unique' may follow") }
            unique = true
            rest.removeLast()
        }
        guard rest.count <= 2 else { throw fail("too many '/'") }
        var bits = BlindIndex.maximumBits
        if rest.count == 2 {
            guard let n = Int(rest[1]) else { throw fail("'\(rest[1])' is not a number of bits") }
            bits = n
        }
        let parts = try rest[0].split(separator: "+", omittingEmptySubsequences: false).map { part -> BlindIndex.Part in
            let pieces = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard !pieces[0].isEmpty else { throw fail("a column name is empty") }
            var transformations: [BlindIndexTransformation] = []
            if pieces.count == 2 {
                // Only the first ':' ends the column's name: prefix:N keeps its own.
                let names = pieces[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                transformations = try names.map { name in
                    guard let transformation = BlindIndexTransformation(name: name) else { throw fail("'\(name)' is not a transformation") }
                    return transformation
                }
            }
            return BlindIndex.Part(pieces[0], transformations)
        }
        let index = BlindIndex(names[1], in: names[0], bits: bits, parts: parts, unique: unique)
        do { try index.validate() } catch { throw ValidationError("Blind index '\(spec)': \(error.message)") }
        return index
    }
}
