import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Blind indexes from the command line (issue 39): `import --index`,
/// `fields index add|rebuild|drop`, `fields status`, `fields plan`, and a
/// lookup in `strongroom sql`, on the Chinook sample.
@Suite("strongroom CLI: blind indexes")
struct BlindIndexCLITests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String], input: String? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, currentDirectory: dir.path)
    }

    static let keys = ["--key-file", "db.key", "--field-keys", "fields.keyring"]

    func importIndexed() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--seal", "Customer.Email:indexed", "--seal", "Customer.LastName",
                                      "--index", "Customer.email_folded=Email:trim,nfkc-casefold/8",
                                      "--index", "Customer.name_country=LastName:nfkc-casefold+Country/3"] + Self.keys)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Blind index Customer.email_folded (Email: trim,nfkc-casefold; 8 bits)."), "\(imported.stdout)")
    }

    @Test func statusListsEveryIndexWithItsBitsRowsValuesAndLargestGroup() async throws {
        try await importIndexed()
        let status = try await run(["fields", "status", "--database", "c.db", "--key-file", "db.key", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let indexes = try #require(report["blind_indexes"] as? [[String: Any]])
        #expect(indexes.map { $0["name"] as? String } == ["Email_blind_index", "email_folded", "name_country"])
        #expect(indexes.map { $0["bits"] as? Int } == [128, 8, 3])
        #expect(indexes.allSatisfy { $0["rows"] as? Int == 59 && $0["state"] as? String == "ready" })
        // 3 bits: at most 8 index values for 59 rows.
        #expect((indexes[2]["distinct_index_values"] as? Int ?? 99) <= 8 && (indexes[2]["largest_group"] as? Int ?? 0) >= 8)
        #expect(indexes[0]["distinct_index_values"] as? Int == 59 && indexes[0]["largest_group"] as? Int == 1)
        let text = try await run(["fields", "status", "--database", "c.db", "--key-file", "db.key"])
        #expect(text.stdout.contains("blind index Customer.name_country (LastName: nfkc-casefold, Country; 3 bits): 59 rows"), "\(text.stdout)")
    }

    @Test func thePlannerPrintsATableAndJSONWithoutAValue() async throws {
        try await importIndexed()
        let plan = try await run(["fields", "plan", "--database", "c.db", "--column", "Customer.Email", "--json"] + Self.keys)
        #expect(plan.status == 0, "\(plan.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect(report["rows"] as? Int == 59 && report["distinct_values"] as? Int == 59)
        let candidates = try #require(report["candidates"] as? [[String: Any]])
        #expect(candidates.first?["bits"] as? Int == 1 && candidates.first?["index_values"] as? Int == 2)
        #expect(report["recommended_bits"] as? Int ?? 0 >= 1)
        #expect(!plan.stdout.contains("@") && !plan.stderr.contains("@"), "no e-mail in the output")
        // The exact 128-bit index singles every row out: said on stderr.
        let table = try await run(["fields", "plan", "--database", "c.db", "--index", "Customer.email_folded"] + Self.keys)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("bits  expected C  measured C"), "\(table.stdout)")
        #expect(table.stdout.contains("Largest length keeping every index value shared by at least 2 rows"))
        let exact = try await run(["fields", "plan", "--database", "c.db", "--column", "Customer.Email"] + Self.keys)
        #expect(exact.stderr.contains("At its declared 128 bits") && exact.stderr.contains("singles out 59 of 59 rows"), "\(exact.stderr)")
    }

    @Test func aLookupInSQLDropsTheFalsePositivesWithTheDocumentedRecipe() async throws {
        try await importIndexed()
        let probe = " LUISG@EMBRAER.COM.BR"
        let recipe = """
            SELECT CustomerId, strongroom_open(Email, 'Customer', 'Email', CustomerId) AS email FROM Customer
             WHERE email_folded = strongroom_index('Customer', 'email_folded', '\(probe)')
               AND strongroom_transform('trim,nfkc-casefold', strongroom_open(Email, 'Customer', 'Email', CustomerId))
                   = strongroom_transform('trim,nfkc-casefold', '\(probe)')
             ORDER BY CustomerId LIMIT 5;
            """
        let found = try await run(["sql", "--database", "c.db", "--csv"] + Self.keys, input: recipe)
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout == "CustomerId,email\n1,luisg@embraer.com.br\n", "\(found.stdout)")
        // Without the second condition, the 8-bit index's candidates include others.
        let candidates = try await run(["sql", "--database", "c.db", "--csv"] + Self.keys,
                                       input: "SELECT count(*) FROM Customer WHERE email_folded = strongroom_index('Customer', 'email_folded', '\(probe)');")
        #expect(candidates.stdout.hasPrefix("count(*)\n"), "\(candidates.stdout)")
        let count = Int(candidates.stdout.split(separator: "\n").last ?? "") ?? 0
        #expect(count >= 1)
    }

    /// The Sealing columns article's Chinook figures that do not depend on
    /// the key (a truncated length's groups do).
    @Test func theArticlesChinookFiguresThatDoNotDependOnTheKey() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--seal", "Track.Composer", "--seal", "Track.Name"] + Self.keys)
        #expect(imported.status == 0, "\(imported.stderr)")
        let plan = try await run(["fields", "plan", "--database", "c.db", "--column", "Track.Composer", "--transform", "nfkc-casefold", "--json"] + Self.keys)
        #expect(plan.status == 0, "\(plan.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect(report["rows"] as? Int == 3503 && report["indexed_rows"] as? Int == 2526 && report["distinct_values"] as? Int == 853)
        let declared = try #require(report["declared"] as? [String: Any])
        #expect(declared["bits"] as? Int == 128 && declared["rows_singled_out"] as? Int == 566 && declared["index_values"] as? Int == 853 && declared["largest_group"] as? Int == 80)
        let candidates = try #require(report["candidates"] as? [[String: Any]])
        let recommended = try #require(report["recommended_bits"] as? Int)
        #expect(candidates.prefix(recommended).allSatisfy { ($0["smallest_group"] as? Int ?? 0) >= 2 })
        #expect((candidates[recommended]["smallest_group"] as? Int ?? 2) < 2)
        #expect((report["warnings"] as? [String] ?? []).contains { $0.contains("input repeats: 2526 rows hold 853 distinct values") })
        let names = try await run(["fields", "plan", "--database", "c.db", "--column", "Track.Name", "--json"] + Self.keys)
        let namesReport = try #require(try JSONSerialization.jsonObject(with: Data(names.stdout.utf8)) as? [String: Any])
        #expect(namesReport["distinct_values"] as? Int == 3257)
    }

    @Test func changingRebuildingAndDroppingAnIndex() async throws {
        try await importIndexed()
        let changed = try await run(["fields", "index", "add", "--database", "c.db", "Customer.email_folded=Email:trim,nfkc-casefold/4", "--batch-size", "10"] + Self.keys)
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed.stdout.contains("Built Customer.email_folded (Email: trim,nfkc-casefold; 4 bits) of c.db: 59 rows in 6 batches."), "\(changed.stdout)")
        let rebuilt = try await run(["fields", "index", "rebuild", "--database", "c.db", "Customer.email_folded", "--json"] + Self.keys)
        #expect(rebuilt.status == 0 && rebuilt.stdout.contains("\"rows\" : \"59\""), "\(rebuilt.stdout)\(rebuilt.stderr)")
        let status = try await run(["fields", "status", "--database", "c.db", "--key-file", "db.key"])
        #expect(status.stdout.contains("(Email: trim,nfkc-casefold; 4 bits): 59 rows, "), "\(status.stdout)")
        let dropped = try await run(["fields", "index", "drop", "--database", "c.db", "Customer.email_folded"] + Self.keys)
        #expect(dropped.status == 0, "\(dropped.stderr)")
        #expect(!(try await run(["fields", "status", "--database", "c.db", "--key-file", "db.key"])).stdout.contains("email_folded"))
        // An export leaves no index column and no registry behind.
        let exported = try await run(["export", "--database", "c.db", "--to", "plain.sqlite", "--i-understand-the-output-is-plaintext"] + Self.keys)
        #expect(exported.status == 0, "\(exported.stderr)")
        let plain = try Connection(path: dir.file("plain.sqlite"), configuration: .plaintext)
        #expect(try plain.fetchAll(sql: "PRAGMA table_info(Customer)").map { try $0.decode(String.self, column: "name") }.allSatisfy { !$0.contains("_") || $0 == "email_folded" })
        #expect(try plain.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE 'strongroom%' OR name LIKE '%name_country%'") == 0)
    }

    @Test func specsThatCannotBeAnIndexAreRefusedWithTheSyntax() async throws {
        try await importIndexed()
        for (spec, says) in [("Customer.x=Email/64/unique", "truncated"), ("Customer.x=Email:lowercase/8", "'lowercase' is not a transformation"),
                             ("Customer.x=Email/0", "1 to 128 bits"), ("x=Email", "TABLE.NAME"), ("Customer.x=LastName+LastName/8", "twice")] {
            let result = try await run(["fields", "index", "add", "--database", "c.db", spec] + Self.keys)
            #expect(result.status == 64, "\(spec): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(spec): \(result.stderr)")
        }
        // An index of plain columns only.
        let plain = try await run(["fields", "index", "add", "--database", "c.db", "Customer.c=Country/8"] + Self.keys)
        #expect(plain.status == 64 && plain.stderr.contains("covers no sealed column"), "\(plain.stderr)")
    }
}
