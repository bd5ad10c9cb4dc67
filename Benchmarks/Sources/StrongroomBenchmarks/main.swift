import CBenchmarkLoops
import Foundation
import Strongroom
import StrongroomCrypto

// Side-by-side figures: each Strongroom scenario against the same loop in C,
// in this one process, on the same SQLCipher library, key kind and settings.
// Usage: swift run -c release StrongroomBenchmarks [--rows N] [--rounds N]
//        [--settings] [--migrations] [--conversion [--conversion-rows N]] [--fields [--field-rows N]]

if let at = CommandLine.arguments.firstIndex(of: "--measure-child") {
    ChildProcess.measure(Array(CommandLine.arguments[(at + 1)...]))
}
if let at = CommandLine.arguments.firstIndex(of: "--conversion-child") {
    try ConversionScenarios.child(Array(CommandLine.arguments[(at + 1)...]))
    exit(0)
}

let options = BenchmarkOptions(CommandLine.arguments)
// STRONGROOM_BENCH_DIR puts the files elsewhere (another filesystem, tmpfs).
let workBase = ProcessInfo.processInfo.environment["STRONGROOM_BENCH_DIR"] ?? FileManager.default.temporaryDirectory.path
let workDirectory = "\(workBase)/strongroom-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: workDirectory) }

let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
let key = try DatabaseKey.raw(keyBytes)
let keyHex = Hex.encode(keyBytes)
let data = SampleData(poolSize: 1000)

print("Strongroom benchmarks: \(options.rows) rows of 5 columns, best of \(options.rounds) rounds, raw 256-bit key")
print("SQLCipher \(try Connection.inMemory(configuration: Configuration(key: key)).cipherVersion); settings: cache 64 MiB, WAL, synchronous NORMAL, temp_store MEMORY\n")

// --profile-read c|c-owned|record|positional|in-place|decodable|insert-c|insert-statement|insert-record: only that read, 5 times,
// for `perf stat` / `perf record` (instruction counts do not drift as times do).
if let at = CommandLine.arguments.firstIndex(of: "--profile-read"), at + 1 < CommandLine.arguments.count {
    let path = "\(workDirectory)/profile.db"
    _ = try Scenarios.cInsert(path: path, keyHex: keyHex, rows: options.rows, data: data)
    for round in 0..<5 {
        let insertPath = "\(workDirectory)/profile-insert-\(round).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(insertPath + suffix) } }
        switch CommandLine.arguments[at + 1] {
        case "insert-c": _ = try Scenarios.cInsert(path: insertPath, keyHex: keyHex, rows: options.rows, data: data)
        case "insert-statement": _ = try Scenarios.statementInsert(path: insertPath, key: key, rows: options.rows, data: data)
        case "insert-record": _ = try RecordScenarios.recordInsert(path: insertPath, key: key, rows: options.rows, data: data)
        case "c": _ = try Scenarios.cRead(path: path, keyHex: keyHex)
        case "c-owned": _ = try RecordScenarios.cReadOwned(path: path, keyHex: keyHex)
        case "record": _ = try RecordScenarios.recordRead(path: path, key: key, expectedRows: options.rows)
        case "positional": _ = try RecordScenarios.positionalRead(path: path, key: key, expectedRows: options.rows)
        case "in-place": _ = try RecordScenarios.positionalReadInPlace(path: path, key: key, expectedRows: options.rows)
        case "decodable": _ = try Scenarios.decodableRead(path: path, key: key, expectedRows: options.rows)
        default: throw BenchmarkError("--profile-read c|c-owned|record|positional|in-place|decodable|insert-c|insert-statement|insert-record")
        }
    }
    exit(0)
}

var results: [ScenarioResult] = []
var cInsert = Timing(), statementInsert = Timing(), encodableInsert = Timing(), recordInsert = Timing()
var cRead = Timing(), cReadOwned = Timing(), decodableRead = Timing(), recordRead = Timing(), positionalRead = Timing(), inPlaceRead = Timing(), stringFloor = Timing()
// Each timed run starts with dirty pages flushed (`sync`), and the order of
// the insert scenarios rotates per round, so no side inherits the other's
// write-back or a warmer machine.
for round in 0..<options.rounds {
    let prefix = "\(workDirectory)/r\(round)"
    let inserts: [() throws -> Void] = [
        { sync(); cInsert.add(try Scenarios.cInsert(path: "\(prefix)-c.db", keyHex: keyHex, rows: options.rows, data: data)) },
        { sync(); statementInsert.add(try Scenarios.statementInsert(path: "\(prefix)-stmt.db", key: key, rows: options.rows, data: data)) },
        { sync(); encodableInsert.add(try Scenarios.encodableInsert(path: "\(prefix)-enc.db", key: key, rows: options.rows, data: data)) },
        { sync(); recordInsert.add(try RecordScenarios.recordInsert(path: "\(prefix)-rec.db", key: key, rows: options.rows, data: data)) },
    ]
    for i in 0..<inserts.count {
        try inserts[(i + round) % inserts.count]()
    }
    sync()
    // Reads are short (about half a second) and this VM's speed drifts:
    // three passes per round, each reader in a rotated order, so every
    // side gets the same chances at a quiet moment (best of all passes).
    let reads: [() throws -> Void] = [
        { cRead.add(try Scenarios.cRead(path: "\(prefix)-c.db", keyHex: keyHex)) },
        { cReadOwned.add(try RecordScenarios.cReadOwned(path: "\(prefix)-c.db", keyHex: keyHex)) },
        { decodableRead.add(try Scenarios.decodableRead(path: "\(prefix)-c.db", key: key, expectedRows: options.rows)) },
        { recordRead.add(try RecordScenarios.recordRead(path: "\(prefix)-c.db", key: key, expectedRows: options.rows)) },
        { positionalRead.add(try RecordScenarios.positionalRead(path: "\(prefix)-c.db", key: key, expectedRows: options.rows)) },
        { stringFloor.add(try RecordScenarios.stringFloor(rows: options.rows, data: data)) },
        { inPlaceRead.add(try RecordScenarios.positionalReadInPlace(path: "\(prefix)-c.db", key: key, expectedRows: options.rows)) },
    ]
    for pass in 0..<3 {
        for i in 0..<reads.count { try reads[(i + pass + round) % reads.count]() }
    }
    for suffix in ["-c.db", "-stmt.db", "-enc.db", "-rec.db"] {
        for extra in ["", "-wal", "-shm"] { unlink("\(prefix)\(suffix)\(extra)") }
    }
}
results.append(ScenarioResult(name: "insert, prepared statement, 1 transaction", ours: statementInsert, baseline: cInsert, baselineName: "C", target: 1.15))
results.append(ScenarioResult(name: "insert, Encodable record", ours: encodableInsert, baseline: cInsert, baselineName: "C", target: 1.5))
results.append(ScenarioResult(name: "insert, @Table record", ours: recordInsert, baseline: cInsert, baselineName: "C", target: 1.15))
results.append(ScenarioResult(name: "read into Decodable struct", ours: decodableRead, baseline: cRead, baselineName: "C", target: 1.5))
results.append(ScenarioResult(name: "read into @Table struct", ours: recordRead, baseline: cRead, baselineName: "C", target: 1.2))
results.append(ScenarioResult(name: "read rows by position (RowView)", ours: positionalRead, baseline: cRead, baselineName: "C", target: 1.15))
results.append(ScenarioResult(name: "by position, text in place (as C)", ours: inPlaceRead, baseline: cRead, baselineName: "C", target: 1.15))
// The same two reads against C that also owns its text as a Swift String
// does (malloc + memcpy for a text over 15 bytes, inline below).
results.append(ScenarioResult(name: "@Table struct vs C owning text", ours: recordRead, baseline: cReadOwned, baselineName: "C+malloc", target: 1.2))
results.append(ScenarioResult(name: "RowView vs C owning text", ours: positionalRead, baseline: cReadOwned, baselineName: "C+malloc", target: 1.15))

var memoryLines: [String] = []
memoryLines.append(String(format: "making a row's 2 Strings alone (11 and 22 bytes, no SQLite): %.0f ns a row, %.0f%% of C's whole read of a row; " +
                          "@Table read less that: %.2fx of C", stringFloor.best / Double(options.rows) * 1e9, stringFloor.best / cRead.best * 100,
                          (recordRead.best - stringFloor.best) / cRead.best))

let poolOpen = try Scenarios.poolReaderOpen(directory: workDirectory, samples: options.poolSamples)
results.append(poolOpen)

if options.migrations {
    let (runner, shell) = try MigrationScenarios.rebuild(directory: workDirectory, key: key, keyHex: keyHex, rows: options.rows)
    var ours = Timing(), theirs = Timing()
    ours.add(runner)
    theirs.add(shell)
    results.append(ScenarioResult(name: "rebuild \(options.rows) rows (DROP COLUMN)", ours: ours, baseline: theirs, baselineName: "sqlcipher shell", target: 1.2))
    for perTenantDirectory in [false, true] {
        let (oneWorker, twoWorkers) = try MigrationScenarios.fleet(directory: workDirectory, key: key, count: options.fleetSize,
                                                                   perTenantDirectory: perTenantDirectory, rounds: options.rounds)
        let layout = perTenantDirectory ? "a directory each" : "one directory"
        var fleet = ScenarioResult(name: "fleet of \(options.fleetSize) files, \(layout)", ours: twoWorkers, baseline: oneWorker, baselineName: "1 worker", target: nil)
        fleet.speedupTarget = 1.7
        results.append(fleet)
    }
}

if options.conversion {
    let figures = try ConversionScenarios.run(directory: workDirectory, keyHex: keyHex, rows: options.conversionRows, rounds: options.rounds)
    results.append(ScenarioResult(name: "import \(options.conversionRows) rows, verified", ours: figures.importOurs.timing, baseline: figures.importShell.timing, baselineName: "shell export", target: 1.5))
    results.append(ScenarioResult(name: "export \(options.conversionRows) rows, verified", ours: figures.exportOurs.timing, baseline: figures.exportShell.timing, baselineName: "shell export", target: 1.5))
    memoryLines.append("peak resident memory, import: strongroom \(figures.importOurs.peakKiB / 1024) MiB, sqlcipher shell \(figures.importShell.peakKiB / 1024) MiB")
    memoryLines.append("peak resident memory, export: strongroom \(figures.exportOurs.peakKiB / 1024) MiB, sqlcipher shell \(figures.exportShell.peakKiB / 1024) MiB")
}

if options.fields {
    let figures = try FieldScenarios.run(directory: workDirectory, rows: options.fieldRows, rounds: options.rounds)
    results.append(ScenarioResult(name: "import Chinook, 5 sealed columns", ours: figures.importSealed, baseline: figures.importPlain, baselineName: "unsealed", target: 2.0))
    let added = (figures.readSealed.best - figures.readPlain.best) / Double(figures.readRows * 2) * 1e6
    memoryLines.append(String(format: "seal 1M 32-byte values (AES-256-GCM envelopes, one core): %.2fM values/s (target ≥ 1M/s: %@)",
                              figures.sealValuesPerSecond / 1e6, figures.sealValuesPerSecond >= 1e6 ? "ok" : "MISSED"))
    if let openssl = figures.opensslMicroseconds {
        memoryLines.append(String(format: "AES-256-GCM seal of a 64-byte block: %.3f µs; openssl speed -evp aes-256-gcm: %.3f µs; ratio %.2fx (target ≤ 2x: %@)",
                                  figures.primitiveMicroseconds, openssl, figures.primitiveMicroseconds / openssl, figures.primitiveMicroseconds / openssl <= 2 ? "ok" : "MISSED"))
    }
    memoryLines.append(String(format: "read %d rows with 2 sealed columns: %.3f s vs %.3f s unsealed: %.2f µs added per sealed value (target ≤ 1.5 µs: %@)",
                              figures.readRows, figures.readSealed.best, figures.readPlain.best, added, added <= 1.5 ? "ok" : "MISSED"))
}

print(ScenarioResult.table(results))
for line in memoryLines { print(line) }

if options.settings {
    print("\nEffect of each default (raw key, best of \(options.rounds) runs; ratio against the defaults' row):")
    print(try SettingsScenario.run(directory: workDirectory, key: key, rows: min(options.rows, 500_000), commits: 1000, lookups: 200_000, rounds: options.rounds, data: data))
}
