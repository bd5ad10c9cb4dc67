import Foundation
import Testing

/// Issue 38, item 1: each route does what it says, sealed fields opened in
/// answers and sealed in the file.
@Suite("Routes: create, read, update, delete, pages, lookup by e-mail")
struct RoutesTests {
    let fixture: ServiceFixture
    let service: ServiceProcess

    init() throws {
        fixture = try ServiceFixture()
        service = try ServiceProcess.started(fixture)
    }

    @Test func createGetUpdateDelete() throws {
        let port = service.port
        let created = try request(port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com", "note": "prefers tea", "country": "UK"}"#)
        #expect(created.status == 201)
        let id = try #require(created.json?["id"] as? Int)
        #expect(created.headers["location"] == "/customers/\(id)")
        let read = try request(port, "GET", "/customers/\(id)")
        #expect(read.status == 200)
        #expect(read.json?["email"] as? String == "ada@example.com")
        #expect(read.json?["note"] as? String == "prefers tea")
        #expect(read.json?["country"] as? String == "UK")

        let patched = try request(port, "PATCH", "/customers/\(id)", json: #"{"note": null, "email": "ada.l@example.com"}"#)
        #expect(patched.status == 200)
        #expect(patched.json?["note"] is NSNull)
        #expect(patched.json?["name"] as? String == "Ada")
        // The old address finds no one, the new one finds her: the blind index moved with the e-mail.
        #expect(try request(port, "GET", "/customers?email=ada@example.com").status == 404)
        #expect(try request(port, "GET", "/customers?email=ADA.L@example.com").json?["id"] as? Int == id)

        #expect(try request(port, "DELETE", "/customers/\(id)").status == 204)
        #expect(try request(port, "GET", "/customers/\(id)").status == 404)
    }

    @Test func keysetPagesVisitEveryCustomerOnce() throws {
        let port = service.port
        var ids: [Int] = []
        for index in 1...25 {
            let created = try request(port, "POST", "/customers", json: #"{"name": "C\#(index)", "email": "c\#(index)@example.com"}"#)
            ids.append(try #require(created.json?["id"] as? Int))
        }
        var seen: [Int] = []
        var after = 0
        while true {
            let page = try request(port, "GET", "/customers?after=\(after)&limit=10")
            #expect(page.status == 200)
            let customers = try #require(page.json?["customers"] as? [[String: any Sendable]])
            seen += customers.compactMap { $0["id"] as? Int }
            guard let next = page.json?["next"] as? Int else { break }
            after = next
        }
        #expect(seen == ids)
    }

    /// What the file holds: no e-mail or note in the clear, even with the database key.
    @Test func sealedFieldsAreSealedInTheFile() throws {
        let created = try request(service.port, "POST", "/customers", json: #"{"name": "Dee", "email": "dee-sealed@example.com", "note": "note-sealed-marker"}"#)
        #expect(created.status == 201)
        // With the database key alone: the stored values.
        let raw = try fixture.openWithoutKeyring().fetchAll(String.self, sql: "SELECT hex(email) || hex(note) FROM customer").joined()
        #expect(!raw.isEmpty)
        #expect(!raw.contains(Data("dee-sealed".utf8).map { String(format: "%02X", $0) }.joined()))
        #expect(!raw.contains(Data("note-sealed".utf8).map { String(format: "%02X", $0) }.joined()))
    }
}
