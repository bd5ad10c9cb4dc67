import Foundation
import Strongroom
import Testing

/// Issue 38, item 9: one short load with wrk and the benchmark's own mix
/// (80% get by id, 10% lookup by e-mail, 10% create), for correctness: every
/// answer a 2xx, no socket error, the file intact afterwards. (Speed is the
/// benchmark harness's business: `make bench-service`.)
@Suite("Load: 10 s of wrk's mix, every answer a 2xx")
struct LoadTests {
    static let load = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Load").standardized.path
    static var seconds: Int { Int(ProcessInfo.processInfo.environment["CUSTOMER_SERVICE_LOAD_SECONDS"] ?? "") ?? 10 }

    /// Runs `wrk` with a script of `Load/`; the JSON line the script prints at the end.
    func wrk(_ arguments: [String], script: String, port: Int, seeded: Int) throws -> [String: Any] {
        let result = try runCommand("/usr/bin/wrk", arguments + ["-s", Self.load + "/\(script).lua", "http://127.0.0.1:\(port)", "--", "\(seeded)"])
        #expect(result.status == 0, "\(result.output)")
        let line = result.output.split(separator: "\n").last { $0.hasPrefix("{") && $0.contains("\"script\"") }
        let json = try #require(line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }, "\(result.output)")
        #expect(!result.output.contains("LOAD ERRORS"), "\(result.output)")
        return json
    }

    @Test func tenSecondsOfTheMixAnswerEveryRequest() throws {
        let fixture = try ServiceFixture()
        let service = try ServiceProcess.started(fixture)
        let seeded = 2_000
        let seed = try wrk(["-t", "1", "-c", "1", "-d", "300s"], script: "seed", port: service.port, seeded: seeded)
        #expect((seed["status"] as? [String: Any])?["201"] as? Int == seeded)

        let mix = try wrk(["-t", "2", "-c", "16", "-d", "\(Self.seconds)s", "--timeout", "5s"], script: "mix", port: service.port, seeded: seeded)
        let requests = mix["requests"] as? Int ?? 0
        #expect(requests > 1_000)
        #expect(mix["non2xx"] as? Int == 0)
        #expect((mix["socket_errors"] as? [String: Int])?.values.reduce(0, +) == 0)
        let sent = mix["sent"] as? [String: Int] ?? [:]
        #expect(sent["get", default: 0] > sent["lookup", default: 0] * 5)
        #expect(sent["create", default: 0] > 0)

        #expect(service.terminate().status == 0, "\(service.errors)")
        let pool = try fixture.openPool()
        #expect(try pool.read { db in try db.fetchAll(String.self, sql: "PRAGMA integrity_check") } == ["ok"])
        let rows = try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM customer") } ?? 0
        #expect(rows >= seeded + sent["create", default: 0] * 9 / 10)
        print("load: \(requests) requests in \(Self.seconds) s with 16 connections (debug build), \(rows) customers at the end")
    }
}
