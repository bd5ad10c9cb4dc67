import CBenchmarkLoops
import Foundation
import Strongroom

/// What every workload needs: the scratch directory, the raw key (as a
/// key and as hex for C and the shell), the sample values, the GRDB peer.
struct WorkloadContext {
    let directory: String
    let key: DatabaseKey
    let keyHex: String
    let data: SampleData
    let peer: GRDBPeer?
    let quick: Bool

    func fresh(_ name: String) -> String {
        let path = "\(directory)/\(name).db"
        remove(path)
        return path
    }

    func remove(_ path: String) { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) } }

    /// Insert, decode and point lookups, three ways each, against C and
    /// GRDB, at every size.
    func core(_ runner: inout Runner, sizes: [Int]) throws {
        let peer = try peer.orThrow()
        let targetSize = sizes.max() ?? 0
        for rows in sizes {
            let targets: [Target] = rows == targetSize && !quick ? [
                .ratio("Strongroom statement", to: "C", atMost: 1.15),
                .ratio("Strongroom record (@Table)", to: "C", atMost: 1.15),
                .ratio("Strongroom Codable", to: "C", atMost: 1.5),
                .speedUp("Strongroom Codable", over: "GRDB Codable", atLeast: 3),
            ] : []
            func timed(_ name: String, _ body: @escaping (String) throws -> Double) -> () throws -> Double {
                { let path = fresh(name); defer { remove(path) }; return try body(path) }
            }
            try runner.measure("insert", group: "insert", size: rows, targets: targets, [
                Contender(name: "C", role: .c, run: timed("c") { try Scenarios.cInsert(path: $0, keyHex: keyHex, rows: rows, data: data) }),
                Contender(name: "Strongroom statement", role: .ours, run: timed("stmt") { try Scenarios.statementInsert(path: $0, key: key, rows: rows, data: data) }),
                Contender(name: "Strongroom Codable", role: .ours, run: timed("enc") { try Scenarios.encodableInsert(path: $0, key: key, rows: rows, data: data) }),
                Contender(name: "Strongroom record (@Table)", role: .ours, run: timed("rec") { try RecordScenarios.recordInsert(path: $0, key: key, rows: rows, data: data) }),
                Contender(name: "GRDB statement", role: .peer, run: timed("grdb-stmt") { try peer.run("insert-statement", path: $0, rows: rows) }),
                Contender(name: "GRDB Codable", role: .peer, run: timed("grdb-enc") { try peer.run("insert-codable", path: $0, rows: rows) }),
                Contender(name: "GRDB record (init(row:))", role: .peer, run: timed("grdb-rec") { try peer.run("insert-record", path: $0, rows: rows) }),
            ])

            // The files the reads share: encrypted (C's insert) and plaintext (GRDB's).
            let encrypted = fresh("read-\(rows)"), plaintext = fresh("read-plain-\(rows)")
            defer { remove(encrypted); remove(plaintext) }
            _ = try Scenarios.cInsert(path: encrypted, keyHex: keyHex, rows: rows, data: data)
            _ = try peer.run("insert-statement", path: plaintext, rows: rows)
            // At the largest size of a full run: the targets, and the
            // instructions of every read (callgrind; the figure that does not
            // move with the machine's load).
            let full = rows == targetSize && !quick
            let counts = full ? try readCounts(encrypted: encrypted, plaintext: plaintext, rows: rows) : nil
            let grdbC = GRDBPeer.cLoop
            let readTargets: [Target] = full ? [
                .ratio("Strongroom statement", to: "C", atMost: 1.15),
                .instructions("Strongroom statement", to: "C", atMost: 1.15),
                .ratio("Strongroom record (@Table)", to: "C", atMost: 1.15),
                .instructions("Strongroom record (@Table)", to: "C", atMost: 1.15),
                .ratio("Strongroom Codable", to: "C", atMost: 2),
                .instructions("Strongroom Codable", to: "C", atMost: 2),
                .overhead("Strongroom statement", below: "GRDB statement"),
                .instructionOverhead("Strongroom statement", below: "GRDB statement"),
                .overhead("Strongroom record (@Table)", below: "GRDB record (init(row:))"),
                .instructionOverhead("Strongroom record (@Table)", below: "GRDB record (init(row:))"),
                .speedUp("Strongroom Codable", over: "GRDB Codable", atLeast: 2.5),
            ] + ReadCounts.stringReads.flatMap { [.value(ReadCounts.overStrings($0), atMost: 1.15), .value(ReadCounts.overStrings($0, instructions: true), atMost: 1.15)] } : []
            try runner.measure("decode", group: "decode", size: rows, targets: readTargets, notes: [
                "Strongroom statement reads by position through `RowView` and makes `String`s; \"text in place\" reads the texts' bytes as the C loop does (`withTextBytes`).",
                "\"C owning text\" copies a text over 15 bytes to the heap and frees it, as a Swift `String` does; \"Swift Strings alone\" makes a row's two `String`s from the same bytes with no SQLite: the cost any read into `String` properties pays and the C loop does not.",
                "\"\(grdbC)\" is the same C loop on GRDB's engine (the system's plaintext SQLite, in the peer's process): GRDB's ratios \"vs its C\" are over it, ours over C on our engine.",
                "Instructions per row: callgrind, this engine's files of 10k and 60k rows, the difference of the two runs over 50k rows (what a run does once cancels out).",
                "\"over C + Swift Strings alone\": a read into `String`s over the C loop plus the bare cost of those `String`s (what any layer that makes them pays): our layer's own cost, the `String`s set aside.",
            ], [
                Contender(name: "C", role: .c) { try Scenarios.cRead(path: encrypted, keyHex: keyHex, expectedRows: rows) },
                Contender(name: "C owning text", role: .c) { try RecordScenarios.cReadOwned(path: encrypted, keyHex: keyHex, expectedRows: rows) },
                Contender(name: "Swift Strings alone", role: .tool) { try RecordScenarios.stringFloor(rows: rows, data: data) },
                Contender(name: "Strongroom statement", role: .ours) { try RecordScenarios.positionalRead(path: encrypted, key: key, expectedRows: rows) },
                Contender(name: "Strongroom text in place", role: .ours) { try RecordScenarios.positionalReadInPlace(path: encrypted, key: key, expectedRows: rows) },
                Contender(name: "Strongroom Codable", role: .ours) { try Scenarios.decodableRead(path: encrypted, key: key, expectedRows: rows) },
                Contender(name: "Strongroom record (@Table)", role: .ours) { try RecordScenarios.recordRead(path: encrypted, key: key, expectedRows: rows) },
                Contender(name: grdbC, role: .c, ownC: grdbC) { try peer.run("c-decode", path: plaintext, rows: rows) },
                Contender(name: "GRDB statement", role: .peer, ownC: grdbC) { try peer.run("decode-statement", path: plaintext, rows: rows) },
                Contender(name: "GRDB Codable", role: .peer, ownC: grdbC) { try peer.run("decode-codable", path: plaintext, rows: rows) },
                Contender(name: "GRDB record (init(row:))", role: .peer, ownC: grdbC) { try peer.run("decode-record", path: plaintext, rows: rows) },
            ], figures: { w in
                w.instructions = counts?.decode
                ReadCounts.addOverStrings(&w)
            })

            let lookups = quick ? 1000 : 100_000
            try runner.measure("\(formattedSize(lookups)) point lookups by primary key", group: "lookups", size: rows, targets: full ? [
                .ratio("Strongroom record (@Table)", to: "C", atMost: 1.15),
                .instructions("Strongroom record (@Table)", to: "C", atMost: 1.15),
                .overhead("Strongroom record (@Table)", below: "GRDB record (init(row:))"),
                .instructionOverhead("Strongroom record (@Table)", below: "GRDB record (init(row:))"),
            ] : [], notes: [
                "Instructions per lookup: callgrind, 2k and 12k lookups in the same files, the difference over 10k lookups.",
            ], [
                Contender(name: "C", role: .c) { try RecordScenarios.cPointLookups(path: encrypted, keyHex: keyHex, rows: rows, lookups: lookups) },
                Contender(name: "Strongroom record (@Table)", role: .ours) { try RecordScenarios.pointLookups(path: encrypted, key: key, rows: rows, lookups: lookups) },
                Contender(name: grdbC, role: .c, ownC: grdbC) { try peer.run("c-lookups", path: plaintext, rows: rows, lookups: lookups) },
                Contender(name: "GRDB record (init(row:))", role: .peer, ownC: grdbC) { try peer.run("lookups", path: plaintext, rows: rows, lookups: lookups) },
            ], figures: { $0.instructions = counts?.lookups })
        }
    }

    /// What encryption costs on our own engine: the same statement insert
    /// and a cold full scan (a new connection: SQLite's cache empty, the
    /// kernel's page cache warm) with a raw key, a passphrase, and none.
    func encryptionCost(_ runner: inout Runner, rows: Int) throws {
        let passphrase = try DatabaseKey.passphrase("benchmark passphrase")
        var fourKiB = Configuration(key: key)
        fourKiB.cipherPageSize = 4096
        let configurations: [(String, Configuration)] = [
            ("Strongroom raw key", Configuration(key: key)),
            ("Strongroom passphrase", Configuration(key: passphrase)),
            ("Strongroom plaintext", .plaintext),
            ("Strongroom raw key, 4 KiB cipher pages", fourKiB),
        ]
        let pages = SQLCipherLibrary.nativeFormat == .sqlcipher4
            ? "Our defaults: SQLCipher 4's 4 KiB cipher pages for encrypted files, SQLite's 4 KiB pages for plaintext ones; \"4 KiB cipher pages\" (`cipherPageSize: 4096`) is the default here, set explicitly."
            : "Our defaults: SQLCipher 3's 1 KiB cipher pages for encrypted files, SQLite's 4 KiB pages for plaintext ones. \"4 KiB cipher pages\" (`cipherPageSize: 4096`, opt-in: every other tool then needs the same pragma) shows how much of the difference is the page size."
        try runner.measure("insert, encrypted vs plaintext", group: "encryption", size: rows,
                           targets: quick ? [] : [.ratio("Strongroom raw key", to: "Strongroom plaintext", atMost: 1.25)],
                           notes: [pages], configurations.map { name, configuration in
            Contender(name: name, role: .ours) {
                let path = fresh("cost"); defer { remove(path) }
                return try Scenarios.statementInsert(path: path, configuration: configuration, rows: rows, data: data)
            }
        })
        var paths: [String] = []
        defer { paths.forEach(remove) }
        var contenders: [Contender] = []
        for (i, (name, configuration)) in configurations.enumerated() {
            let path = fresh("scan-\(i)")
            paths.append(path)
            _ = try Scenarios.statementInsert(path: path, configuration: configuration, rows: rows, data: data)
            contenders.append(Contender(name: name, role: .ours) {
                try seconds { _ = try SettingsScenario.fullScan(path: path, configuration: configuration, rows: rows) }
            })
        }
        try runner.measure("cold full scan, encrypted vs plaintext", group: "encryption", size: rows,
                           targets: quick ? [] : [.ratio("Strongroom raw key", to: "Strongroom plaintext", atMost: 2)],
                           notes: ["Cold: a new connection for each scan (its page cache empty, the kernel's warm); it includes opening, and the passphrase's key derivation.", pages],
                           contenders)
    }

    /// Opening: a connection with a raw key, with a passphrase, and a new
    /// reader of a passphrase-keyed pool; each up to its first read.
    func openCost(_ runner: inout Runner) throws {
        let path = fresh("open")
        defer { remove(path) }
        let passphrase = try DatabaseKey.passphrase("benchmark passphrase")
        let pool = try DatabasePool(path: path, configuration: Configuration(key: passphrase))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let rawPath = fresh("open-raw")
        defer { remove(rawPath) }
        try Connection(path: rawPath, configuration: Configuration(key: key)).execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        try runner.measure("open, up to the first read", group: "open", size: 1, unit: "s", targets: [.value("Strongroom pool reader (passphrase pool)", atMost: 0.002)],
                           rounds: quick ? 3 : 20, [
            Contender(name: "Strongroom raw key", role: .ours) {
                try seconds { _ = try Connection(path: rawPath, configuration: Configuration(key: key)).fetchOne(Int.self, sql: "SELECT x FROM t") }
            },
            Contender(name: "Strongroom passphrase", role: .ours) {
                try seconds { _ = try Connection(path: path, configuration: Configuration(key: passphrase)).fetchOne(Int.self, sql: "SELECT x FROM t") }
            },
            Contender(name: "Strongroom pool reader (passphrase pool)", role: .ours) {
                // A new pool each time (its key derived outside the timing), so the read opens a reader.
                let fresh = try DatabasePool(path: path, configuration: Configuration(key: passphrase))
                return try seconds { _ = try fresh.read { try $0.fetchOne(Int.self, sql: "SELECT x FROM t") } }
            },
        ])
    }

    func poolLoad(_ runner: inout Runner, seconds duration: Double) throws {
        let f = try PoolLoad.run(directory: directory, key: key, seconds: duration)
        var writes = Samples(), reads = Samples()
        writes.add(Double(f.writes) / duration)
        reads.add(Double(f.reads) / duration)
        var result = WorkloadResult(name: "pool, 1 writer + 4 readers", group: "pool", size: Int(duration), unit: "tx/s", lowerIsBetter: false,
                                    contenders: [ContenderResult(name: "Strongroom writer", role: .ours, samples: writes),
                                                 ContenderResult(name: "Strongroom readers", role: .ours, samples: reads)],
                                    targets: [.value("lost writes", atMost: 0), .value("busy errors reaching the caller", atMost: 0),
                                              .value("reads that saw a partial transaction", atMost: 0), .value("other errors", atMost: 0)])
        result.figures = [
            "lost writes": Double(f.lostWrites), "busy errors reaching the caller": Double(f.busyErrors),
            "reads that saw a partial transaction": Double(f.partialReads), "other errors": Double(f.otherErrors),
            "write latency p50 (µs)": Double(f.write.valueAtPercentile(50)), "write latency p99 (µs)": Double(f.write.valueAtPercentile(99)),
            "read latency p50 (µs)": Double(f.read.valueAtPercentile(50)), "read latency p99 (µs)": Double(f.read.valueAtPercentile(99)),
        ]
        result.notes = ["\(Int(duration)) s; latencies from HdrHistogram, in microseconds."]
        runner.record(result)
    }
}

extension Optional where Wrapped == GRDBPeer {
    func orThrow() throws -> GRDBPeer {
        guard let self else { throw BenchmarkError("the GRDB peer is not built") }
        return self
    }
}
