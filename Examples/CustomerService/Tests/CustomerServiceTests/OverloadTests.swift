import Foundation
import Synchronization
import Testing

/// Issue 38, item 4: typed database failures map to HTTP, and the service
/// keeps serving: the pool's waiting bound to 503 with Retry-After, a full
/// disk to 507 (a constraint's 409 is in `BadInputTests`).
@Suite("Database failures as HTTP: 503 with Retry-After, 507")
struct OverloadTests {
    let fixture: ServiceFixture

    init() throws { fixture = try ServiceFixture() }

    @Test func moreWaitersThanTheBoundGet503WithRetryAfter() throws {
        // One reader, and one request waiting for it at most: 32 clients overflow it.
        let service = try ServiceProcess.started(fixture, ["--readers", "1", "--max-waiters", "1"])
        let port = service.port
        for index in 1...20 {
            #expect(try request(port, "POST", "/customers", json: #"{"name": "C", "email": "c\#(index)@example.com"}"#).status == 201)
        }
        let statuses = Mutex<[Int: Int]>([:])
        let retryAfter = Mutex<Set<String>>([])
        let codes = Mutex<Set<String>>([])
        let clients = (0..<32).map { _ in
            Thread {
                guard let connection = try? HTTPConnection(port: port) else { return }
                for index in 0..<200 {
                    guard let answer = try? connection.send("GET", "/customers?after=\(index % 10)&limit=100") else { return }
                    statuses.withLock { $0[answer.status, default: 0] += 1 }
                    if answer.status == 503 {
                        retryAfter.withLock { _ = $0.insert(answer.headers["retry-after"] ?? "none") }
                        codes.withLock { _ = $0.insert(answer.errorCode ?? "none") }
                    }
                }
            }
        }
        for client in clients { client.start() }
        while clients.contains(where: { !$0.isFinished }) { usleep(10_000) }
        let counts = statuses.withLock { $0 }
        #expect(Set(counts.keys).isSubset(of: [200, 503]), "\(counts)")
        #expect(counts[503, default: 0] > 0, "\(counts)")
        #expect(counts[200, default: 0] > 0, "\(counts)")
        #expect(counts.values.reduce(0, +) == 32 * 200)
        #expect(retryAfter.withLock { $0 } == ["1"])
        #expect(codes.withLock { $0 } == ["overloaded"])
        // And it keeps serving.
        #expect(try request(port, "GET", "/customers/1").status == 200)
        #expect(service.terminate().status == 0)
    }

    /// The database on a 192 KiB tmpfs of its own (a mount namespace of the
    /// service's, so nothing outlives it): creates fill it until one gets a
    /// 507; nothing half-written, reads go on, and so do writes that fit.
    @Test func aFullDiskIs507AndReadsGoOn() throws {
        let small = fixture.path("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: false)
        let service = try ServiceProcess(
            fixture, fixture.keyArguments + ["--database", small + "/customers.db"], label: "full",
            launcher: ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                       "mount -t tmpfs -o size=192k,mode=0700 tmpfs \"$0\" && exec \"$@\"", small])
        try service.waitUntilListening()
        let port = service.port
        let note = String(repeating: "x", count: 3900)
        var created: [Int] = []
        var full: HTTPAnswer?
        for index in 1...400 {
            let answer = try request(port, "POST", "/customers", json: #"{"name": "C", "email": "c\#(index)@example.com", "note": "\#(note)"}"#)
            if answer.status == 201, let id = answer.json?["id"] as? Int {
                created.append(id)
            } else {
                full = answer
                break
            }
        }
        let answer = try #require(full)
        #expect(answer.status == 507, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.errorCode == "disk_full")
        #expect(created.count > 3)
        // Every acknowledged create reads back; the service answers health and readiness.
        for id in created {
            #expect(try request(port, "GET", "/customers/\(id)").json?["note"] as? String == note)
        }
        #expect(try request(port, "GET", "/health").status == 200)
        #expect(try request(port, "GET", "/ready").status == 200)
        #expect(try request(port, "GET", "/customers?limit=100").status == 200)
        // A delete frees a row's pages for a small write once the WAL is checkpointed; at least, the service answers it.
        let deleted = try request(port, "DELETE", "/customers/\(created[0])")
        #expect([204, 507].contains(deleted.status))
        // The WAL cannot be copied into the full database file: the pool is
        // closed all the same, and the exit status says so (EX_TEMPFAIL).
        let stopped = service.terminate()
        #expect(stopped.status == 75, "\(service.errors)")
        #expect(service.errors.contains("CustomerService: stopped, but the WAL could not be copied into the database (disk_full)"))
        #expect(service.errors.contains("wal=kept"))
    }
}
