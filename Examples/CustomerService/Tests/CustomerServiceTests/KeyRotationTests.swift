import Foundation
import Testing

/// Review of issue 38, H2: a unique sealed e-mail across a field-key change.
/// The blind index is computed under a key: once a new key is active, the
/// index of a new value differs from an old row's, so the UNIQUE index alone
/// lets a duplicate in, a lookup under the active key alone misses the old
/// rows, and `fields rotate` then fails on the duplicate. The service looks
/// up, and checks uniqueness, under every key of its keyring.
@Suite("A field-key change: lookups and uniqueness hold")
struct KeyRotationTests {
    @Test func aUniqueEmailStaysUniqueAcrossANewKeyAndRotation() throws {
        let fixture = try ServiceFixture()
        let first = try ServiceProcess.started(fixture, label: "key-1")
        let ada = try request(first.port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com", "note": "under key 1"}"#)
        #expect(ada.status == 201)
        #expect(first.terminate().status == 0)

        let cli = ServiceProcess.strongroom
        #expect(try runCommand(cli, ["fields", "add-key", "--field-keys", fixture.keyringFile]).status == 0)
        #expect(try runCommand(cli, ["fields", "activate", "--key-id", "2", "--field-keys", fixture.keyringFile]).status == 0)

        let second = try ServiceProcess.started(fixture, label: "key-2")
        // Found, though sealed and indexed under key 1.
        #expect(try request(second.port, "GET", "/customers?email=ada@example.com").json?["name"] as? String == "Ada")
        let impostor = try request(second.port, "POST", "/customers", json: #"{"name": "Impostor", "email": "ada@example.com"}"#)
        #expect(impostor.status == 409)
        let bo = try request(second.port, "POST", "/customers", json: #"{"name": "Bo", "email": "bo@example.com"}"#)
        #expect(bo.status == 201)
        let boID = try #require(bo.json?["id"] as? Int)
        #expect(try request(second.port, "PATCH", "/customers/\(boID)", json: #"{"email": "ada@example.com"}"#).status == 409)
        // A customer keeps her own address under a change of name.
        let adaID = try #require(ada.json?["id"] as? Int)
        let renamed = try request(second.port, "PATCH", "/customers/\(adaID)", json: #"{"name": "Ada L.", "email": "ada@example.com"}"#)
        #expect(renamed.status == 200, "\(String(decoding: renamed.body, as: UTF8.self))")
        #expect(second.terminate().status == 0)

        // Every value moves to key 2, without a duplicate to stop it.
        let rotate = try runCommand(cli, ["fields", "rotate", "--database", fixture.database, "--key-file", fixture.keyFile, "--field-keys", fixture.keyringFile])
        #expect(rotate.status == 0, "\(rotate.output)")
        let third = try ServiceProcess.started(fixture, label: "rotated")
        #expect(try request(third.port, "GET", "/customers?email=ada@example.com").json?["name"] as? String == "Ada L.")
        #expect(try request(third.port, "GET", "/customers?email=bo@example.com").json?["id"] as? Int == boID)
        #expect(try request(third.port, "POST", "/customers", json: #"{"name": "Impostor", "email": "ada@example.com"}"#).status == 409)
        #expect(third.terminate().status == 0)
    }
}
