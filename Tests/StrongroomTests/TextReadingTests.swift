import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 28: text is read into a `String` on a fast path (ASCII checked a
/// word at a time, a small string made in place). Every way of reading text
/// must still give exactly the stored text, refuse invalid UTF-8 into a
/// `String`, and keep a NUL inside, at every length around the small-string
/// limit (15 bytes) and the word size (8).
@Suite("Reading text into String")
struct TextReadingTests {
    /// The stored bytes of each case, and the String it must read as (nil:
    /// not valid UTF-8, refused).
    static func cases() -> [(bytes: [UInt8], expected: String?)] {
        var cases: [(bytes: [UInt8], expected: String?)] = []
        for length in 0...40 {
            let ascii = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            cases.append((ascii, String(decoding: ascii, as: UTF8.self)))
            guard length > 0 else { continue }
            for position in Set([0, length / 2, length - 1]) {
                var withNUL = ascii
                withNUL[position] = 0
                cases.append((withNUL, String(decoding: withNUL, as: UTF8.self)))
                var invalid = ascii
                invalid[position] = 0xFF
                cases.append((invalid, nil))
                var truncated = ascii   // the first byte of a 2-byte sequence, cut
                truncated[position] = 0xC3
                cases.append((truncated, nil))   // followed by ASCII or nothing: invalid
            }
            if length >= 2 {   // "é" (C3 A9) at the end: valid, not ASCII
                let accented = Array(ascii.dropLast(2)) + [0xC3, 0xA9]
                cases.append((accented, String(decoding: accented, as: UTF8.self)))
            }
        }
        return cases
    }

    struct Text: Codable { var t: String }

    @Test func everyWayOfReadingTextGivesTheStoredTextAndRefusesInvalidUTF8() throws {
        let db = try Connection.inMemory(configuration: Configuration(key: .generate()))
        try db.execute(sql: "CREATE TABLE text(id INTEGER PRIMARY KEY, t TEXT)")
        let cases = Self.cases()
        for (i, c) in cases.enumerated() {
            let hex = c.bytes.map { String(format: "%02x", $0) }.joined()
            try db.execute(sql: "INSERT INTO text VALUES (\(i), CAST(x'\(hex)' AS TEXT))")
        }
        let select = try db.cachedStatement(sql: "SELECT t FROM text WHERE id = ?")
        for (i, c) in cases.enumerated() {
            let label = "case \(i): \(c.bytes)"
            // RowView, String and String?.
            var viewed: [String?] = []
            try select.forEachRow(arguments: [i]) { row in
                viewed.append(try? row.decode(String.self, at: 0))
                viewed.append(try? row.decode(String?.self, at: 0) ?? "NULL")
            }
            #expect(viewed == [c.expected, c.expected], "\(label)")
            // A single value, a Codable record, a copied Row.
            #expect((try? select.fetchOne(String.self, arguments: [i])) == c.expected, "\(label)")
            #expect((try? select.fetchOne(Text.self, arguments: [i]))?.t == c.expected, "\(label)")
            let row = try #require(try select.fetchOne(arguments: [i]))
            #expect((try? row.decode(String.self, at: 0)) == c.expected, "\(label)")
            // The bytes are kept whole: the String's UTF-8 is the stored bytes.
            if let expected = c.expected { #expect(Array(expected.utf8) == c.bytes, "\(label)") }
        }
    }
}
