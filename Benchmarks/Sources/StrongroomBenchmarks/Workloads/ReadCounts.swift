import CBenchmarkLoops
import Foundation
import Strongroom
import StrongroomCrypto

/// The reads of the core workloads counted in instructions (`Callgrind`):
/// this harness started again under callgrind as a child
/// (`--count-child READ PATH ROWS [LOOKUPS]`, the key as hex on standard
/// input, never in argv) runs one read once; the GRDB peer is run the same
/// way, with its own C loops on the system's plaintext SQLite.
enum ReadCounts {
    /// The reads a child runs, by the contender's name in the report.
    static let decodes: [(contender: String, read: String)] = [
        ("C", "c"), ("C owning text", "c-owned"), ("Strongroom statement", "statement"), ("Strongroom text in place", "in-place"),
        ("Strongroom Codable", "codable"), ("Strongroom record (@Table)", "record"),
    ]
    static let lookups: [(contender: String, read: String)] = [("C", "lookups-c"), ("Strongroom record (@Table)", "lookups-record")]
    /// The GRDB peer's workloads (its own process and engine).
    static let peerDecodes: [(contender: String, workload: String)] = [
        (GRDBPeer.cLoop, "c-decode"), ("GRDB statement", "decode-statement"), ("GRDB Codable", "decode-codable"), ("GRDB record (init(row:))", "decode-record"),
    ]
    static let peerLookups: [(contender: String, workload: String)] = [(GRDBPeer.cLoop, "c-lookups"), ("GRDB record (init(row:))", "lookups")]

    /// Our reads that make the row's two `String`s, where the C loop copies
    /// bytes: measured also over C plus "Swift Strings alone".
    static let stringReads = ["Strongroom statement", "Strongroom record (@Table)"]

    /// The figure: `read` over C + Swift Strings alone, in time or in instructions.
    static func overStrings(_ read: String, instructions: Bool = false) -> String {
        "\(read) over C + Swift Strings alone" + (instructions ? ", in instructions" : "")
    }

    /// Adds the `overStrings` figures of the `stringReads` to a decode workload.
    static func addOverStrings(_ w: inout WorkloadResult) {
        for read in stringReads {
            if let ours = w.contender(read)?.samples.median, let c = w.c?.samples.median,
               let strings = w.contender("Swift Strings alone")?.samples.median {
                w.figures[overStrings(read)] = ours / (c + strings)
            }
            if let ours = w.instructions?[read], let c = w.instructions?["C"], let strings = w.instructions?["Swift Strings alone"] {
                w.figures[overStrings(read, instructions: true)] = ours / (c + strings)
            }
        }
    }

    /// Runs the read named `read` (`decodes`, `lookups`, "strings") once on
    /// `path`, and returns its seconds: for the count child, and `--profile`.
    static func run(_ read: String, path: String, key: DatabaseKey, keyHex: String, rows: Int, lookups: Int) throws -> Double {
        switch read {
        case "c": try Scenarios.cRead(path: path, keyHex: keyHex, expectedRows: rows)
        case "c-owned": try RecordScenarios.cReadOwned(path: path, keyHex: keyHex, expectedRows: rows)
        case "statement": try RecordScenarios.positionalRead(path: path, key: key, expectedRows: rows)
        case "in-place": try RecordScenarios.positionalReadInPlace(path: path, key: key, expectedRows: rows)
        case "codable": try Scenarios.decodableRead(path: path, key: key, expectedRows: rows)
        case "record": try RecordScenarios.recordRead(path: path, key: key, expectedRows: rows)
        case "strings": try RecordScenarios.stringFloor(rows: rows, data: SampleData(poolSize: 1000))
        case "lookups-c": try RecordScenarios.cPointLookups(path: path, keyHex: keyHex, rows: rows, lookups: lookups)
        case "lookups-record": try RecordScenarios.pointLookups(path: path, key: key, rows: rows, lookups: lookups)
        default: throw BenchmarkError("unknown read \(read): c, c-owned, statement, in-place, codable, record, strings, lookups-c, lookups-record")
        }
    }

    /// The child: one read, then exit 0 (1 if it failed).
    static func child(_ arguments: [String]) -> Never {
        do {
            guard arguments.count >= 3, let rows = Int(arguments[2]), var line = readLine(),
                  let bytes = line.withUTF8({ Hex.decodeSecret(UnsafeRawBufferPointer($0)) }) else {
                throw BenchmarkError("usage: --count-child READ PATH ROWS [LOOKUPS], key hex on stdin")
            }
            let keyHex = line
            let key = try DatabaseKey.raw(bytes)
            let path = arguments[1], lookups = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0
            _ = try run(arguments[0], path: path, key: key, keyHex: keyHex, rows: rows, lookups: lookups)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("count child: \(error)\n".utf8))
            exit(1)
        }
    }
}

extension WorkloadContext {
    /// Instructions per row of every read of the decode workload (files of
    /// 10k and 60k rows), and per lookup of the lookups workload (2k and 12k
    /// lookups in `encrypted` and `plaintext`, the files of `rows` rows the
    /// timed lookups use), on this engine and on GRDB's. By contender name.
    func readCounts(encrypted: String, plaintext: String, rows: Int) throws -> (decode: [String: Double], lookups: [String: Double]) {
        guard let callgrind = Callgrind.locate(directory: directory) else {
            throw BenchmarkError("valgrind is not installed: a full run counts instructions with callgrind (make bench installs it; apt-get install valgrind).")
        }
        let peer = try peer.orThrow()
        // valgrind 3.19 gives up on the debug information of a Swift 6 binary
        // ("Possibly corrupted debuginfo file"): it counts stripped copies.
        let harness = try stripped(CommandLine.arguments[0], as: "counted-harness")
        let grdb = try stripped(peer.executable, as: "counted-peer")
        let input = keyHex + "\n"
        let (small, large) = (10_000, 60_000)
        var files: [Int: (encrypted: String, plaintext: String)] = [:]
        for n in [small, large] {
            let e = fresh("count-\(n)"), p = fresh("count-plain-\(n)")
            _ = try Scenarios.cInsert(path: e, keyHex: keyHex, rows: n, data: data)
            _ = try peer.run("insert-statement", path: p, rows: n)
            files[n] = (e, p)
        }
        defer { for (e, p) in files.values { remove(e); remove(p) } }

        var decode: [String: Double] = [:]
        for (contender, read) in ReadCounts.decodes + [("Swift Strings alone", "strings")] {
            decode[contender] = try callgrind.perUnit(harness, small: small, large: large, input: input) { n in
                ["--count-child", read, files[n]!.encrypted, String(n)]
            }
        }
        for (contender, workload) in ReadCounts.peerDecodes {
            decode[contender] = try callgrind.perUnit(grdb, small: small, large: large) { n in [workload, files[n]!.plaintext, String(n)] }
        }
        var lookups: [String: Double] = [:]
        let (few, many) = (2000, 12_000)
        for (contender, read) in ReadCounts.lookups {
            lookups[contender] = try callgrind.perUnit(harness, small: few, large: many, input: input) { n in
                ["--count-child", read, encrypted, String(rows), String(n)]
            }
        }
        for (contender, workload) in ReadCounts.peerLookups {
            lookups[contender] = try callgrind.perUnit(grdb, small: few, large: many) { n in [workload, plaintext, String(rows), String(n)] }
        }
        return (decode, lookups)
    }

    /// A copy of `executable` without its debug information, in the work directory.
    private func stripped(_ executable: String, as name: String) throws -> String {
        let copy = "\(directory)/\(name)"
        guard try ChildProcess.spawn("/usr/bin/strip", ["--strip-debug", "-o", copy, executable], input: nil, captureOutput: true).status == 0 else {
            throw BenchmarkError("strip could not copy \(executable) for callgrind (binutils).")
        }
        return copy
    }
}
