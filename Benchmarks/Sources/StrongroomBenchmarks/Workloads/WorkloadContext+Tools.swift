import Foundation
import Strongroom
import StrongroomFields

/// The workloads measured against other tools (`openssl speed`, the
/// `sqlcipher` shell) and against variants of our own work; each keeps its
/// own loop of rounds (see the scenario files) and is recorded as is.
extension WorkloadContext {
    /// Sealed columns: sealing and opening values, the primitive against
    /// `openssl speed`, reads and an import against the same unsealed, and
    /// lookups by a sealed column against a plaintext one.
    func fields(_ runner: inout Runner, rounds: Int) throws {
        let rows = quick ? 2000 : 100_000, values = quick ? 10_000 : 1_000_000
        let keyring = FieldKeyring.generate()
        let cipher = FieldCipher(keyring: keyring)
        let randomized = try FieldScenarios.envelopes(cipher, values: values, mode: .randomized)
        let deterministic = try FieldScenarios.envelopes(cipher, values: values, mode: .deterministic)
        try runner.measure("seal and open 32-byte values", group: "fields", size: values,
                           targets: quick ? [] : [.value("seal, randomized (AES-256-GCM)", atMost: Double(values) / 1e6)],
                           notes: ["Each value bound to its own row (randomized) or to its column (deterministic), one core. Target: at least 1M values sealed per second (1M values in at most 1 s)."],
                           rounds: rounds, [
            Contender(name: "seal, randomized (AES-256-GCM)", role: .ours) { try FieldScenarios.sealValues(cipher, values: values, mode: .randomized) },
            Contender(name: "open, randomized (AES-256-GCM)", role: .ours) { try FieldScenarios.openValues(cipher, randomized, mode: .randomized) },
            Contender(name: "seal, deterministic (AES-256-SIV)", role: .ours) { try FieldScenarios.sealValues(cipher, values: values, mode: .deterministic) },
            Contender(name: "open, deterministic (AES-256-SIV)", role: .ours) { try FieldScenarios.openValues(cipher, deterministic, mode: .deterministic) },
        ])
        try runner.measure("AES-256-GCM seal of a 64-byte block", group: "fields", size: values,
                           targets: [.ratio("Strongroom", to: "openssl speed", atMost: 2)],
                           notes: ["Per message: a new nonce, the 64 bytes, the tag. C: the same EVP calls on the same libcrypto, the context keyed once (as ours). `openssl speed -evp aes-256-gcm -aead -bytes 64`: its own count over 1 s, in its own process."],
                           rounds: rounds, [
            Contender(name: "C", role: .c) { try FieldScenarios.cSeal(count: values) },
            Contender(name: "Strongroom", role: .ours) { try FieldScenarios.primitiveSeal(count: values) },
            Contender(name: "openssl speed", role: .tool) { try FieldScenarios.opensslSeal() },
        ])

        let plainPath = fresh("fields-plain"), sealedPath = fresh("fields-sealed")
        defer { remove(plainPath); remove(sealedPath) }
        let plain = try FieldScenarios.people(path: plainPath, rows: rows, keyring: nil)
        let sealed = try FieldScenarios.people(path: sealedPath, rows: rows, keyring: keyring)
        try runner.measure("read rows with 2 sealed columns", group: "fields", size: rows, targets: [.value("µs added per sealed value", atMost: 1.5)], rounds: rounds, [
            Contender(name: "Strongroom sealed", role: .ours) { try FieldScenarios.readPeople(sealed, rows: rows, sealed: true) },
            Contender(name: "Strongroom unsealed", role: .ours) { try FieldScenarios.readPeople(plain, rows: rows, sealed: false) },
        ]) { read in
            let added = (read.contender("Strongroom sealed")?.samples.median ?? .nan) - (read.contender("Strongroom unsealed")?.samples.median ?? .nan)
            read.figures["µs added per sealed value"] = added / Double(rows * 2) * 1e6
        }

        let signedPath = fresh("fields-signed")
        defer { remove(signedPath) }
        let signed = try FieldScenarios.people(path: signedPath, rows: rows, keyring: keyring, signed: true)
        try runner.measure("read rows with 2 sealed columns, signed", group: "fields", size: rows, notes: [
            "The same rows as above, signed (SignedRow over score and both envelopes, bound to id; issue 50, item 5): each row's HMAC-SHA256 checked before the row is read. Figure: the median difference per row, signed file minus sealed file.",
        ], rounds: rounds, [
            Contender(name: "Strongroom signed", role: .ours) { try FieldScenarios.readPeople(signed, rows: rows, sealed: true) },
            Contender(name: "Strongroom sealed", role: .ours) { try FieldScenarios.readPeople(sealed, rows: rows, sealed: true) },
        ]) { read in
            let added = (read.contender("Strongroom signed")?.samples.median ?? .nan) - (read.contender("Strongroom sealed")?.samples.median ?? .nan)
            read.figures["µs added per signed row read"] = added / Double(rows) * 1e6
        }
        let inserts = quick ? 1000 : 10_000
        try runner.measure("\(formattedSize(inserts)) inserts of signed rows", group: "fields", size: inserts, notes: [
            "One transaction of inserts of a record with 2 sealed columns, into the files above: signed (each row's signature computed in Swift and bound with it) and sealed only. Figure: the median difference per insert.",
        ], rounds: rounds, [
            Contender(name: "Strongroom signed", role: .ours) { try FieldScenarios.insertMorePeople(signed, rows: rows, count: inserts) },
            Contender(name: "Strongroom sealed", role: .ours) { try FieldScenarios.insertMorePeople(sealed, rows: rows, count: inserts) },
        ]) { insert in
            let added = (insert.contender("Strongroom signed")?.samples.median ?? .nan) - (insert.contender("Strongroom sealed")?.samples.median ?? .nan)
            insert.figures["µs added per signed insert"] = added / Double(inserts) * 1e6
        }

        let updates = quick ? 1000 : 10_000
        try runner.measure("\(formattedSize(updates)) sealed UPDATEs", group: "fields", size: updates,
                           targets: [.value("µs a sealed update adds", atMost: 25)], notes: [
            "One transaction. Connection.update(_:in:) writes one person's phone: on the sealed file the phone is sealed in Swift (AES-256-GCM, bound to the row's id) and bound, with no SQL function on the connection (issue 50, item 2); on the plain file the same call binds it as it is. Before, an app updated through strongroom_seal in its SQL, which cost about 25-31 µs more than a plain UPDATE (its statement checked before each run). Figure: the median difference per UPDATE, sealed file minus plain file.",
        ], rounds: rounds, FieldScenarios.SealedUpdate.allCases.map { how in
            Contender(name: how.name, role: .ours) { try FieldScenarios.sealedUpdates(sealed: sealed, plain: plain, cipher: cipher, how: how, rows: rows, updates: updates) }
        }) { result in
            let sealedUpdate = result.contender(FieldScenarios.SealedUpdate.updateSealed.name)?.samples.median ?? .nan
            let plainUpdate = result.contender(FieldScenarios.SealedUpdate.updatePlain.name)?.samples.median ?? .nan
            result.figures["µs a sealed update adds"] = (sealedUpdate - plainUpdate) / Double(updates) * 1e6
        }
        try runner.measure("\(formattedSize(updates)) first reads of a sealed row", group: "fields", size: updates,
                           targets: [.value("µs added per first read", atMost: 200)], notes: [
            "Each read prepares its statement anew and reads one record. On the sealed file the record declares its two sealed properties (issue 50): the statement finds them and their row key among its columns by name, once, and opens two values; nothing of the schema is read or compiled again. Figure: the median difference per read.",
        ], rounds: rounds, [
            Contender(name: "Strongroom sealed", role: .ours) { try FieldScenarios.firstReads(sealed, rows: rows, reads: updates, sealed: true) },
            Contender(name: "Strongroom unsealed", role: .ours) { try FieldScenarios.firstReads(plain, rows: rows, reads: updates, sealed: false) },
        ]) { read in
            let added = (read.contender("Strongroom sealed")?.samples.median ?? .nan) - (read.contender("Strongroom unsealed")?.samples.median ?? .nan)
            read.figures["µs added per first read"] = added / Double(updates) * 1e6
        }

        let chinookOut = "\(directory)/chinook-import.db"
        try runner.measure("import Chinook, 5 sealed columns", group: "fields", size: 1,
                           targets: [.ratio("Strongroom sealed", to: "Strongroom unsealed", atMost: 2)], rounds: rounds, [
            Contender(name: "Strongroom sealed", role: .ours) { try FieldScenarios.importChinook(to: chinookOut, keyring: keyring) },
            Contender(name: "Strongroom unsealed", role: .ours) { try FieldScenarios.importChinook(to: chinookOut, keyring: nil) },
        ])

        let lookups = quick ? 1000 : 10_000
        var queues: [FieldScenarios.Lookup: DatabaseQueue] = [:]
        var paths: [String] = []
        defer { paths.forEach(remove) }
        for lookup in FieldScenarios.Lookup.allCases {
            let path = fresh("lookup-\(lookup)")
            paths.append(path)
            queues[lookup] = try FieldScenarios.customers(path: path, rows: rows, keyring: keyring, lookup: lookup)
        }
        let names: [FieldScenarios.Lookup: String] = [
            .plaintext: "Strongroom, plaintext column", .deterministic: "Strongroom, deterministic sealed column", .blindIndex: "Strongroom, blind index",
        ]
        try runner.measure("\(formattedSize(lookups)) lookups by e-mail", group: "fields", size: rows, notes: [
            "Each lookup is a read of its own through a queue (an indexed column, the row's sealed columns opened); the plaintext column is the floor. Deterministic: the e-mail is sealed with AES-SIV to find its envelope; blind index: an HMAC of the e-mail finds its index column, and the e-mail itself is sealed randomized.",
        ], rounds: rounds, FieldScenarios.Lookup.allCases.map { lookup in
            Contender(name: names[lookup]!, role: .ours) { try FieldScenarios.lookupCustomers(queues[lookup]!, lookup: lookup, rows: rows, lookups: lookups) }
        })
    }

    func migrations(_ runner: inout Runner, rows: Int, fleet: Int, rounds: Int) throws {
        let (ours, shell) = try MigrationScenarios.rebuild(directory: directory, key: key, keyHex: keyHex, rows: rows, rounds: rounds)
        runner.record(WorkloadResult(name: "rebuild a table (DROP COLUMN)", group: "migrations", size: rows,
                                     contenders: [ContenderResult(name: "Strongroom migrate", role: .ours, samples: ours),
                                                  ContenderResult(name: "sqlcipher shell", role: .tool, samples: shell)],
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

    /// `--profile NAME`: one read (or insert) five times in this process,
    /// each round's time on stderr, for valgrind's callgrind (where instructions
    /// go, function by function) or `perf record` on a machine with hardware
    /// counters (this VM's `perf stat` has none).
    func profile(_ name: String) throws {
        let rows = quick ? 1000 : 1_000_000
        let path = fresh("profile")
        defer { remove(path) }
        _ = try Scenarios.cInsert(path: path, keyHex: keyHex, rows: rows, data: data)
        for round in 0..<5 {
            let insertPath = fresh("profile-insert-\(round)")
            defer { remove(insertPath) }
            let seconds: Double
            switch name {
            case "insert-c": seconds = try Scenarios.cInsert(path: insertPath, keyHex: keyHex, rows: rows, data: data)
            case "insert-statement": seconds = try Scenarios.statementInsert(path: insertPath, key: key, rows: rows, data: data)
            case "insert-codable": seconds = try Scenarios.encodableInsert(path: insertPath, key: key, rows: rows, data: data)
            case "insert-record": seconds = try RecordScenarios.recordInsert(path: insertPath, key: key, rows: rows, data: data)
            case "create-sealed": seconds = try FieldScenarios.sealedCreates(path: insertPath, rows: rows)
            case "import-chinook": seconds = try FieldScenarios.importChinook(to: insertPath, keyring: nil)
            case "import-chinook-sealed": seconds = try FieldScenarios.importChinook(to: insertPath, keyring: FieldKeyring.generate())
            default: seconds = try ReadCounts.run(name, path: path, key: key, keyHex: keyHex, rows: rows, lookups: quick ? 1000 : 100_000)
            }
            FileHandle.standardError.write(Data("round \(round + 1): \(formatted(seconds, unit: "s"))\n".utf8))
        }
    }
}
