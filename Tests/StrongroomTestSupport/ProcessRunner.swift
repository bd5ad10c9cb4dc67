import Foundation

/// Runs a real child process with optional standard input, and collects its output.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

public enum ProcessRunner {
    /// Runs `executable` with `arguments`; `input` is written to its standard input
    /// (secrets travel this way, never in `arguments`).
    ///
    /// The wait happens on a thread of its own (``OffThePool``): the awaiting
    /// test holds no thread of the cooperative pool while the child runs. An
    /// async caller gets this one; the synchronous one below is for the
    /// places that cannot await (a static's initializer, a helper of a
    /// synchronous test), and holds its thread until the child ends, so it
    /// is for children that end within a second or so.
    public static func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil, currentDirectory: String? = nil) async throws -> ProcessResult {
        try await OffThePool.run {
            try run(executable, arguments, input: input, environment: environment, currentDirectory: currentDirectory)
        }
    }

    /// Runs `executable` with `arguments` and waits for it on the caller's
    /// thread; in async code, the `async` overload above is chosen instead.
    public static func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil, currentDirectory: String? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a full pipe cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = stderr.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus,
                             stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// The environment for a child run under strace.
    ///
    /// LeakSanitizer checks a process as it exits by stopping its threads
    /// with ptrace, which strace already holds: a child built with
    /// `-sanitize=address` (`make sanitize`) would end in "LeakSanitizer has
    /// encountered a fatal error" (status 1, "LeakSanitizer does not work
    /// under ptrace") instead of finishing. Its leak check alone is turned
    /// off; every other AddressSanitizer check stays on, and the same
    /// commands are leak-checked where the tests run them without strace.
    /// Without sanitizers the variable means nothing.
    /// SANITIZER EXEMPTION(address): Scripts/sanitize.sh counts it among the suppressions.
    public static var underStrace: [String: String] {
        let inherited = ProcessInfo.processInfo.environment["LSAN_OPTIONS"] ?? ""
        return ["LSAN_OPTIONS": inherited.isEmpty ? "detect_leaks=0" : inherited + ":detect_leaks=0"]
    }

    /// The path of a program on PATH, or nil.
    public static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
