import Foundation

/// The peer, GRDB 7.10 on the system's plaintext SQLite: its own package
/// (`Benchmarks/GRDBPeer`) and its own process, run once per sample. Its
/// time is the one it measures around its loop, as ours and C's are.
struct GRDBPeer {
    let executable: String

    /// The peer's built executable, or nil: the release build, or the
    /// debug one only when `allowDebug` (a quick run, whose figures mean
    /// nothing anyway), so that a full run never times debug GRDB.
    static func locate(_ explicit: String?, allowDebug: Bool) -> GRDBPeer? {
        let base = "\(FileManager.default.currentDirectoryPath)/GRDBPeer/.build"
        let candidates = explicit.map { [$0] } ?? ["\(base)/release/GRDBPeer"] + (allowDebug ? ["\(base)/debug/GRDBPeer"] : [])
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(GRDBPeer.init)
    }

    /// Runs `workload` (see the peer's main.swift) and returns its seconds.
    func run(_ workload: String, path: String, rows: Int, lookups: Int = 0) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [workload, path, String(rows), String(lookups)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Answer: Decodable { let seconds: Double; let checksum: Int }
        guard process.terminationStatus == 0, let answer = try? JSONDecoder().decode(Answer.self, from: data), answer.checksum > 0 else {
            throw BenchmarkError("the GRDB peer failed: \(workload) \(path)")
        }
        return answer.seconds
    }
}
