import Foundation

/// Instructions counted by valgrind's callgrind: a count that does not move
/// with the machine's load, where a clock on this kind of virtual machine
/// moves by 10% from run to run (and `perf stat` has no hardware counters
/// here: `instructions <not supported>`).
///
/// A count is per unit of work (a row read, a lookup made): the same
/// command is run at two sizes and the difference of the two totals is
/// divided by the difference of the sizes, so that what a run does once
/// (starting the process, opening, preparing) cancels out.
struct Callgrind {
    let valgrind: String
    let directory: String

    /// callgrind where `make bench` installs it, or nil.
    static func locate(directory: String) -> Callgrind? {
        ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }
            .map { Callgrind(valgrind: $0, directory: directory) }
    }

    /// The instructions one unit of work takes: `arguments(size)` run at
    /// `small` and at `large` units, the difference over `large - small`.
    func perUnit(_ executable: String, small: Int, large: Int, input: String? = nil, _ arguments: (Int) -> [String]) throws -> Double {
        let a = try total(executable, arguments(small), input: input)
        let b = try total(executable, arguments(large), input: input)
        return (b - a) / Double(large - small)
    }

    /// Every instruction `executable` ran (callgrind's `totals:`).
    func total(_ executable: String, _ arguments: [String], input: String?) throws -> Double {
        let out = "\(directory)/callgrind.out"
        unlink(out)
        defer { unlink(out) }
        // The same hash seed in every run (a Swift dictionary's instructions
        // depend on it), and no cache or branch simulation: instructions only.
        let previous = getenv("SWIFT_DETERMINISTIC_HASHING").map { String(cString: $0) }
        setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
        defer { if let previous { setenv("SWIFT_DETERMINISTIC_HASHING", previous, 1) } else { unsetenv("SWIFT_DETERMINISTIC_HASHING") } }
        let (status, _) = try ChildProcess.spawn(valgrind, ["--tool=callgrind", "--callgrind-out-file=\(out)", "--log-file=/dev/null", executable] + arguments,
                                                 input: input, captureOutput: true)
        guard status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }),
              let count = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }), count > 0 else {
            throw BenchmarkError("callgrind could not count \(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.joined(separator: " ")) (exit \(status))")
        }
        return count
    }
}
