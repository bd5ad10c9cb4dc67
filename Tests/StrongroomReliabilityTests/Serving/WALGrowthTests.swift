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

    /// Issue 51, item 6: the bound under the load of a server, in the
    /// default configuration (4 readers): 16 async readers, more than the
    /// pool has and eight times the machine's 2 cores, each reading again as
    /// soon as its read ends (a read always waits for a reader, so reads
    /// always overlap), once with reads that end at once and once with reads
    /// that hold their reader for 100 ms; one writer committing batches of
    /// 50 inserts as fast as it can.
    @Test(.timeLimit(.minutes(10)), arguments: [0, 100_000])
    func theWALStaysUnderItsBoundWithMoreAsyncReadersThanCores(holdingEachReadMicroseconds hold: Int) throws {
        try KeyFile.write(.generate(), to: dir.file("db.key"))
        let seconds = max(5, Self.seconds / 2)
        var environment = ProcessInfo.processInfo.environment
        environment["WAL_READ_HOLD_US"] = "\(hold)"
        let run = try ProcessRunner.run(Fixtures.reliabilityChild, ["wal-load-async", "wal.db", "db.key", "\(seconds)", "16"],
                                        environment: environment, currentDirectory: dir.path)
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let peak = figures["peak_wal_bytes"] as? Int ?? -1
        let writes = figures["writes"] as? Int ?? 0, reads = figures["reads"] as? Int ?? 0
        let limit = try #require(CheckpointPolicy.default.walSizeLimit)
        #expect(writes > 100 && reads > 100, "\(figures)")
        #expect((figures["other_errors"] as? Int ?? -1) == 0 && (figures["busy"] as? Int ?? -1) == 0, "\(figures)")
        #expect(peak > limit / 2 && peak <= 2 * limit, "peak -wal \(peak) bytes against a limit of \(limit)")
        try ReliabilityResults.write("wal", name: "wal growth, 16 async readers holding each read \(hold / 1000) ms", [
            "seconds": seconds, "writes": writes, "reads": reads, "peak_wal_bytes": peak,
            "last_wal_bytes": figures["last_wal_bytes"] as? Int ?? -1, "wal_size_limit": limit,
            "name": "wal growth, 16 async readers holding each read \(hold / 1000) ms",
        ])
    }

    /// Issue 51, item 6, the other side of the bound: reads that each
    /// outlast the policy's `maximumWait` (1 s) make every checkpoint give
    /// up, and the `-wal` grows past twice the limit (as the documentation
    /// of CheckpointPolicy and ServingRequests states).
    @Test(.timeLimit(.minutes(10))) func readsThatOutlastTheWaitLetTheWALGrowPastTheBound() throws {
        try KeyFile.write(.generate(), to: dir.file("db.key"))
        var environment = ProcessInfo.processInfo.environment
        environment["WAL_READ_HOLD_US"] = "1500000"
        let run = try ProcessRunner.run(Fixtures.reliabilityChild, ["wal-load-async", "wal.db", "db.key", "8", "4"],
                                        environment: environment, currentDirectory: dir.path)
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let limit = try #require(CheckpointPolicy.default.walSizeLimit)
        let peak = figures["peak_wal_bytes"] as? Int ?? -1
        #expect(peak > 2 * limit, "peak -wal \(peak) bytes against a limit of \(limit): \(figures["writes"] ?? 0) writes")
    }
}
