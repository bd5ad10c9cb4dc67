import Foundation
import Strongroom

/// The workloads measured against other tools (`openssl speed`, the
/// `sqlcipher` shell) and against variants of our own work; each keeps its
/// own loop of rounds (see the scenario files) and is recorded as is.
extension WorkloadContext {
    func fields(_ runner: inout Runner, rounds: Int) throws {
        let rows = quick ? 2000 : 100_000, values = quick ? 10_000 : 1_000_000
        let f = try FieldScenarios.run(directory: directory, rows: rows, rounds: rounds, values: values)
        var seal = Samples(); seal.add(f.sealValuesPerSecond)
        var ours = Samples(), openssl = Samples()
        ours.add(f.primitiveMicroseconds * 1e-6)
        if let o = f.opensslMicroseconds { openssl.add(o * 1e-6) }
        runner.record(WorkloadResult(name: "AES-256-GCM seal of a 64-byte block", group: "fields", size: values,
                                     contenders: [ContenderResult(name: "Strongroom", role: .ours, samples: ours),
                                                  ContenderResult(name: "openssl speed", role: .tool, samples: openssl)],
                                     targets: [.ratio("Strongroom", to: "openssl speed", atMost: 2)]))
        var sealResult = WorkloadResult(name: "seal 32-byte values into envelopes", group: "fields", size: values, unit: "values/s", lowerIsBetter: false,
                                        contenders: [ContenderResult(name: "Strongroom", role: .ours, samples: seal)])
        sealResult.figures = ["values per second": f.sealValuesPerSecond]
        sealResult.notes = ["Target: at least 1M values/s on one core."]
        runner.record(sealResult)
        var read = WorkloadResult(name: "read rows with 2 sealed columns", group: "fields", size: f.readRows,
                                  contenders: [ContenderResult(name: "Strongroom sealed", role: .ours, samples: f.readSealed),
                                               ContenderResult(name: "Strongroom unsealed", role: .ours, samples: f.readPlain)],
                                  targets: [.value("µs added per sealed value", atMost: 1.5)])
        read.figures = ["µs added per sealed value": (f.readSealed.median - f.readPlain.median) / Double(f.readRows * 2) * 1e6]
        runner.record(read)
        runner.record(WorkloadResult(name: "import Chinook, 5 sealed columns", group: "fields", size: 1,
                                     contenders: [ContenderResult(name: "Strongroom sealed", role: .ours, samples: f.importSealed),
                                                  ContenderResult(name: "Strongroom unsealed", role: .ours, samples: f.importPlain)],
                                     targets: [.ratio("Strongroom sealed", to: "Strongroom unsealed", atMost: 2)]))
    }

    func migrations(_ runner: inout Runner, rows: Int, fleet: Int, rounds: Int) throws {
        let (ours, shell) = try MigrationScenarios.rebuild(directory: directory, key: key, keyHex: keyHex, rows: rows)
        var o = Samples(), s = Samples()
        o.add(ours); s.add(shell)
        runner.record(WorkloadResult(name: "rebuild a table (DROP COLUMN)", group: "migrations", size: rows,
                                     contenders: [ContenderResult(name: "Strongroom migrate", role: .ours, samples: o),
                                                  ContenderResult(name: "sqlcipher shell", role: .tool, samples: s)],
                                     targets: [.ratio("Strongroom migrate", to: "sqlcipher shell", atMost: 1.2)]))
        for perTenantDirectory in [false, true] {
            let (one, two) = try MigrationScenarios.fleet(directory: directory, key: key, count: fleet, perTenantDirectory: perTenantDirectory, rounds: rounds)
            runner.record(WorkloadResult(name: "migrate a fleet, \(perTenantDirectory ? "a directory each" : "one directory")", group: "migrations", size: fleet,
                                         contenders: [ContenderResult(name: "Strongroom 2 workers", role: .ours, samples: two),
                                                      ContenderResult(name: "Strongroom 1 worker", role: .ours, samples: one)],
                                         targets: [.speedUp("Strongroom 2 workers", over: "Strongroom 1 worker", atLeast: 1.7)]))
        }
    }

    func conversion(_ runner: inout Runner, rows: Int, rounds: Int) throws {
        let f = try ConversionScenarios.run(directory: directory, keyHex: keyHex, rows: rows, rounds: rounds)
        for (name, ours, shell) in [("import plaintext, verified", f.importOurs, f.importShell), ("export to plaintext, verified", f.exportOurs, f.exportShell)] {
            var result = WorkloadResult(name: name, group: "conversion", size: rows,
                                        contenders: [ContenderResult(name: "Strongroom", role: .ours, samples: ours.timing),
                                                     ContenderResult(name: "sqlcipher shell", role: .tool, samples: shell.timing)],
                                        targets: [.ratio("Strongroom", to: "sqlcipher shell", atMost: 1.5)])
            result.figures = ["peak resident MiB, Strongroom": Double(ours.peakKiB / 1024), "peak resident MiB, sqlcipher shell": Double(shell.peakKiB / 1024)]
            runner.record(result)
        }
    }

    /// `--profile NAME`: one read (or insert) five times, for `perf stat`
    /// and `perf record` (instruction counts do not drift as times do).
    func profile(_ name: String) throws {
        let rows = quick ? 1000 : 1_000_000
        let path = fresh("profile")
        defer { remove(path) }
        _ = try Scenarios.cInsert(path: path, keyHex: keyHex, rows: rows, data: data)
        for round in 0..<5 {
            let insertPath = fresh("profile-insert-\(round)")
            defer { remove(insertPath) }
            switch name {
            case "insert-c": _ = try Scenarios.cInsert(path: insertPath, keyHex: keyHex, rows: rows, data: data)
            case "insert-statement": _ = try Scenarios.statementInsert(path: insertPath, key: key, rows: rows, data: data)
            case "insert-record": _ = try RecordScenarios.recordInsert(path: insertPath, key: key, rows: rows, data: data)
            case "c": _ = try Scenarios.cRead(path: path, keyHex: keyHex)
            case "c-owned": _ = try RecordScenarios.cReadOwned(path: path, keyHex: keyHex)
            case "record": _ = try RecordScenarios.recordRead(path: path, key: key, expectedRows: rows)
            case "positional": _ = try RecordScenarios.positionalRead(path: path, key: key, expectedRows: rows)
            case "in-place": _ = try RecordScenarios.positionalReadInPlace(path: path, key: key, expectedRows: rows)
            case "decodable": _ = try Scenarios.decodableRead(path: path, key: key, expectedRows: rows)
            default: throw BenchmarkError("--profile c|c-owned|record|positional|in-place|decodable|insert-c|insert-statement|insert-record")
            }
        }
    }
}
