import Foundation
import StrongroomTestSupport
import Testing

/// The two ported programs of the guide "Coming from FMDB and sqlite3" run
/// against encrypted databases, twice (the second run reopens them with the
/// key file the first one wrote), and print what they did.
@Suite("Example programs")
struct ExampleProgramTests {
    let dir = TemporaryDirectory()

    func example(_ name: String) -> String {
        let products = URL(fileURLWithPath: Fixtures.strongroomBinary).deletingLastPathComponent().path
        return products + "/" + name
    }

    @Test func theMoviesProgramRunsOnAnEncryptedDatabase() async throws {
        for _ in 0..<2 {
            let result = try await ProcessRunner.run(example("movies"), [dir.path])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("imported 5 movies"), "\(result.stdout)")
            #expect(result.stdout.contains("1979 Alien (Science fiction), has a link"))
            #expect(result.stdout.contains("updated 1 movie: Alien watched yes, 1 like"))
            #expect(result.stdout.contains("deleted 1 movie; 4 left after a rolled-back DELETE"))
        }
        #expect(!Fixtures.bytes(of: dir.file("movies.db")).starts(with: Array("SQLite format 3".utf8)))
    }

    @Test func thePhotosProgramRunsOnAnEncryptedDatabase() async throws {
        for _ in 0..<2 {
            let result = try await ProcessRunner.run(example("photos"), [dir.path])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("inserted 3 photos, last rowid 3"), "\(result.stdout)")
            #expect(result.stdout.contains("1 harbour.jpg: 12192768 pixels, rating 4.5 (REAL), thumbnail 4 bytes"))
            #expect(result.stdout.contains("2 snow.png: 2073600 pixels, rating none (NULL), thumbnail 4 bytes"))
            #expect(result.stdout.contains("widest: harbour.jpg"))
            #expect(result.stdout.contains("rated 1, deleted 1; 2 left"))
        }
        #expect(!Fixtures.bytes(of: dir.file("photos.db")).starts(with: Array("SQLite format 3".utf8)))
    }

    /// The checked-in model file is the Swift model's (issue 10): regenerate
    /// it with `chinook-model schema Migrations/schema.sql` when the model
    /// changes. And the migrations reach it.
    @Test func theChinookModelFileIsCurrentAndTheMigrationsReachIt() async throws {
        let generated = dir.file("schema.sql")
        let written = try await ProcessRunner.run(example("chinook-model"), ["schema", generated])
        #expect(written.status == 0, "\(written.stderr)")
        let checkedIn = Fixtures.repositoryRoot + "/Migrations/schema.sql"
        #expect(try String(contentsOfFile: generated, encoding: .utf8) == String(contentsOfFile: checkedIn, encoding: .utf8),
                "Migrations/schema.sql is stale: run `swift run chinook-model schema Migrations/schema.sql`")
        let check = try await ProcessRunner.run(Fixtures.strongroomBinary, ["diff", "--check", "--migrations", Fixtures.repositoryRoot + "/Migrations"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }
}
