import Foundation
import Strongroom
import Synchronization
import Testing

/// Issue 38, item 6: nothing acknowledged is lost. Clients create customers
/// and record every 201 with its id; the service is SIGKILLed at random
/// moments under that load and started again. Afterwards every acknowledged
/// write reads back equal (sealed fields opened), `PRAGMA integrity_check` is
/// ok, `strongroom verify` is clean, and no row lacks its blind index.
///
/// `CUSTOMER_SERVICE_KILLS` sets the count (make test: 5; make stress: 50);
/// with `STRONGROOM_STRESS_RESULTS` the figures are written to
/// `service/kills.json` there.
@Suite("SIGKILL under load: every acknowledged write survives")
struct KillTests {
    struct Written: Equatable, Sendable {
        let name: String, email: String, note: String?, country: String?
    }

    static var kills: Int { Int(ProcessInfo.processInfo.environment["CUSTOMER_SERVICE_KILLS"] ?? "") ?? 5 }
    static let clients = 6

    /// The service's own migrations, as `strongroom verify` reads them.
    static var migrations: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/CustomerService/Migrations").standardized.path
    }

    @Test func everyAcknowledgedWriteSurvivesSigkill() throws {
        let fixture = try ServiceFixture()
        var service = try ServiceProcess.started(fixture, label: "run-0")
        let port = Atomic<Int>(service.port)
        // Keyed by e-mail, each with the id it was given: ids are SQLite's
        // (no AUTOINCREMENT), so a lost row's id goes to the next create, and
        // a map keyed by id would let that create stand in for the lost one.
        let acknowledged = Mutex<[String: (id: Int, written: Written)]>([:])
        let failures = Mutex<[String]>([])
        let reads = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let started = ContinuousClock.now
        // Bounded in time and in count, whatever happens to the service.
        let deadline = started + .seconds(30 + 6 * Self.kills)
        let threads = (0..<Self.clients).map { client in
            Thread {
                var connection: HTTPConnection?
                var generator = SystemRandomNumberGenerator()
                for index in 0..<2_000_000 {
                    if stop.load(ordering: .relaxed) || ContinuousClock.now > deadline { break }
                    if connection == nil {
                        connection = try? HTTPConnection(port: port.load(ordering: .relaxed), timeout: 10)
                        if connection == nil { usleep(10_000); continue }
                    }
                    do {
                        if index % 4 == 3, let (_, (id, written)) = acknowledged.withLock({ $0.randomElement() }) {
                            // Reads under the same load: an acknowledged customer is always there.
                            let answer = try connection!.send("GET", "/customers/\(id)")
                            if answer.status != 200 || answer.json?["email"] as? String != written.email {
                                failures.withLock { $0.append("GET \(id): \(answer.status)") }
                            }
                            reads.add(1, ordering: .relaxed)
                            continue
                        }
                        let note: String? = index % 3 == 0 ? nil : "note \(client)-\(index) " + String(repeating: "n", count: Int.random(in: 0...300, using: &generator))
                        let written = Written(name: "Customer \(client)-\(index)", email: "k\(client)-\(index)@example.com", note: note,
                                              country: index % 5 == 0 ? nil : ["UK", "FR", "DE", "JP"][index % 4])
                        var body: [String: Any] = ["name": written.name, "email": written.email, "note": note ?? NSNull(), "country": written.country ?? NSNull()]
                        if index % 7 == 0 { body["note"] = nil }
                        let answer = try connection!.send("POST", "/customers", body: try JSONSerialization.data(withJSONObject: body))
                        if answer.status == 201, let id = answer.json?["id"] as? Int {
                            let stored = Written(name: written.name, email: written.email, note: index % 7 == 0 ? nil : note, country: written.country)
                            acknowledged.withLock { $0[stored.email] = (id, stored) }
                        } else if answer.status != 503 {
                            failures.withLock { $0.append("POST: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))") }
                        }
                    } catch {
                        // The service died mid-request: that create is not acknowledged, whatever it did.
                        connection = nil
                    }
                }
            }
        }
        for thread in threads { thread.start() }
        var acknowledgedAtKill: [Int] = []
        for kill in 1...Self.kills {
            // A random moment, once this run has acknowledged something.
            let before = acknowledged.withLock { $0.count }
            usleep(UInt32.random(in: 100_000...600_000))
            while acknowledged.withLock({ $0.count }) == before, ContinuousClock.now < deadline { usleep(5_000) }
            service.kill9()
            acknowledgedAtKill.append(acknowledged.withLock { $0.count })
            service = try ServiceProcess.started(fixture, label: "run-\(kill)")
            port.store(service.port, ordering: .relaxed)
        }
        usleep(300_000)
        stop.store(true, ordering: .relaxed)
        while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
        #expect(service.terminate().status == 0, "\(service.errors)")
        let elapsed = ContinuousClock.now - started

        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        let expected = acknowledged.withLock { $0 }
        #expect(expected.count > Self.kills * 10, "\(expected.count) acknowledged creates")
        // Every acknowledged create, read back with the keyring: equal, sealed fields opened.
        let pool = try fixture.openPool()
        let stored = try pool.read { db in try db.fetchAll(StoredCustomer.self, sql: StoredCustomer.select) }
        let byID = Dictionary(uniqueKeysWithValues: stored.map { (Int($0.id), $0) })
        var lost = 0, different = 0
        for (_, (id, written)) in expected {
            guard let row = byID[id] else { lost += 1; continue }
            if Written(name: row.name, email: row.email, note: row.note, country: row.country) != written { different += 1 }
        }
        // No id acknowledged twice: a second create given a lost one's id.
        #expect(Set(expected.values.map(\.id)).count == expected.count)
        #expect(lost == 0)
        #expect(different == 0)
        let integrity = try pool.read { db in try db.fetchAll(String.self, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
        let withoutIndex = try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer WHERE email_index IS NULL") }
        #expect(withoutIndex == 0)
        try pool.close()
        let verify = try runCommand(ServiceProcess.strongroom, ["verify", "--database", fixture.database, "--key-file", fixture.keyFile,
                                                               "--field-keys", fixture.keyringFile, "--migrations", Self.migrations])
        #expect(verify.status == 0, "\(verify.output)")

        if let results = ProcessInfo.processInfo.environment["STRONGROOM_STRESS_RESULTS"], !results.isEmpty {
            let report: [String: Any] = [
                "kills": Self.kills, "clients": Self.clients, "acknowledged": expected.count,
                "unacknowledged_rows": stored.count - expected.count, "reads": reads.load(ordering: .relaxed),
                "lost": lost, "different": different, "integrity_check": integrity.joined(separator: " "),
                "rows_without_blind_index": withoutIndex ?? -1, "verify_exit": Int(verify.status),
                "seconds": Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                "run": ProcessInfo.processInfo.environment["STRONGROOM_RELIABILITY_RUN"] ?? "",
                "commit": ProcessInfo.processInfo.environment["STRONGROOM_RELIABILITY_COMMIT"] ?? "",
            ]
            try FileManager.default.createDirectory(atPath: results + "/service", withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: results + "/service/kills.json"))
        }
        print("kills \(Self.kills): \(expected.count) creates acknowledged, \(stored.count - expected.count) committed without an answer, \(reads.load(ordering: .relaxed)) reads, \(lost) lost, \(different) different, in \(elapsed)")
    }
}
