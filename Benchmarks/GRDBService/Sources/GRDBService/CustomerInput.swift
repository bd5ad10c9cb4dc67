// The example's own (Examples/CustomerService), unchanged: the same bodies are
// accepted and refused the same way, so the two services differ only in
// their database layer.

import Foundation

/// The fields of a `POST` or `PATCH` body, checked: a JSON object with no
/// other keys than `name`, `email`, `note` and `country`, each of the right
/// type and size. A key that is absent is `nil`; `note` and `country` may be
/// set to `null` (`.some(nil)`).
struct CustomerInput: Sendable {
    var name: String?
    var email: String?
    var note: String??
    var country: String??

    static let fields = ["name", "email", "note", "country"]
    static let maximumNameLength = 200
    static let maximumNoteLength = 4000
    static let maximumCountryLength = 100

    /// The body of `POST /customers`: `name` and `email` required.
    static func forCreating(_ body: Data) throws(RequestError) -> CustomerInput {
        let input = try parse(body)
        guard input.name != nil else { throw .missingField("name") }
        guard input.email != nil else { throw .missingField("email") }
        return input
    }

    /// The body of `PATCH /customers/{id}`: at least one field.
    static func forUpdating(_ body: Data) throws(RequestError) -> CustomerInput {
        let input = try parse(body)
        guard input.name != nil || input.email != nil || input.note != nil || input.country != nil else {
            throw RequestError(.badRequest, "empty_update", "Give at least one of \(fields.joined(separator: ", ")) to change.")
        }
        return input
    }

    private static func parse(_ body: Data) throws(RequestError) -> CustomerInput {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: body, options: [])
        } catch {
            throw RequestError(.badRequest, "malformed_json", "The body is not valid JSON: send one JSON object, such as {\"name\": \"Ada\", \"email\": \"ada@example.com\"}.")
        }
        guard let dictionary = object as? [String: Any] else {
            throw RequestError(.badRequest, "malformed_json", "The body must be a JSON object with the fields \(fields.joined(separator: ", ")).")
        }
        // Unknown keys are refused, not ignored: a misspelt "emial" would
        // otherwise be dropped without a word.
        if let unknown = dictionary.keys.sorted().first(where: { !fields.contains($0) }) {
            throw RequestError(.badRequest, "unknown_field", "Unknown field \(String(unknown.prefix(64)).debugDescription): the fields are \(fields.joined(separator: ", ")).")
        }
        var input = CustomerInput()
        if let value = dictionary["name"] {
            let name = try string(value, "name", nullable: false)!.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= maximumNameLength, !hasInvisibleCharacters(name) else {
                throw RequestError(.unprocessable, "invalid_field", "\"name\" must hold 1 to \(maximumNameLength) characters, none of them a control or format character.")
            }
            input.name = name
        }
        if let value = dictionary["email"] {
            input.email = try EmailAddress.normalized(try string(value, "email", nullable: false)!)
        }
        if let value = dictionary["note"] {
            let note = try string(value, "note", nullable: true)
            if let note, note.count > maximumNoteLength {
                throw RequestError(.unprocessable, "invalid_field", "\"note\" may hold at most \(maximumNoteLength) characters.")
            }
            input.note = .some(note)
        }
        if let value = dictionary["country"] {
            let country = try string(value, "country", nullable: true)
            if let country, country.isEmpty || country.count > maximumCountryLength || hasInvisibleCharacters(country) {
                throw RequestError(.unprocessable, "invalid_field", "\"country\" must hold 1 to \(maximumCountryLength) characters (no control or format character), or be null.")
            }
            input.country = .some(country)
        }
        return input
    }

    /// Control characters (NUL, BEL) and format characters (zero-width
    /// space, right-to-left override): invisible, or changing how the text
    /// around them shows.
    static func hasInvisibleCharacters(_ text: String) -> Bool {
        // ASCII (nearly all input): its only invisible characters are the
        // controls, told without Unicode's tables.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.contains { $0 < 0x20 || $0 == 0x7F } }
        return text.unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) }
    }

    /// `value` as a string; `null` is nil where `nullable`.
    private static func string(_ value: Any, _ field: String, nullable: Bool) throws(RequestError) -> String? {
        if value is NSNull, nullable { return nil }
        // JSONSerialization gives numbers and booleans as NSNumber, never as String.
        guard let string = value as? String, !(value is NSNumber) else {
            throw RequestError(.badRequest, "wrong_type", "\"\(field)\" must be a string\(nullable ? " or null" : "").")
        }
        return string
    }
}

/// E-mail addresses as the service stores and looks them up: trimmed,
/// lowercased and composed (Unicode NFC), so that `Ada@Example.com` and
/// `ada@example.com` are one customer, and so are `josé` written with one
/// code point or with an `e` and a combining accent (the blind index compares
/// exact values). Invisible characters are refused: they would make look-alikes.
enum EmailAddress {
    static func normalized(_ text: String) throws(RequestError) -> String {
        // Never quoted back: the address is sealed data.
        let invalid = RequestError(.unprocessable, "invalid_email", "\"email\" is not an e-mail address (local@domain.tld, at most 254 characters, no spaces).")
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard let address = asciiNormalized(text) else { throw invalid }
            return address
        }
        let address = text.trimmingCharacters(in: .whitespaces).lowercased().precomposedStringWithCanonicalMapping
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard address.utf8.count <= 254, parts.count == 2 else { throw invalid }
        let local = parts[0], domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= 64,
              domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains(".."),
              !address.unicodeScalars.contains(where: { $0.properties.isWhitespace }), !CustomerInput.hasInvisibleCharacters(address),
              domain.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" }) else {
            throw invalid
        }
        return address
    }

    /// The same rules for an ASCII address, on its bytes (Foundation's
    /// trimming, case mapping and character sets cost a create more than
    /// sealing it): spaces and tabs trimmed (`.whitespaces` in ASCII), A-Z
    /// lowered, NFC nothing to do; nil for an address the rules refuse (no
    /// whitespace or control inside, the domain letters, digits, `.` and `-`).
    static func asciiNormalized(_ text: String) -> String? {
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let address = bytes.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        guard address.count <= 254, let at = address.firstIndex(of: 0x40), address.lastIndex(of: 0x40) == at else { return nil }
        let local = address[..<at], domain = address[(at + 1)...]
        let dot: UInt8 = 0x2E
        guard !local.isEmpty, local.count <= 64, domain.contains(dot), domain.first != dot, domain.last != dot,
              !zip(domain, domain.dropFirst()).contains(where: { $0 == dot && $1 == dot }),
              // Whitespace (0x09-0x0D, space) and controls.
              !address.contains(where: { $0 < 0x21 || $0 == 0x7F }),
              domain.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || $0 == dot || $0 == 0x2D }) else { return nil }
        return String(decoding: address, as: UTF8.self)
    }
}
