import Foundation

/// The peer, GRDB 7.10 on the system's plaintext SQLite: its own package
/// (`Benchmarks/GRDBPeer`) and its own process, run once per sample. Its
/// time is the one it measures around its loop, as ours and C's are.
struct GRDBPeer {
    /// The harness's C loops on GRDB's engine, run by the peer's process:
    /// the C that GRDB's layer is measured over.
    static let cLoop = "C on GRDB's SQLite"

    let executable: String
    /// A debug build of the peer is refused unless this is set (a quick run).
    var allowDebug = false

    /// The peer's built executable, or nil: the release build, or the
    /// debug one only when `allowDebug` (a quick run, whose figures mean
    /// nothing anyway), so that a full run never times debug GRDB.
    static func locate(_ explicit: String?, allowDebug: Bool) -> GRDBPeer? {
        let base = "\(FileManager.default.currentDirectoryPath)/GRDBPeer/.build"
        let candidates = explicit.map { [$0] } ?? ["\(base)/release/GRDBPeer"] + (allowDebug ? ["\(base)/debug/GRDBPeer"] : [])
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map { GRDBPeer(executable: $0, allowDebug: allowDebug) }
    }

    /// Runs `workload` (see the peer's main.swift) and returns its seconds,
    /// after checking that it handled every row (every lookup found one)
    /// and, in a full run, that it is a release build.
    func run(_ workload: String, path: String, rows: Int, lookups: Int = 0) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [workload, path, String(rows), String(lookups)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Answer: Decodable { let seconds: Double; let checksum: Int; let rows: Int; let debug: Bool }
        guard process.terminationStatus == 0, let answer = try? JSONDecoder().decode(Answer.self, from: data), answer.checksum > 0 else {
            throw BenchmarkError("the GRDB peer failed: \(workload) \(path)")
        }
        let expected = workload.hasSuffix("lookups") ? lookups : rows
        guard answer.rows == expected else {
            throw BenchmarkError("the GRDB peer's \(workload) handled \(answer.rows) rows, expected \(expected): its figure would not be the same work")
        }
        guard allowDebug || !answer.debug else {
            throw BenchmarkError("\(executable) is a debug build: a full run times the release build (swift build -c release --package-path GRDBPeer)")
        }
        return answer.seconds
    }

    /// The async pool workload (`async-pool`, see AsyncPoolLoad): `tasks`
    /// tasks on GRDB's `DatabasePool` for `seconds`, on a new file of `rows`
    /// rows at `path`. A run in which a client saw an error, a write was
    /// lost or a read found no row is refused: its figures would not be
    /// the same work.
    func asyncPool(path: String, rows: Int, seconds: Double, tasks: Int) throws -> AsyncPoolLoad.Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["async-pool", path, String(rows), String(Int((seconds * 1000).rounded())), String(tasks)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Answer: Decodable { let run: AsyncPoolLoad.Run; let rows: Int; let tasks: Int; let debug: Bool }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard process.terminationStatus == 0, let answer = try? decoder.decode(Answer.self, from: data) else {
            throw BenchmarkError("the GRDB peer failed: async-pool \(path)")
        }
        guard answer.rows == rows, answer.tasks == tasks, answer.run.reads > 0, answer.run.writes > 0 else {
            throw BenchmarkError("the GRDB peer's async-pool ran \(answer.tasks) tasks on \(answer.rows) rows (expected \(tasks) on \(rows)), \(answer.run.reads) reads and \(answer.run.writes) writes: its figures would not be the same work")
        }
        guard answer.run.errors == 0, answer.run.lostWrites == 0, answer.run.missingRows == 0 else {
            throw BenchmarkError("the GRDB peer's async-pool saw \(answer.run.errors) errors, \(answer.run.lostWrites) lost writes, \(answer.run.missingRows) reads that found no row")
        }
        guard allowDebug || !answer.debug else {
            throw BenchmarkError("\(executable) is a debug build: a full run times the release build (swift build -c release --package-path GRDBPeer)")
        }
        return answer.run
    }
}
