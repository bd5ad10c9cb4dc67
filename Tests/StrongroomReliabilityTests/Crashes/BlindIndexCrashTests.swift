import Foundation
import Strongroom
import StrongroomFields
import StrongroomTestSupport
import Testing

/// Issue 39, item 5: `strongroom fields index add` changing an index's
/// length (every value changes) killed with SIGKILL at random moments.
/// After every kill the database opens, passes `integrity_check`, keeps
/// every row and every sealed value, the registry says how far the rebuild
/// got, every row up to there holds its new value (and every later one the
/// old value, or none: a change of definition empties the column first); the next run
/// finishes, leaving no row with a stale index value.
@Suite("blind index rebuild killed with SIGKILL")
struct BlindIndexCrashTests {
    let dir = TemporaryDirectory()
    static let rows = 10_000
    static let old = BlindIndex("email_folded", on: "email", in: "customer", bits: 16, transformations: [.normalizedCaseFolded])
    static let new = BlindIndex("email_folded", on: "email", in: "customer", bits: 10, transformations: [.normalizedCaseFolded])

    func cli(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func email(_ id: Int) -> String { id % 2 == 0 ? "Person\(id)@Example.com" : "person\(id)@example.com" }

    /// `seeded.db`: customers imported with the e-mail sealed and the 16-bit index.
    func prepare() async throws -> (DatabaseKey, FieldKeyring) {
        #expect(try await cli(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await cli(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let plain = try Connection(path: dir.file("plain.sqlite"), configuration: .plaintext)
        try plain.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, email TEXT NOT NULL, country TEXT)")
        try plain.inTransaction(.immediate) { db in
            for id in 1...Self.rows {
                try db.execute(sql: "INSERT INTO customer(id, email, country) VALUES (?, ?, ?)", arguments: [id, Self.email(id), ["UK", "FR"][id % 2]])
            }
        }
        plain.close()
        let imported = try await cli(["import", "--from", "plain.sqlite", "--database", "seeded.db", "--key-file", "db.key", "--field-keys", "fields.keyring",
                                      "--seal", "customer.email", "--index", "customer.email_folded=email:nfkc-casefold/16"])
        #expect(imported.status == 0, "\(imported.stderr)")
        return (try DatabaseKey.load(keyFile: dir.file("db.key")), try FieldKeyring.load(from: dir.file("fields.keyring")))
    }

    func reset() throws {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(dir.file("db.sqlite") + suffix) }
        try FileManager.default.copyItem(atPath: dir.file("seeded.db"), toPath: dir.file("db.sqlite"))
    }

    /// What a copy of the crash state holds.
    struct Picture: CustomStringConvertible {
        var healthy = false
        var valuesIntact = false
        /// The recorded definition's bits, state and cursor.
        var bits = 0
        var state: BlindIndexRegistry.State?
        var rebuiltThrough: Int64?
        /// Rows whose stored index value is not the recorded definition's, at or before the cursor (all rows once ready).
        var staleBehindCursor = -1
        /// Rows holding neither the old nor the new value (nor, past the cursor, none).
        var neither = -1
        var description: String {
            "healthy \(healthy), values \(valuesIntact), \(bits) bits \(state?.rawValue ?? "-") through \(rebuiltThrough.map(String.init) ?? "-"), stale behind the cursor \(staleBehindCursor), neither \(neither)"
        }
    }

    func picture(key: DatabaseKey, keyring: FieldKeyring) throws -> Picture {
        let probe = dir.file("probe.db")
        try CrashTrials.copyCrashState(of: dir.file("db.sqlite"), to: probe)
        let db = try Connection(path: probe, configuration: Configuration(key: key))
        defer { db.close() }
        var picture = Picture()
        picture.healthy = try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
            && db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") == Self.rows
        guard let entry = try BlindIndexRegistry.entry("email_folded", of: "customer", in: db, keyring: keyring) else { return picture }
        picture.bits = entry.index.bits
        picture.state = entry.state
        picture.rebuiltThrough = entry.rebuiltThrough
        let cipher = FieldCipher(keyring: keyring)
        var intact = 0, stale = 0, neither = 0
        for row in try db.fetchAll(sql: "SELECT id, email, email_folded FROM customer") {
            let id = try row.decode(Int64.self, column: "id")
            let email = try cipher.open(try row.decode(DatabaseValue.self, column: "email"), table: "customer", column: "email", rowKey: [.integer(id)])
            if email == .text(Self.email(Int(id))) { intact += 1 }
            let stored = try row.decode(DatabaseValue.self, column: "email_folded")
            let recorded = try cipher.blindIndex(of: [email], for: entry.index)
            let behind = entry.state == .ready || id <= (entry.rebuiltThrough ?? .min)
            if behind && stored != recorded { stale += 1 }
            // Past the cursor: the old value, or none (a change of definition empties the column first).
            let allowed = try [cipher.blindIndex(of: [email], for: Self.old), cipher.blindIndex(of: [email], for: Self.new)] + (behind ? [] : [DatabaseValue.null])
            if !allowed.contains(stored) { neither += 1 }
        }
        picture.valuesIntact = intact == Self.rows
        picture.staleBehindCursor = stale
        picture.neither = neither
        return picture
    }

    @Test func aKilledRebuildKeepsEveryRowAndTheNextRunLeavesNoStaleIndex() async throws {
        let (key, keyring) = try await prepare()
        let add = ["fields", "index", "add", "--database", "db.sqlite", "--key-file", "db.key", "--field-keys", "fields.keyring",
                   "customer.email_folded=email:nfkc-casefold/10", "--batch-size", "250"]
        try reset()
        let clock = ContinuousClock(), started = clock.now
        let full = try start(add)
        let end = await full.ended()
        #expect(full.terminationStatus == 0, "an uninterrupted rebuild")
        let window = CrashTrials.milliseconds(end - started)
        let finished = try picture(key: key, keyring: keyring)
        #expect(finished.bits == 10 && finished.state == .ready && finished.staleBehindCursor == 0, "\(finished)")

        var trials = CrashTrials("blind index rebuild (strongroom fields index add, 10 bits over 16)", defaultCount: 12)
        for trial in 0..<trials.count {
            try reset()
            let runner = try start(add)
            let database = dir.file("db.sqlite")
            let (killed, failure) = await trials.kill(runner, window: window, since: .now) { CrashTrials.hasBegunWriting(database) }
            #expect(failure == nil, "trial \(trial): \(failure ?? "")")
            if killed { trials.killedBeforeExit += 1 }
            let crash = try picture(key: key, keyring: keyring)
            let outcome = crash.bits == 16 ? "16 bits, not begun" : crash.state == .ready ? "10 bits, ready" : "10 bits, building"
            trials.outcomes[outcome, default: 0] += 1
            trials.landed(crash.bits == 16 ? .before : crash.state == .building ? (crash.rebuiltThrough == nil ? .begun : .inside) : .after)
            let held = crash.healthy && crash.valuesIntact && crash.staleBehindCursor == 0 && crash.neither == 0
                && (crash.bits == 16 || crash.bits == 10) && (killed || crash.state == .ready)
            #expect(held, "trial \(trial): \(crash)")

            let rerun = try start(add)
            await rerun.ended()
            let after = try picture(key: key, keyring: keyring)
            let done = rerun.terminationStatus == 0 && after.healthy && after.valuesIntact && after.bits == 10 && after.state == .ready
                && after.staleBehindCursor == 0 && after.neither == 0
            #expect(done, "trial \(trial): the next run (exit \(rerun.terminationStatus)): \(after)")
            if failure != nil || !held || !done { trials.failures += 1 }
        }
        trials.minimumInside = max(2, trials.count / 12)
        trials.minimumInsideWithWrites = max(2, trials.count / 12)
        try trials.record()
        #expect(trials.failures == 0)
        #expect(trials.shortfall == nil, "\(trials.shortfall ?? "")")
    }
}
