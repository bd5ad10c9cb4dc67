import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 39, items 2 and 6: the format page specifies every blind index
/// derivation and transformation well enough that an implementation written
/// from it (Decoder/blind_indexes.py, Python) computes what Strongroom does.
@Suite("Blind index format: the page, vectors, and an independent implementation")
struct BlindIndexFormatTests {
    let dir = TemporaryDirectory()

    static let decoder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Decoder/blind_indexes.py").path
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md").path

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func encoded(_ value: DatabaseValue) -> [String: Any] {
        let (type, bytes) = ForeignDecoderTests.encoding(value)
        return ["type": type, "payload": hex(bytes)]
    }

    static func decoded(_ object: [String: Any]) -> DatabaseValue? {
        FormatPageTests.value(object)
    }

    func python(_ arguments: [String], input: Any? = nil) async throws -> Any {
        let python = try #require(ProcessRunner.which("python3"))
        let text = try input.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let result = try await ProcessRunner.run(python, [Self.decoder] + arguments, input: text)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// `TEXT "…"`, `INTEGER n`, `REAL x`, `BLOB x'…'`, or nil for `refused`.
    static func literal(_ text: Substring) throws -> (DatabaseValue?, Substring) {
        if text.hasPrefix("refused") { return (nil, text.dropFirst(7)) }
        if text.hasPrefix("TEXT \"") {
            var end = text.index(text.startIndex, offsetBy: 6)
            while text[end] != "\"" { end = text.index(after: text[end] == "\\" ? text.index(after: end) : end) }
            let json = text[text.index(text.startIndex, offsetBy: 5)...end]
            let string = try JSONDecoder().decode(String.self, from: Data(json.utf8))
            return (.text(string), text[text.index(after: end)...])
        }
        let word = text.prefix { !$0.isWhitespace }
        let rest = text.dropFirst(word.count).drop { $0.isWhitespace }
        let number = rest.prefix { !$0.isWhitespace }
        let after = rest.dropFirst(number.count)
        switch word {
        case "INTEGER": return (.integer(Int64(number)!), after)
        case "REAL": return (.real(Double(number)!), after)
        case "BLOB": return (.blob(FormatPageTests.bytes(String(number.dropFirst(2).dropLast()))!), after)
        default: throw StrongroomError(.misuse, "not a literal: \(text)")
        }
    }

    /// The page's transformation vectors: (transformation, input, output or nil).
    static func vectors() throws -> [(String, DatabaseValue, DatabaseValue?)] {
        let text = try String(contentsOfFile: page, encoding: .utf8)
        let block = text.components(separatedBy: "<!-- transformation vectors: begin -->")[1].components(separatedBy: "<!-- transformation vectors: end -->")[0]
        var vectors: [(String, DatabaseValue, DatabaseValue?)] = []
        for line in block.split(separator: "\n") where !line.hasPrefix("```") && !line.isEmpty {
            let name = line.prefix { !$0.isWhitespace }
            let (input, rest) = try literal(line.dropFirst(name.count).drop { $0.isWhitespace })
            let (output, _) = try literal(rest.drop { $0.isWhitespace })
            vectors.append((String(name), try #require(input), output))
        }
        return vectors
    }

    @Test func thePagesTransformationVectorsHoldHereAndInPython() async throws {
        let vectors = try Self.vectors()
        #expect(vectors.count >= 35)
        var cases: [[String: Any]] = []
        for (name, input, output) in vectors {
            let transformation = try #require(BlindIndexTransformation(name: name), "\(name)")
            let index = BlindIndex("v", on: "c", in: "t", transformations: [transformation])
            if let output {
                #expect(try index.transformed([input]) == [output], "\(name) of \(input)")
            } else {
                #expect(throws: FieldError.self, "\(name) of \(input)") { _ = try index.transformed([input]) }
            }
            cases.append(["transformations": [name], "value": Self.encoded(input)])
        }
        let answers = try #require(try await python(["--transform"], input: cases) as? [[String: Any]])
        for ((name, input, output), answer) in zip(vectors, answers) {
            if let output {
                #expect(Self.decoded(answer) == output, "Python: \(name) of \(input): \(answer)")
            } else {
                #expect(answer["error"] != nil, "Python: \(name) of \(input) must be refused")
            }
        }
    }

    /// Every code point Unicode 14.0 assigns, through `nfkc-casefold`, here
    /// and in Python's unicodedata.
    @Test func nfkcCasefoldAgreesWithPythonOnEveryAssignedCodePoint() async throws {
        let answer = try #require(try await python(["--nfkc-casefold-all"]) as? [String: Any])
        #expect(answer["unicode"] as? String == "14.0.0", "the page pins Unicode 14.0; Python here has \(String(describing: answer["unicode"]))")
        let cases = try #require(answer["cases"] as? [[Any]])
        #expect(cases.count > 140_000)
        var differ: [String] = []
        for pair in cases {
            guard let codePoint = pair[0] as? Int, let expected = pair[1] as? String, let scalar = Unicode.Scalar(UInt32(codePoint)) else { continue }
            let mine = Self.hex(Array(BlindIndexTransformationProbe.foldedText(String(Character(scalar))).utf8))
            if mine != expected { differ.append(String(codePoint, radix: 16)) }
        }
        #expect(differ.isEmpty, "\(differ.count) code points differ: \(differ.prefix(20))")
    }

    @Test func randomDefinitionsAndValuesGiveTheSameIndexValuesInPython() async throws {
        var random = SplitMix64(seed: 39)
        let (two, second) = FieldKeyring.generate().addingKey()
        try two.write(to: dir.file("fields.keyring"))
        let transformations: [BlindIndexTransformation] = [.trimmed, .normalizedCaseFolded, .digitsOnly, .prefix(3), .suffix(4), .year, .yearMonth]
        let texts = ["", " Ada@Example.COM ", "Straße", "ΣΊΣΥΦΟΣ", "4111 1111 1111 1234", "1815-12-10", "2024-02-29 08:00:00.000", "東京 🙂", "e\u{301}", "n/a"]
        var cases: [[String: Any]] = []
        var expected: [DatabaseValue?] = []
        for n in 0..<400 {
            let partCount = Int.random(in: 1...3, using: &random)
            let parts = (0..<partCount).map { p in
                BlindIndex.Part("Col\(p)", (0..<Int.random(in: 0...2, using: &random)).map { _ in transformations.randomElement(using: &random)! })
            }
            let bits = [1, 7, 8, 9, 12, 16, 31, 64, 100, 127, 128].randomElement(using: &random)!
            let index = BlindIndex("Idx\(n % 7)", in: n % 2 == 0 ? "Customer" : "orders", bits: bits, parts: parts)
            let values: [DatabaseValue] = parts.map { _ in
                switch Int.random(in: 0..<10, using: &random) {
                case 0: .integer(Int64.random(in: -2_000_000_000...2_000_000_000_000, using: &random))
                case 1: .real(Double.random(in: -1e10...1e10, using: &random))
                case 2: .null
                case 3: .blob([1, 2, 3])
                default: .text(texts.randomElement(using: &random)!)
                }
            }
            let context = n % 5 == 0 ? "tenant-\(n)" : nil
            let keyring = n % 3 == 0 ? try two.activating(second) : two
            let cipher = FieldCipher(keyring: keyring, context: try context.map { try FieldContext($0) })
            let value = try? cipher.blindIndex(of: values, for: index)
            expected.append(value)
            cases.append(["table": index.table, "name": index.name, "bits": bits, "key_id": Int(keyring.activeKeyID), "context": context ?? NSNull(),
                          "parts": parts.map { ["column": $0.column, "transformations": $0.transformations.map(\.name)] },
                          "values": values.map { $0.isNull ? NSNull() : Self.encoded($0) as Any }])
        }
        let answers = try #require(try await python([dir.file("fields.keyring")], input: cases) as? [[String: Any]])
        #expect(answers.count == expected.count)
        var agreed = (values: 0, nulls: 0, refusals: 0)
        for (n, (answer, mine)) in zip(answers, expected).enumerated() {
            switch mine {
            case .some(.blob(let bytes)):
                #expect(answer["value"] as? String == Self.hex(bytes), "case \(n): \(cases[n])")
                agreed.values += 1
            case .some(.null):
                #expect(answer["null"] as? Bool == true, "case \(n)")
                agreed.nulls += 1
            default:
                #expect(answer["error"] != nil, "case \(n): Strongroom refused, Python gave \(answer): \(cases[n])")
                agreed.refusals += 1
            }
        }
        #expect(agreed.values > 100 && agreed.nulls > 10 && agreed.refusals > 10, "\(agreed)")
    }

    /// Examples 5 and 6 of the page, computed by Strongroom.
    @Test func thePagesIndexExamplesAreWhatStrongroomComputes() throws {
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let keyring = try FieldKeyring.load(fromCommand: KeyCommand("printf 'strongroom field keyring 1\\nactive 1\\nkey 1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\\n'"))
        let cipher = FieldCipher(keyring: keyring)
        let five = try cipher.blindIndex(of: [.text(" Ada@Example.COM")], for: BlindIndex("email_folded", on: "email", in: "customer", bits: 12, transformations: [.trimmed, .normalizedCaseFolded]))
        let six = try cipher.blindIndex(of: [.text("LOVELACE"), .text("1815-12-10")],
                                        for: BlindIndex("name_born", in: "customer", bits: 20, parts: [.init("last_name", [.normalizedCaseFolded]), .init("birth_date", [.year])]))
        #expect(five == .blob(FormatPageTests.bytes("000000010590")!))
        #expect(six == .blob(FormatPageTests.bytes("00000001c1acd0")!))
        #expect(text.contains("index value     = 00000001 0590") && text.contains("index value     = 00000001 c1acd0"))
    }
}

/// `nfkc-casefold` of a text, through the public API.
enum BlindIndexTransformationProbe {
    static let index = BlindIndex("probe", on: "c", in: "t", transformations: [.normalizedCaseFolded])

    static func foldedText(_ text: String) -> String {
        guard case .text(let folded)? = (try? index.transformed([.text(text)]))?.first else { return "<refused>" }
        return folded
    }
}
