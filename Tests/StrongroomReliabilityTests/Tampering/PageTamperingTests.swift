import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 12's tampering, page by page: a byte flipped in each kind of page
/// of an encrypted database (the header page, table and index pages, leaf
/// and interior, overflow and freelist pages; in the encrypted body, the IV
/// and the HMAC) must fail SQLCipher's page HMAC and be reported as
/// damage, never read back as data. Page 1 is where the key is checked, so
/// SQLCipher cannot tell damage there from a wrong key: that error says both,
/// as does the bare SQL error SQLCipher 3 gives for some pages (overflow).
/// The 12 bytes after the HMAC are padding SQLCipher 3 neither authenticates
/// nor reads: flipping them changes nothing read, which is what is checked.
@Suite("Tampering: bytes flipped in each kind of page")
struct PageTamperingTests {
    let dir = TemporaryDirectory()
    static let classifier = Fixtures.repositoryRoot + "/Tests/StrongroomReliabilityTests/Tampering/page_kinds.py"

    /// A database with every kind of page: a table and an index deep
    /// enough for interior pages, values long enough for overflow pages,
    /// and deleted rows on the freelist.
    func makeDatabase(key: DatabaseKey) throws -> String {
        let path = dir.file("pages.db")
        var configuration = Configuration(key: key)
        configuration.journalMode = .delete
        let db = try Connection(path: path, configuration: configuration)
        try db.execute(sql: """
            CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body BLOB);
            CREATE INDEX note_title ON note(title);
            INSERT INTO note(title, body) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
              SELECT 'title ' || i || ' ' || hex(randomblob(8)), CASE WHEN i % 100 = 0 THEN randomblob(5000) ELSE NULL END FROM n;
            DELETE FROM note WHERE id BETWEEN 1000 AND 1600;
            """)
        db.close()
        return path
    }

    /// What reading everything in a file gave.
    enum Outcome {
        /// Every row read back, and integrity_check passed.
        case read(content: [String])
        /// integrity_check found damage SQLite's reads did not meet.
        case integrityCheck([String])
        /// The library threw.
        case error(StrongroomError)
    }

    /// Opens `path` and reads every row, through the table and the index, then runs integrity_check.
    func readAll(_ path: String, key: DatabaseKey) -> Outcome {
        do {
            let db = try Connection(path: path, configuration: Configuration(key: key))
            defer { db.close() }
            let rows = try db.fetchAll(String.self, sql: "SELECT id || ':' || title || ':' || coalesce(hex(body), '') FROM note ORDER BY id")
            let titles = try db.fetchAll(String.self, sql: "SELECT title FROM note INDEXED BY note_title ORDER BY title")
            let check = try db.fetchAll(String.self, sql: "PRAGMA integrity_check")
            return check == ["ok"] ? .read(content: rows + titles) : .integrityCheck(check)
        } catch let error as StrongroomError {
            return .error(error)
        } catch {
            return .error(StrongroomError(.sqlite, "\(error)"))
        }
    }

    @Test func aFlippedByteInAnyKindOfPageIsReportedAsDamage() async throws {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("db.key"))
        let path = try makeDatabase(key: key)
        // The page layout of each engine's default format: SQLCipher 3 has 1024-byte
        // pages ending in a 16-byte IV, a 20-byte HMAC-SHA1 and 12 bytes of padding
        // the HMAC does not cover; SQLCipher 4 has 4096-byte pages ending in the IV
        // and a 64-byte HMAC-SHA512, with no padding.
        let isSQLCipher4 = SQLCipherLibrary.nativeFormat == .sqlcipher4
        let pageSize = isSQLCipher4 ? 4096 : 1024, reserved = isSQLCipher4 ? 80 : 48
        let classified = try await ProcessRunner.run("/usr/bin/env", ["python3", Self.classifier, dir.file("db.key"), path, "\(pageSize)", "\(reserved)"])
        #expect(classified.status == 0, "\(classified.stderr)")
        let kinds = try JSONSerialization.jsonObject(with: Data(classified.stdout.utf8)) as? [String: String] ?? [:]
        let byKind = Dictionary(grouping: kinds.keys.compactMap(Int.init), by: { kinds["\($0)"]! })
        #expect(Set(byKind.keys) == ["header page (page 1: salt, schema root)", "table leaf", "table interior", "index leaf",
                                    "index interior", "overflow", "freelist trunk", "freelist leaf"], "\(byKind.keys.sorted())")
        let original = Fixtures.bytes(of: path)
        guard case .read(let content) = readAll(path, key: key) else {
            Issue.record("the untouched file does not read")
            return
        }
        // Where in a page: the encrypted body (on page 1 after the 16-byte
        // salt), the IV, the HMAC, and (SQLCipher 3) 12 bytes of padding the
        // HMAC does not cover, which SQLite never reads.
        let ivStart = pageSize - reserved, hmacStart = ivStart + 16, hmacEnd = hmacStart + (isSQLCipher4 ? 64 : 20)
        var regions: [(String, ClosedRange<Int>)] = [("salt or body start", 0...15), ("body", 16...(ivStart - 1)), ("IV", ivStart...(hmacStart - 1)),
                                                     ("HMAC", hmacStart...(hmacEnd - 1))]
        if hmacEnd < pageSize { regions.append(("padding after the HMAC", hmacEnd...(pageSize - 1))) }
        // Reproducible: STRONGROOM_TAMPER_SEED replays a run; every failure names its seed.
        let seed = ProcessInfo.processInfo.environment["STRONGROOM_TAMPER_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        for (kind, pages) in byKind.sorted(by: { $0.key < $1.key }) {
            var reported: [String: Int] = [:]
            var undetected = 0, trials = 0
            for page in pages.sorted().shuffled(using: &random).prefix(3) {
                for (region, offsets) in regions {
                    var bytes = original
                    let offset = (page - 1) * pageSize + Int.random(in: offsets, using: &random)
                    bytes[offset] ^= UInt8.random(in: 1...255, using: &random)
                    let copy = dir.file("tampered.db")
                    try Data(bytes).write(to: URL(fileURLWithPath: copy))
                    trials += 1
                    switch readAll(copy, key: key) {
                    case .read(let tampered) where tampered == content:
                        // A page SQLite never reads (a free page's old bytes), or padding
                        // it never reads, changes nothing read.
                        reported["never read, every row as written", default: 0] += 1
                        #expect(kind == "freelist leaf" || region == "padding after the HMAC",
                                "\(kind), page \(page), \(region) (seed \(seed)): a flipped byte went unnoticed")
                    case .read:
                        undetected += 1
                        Issue.record("\(kind), page \(page), \(region) (seed \(seed)): a flipped byte read back as data")
                    case .integrityCheck:
                        reported["integrity_check", default: 0] += 1
                    case .error(let error) where page == 1:
                        reported[error.code.rawValue, default: 0] += 1
                        // SQLCipher checks the key on page 1: damage there looks like a wrong key, and the error says both.
                        #expect(error.code == .wrongKey && error.message.contains("damaged"), "\(kind) \(region): \(error.code): \(error.message)")
                    case .error(let error):
                        reported[error.code.rawValue, default: 0] += 1
                        // Damage; or, where SQLCipher gives only a bare SQL error, an error that says both.
                        #expect((error.code == .corrupt || error.code == .sqlite) && error.message.contains("HMAC"),
                                "\(kind) \(region) (seed \(seed)): \(error.code): \(error.message)")
                    }
                }
            }
            try ReliabilityResults.write("tampering", name: "page " + kind, [
                "target": "a byte flipped in one page: \(kind) (salt or body start, body, IV, HMAC, padding)", "trials": trials, "reported": reported, "undetected": undetected,
            ])
        }
    }
}
