import Foundation
import Strongroom
import StrongroomCrypto

/// `strongroom import` and `export` (with their verification) against the
/// stock `sqlcipher` shell's bare `ATTACH … KEY` + `sqlcipher_export`, each
/// run as a child process so that its wall time and peak resident memory are
/// its own (`wait4`). Our side is this harness started again as a child
/// (`--conversion-child`), calling the library as an app or the CLI does.
enum ConversionScenarios {
    /// One side's times and its highest peak of resident memory.
    struct Side {
        var timing = Timing()
        var peakKiB = 0
        mutating func add(_ run: ChildProcess.Run) {
            timing.add(run.seconds)
            peakKiB = max(peakKiB, run.maxResidentKiB)
        }
    }

    struct Figures {
        var importOurs = Side(), importShell = Side()
        var exportOurs = Side(), exportShell = Side()
    }

    /// A plaintext database of `rows` rows of 5 columns with one index,
    /// about 110 bytes a row (2M rows: about 220 MB).
    static func makePlaintext(path: String, rows: Int) throws {
        let db = try Connection(path: path, configuration: .plaintext)
        try db.execute(sql: "PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF")
        try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL, payload BLOB)")
        let insert = try db.prepare(sql: "INSERT INTO item(id, name, email, score, payload) VALUES (?, ?, ?, ?, ?)")
        var generator = SystemRandomNumberGenerator()
        try db.inTransaction { _ in
            for i in 1...rows {
                let payload = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
                try insert.execute(i, "name \(i) \(UInt32.random(in: 0...UInt32.max, using: &generator))",
                                   "user\(i)@example.com", Double(i % 1000) / 7, payload)
            }
        }
        try db.execute(sql: "CREATE INDEX item_email ON item(email)")
        db.close()
    }

    static func run(directory: String, keyHex: String, rows: Int, rounds: Int) throws -> Figures {
        let plain = "\(directory)/conversion-plain.db"
        try makePlaintext(path: plain, rows: rows)
        defer { unlink(plain) }
        var figures = Figures()
        let ours = "\(directory)/conversion-ours.db", shell = "\(directory)/conversion-shell.db"
        let oursOut = "\(directory)/conversion-ours-out.db", shellOut = "\(directory)/conversion-shell-out.db"
        func remove(_ paths: String...) { for p in paths { for s in ["", "-wal", "-shm", "-journal"] { unlink(p + s) } } }
        let myself = CommandLine.arguments[0]
        for round in 0..<rounds {
            remove(ours, shell, oursOut, shellOut)
            let importScript = "ATTACH DATABASE '\(shell)' AS target KEY \"x'\(keyHex)'\";\nSELECT sqlcipher_export('target');\nDETACH DATABASE target;\n"
            try alternate(round,
                          { figures.importOurs.add(try ChildProcess.run(myself, ["--conversion-child", "import", plain, ours], input: keyHex + "\n")) },
                          { figures.importShell.add(try ChildProcess.run("/usr/bin/sqlcipher", [plain], input: importScript)) })
            let exportScript = "PRAGMA key = \"x'\(keyHex)'\";\nATTACH DATABASE '\(shellOut)' AS target KEY '';\nSELECT sqlcipher_export('target');\nDETACH DATABASE target;\n"
            try alternate(round,
                          { figures.exportOurs.add(try ChildProcess.run(myself, ["--conversion-child", "export", ours, oursOut], input: keyHex + "\n")) },
                          { figures.exportShell.add(try ChildProcess.run("/usr/bin/sqlcipher", [shell], input: exportScript)) })
        }
        remove(ours, shell, oursOut, shellOut)
        return figures
    }

    /// Runs both sides after `sync`, the first one first in even rounds, so
    /// that neither always inherits the other's write-back or warm cache.
    private static func alternate(_ round: Int, _ first: () throws -> Void, _ second: () throws -> Void) throws {
        for side in round % 2 == 0 ? [0, 1] : [1, 0] {
            sync()
            try side == 0 ? first() : second()
        }
    }

    /// The child: `--conversion-child import|export SOURCE DESTINATION`, key
    /// as hex on standard input.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 3, var line = readLine(),
              let bytes = line.withUTF8({ Hex.decodeSecret(UnsafeRawBufferPointer($0)) }) else {
            throw BenchmarkError("usage: --conversion-child import|export SOURCE DESTINATION, key hex on stdin")
        }
        let key = try DatabaseKey.raw(bytes)
        switch arguments[0] {
        case "import": _ = try PlaintextConversion.importPlaintext(from: arguments[1], to: arguments[2], key: key)
        case "export": _ = try PlaintextConversion.exportPlaintext(from: arguments[1], key: key, to: arguments[2], .outputIsUnprotectedPlaintext)
        default: throw BenchmarkError("unknown conversion \(arguments[0])")
        }
    }
}

/// A child process timed from spawn to exit, with its peak resident memory.
///
/// Linux counts the memory of the process that spawned a child into the
/// child's peak (`ru_maxrss` keeps the high-water mark across exec), so the
/// child is spawned and measured by a small helper: this harness started
/// again with `--measure-child`, before it has built any data.
enum ChildProcess {
    struct Run {
        let seconds: Double
        let maxResidentKiB: Int
    }

    static func run(_ executable: String, _ arguments: [String], input: String) throws -> Run {
        let (status, output) = try spawn(CommandLine.arguments[0], ["--measure-child", executable] + arguments, input: input, captureOutput: true)
        let fields = output.split(separator: " ")
        guard status == 0, fields.count == 2, let seconds = Double(fields[0]), let kib = Int(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError("\(executable) \(arguments.first ?? "") failed")
        }
        return Run(seconds: seconds, maxResidentKiB: kib)
    }

    /// The helper: runs `arguments` (executable first) with this process's
    /// standard input, and prints "SECONDS MAX_RESIDENT_KIB"; exits 1 if it failed.
    static func measure(_ arguments: [String]) -> Never {
        var usage = rusage()
        let start = DispatchTime.now().uptimeNanoseconds
        guard let status = try? spawn(arguments[0], Array(arguments.dropFirst()), input: nil, captureOutput: false, usage: &usage).status, status == 0 else {
            exit(1)
        }
        print(String(format: "%.6f", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9), usage.ru_maxrss)
        exit(0)
    }

    static func spawn(_ executable: String, _ arguments: [String], input: String?, captureOutput: Bool) throws -> (status: Int32, output: String) {
        var usage = rusage()
        return try spawn(executable, arguments, input: input, captureOutput: captureOutput, usage: &usage)
    }

    /// posix_spawn; `input` (if any) on its standard input, its standard
    /// output captured or discarded; waits, and fills `usage`.
    private static func spawn(_ executable: String, _ arguments: [String], input: String?, captureOutput: Bool, usage: inout rusage) throws -> (status: Int32, output: String) {
        var inPipe: [Int32] = [-1, -1], outPipe: [Int32] = [-1, -1]
        if input != nil { guard pipe(&inPipe) == 0 else { throw BenchmarkError("pipe failed") } }
        if captureOutput { guard pipe(&outPipe) == 0 else { throw BenchmarkError("pipe failed") } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            posix_spawn_file_actions_addclose(&actions, inPipe[1])
        }
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_addclose(&actions, outPipe[0])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        if input != nil { close(inPipe[0]) }
        if captureOutput { close(outPipe[1]) }
        guard spawned == 0 else { throw BenchmarkError("cannot start \(executable)") }
        if let input {
            _ = input.withCString { write(inPipe[1], $0, strlen($0)) }
            close(inPipe[1])
        }
        var output = Data()
        if captureOutput {
            output = FileHandle(fileDescriptor: outPipe[0], closeOnDealloc: true).readDataToEndOfFile()
        }
        var status: Int32 = 0
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        let exitStatus: Int32 = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, String(decoding: output, as: UTF8.self))
    }
}
