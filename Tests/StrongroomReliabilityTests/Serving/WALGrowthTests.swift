import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 37, item 7: the WAL under constant load. With readers always
/// active, SQLite's automatic checkpoints never reset the log; the pool's
/// checkpoint policy (``CheckpointPolicy``) must keep the -wal under twice
/// its limit. 20 s in `make test`, `STRONGROOM_WAL_SECONDS` (300 in `make
/// stress`) otherwise; the peak goes to the reliability results.
@Suite("Serving: the WAL under constant load")
struct WALGrowthTests {
    let dir = TemporaryDirectory()

    static var seconds: Int {
        ProcessInfo.processInfo.environment["STRONGROOM_WAL_SECONDS"].flatMap(Int.init) ?? 20
    }

    @Test(.timeLimit(.minutes(10))) func theWALStaysUnderItsBoundWithReadersAlwaysActive() throws {
        try KeyFile.write(.generate(), to: dir.file("db.key"))
        let run = try ProcessRunner.run(Fixtures.reliabilityChild, ["wal-load", "wal.db", "db.key", "\(Self.seconds)"], currentDirectory: dir.path)
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let peak = figures["peak_wal_bytes"] as? Int ?? -1
        let writes = figures["writes"] as? Int ?? 0, reads = figures["reads"] as? Int ?? 0
        let limit = try #require(CheckpointPolicy.default.walSizeLimit)
        #expect(writes > 1_000 && reads > 100, "\(figures)")
        #expect((figures["other_errors"] as? Int ?? -1) == 0 && (figures["busy"] as? Int ?? -1) == 0, "\(figures)")
        #expect(peak > 0 && peak <= 2 * limit, "peak -wal \(peak) bytes against a limit of \(limit)")
        try ReliabilityResults.write("wal", name: "wal growth", [
            "seconds": Self.seconds, "writes": writes, "reads": reads, "peak_wal_bytes": peak,
            "last_wal_bytes": figures["last_wal_bytes"] as? Int ?? -1, "wal_size_limit": limit,
            "samples": figures["samples"] as? [Int] ?? [], "name": "wal growth",
        ])
    }
}
