import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// `strongroom import --seal` seals columns in the new copy before it takes
/// its name. Whoever holds the database key reads every page of the file,
/// freed space and freelist pages included: none may still hold a value
/// that sealing replaced.
@Suite("Sealed import: no replaced plaintext left in any page")
struct SealedImportRemnantTests {
    let dir = TemporaryDirectory()
    static let search = Fixtures.repositoryRoot + "/Tests/StrongroomFieldsTests/PageSearch/find_in_pages.py"

    /// Needles found in a page of `path`, decrypted with the key in `keyFile`.
    func pagesHolding(_ needles: [String], in path: String, keyFile: String) async throws -> [String: [Int]] {
        let needleFile = dir.file("needles.txt")
        try needles.joined(separator: "\n").write(toFile: needleFile, atomically: true, encoding: .utf8)
        let result = try await ProcessRunner.run("/usr/bin/env", ["python3", Self.search, keyFile, path, needleFile])
        try #require(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["found"] as? [String: [Int]])
    }

    /// A plaintext source whose notes, once sealed, no longer fit where
    /// they were: lengths from 100 bytes to past a page, so that on either
    /// engine's page size some notes move to overflow pages and leave their
    /// old cells behind (with secure_delete off and no VACUUM, 10 of the 60
    /// stayed readable in the file on SQLCipher 3.4.1).
    func noteSource() throws -> (path: String, markers: [String]) {
        let path = dir.file("notes.sqlite")
        let db = try Connection(path: path, configuration: .plaintext)
        try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
        var markers: [String] = []
        for id in 1...60 {
            let marker = "remnant-marker-\(id)-"
            markers.append(marker)
            try db.execute(sql: "INSERT INTO note VALUES (?, ?)", arguments: [id, marker + String(repeating: "x", count: id * 83)])
        }
        db.close()
        return (path, markers)
    }

    /// The import turns secure_delete on for `finishing`; one that turns it
    /// off again gets a VACUUM after it instead.
    @Test(arguments: [false, true]) func noPageOfASealedImportHoldsAValueItSealed(finishingTurnsSecureDeleteOff: Bool) async throws {
        let key = DatabaseKey.generate()
        let keyFile = dir.file("db.key")
        try KeyFile.write(key, to: keyFile)
        let keyring = FieldKeyring.generate()
        let (source, markers) = try noteSource()

        // The search reads the pages: an import that seals nothing shows every value.
        let unsealed = dir.file("unsealed.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: unsealed, key: key)
        #expect(try await pagesHolding(markers, in: unsealed, keyFile: keyFile).count == markers.count)

        let sealed = dir.file("sealed.db")
        _ = try PlaintextConversion.importPlaintext(from: source, to: sealed, key: key, finishing: { (db: Connection) throws(StrongroomError) -> Void in
            if finishingTurnsSecureDeleteOff { try db.execute(sql: "PRAGMA secure_delete = OFF") }
            do {
                try ColumnSealing.sealInPlace([.randomized("body", in: "note")], keyring: keyring, in: db)
            } catch {
                throw StrongroomError(.sealedValue, "\(error)")
            }
        })
        let left = try await pagesHolding(markers, in: sealed, keyFile: keyFile)
        #expect(left.isEmpty, "values sealing replaced are still in pages of the file: \(left.keys.sorted().prefix(5)) (\(left.count) of \(markers.count))")

        // And the copy is whole: every sealed value opens.
        var configuration = Configuration(key: key)
        configuration.addFieldFunctionsForTools(keyring: keyring)
        let db = try Connection(path: sealed, configuration: configuration)
        #expect(try ColumnSealing.failures(keyring: keyring, in: db).isEmpty)
        #expect(try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") == markers.count)
    }
}
