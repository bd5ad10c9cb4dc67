import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 12's load: a pool with 1 writer and 4 readers in a child process
/// (`reliability-child load`) for 5 seconds in `make test` and 60 in `make
/// stress` (`STRONGROOM_LOAD_SECONDS`). The writer moves money between
/// accounts and counts its commits; readers check in every snapshot that
/// the total never moved and the count matches the log. No write may be
/// lost, no reader may see a partial transaction, no busy error may reach
/// the caller, and resident memory must stay flat after the warm-up.
@Suite("Load: a pool with 1 writer and 4 readers")
struct PoolLoadTests {
    let dir = TemporaryDirectory()

    static var seconds: Int {
        ProcessInfo.processInfo.environment["STRONGROOM_LOAD_SECONDS"].flatMap(Int.init) ?? 5
    }

    /// AddressSanitizer's quarantine in MiB when this process (and so the
    /// child, from the same build) is built with it, else nil.
    static var addressSanitizerQuarantineMiB: Int? {
        #if canImport(Darwin)
        let everyImage = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let everyImage = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        #endif
        guard dlsym(everyImage, "__asan_init") != nil else { return nil }
        // ASan's flag parser splits on ':', ',', spaces and newlines; the last value given counts.
        let options = (ProcessInfo.processInfo.environment["ASAN_OPTIONS"] ?? "").split { ":, \n\t".contains($0) }
        let given = options.last { $0.hasPrefix("quarantine_size_mb=") }
        return given.flatMap { Int($0.dropFirst("quarantine_size_mb=".count)) } ?? 256
    }

    static func median(_ values: ArraySlice<Int>) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2])
    }

    @Test func noLostWriteNoPartialReadNoBusyAndFlatMemory() async throws {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("db.key"))
        let run = try await ProcessRunner.run(Fixtures.reliabilityChild, ["load", "load.db", "db.key", "\(Self.seconds)"], currentDirectory: dir.path)
        #expect(run.status == 0, "\(run.stderr)")
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let writes = counts["writes"] as? Int ?? -1, reads = counts["reads"] as? Int ?? -1
        let busy = counts["busy"] as? Int ?? -1, partial = counts["partial"] as? Int ?? -1, other = counts["other_errors"] as? Int ?? -1
        let resident = counts["resident_kib"] as? [Int] ?? []

        // Every acknowledged commit is in the file, read by another connection.
        let db = try Connection(path: dir.file("load.db"), configuration: Configuration(key: key))
        let committed = try db.fetchOne(Int.self, sql: "SELECT n FROM commits") ?? -1
        let total = try db.fetchOne(Int.self, sql: "SELECT sum(balance) FROM account") ?? -1
        let healthy = try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"]
        db.close()
        let lost = writes - committed

        // Memory: the median of the second fifth of the samples (after the
        // warm-up) against the median of the last fifth.
        let fifth = max(resident.count / 5, 1)
        let warm = Self.median(resident.dropFirst(fifth).prefix(fifth)) / 1024, end = Self.median(resident.suffix(fifth)) / 1024
        #expect(writes > Self.seconds * 100 && reads > Self.seconds * 100, "writes \(writes), reads \(reads)")
        #expect(lost == 0 && total == 100_000 && healthy, "acknowledged \(writes), in the file \(committed), total \(total)")
        #expect(partial == 0, "\(partial) reads saw a partial transaction")
        #expect(busy == 0 && other == 0, "busy \(busy), other errors \(other)")
        // SANITIZER EXEMPTION(address): Scripts/sanitize.sh counts it among the suppressions.
        // AddressSanitizer holds freed memory back in its quarantine (256 MB by
        // default, `quarantine_size_mb`) to catch a use after free, so resident
        // memory grows by design (seen: 162 → 438 MiB in 5 s under make
        // sanitize). Where the child is built with it (the same build as this
        // test: `__asan_init` is in this process, whatever the environment
        // says), the growth allowed is twice that quarantine (it counts the
        // bytes asked for, not the redzones and headers around them) and
        // 128 MiB for the allocator's own caches and fake stacks, not unbounded.
        let allowance = Self.addressSanitizerQuarantineMiB.map { Double(2 * $0 + 128) } ?? 0
        #expect(resident.count >= Self.seconds * 5 && end <= warm * 1.10 + 4 + allowance,
                "resident MiB after warm-up \(warm), at the end \(end) (allowed for AddressSanitizer: \(allowance))")
        try ReliabilityResults.write("load", name: "pool \(Self.seconds) s", [
            "name": "1 writer + 4 readers, encrypted (raw key)", "seconds": Self.seconds, "writes": writes, "reads": reads,
            "lost": lost, "partial": partial, "busy": busy + other,
            "rss_warm_mib": (warm * 10).rounded() / 10, "rss_end_mib": (end * 10).rounded() / 10,
        ])
    }
}
