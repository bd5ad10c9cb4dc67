import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// The walls a newcomer from FMDB or the sqlite3 C API met (issue 9), each
/// as they met it.
private struct MaybeYear: Decodable { var year: Int? }

@Suite("Coming from FMDB and sqlite3")
struct NewcomerTests {
    /// `fetchOne(String.self, …)` threw on a NULL value: a single value that is
    /// NULL reads as nil, like no row at all (as in GRDB).
    @Test func aNullScalarReadsAsNil() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE movie(id INTEGER PRIMARY KEY, title TEXT, year INTEGER); INSERT INTO movie(title) VALUES (NULL)")
        #expect(try db.fetchOne(String.self, sql: "SELECT title FROM movie") == nil)
        #expect(try db.fetchOne(Int.self, sql: "SELECT year FROM movie") == nil)
        #expect(try db.fetchOne(Int.self, sql: "SELECT max(year) FROM movie WHERE 0") == nil)
        #expect(try db.fetchOne(String.self, sql: "SELECT title FROM movie WHERE 0") == nil)
    }

    /// Conversions are strict (an Int is not read from TEXT '42', nor a
    /// String from an INTEGER); the error names the stored type and says how
    /// to convert, without quoting the value.
    @Test func aStrictConversionSaysHowToConvert() throws {
        let db = try Connection.inMemory()
        let text = #expect(throws: StrongroomError.self) { try db.fetchOne(Int.self, sql: "SELECT '42' AS n") }
        #expect(text?.message.contains("TEXT") == true)
        #expect(text?.message.contains("CAST(n AS INTEGER)") == true, "\(text?.message ?? "")")
        #expect(text?.message.contains("42") == false)
        let average = #expect(throws: StrongroomError.self) { try db.fetchOne(Int.self, sql: "SELECT avg(x) AS mean FROM (SELECT 1 AS x UNION ALL SELECT 2)") }
        #expect(average?.message.contains("Double") == true, "\(average?.message ?? "")")
        #expect(try db.fetchOne(Int.self, sql: "SELECT CAST('42' AS INTEGER)") == 42)
    }

    /// One conversion policy: a record's properties convert as single values
    /// do. Records used SQLite's own coercions, so TEXT 'abc' read into an
    /// Int property as 0 and an INTEGER into a String property as "42".
    @Test func aRecordConvertsLikeASingleValue() throws {
        struct Movie: Decodable { var title: String; var year: Int }
        let db = try Connection.inMemory()
        let year = #expect(throws: StrongroomError.self) { try db.fetchOne(Movie.self, sql: "SELECT 'Alien' AS title, 'abc' AS year") }
        #expect(year?.code == .conversion)
        #expect(year?.message.contains("TEXT") == true && year?.message.contains("CAST(year AS INTEGER)") == true, "\(year?.message ?? "")")
        #expect(year?.message.contains("abc") == false)
        let title = #expect(throws: StrongroomError.self) { try db.fetchOne(Movie.self, sql: "SELECT 42 AS title, 1979 AS year") }
        #expect(title?.message.contains("INTEGER") == true, "\(title?.message ?? "")")
        let optional = #expect(throws: StrongroomError.self) { try db.fetchOne(MaybeYear.self, sql: "SELECT 2.5 AS year") }
        #expect(optional?.message.contains("REAL") == true, "\(optional?.message ?? "")")
        // What converts exactly still does, NULL included.
        struct Loose: Decodable { var year: Int; var score: Double; var note: String? }
        let loose = try db.fetchOne(Loose.self, sql: "SELECT 2.0 AS year, 3 AS score, NULL AS note")
        #expect(loose?.year == 2 && loose?.score == 3 && loose?.note == nil)
        // An INTEGER too large for a Double to hold exactly is not rounded.
        #expect(throws: StrongroomError.self) { try db.fetchOne(Double.self, sql: "SELECT 9007199254740993") }
    }

    /// Review of issue 9: a Float overflowed to infinity or underflowed to
    /// zero silently; TEXT that is not UTF-8 was repaired with U+FFFD.
    @Test func nothingIsLostSilentlyOnTheWayIn() throws {
        let db = try Connection.inMemory()
        #expect(throws: StrongroomError.self) { try db.fetchOne(Float.self, sql: "SELECT 1e300") }
        #expect(throws: StrongroomError.self) { try db.fetchOne(Float.self, sql: "SELECT 1e-50") }
        #expect(try db.fetchOne(Float.self, sql: "SELECT 0.1") == 0.1)
        let text = #expect(throws: StrongroomError.self) { try db.fetchOne(String.self, sql: "SELECT CAST(x'ff41' AS TEXT) AS bad") }
        #expect(text?.message.contains("UTF-8") == true, "\(text?.message ?? "")")
        #expect(try db.fetchOne(Data.self, sql: "SELECT CAST(x'ff41' AS TEXT)") == Data([0xFF, 0x41]))
        struct Named: Decodable { var name: String }
        #expect(throws: StrongroomError.self) { try db.fetchOne(Named.self, sql: "SELECT CAST(x'ff41' AS TEXT) AS name") }
        // TEXT with a NUL inside is read whole, and still checked.
        #expect(try db.fetchOne(String.self, sql: "SELECT CAST(x'610062' AS TEXT)") == "a\u{0}b")
        #expect(throws: StrongroomError.self) { try db.fetchOne(String.self, sql: "SELECT CAST(x'6100ff' AS TEXT)") }
        #expect(try db.fetchOne(Named.self, sql: "SELECT 'Zoë 東京' AS name")?.name == "Zoë 東京")
    }

    /// Lossless conversions on request (`Configuration.valueConversion`):
    /// TEXT that is exactly a number reads as one, numbers read as text;
    /// nothing that would lose information converts.
    @Test func losslessConversionsOnRequest() throws {
        var configuration = Configuration.plaintext
        configuration.valueConversion = .lossless
        let db = try Connection.inMemory(configuration: configuration)
        #expect(try db.fetchOne(Int.self, sql: "SELECT '42'") == 42)
        #expect(try db.fetchOne(Int.self, sql: "SELECT '-7'") == -7)
        #expect(try db.fetchOne(Double.self, sql: "SELECT '2.5'") == 2.5)
        #expect(try db.fetchOne(String.self, sql: "SELECT 42") == "42")
        #expect(try db.fetchOne(String.self, sql: "SELECT 2.5") == "2.5")
        #expect(try db.fetchOne(Int.self, sql: "SELECT avg(x) FROM (SELECT 1 AS x UNION ALL SELECT 3)") == 2)
        for lossy in ["SELECT avg(x) FROM (SELECT 1 AS x UNION ALL SELECT 2)", "SELECT '042'", "SELECT ' 42'", "SELECT 'abc'", "SELECT '1e3'", "SELECT x'FF'"] {
            #expect(throws: StrongroomError.self, "\(lossy)") { try db.fetchOne(Int.self, sql: lossy) }
        }
        struct Movie: Decodable { var title: String; var year: Int; var rating: Double? }
        let movie = try db.fetchOne(Movie.self, sql: "SELECT 1984 AS title, '1979' AS year, '7.5' AS rating")
        #expect(movie?.title == "1984" && movie?.year == 1979 && movie?.rating == 7.5)
        let row = try #require(try db.fetchOne(sql: "SELECT '12' AS n"))
        #expect(try row.decode(Int.self, column: "n") == 12)

        // Strict (the default) says the lossless policy would convert it.
        let strict = try Connection.inMemory()
        let error = #expect(throws: StrongroomError.self) { try strict.fetchOne(Int.self, sql: "SELECT '42' AS n") }
        #expect(error?.message.contains("valueConversion") == true, "\(error?.message ?? "")")
        let never = #expect(throws: StrongroomError.self) { try strict.fetchOne(Int.self, sql: "SELECT 'abc' AS n") }
        #expect(never?.message.contains("valueConversion") == false, "\(never?.message ?? "")")
    }

    /// FMDB-style `[Any]` arguments: a throwing initializer that takes any
    /// mix of values, nil and NSNull included.
    @Test func argumentsFromAHeterogeneousArray() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE movie(title TEXT, year INTEGER, rating REAL, poster BLOB, seen INTEGER)")
        let values: [Any?] = ["Alien", 1979, 8.5, Data([1, 2, 3]), nil]
        try db.execute(sql: "INSERT INTO movie VALUES (?, ?, ?, ?, ?)", arguments: try StatementArguments(anyValues: values))
        let row = try #require(try db.fetchOne(sql: "SELECT title, year, rating, hex(poster) AS poster, seen FROM movie"))
        #expect(try row.decode(String.self, column: "title") == "Alien")
        #expect(try row.decode(Int.self, column: "year") == 1979)
        #expect(try row.decode(String.self, column: "poster") == "010203")
        #expect(try row.decode(Int?.self, column: "seen") == nil)
        let error = #expect(throws: StrongroomError.self) { try StatementArguments(anyValues: ["x", Date.distantPast as Any, NSObject()]) }
        #expect(error?.message.contains("argument 3") == true)
    }

    /// FMDB code passes Foundation objects: NSNumber (integers, doubles,
    /// Bools) and NSString.
    @Test func foundationObjectsAsArguments() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE movie(title TEXT, year INTEGER, rating REAL, seen INTEGER)")
        let values: [Any?] = [NSString(string: "Alien"), NSNumber(value: 1979), NSNumber(value: 8.5), NSNumber(value: true)]
        try db.execute(sql: "INSERT INTO movie VALUES (?, ?, ?, ?)", arguments: try StatementArguments(anyValues: values))
        let row = try #require(try db.fetchOne(sql: "SELECT title, typeof(year) AS y, year, rating, seen FROM movie"))
        #expect(try row.decode(String.self, column: "title") == "Alien")
        #expect(try row.decode(String.self, column: "y") == "integer")
        #expect(try row.decode(Int.self, column: "year") == 1979)
        #expect(try row.decode(Double.self, column: "rating") == 8.5)
        #expect(try row.decode(Int.self, column: "seen") == 1)
    }
}

/// FMDB's `inTransaction { db, rollback in }`, and `close()` on a queue and a pool.
@Suite("Transactions with a rollback flag, closing")
struct RollbackFlagTests {
    let dir = TemporaryDirectory()

    @Test func settingRollbackUndoesTheTransactionWithoutAThrow() throws {
        let queue = try DatabaseQueue(path: dir.file("t.db"), configuration: Configuration(key: .generate()))
        try queue.write { try $0.execute(sql: "CREATE TABLE movie(title TEXT)") }
        try queue.inTransaction { db, rollback in
            try db.execute(sql: "INSERT INTO movie VALUES ('kept')")
        }
        try queue.inTransaction { db, rollback in
            try db.execute(sql: "INSERT INTO movie VALUES ('undone')")
            rollback = true
        }
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x)")
        try db.inTransaction(.immediate) { db, rollback in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            rollback = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 1
        }
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") == 0)
        #expect(!db.isInsideTransaction)
        #expect(try queue.read { try $0.fetchAll(String.self, sql: "SELECT title FROM movie") } == ["kept"])
    }

    @Test func closedQueuesAndPoolsSaySo() throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        try queue.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        try queue.close()
        let error = #expect(throws: StrongroomError.self) { try queue.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } }
        #expect(error?.code == .closed)
        #expect(error?.message.contains("closed") == true)

        let pool = try DatabasePool(path: dir.file("p.db"), configuration: Configuration(key: .generate()))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 0)
        try pool.close()
        #expect(pool.readerCount == 0)
        #expect((#expect(throws: StrongroomError.self) { try pool.read { try $0.fetchOne(Int.self, sql: "SELECT 1") } })?.code == .closed)
        #expect((#expect(throws: StrongroomError.self) { try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") } })?.code == .closed)
    }
}

/// Issue 9: inside an `async` function, `queue.read {}` resolved to the
/// async overload of the same name, and the compiler said "expression is
/// 'async'" and "mutation of captured var in concurrently-executing code"
/// without saying why. Sync and async access now have different names.
@Suite("Sync and async access")
struct SyncAndAsyncAccessTests {
    let dir = TemporaryDirectory()

    @Test func syncCallsInsideAnAsyncFunctionStaySync() async throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        let pool = try DatabasePool(path: dir.file("p.db"), configuration: Configuration(key: .generate()))
        // Written as an FMDB user writes them, in an async function: blocking
        // calls, closures that mutate a local variable.
        var titles: [String] = []
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE movie(title TEXT)")
            try db.execute(sql: "INSERT INTO movie VALUES ('Alien')")
        }
        try queue.read { db in titles = try db.fetchAll(String.self, sql: "SELECT title FROM movie") }
        var count = -1
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        try pool.read { db in count = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") ?? 0 }
        #expect(titles == ["Alien"] && count == 1)

        // The async forms say so in their names, and take @Sendable closures.
        try await queue.asyncWrite { db in try db.execute(sql: "INSERT INTO movie VALUES ('Heat')") }
        #expect(try await queue.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM movie") } == 2)
        try await pool.asyncWrite { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try await pool.asyncRead { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM t") } == 2)
    }
}

/// What a GRDB user misses: attaching another encrypted database with its key.
@Suite("Attaching databases")
struct AttachTests {
    let dir = TemporaryDirectory()

    @Test func attachEncryptedAndPlaintextDatabasesWithTheirKeys() throws {
        let archiveKey = DatabaseKey.generate()
        let archive = try Connection(path: dir.file("archive.db"), configuration: Configuration(key: archiveKey))
        try archive.execute(sql: "CREATE TABLE invoice(id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoice(total) VALUES (9.5), (3)")
        archive.close()
        let plain = try Connection(path: dir.file("plain.db"), configuration: .plaintext)
        try plain.execute(sql: "CREATE TABLE note(body TEXT); INSERT INTO note VALUES ('hello')")
        plain.close()

        let db = try Connection(path: dir.file("app.db"), configuration: Configuration(key: .generate()))
        try db.attach(dir.file("archive.db"), as: "archive", key: archiveKey)
        #expect(try db.fetchOne(Double.self, sql: "SELECT sum(total) FROM archive.invoice") == 12.5)
        try db.detach("archive")
        try db.attach(dir.file("plain.db"), as: "plain", key: nil)
        #expect(try db.fetchOne(String.self, sql: "SELECT body FROM plain.note") == "hello")
        try db.detach("plain")

        let wrong = #expect(throws: StrongroomError.self) { try db.attach(dir.file("archive.db"), as: "archive", key: .generate()) }
        #expect(wrong?.code == .wrongKey)
        let missing = #expect(throws: StrongroomError.self) { try db.attach(dir.file("archive.db"), as: "archive", key: nil) }
        #expect(missing?.code == .keyRequired)
        #expect(try db.fetchAll(sql: "PRAGMA database_list").count == 1, "a failed attach is detached again")
    }
}

/// Row iteration that can stop early, without throwing.
@Suite("Cursors")
struct CursorTests {
    @Test func stopAtAnyRowAndTheReadEnds() throws {
        let dir = TemporaryDirectory()
        let config = Configuration(key: .generate())
        let db = try Connection(path: dir.file("c.db"), configuration: config)
        try db.execute(sql: "CREATE TABLE movie(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO movie(title) VALUES ('Alien'), ('Brazil'), ('Casablanca')")
        var seen: [String] = []
        do {
            let cursor = try db.makeCursor(sql: "SELECT title FROM movie ORDER BY id")
            while let title = try cursor.next(String.self) {
                seen.append(title)
                if title == "Brazil" { break }
            }
        }
        #expect(seen == ["Alien", "Brazil"])
        // The cursor released, nothing holds a read: another connection can write and checkpoint.
        let other = try Connection(path: dir.file("c.db"), configuration: config)
        try other.execute(sql: "INSERT INTO movie(title) VALUES ('Dune')")
        #expect(try other.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)").first?.values.first == .integer(0))
        let all = try db.makeCursor(sql: "SELECT id, title FROM movie WHERE id > ?", arguments: [2])
        var rows: [Row] = []
        while let row = try all.next() { rows.append(row) }
        #expect(rows.count == 2)
        #expect(try all.next() == nil)
    }
}

/// Results print as sentences, not struct dumps.
@Suite("Readable results")
struct ReadableResultTests {
    @Test func resultsPrintAsSentences() throws {
        let dir = TemporaryDirectory()
        let key = DatabaseKey.generate()
        let report = try PlaintextConversion.importPlaintext(from: Fixtures.chinook, to: dir.file("c.db"), key: key)
        #expect("\(report)".hasPrefix("11 tables, 15607 rows verified"))
        #expect("\(report.tables[0])".hasPrefix("Album: 347 rows, sha256 "))
        let status = try Connection(path: dir.file("c.db"), configuration: Configuration(key: key)).status()
        #expect("\(status)".contains("encrypted (SQLCipher"))
        #expect(!"\(status)".contains("DatabaseStatus("))
        #expect("\(status.tables[0])" == "Album: 347 rows")
        let db = try Connection.inMemory()
        let row = try #require(try db.fetchOne(sql: "SELECT 1 AS id, 'Ada' AS name, 'NULL' AS word, NULL AS note, 2.5 AS score, x'010203' AS photo"))
        #expect("\(row)" == #"[id: 1, name: "Ada", word: "NULL", note: NULL, score: 2.5, photo: <3 bytes>]"#)
        let collected = Collected()
        _ = try PlaintextConversion.importPlaintext(from: Fixtures.chinook, to: dir.file("d.db"), key: key, progress: { collected.append("\($0)") })
        let phases = collected.lines
        #expect(phases.contains { $0.hasPrefix("copying: ") && $0.contains(" of ") && $0.hasSuffix(" bytes") }, "\(phases.prefix(3))")
        #expect(phases.contains { $0.hasPrefix("verifying: ") && $0.hasSuffix(" rows") }, "\(phases.suffix(3))")
    }
}

/// Defects the review of the issue-9 additions found, each before its fix.
@Suite("Review of the newcomer API")
struct NewcomerReviewTests {
    let dir = TemporaryDirectory()

    /// close() from inside the queue's or pool's own closure is misuse, not a crash or a hang.
    @Test(.timeLimit(.minutes(1))) func closingFromInsideIsMisuse() throws {
        let queue = try DatabaseQueue(path: dir.file("q.db"), configuration: Configuration(key: .generate()))
        #expect(throws: StrongroomError.self) { try queue.inDatabase { _ in try queue.close() } }
        let pool = try DatabasePool(path: dir.file("p.db"), configuration: Configuration(key: .generate()))
        #expect(throws: StrongroomError.self) { try pool.read { _ in try pool.close() } }
        #expect(throws: StrongroomError.self) { try pool.write { _ in try pool.close() } }
        #expect(try pool.read { try $0.fetchOne(Int.self, sql: "SELECT 1") } == 1)
    }

    /// After close(), a rekey attempt and a read are `closed` errors (issue 37:
    /// `misuse` before): nothing touches the closed writer.
    @Test func aClosedPoolStaysClosed() throws {
        let pool = try DatabasePool(path: dir.file("c.db"), configuration: Configuration(key: try .passphrase("pass")))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        try pool.close()
        #expect((#expect(throws: StrongroomError.self) { try pool.rekey(to: .generate()) })?.code == .closed)
        #expect((#expect(throws: StrongroomError.self) { try pool.read { try $0.fetchOne(Int.self, sql: "SELECT 1") } })?.code == .closed)
    }

    /// A cursor whose step failed does not start over from the first row.
    @Test func aCursorDoesNotRestartAfterAnError() throws {
        let db = try Connection.inMemory()
        try db.execute(sql: "CREATE TABLE t(x INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3), (4)")
        let cursor = try db.makeCursor(sql: "SELECT x, CASE WHEN x = 3 THEN abs(-9223372036854775807 - 1) END FROM t ORDER BY x")
        var seen: [Row] = []
        #expect(throws: StrongroomError.self) { while let row = try cursor.next() { seen.append(row) } }
        #expect(seen.count == 2)
        #expect(try cursor.next() == nil)
    }
}
