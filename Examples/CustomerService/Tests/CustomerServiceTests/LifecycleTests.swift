import Foundation
import Strongroom
import Synchronization
import Testing

/// Issue 38, items 1 and 3: two instances started at once migrate once; on
/// SIGTERM the service stops accepting, answers the requests in flight,
/// truncates the WAL, closes the pool and exits 0 within 5 s.
@Suite("Lifecycle: migrating at start, graceful shutdown")
struct LifecycleTests {
    let fixture: ServiceFixture

    init() throws { fixture = try ServiceFixture() }

    @Test func twoInstancesStartedAtOnceMigrateOnce() throws {
        let first = try ServiceProcess(fixture, fixture.keyArguments + ["--database", fixture.database], label: "first")
        let second = try ServiceProcess(fixture, fixture.keyArguments + ["--database", fixture.database], label: "second")
        try first.waitUntilListening()
        try second.waitUntilListening()
        // Each serves, and sees what the other wrote.
        #expect(try request(first.port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com"}"#).status == 201)
        #expect(try request(second.port, "GET", "/customers?email=ada@example.com").status == 200)
        #expect(first.terminate().status == 0)
        #expect(second.terminate().status == 0)
        let applied = [first, second].map { service in
            service.errors.split(separator: "\n").first { $0.contains("[CustomerService] migrated") }.map { $0.contains("applied=1") }
        }
        #expect(applied.compactMap { $0 }.sorted { !$0 && $1 } == [false, true], "\(first.errors)\n\(second.errors)")
        let history = try fixture.openWithoutKeyring().fetchAll(Int.self, sql: "SELECT version FROM strongroom_migrations")
        #expect(history == [1])
    }

    /// Clients keep writing on keep-alive connections while SIGTERM lands:
    /// every request the service took is answered (the rows in the file are
    /// exactly the creates acknowledged), and it exits 0 within 5 s with the
    /// WAL truncated.
    @Test func sigtermAnswersTheRequestsInFlightAndExitsWithinFiveSeconds() throws {
        let service = try ServiceProcess.started(fixture)
        let port = service.port
        let acknowledged = Mutex<[Int]>([])
        let broken = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let clients = (0..<16).map { client in
            Thread {
                var connection = try? HTTPConnection(port: port, timeout: 10)
                var index = 0
                while !stop.load(ordering: .relaxed), index < 100_000 {
                    index += 1
                    guard let open = connection else { break }
                    do {
                        let answer = try open.send("POST", "/customers", json: #"{"name": "C", "email": "c\#(client)-\#(index)@example.com", "note": "in flight"}"#)
                        if answer.status == 201, let id = answer.json?["id"] as? Int {
                            acknowledged.withLock { $0.append(id) }
                        } else if answer.status != 503 {
                            broken.withLock { $0.append("status \(answer.status)") }
                        }
                    } catch {
                        // Closed after its last answer, or refused once the server stopped accepting.
                        connection = try? HTTPConnection(port: port, timeout: 10)
                    }
                }
            }
        }
        for client in clients { client.start() }
        usleep(800_000)
        let (status, took) = service.terminate(timeout: .seconds(30))
        stop.store(true, ordering: .relaxed)
        usleep(200_000)
        #expect(status == 0, "\(service.errors)")
        #expect(took < .seconds(5), "took \(took)")
        #expect(broken.withLock { $0 }.isEmpty)
        let ids = acknowledged.withLock { $0 }.sorted()
        #expect(ids.count > 50, "\(ids.count) creates acknowledged before SIGTERM")
        // The WAL was copied into the database and truncated, then removed with the last connection.
        let wal = (try? FileManager.default.attributesOfItem(atPath: fixture.database + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        #expect(service.errors.contains("wal=truncated"))
        let stored = try fixture.openWithoutKeyring().fetchAll(Int.self, sql: "SELECT id FROM customer ORDER BY id")
        #expect(stored == ids)
    }

    /// A client that sends a request's headers and part of its body, then
    /// nothing, must not hold the shutdown open: past its bound the server
    /// drops the connection, and the database is still checkpointed and closed.
    @Test func aStalledRequestDoesNotHoldTheShutdown() throws {
        let service = try ServiceProcess.started(fixture)
        #expect(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com"}"#).status == 201)
        let stalled = try RawSocket(port: service.port)
        try stalled.send("POST /customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\"")
        let idle = try RawSocket(port: service.port)
        try idle.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(200_000)
        let (status, took) = service.terminate(timeout: .seconds(15))
        #expect(status == 0, "\(service.errors)")
        #expect(took < .seconds(5), "took \(took)")
        #expect(service.errors.contains("wal=truncated"), "\(service.errors)")
        withExtendedLifetime((stalled, idle)) {}
    }
}
