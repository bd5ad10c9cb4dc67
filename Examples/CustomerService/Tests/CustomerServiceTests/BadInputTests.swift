import Foundation
import Testing

/// Issue 38, item 4: bad input gets a 4xx with a JSON error body that says
/// what went wrong, and the service keeps serving.
@Suite("Bad input: 4xx with a JSON error, and the service keeps serving")
struct BadInputTests {
    let fixture: ServiceFixture
    let service: ServiceProcess

    init() throws {
        fixture = try ServiceFixture()
        service = try ServiceProcess.started(fixture)
    }

    /// Each answer is a 4xx whose body is `{"error": {"code", "message"}}`.
    func refused(_ answer: HTTPAnswer, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == status, "\(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(answer.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
        #expect(answer.errorCode == code, "\(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
        let message = ((answer.json?["error"] as? [String: any Sendable])?["message"] as? String) ?? ""
        #expect(!message.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func malformedJSONAndWrongShapes() throws {
        let port = service.port
        refused(try request(port, "POST", "/customers", json: "{\"name\": \"Ada\", "), 400, "malformed_json")
        refused(try request(port, "POST", "/customers", json: "not json at all"), 400, "malformed_json")
        refused(try request(port, "POST", "/customers", json: "[{\"name\": \"Ada\"}]"), 400, "malformed_json")
        refused(try request(port, "POST", "/customers", json: ""), 400, "malformed_json")
        refused(try request(port, "POST", "/customers", body: Data([0xFF, 0xFE, 0x00, 0x7B])), 400, "malformed_json")
    }

    @Test func wrongTypesAndMissingFields() throws {
        let port = service.port
        refused(try request(port, "POST", "/customers", json: #"{"name": 42, "email": "a@example.com"}"#), 400, "wrong_type")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": true}"#), 400, "wrong_type")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": null}"#), 400, "wrong_type")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "note": ["x"]}"#), 400, "wrong_type")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "country": {"code": "UK"}}"#), 400, "wrong_type")
        refused(try request(port, "POST", "/customers", json: #"{"email": "a@example.com"}"#), 422, "missing_field")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada"}"#), 422, "missing_field")
        refused(try request(port, "POST", "/customers", json: #"{"name": "  ", "email": "a@example.com"}"#), 422, "invalid_field")
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "country": ""}"#), 422, "invalid_field")
        refused(try request(port, "PATCH", "/customers/1", json: "{}"), 400, "empty_update")
    }

    @Test func unknownFieldsAreRefusedNotIgnored() throws {
        let answer = try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "emial": "a@example.com"}"#)
        refused(answer, 400, "unknown_field")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("emial"))
        refused(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "id": 7}"#), 400, "unknown_field")
    }

    @Test func invalidEmailsAreRefusedWithoutQuotingThem() throws {
        for email in ["plainaddress", "two@@example.com", "@example.com", "ada@", "ada@example", "ada@.example.com", "ada@example..com",
                      "a da@example.com", "ada@exa_mple.com", String(repeating: "a", count: 65) + "@example.com",
                      "ada@" + String(repeating: "b", count: 250) + ".com", "ada\u{0}@example.com"] {
            let body = try JSONSerialization.data(withJSONObject: ["name": "Ada", "email": email])
            let answer = try request(service.port, "POST", "/customers", body: body)
            refused(answer, 422, "invalid_email")
            // The address is sealed data: an error body never quotes it.
            #expect(!String(decoding: answer.body, as: UTF8.self).contains(email))
        }
        refused(try request(service.port, "GET", "/customers?email=not-an-address"), 422, "invalid_email")
    }

    @Test func oversizeBodiesAndOtherMediaTypes() throws {
        let note = String(repeating: "n", count: 20_000)
        refused(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "note": "\#(note)"}"#), 413, "body_too_large")
        let longNote = String(repeating: "n", count: 4001)
        refused(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com", "note": "\#(longNote)"}"#), 422, "invalid_field")
        refused(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com"}"#, contentType: "text/plain"), 415, "unsupported_media_type")
        refused(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "a@example.com"}"#, contentType: nil), 415, "unsupported_media_type")
    }

    @Test func badIdsQueriesAndRoutes() throws {
        let port = service.port
        refused(try request(port, "GET", "/customers/abc"), 400, "bad_id")
        refused(try request(port, "GET", "/customers/0"), 400, "bad_id")
        refused(try request(port, "GET", "/customers/99999999999999999999"), 400, "bad_id")
        refused(try request(port, "GET", "/customers/12345"), 404, "not_found")
        refused(try request(port, "DELETE", "/customers/12345"), 404, "not_found")
        refused(try request(port, "PATCH", "/customers/12345", json: #"{"name": "Bo"}"#), 404, "not_found")
        refused(try request(port, "GET", "/customers?limit=0"), 400, "bad_query")
        refused(try request(port, "GET", "/customers?limit=101"), 400, "bad_query")
        refused(try request(port, "GET", "/customers?after=-1"), 400, "bad_query")
        refused(try request(port, "GET", "/customers?after=x"), 400, "bad_query")
        refused(try request(port, "GET", "/customers?email=a@example.com&limit=2"), 400, "bad_query")
        refused(try request(port, "GET", "/nowhere"), 404, "not_found")
    }

    /// ASCII addresses take a path of their own (bytes, not Foundation's
    /// Unicode tables): the same address comes out as on the other.
    @Test func addressesAreStoredTrimmedLoweredAndComposed() throws {
        for (given, stored) in [(" Ada.Lovelace+x@Example-Mail.CO.uk\t", "ada.lovelace+x@example-mail.co.uk"),
                                ("BO@EXAMPLE.COM", "bo@example.com"), ("\u{2003}Cy@Example.com", "cy@example.com"),
                                ("JOSE\u{0301}@example.com", "jos\u{E9}@example.com")] {
            let body = try JSONSerialization.data(withJSONObject: ["name": "Ada", "email": given])
            let answer = try request(service.port, "POST", "/customers", body: body)
            #expect(answer.status == 201 && answer.json?["email"] as? String == stored, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        for given in ["\nada@example.com", "ada@example.com\u{7F}", "ada@exam\u{1}ple.com", "ada@example.com\r"] {
            let body = try JSONSerialization.data(withJSONObject: ["name": "Ada", "email": given])
            refused(try request(service.port, "POST", "/customers", body: body), 422, "invalid_email")
        }
    }

    @Test func aSecondCustomerWithTheSameEmailIsAConflict() throws {
        let port = service.port
        let first = try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "Ada@Example.com"}"#)
        #expect(first.status == 201)
        // Lowercased first: the same address, written otherwise, is the same customer.
        refused(try request(port, "POST", "/customers", json: #"{"name": "Other", "email": "ada@example.COM"}"#), 409, "conflict")
        let second = try request(port, "POST", "/customers", json: #"{"name": "Bo", "email": "bo@example.com"}"#)
        #expect(second.status == 201)
        let id = try #require(second.json?["id"] as? Int)
        refused(try request(port, "PATCH", "/customers/\(id)", json: #"{"email": "ada@example.com"}"#), 409, "conflict")
        // Unchanged by the refused update.
        #expect(try request(port, "GET", "/customers/\(id)").json?["email"] as? String == "bo@example.com")
    }

    /// After all of the above on one connection, the service still answers, on the same connection too.
    @Test func theServiceKeepsServing() throws {
        let connection = try HTTPConnection(port: service.port)
        for _ in 0..<20 {
            _ = try connection.send("POST", "/customers", json: "{bad")
            _ = try connection.send("POST", "/customers", json: #"{"name": 1}"#)
            _ = try connection.send("GET", "/customers/abc")
        }
        let created = try connection.send("POST", "/customers", json: #"{"name": "Cy", "email": "cy@example.com", "note": "fine", "country": "FR"}"#)
        #expect(created.status == 201)
        #expect(try connection.send("GET", "/health").status == 200)
        #expect(try connection.send("GET", "/ready").status == 200)
    }

    /// Review of issue 38, L1 and L6: an address written with decomposed
    /// accents is the same customer as its composed form; invisible format
    /// characters (a zero-width space, a right-to-left override) and control
    /// characters in a name or country are refused.
    @Test func lookAlikeAddressesAndControlCharacters() throws {
        let port = service.port
        let composed = try JSONSerialization.data(withJSONObject: ["name": "José", "email": "jos\u{E9}@example.com"])
        #expect(try request(port, "POST", "/customers", body: composed).status == 201)
        let decomposed = try JSONSerialization.data(withJSONObject: ["name": "Jose", "email": "jose\u{301}@example.com"])
        refused(try request(port, "POST", "/customers", body: decomposed), 409, "conflict")
        for email in ["ada\u{200B}@example.com", "ada\u{202E}@example.com"] {
            refused(try request(port, "POST", "/customers", body: try JSONSerialization.data(withJSONObject: ["name": "Ada", "email": email])), 422, "invalid_email")
        }
        // As a JSON escape (raw, a leading U+FEFF is dropped before the service sees the string).
        refused(try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "\ufeffada@example.com"}"#), 422, "invalid_email")
        for name in ["Ada\u{0}", "Ada\u{7}", "A\u{202E}da"] {
            refused(try request(port, "POST", "/customers", body: try JSONSerialization.data(withJSONObject: ["name": name, "email": "n@example.com"])), 422, "invalid_field")
        }
        refused(try request(port, "POST", "/customers", body: try JSONSerialization.data(withJSONObject: ["name": "Ada", "email": "c@example.com", "country": "U\u{0}K"])), 422, "invalid_field")
    }

    /// Review of issue 38, L3: a body the HTTP parser refuses (a malformed
    /// chunk) is the client's error, a 400, not a 500 logged as the service's.
    @Test func aMalformedChunkedBodyIsA400() throws {
        let connection = try HTTPConnection(port: service.port)
        let answer = try connection.sendRaw("POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n")
        refused(answer, 400, "bad_request")
        #expect(!service.errors.contains(" error customer-service"), "\(service.errors)")
        #expect(try request(service.port, "GET", "/health").status == 200)
    }
}
