import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 36, item 5: core dumps taken while keys are live. The library keeps
/// its secure memory (``SecureBytes``: keys, keyrings) out of any core dump
/// (`MADV_DONTDUMP`); the `strongroom` command leaves no core dump at all
/// (`PR_SET_DUMPABLE` 0, `RLIMIT_CORE` 0), since SQLCipher and OpenSSL keep
/// copies of the keys in memory of their own.
@Suite("Leaks: core dumps of a live process")
struct LiveDumpTests {
    let dir = TemporaryDirectory()

    /// A process holding a field keyring (its keys in secure memory only),
    /// dumped with gcore while it holds it: no field key is in the dump.
    /// Not under `make sanitize`, as LeakTests' dumps: gcore of a sanitized
    /// process writes its shadow memory, terabytes. The unsanitized suite
    /// (`make test`) runs it.
    /// SANITIZER EXEMPTION(thread) SANITIZER EXEMPTION(address): Scripts/sanitize.sh counts them among the suppressions.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["STRONGROOM_SANITIZER"] != nil,
                    "gcore of a sanitized process writes its shadow memory: terabytes"))
    func aLiveKeyringIsNotInACoreDump() async throws {
        let gcore = try #require(ProcessRunner.which("gcore"), "gcore (gdb) is installed by `make test-setup`")
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--field", "--out", "fields.keyring"], currentDirectory: dir.path).status == 0)
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["fields", "add-key", "--field-keys", "fields.keyring"], currentDirectory: dir.path).status == 0)
        let keys = LeakTests.keyringKeys(Fixtures.bytes(of: dir.file("fields.keyring")))
        #expect(keys.count == 2)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: Fixtures.reliabilityChild)
        child.arguments = ["hold-keyring", "fields.keyring"]
        child.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) }; child.waitUntilExit() }
        #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) == "holding 2\n")
        let dump = try await ProcessRunner.run(gcore, ["-o", dir.file("core"), "\(child.processIdentifier)"])
        let core = Fixtures.bytes(of: dir.file("core.\(child.processIdentifier)"))
        #expect(dump.status == 0 && core.count > 1_000_000, "gcore: \(dump.stderr)")
        #expect(LeakTests.find(Array("hold-keyring".utf8), in: core), "the dump does not hold the process's arguments")
        for hex in keys {
            for (form, bytes) in zip(["bytes", "lowercase hex", "uppercase hex"], LeakTests.forms(ofHex: hex)) where LeakTests.find(bytes, in: core) {
                Issue.record("a live field key is in the core dump, as \(form)")
            }
        }
    }

    /// `strongroom sql` aborted while it runs a long query on an open
    /// database (its key live in SQLCipher), under a shell that allows core
    /// dumps: the kernel writes none, and the process says its limit is 0.
    @Test func theCommandLeavesNoCoreDumpWhileItHoldsAKey() async throws {
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--out", "db.key"], currentDirectory: dir.path).status == 0)
        let key = try DatabaseKey.load(keyFile: dir.file("db.key"))
        try Connection(path: dir.file("app.db"), configuration: Configuration(key: key)).execute(sql: "CREATE TABLE t(x)")
        let long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"
        // Core dumps allowed and no signal blocked (a test runner's thread may
        // block some; its children inherit the mask), then strongroom itself.
        let python = try #require(ProcessRunner.which("python3"))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: python)
        shell.arguments = ["-c", """
            import os, resource, signal, sys
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execv(sys.argv[1], sys.argv[1:])
            """, Fixtures.strongroomBinary, "sql", "--database", "app.db", "--key-file", "db.key", long]
        shell.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        // The Swift runtime's backtracer would catch SIGABRT itself.
        shell.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        try shell.run()
        defer { if shell.isRunning { kill(shell.processIdentifier, SIGKILL) }; shell.waitUntilExit() }
        // Once the query runs (the database open, the key applied).
        let deadline = Date().addingTimeInterval(20)
        var opened = false
        while Date() < deadline && !opened {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(shell.processIdentifier)/fd")) ?? []
            opened = fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(shell.processIdentifier)/fd/\($0)"))?.hasSuffix("/app.db") == true }
            if !opened { usleep(20_000) }
        }
        #expect(opened, "strongroom never opened app.db")
        usleep(300_000)
        let limits = (try? String(contentsOfFile: "/proc/\(shell.processIdentifier)/limits", encoding: .utf8)) ?? ""
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2).map(String.init) == ["0", "0"], "\(core)")
        kill(shell.processIdentifier, SIGABRT)
        await shell.ended()
        #expect(shell.terminationReason == .uncaughtSignal && shell.terminationStatus == SIGABRT)
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? ""
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        #expect(!left.contains { $0.hasPrefix("core") }, "a core dump was written (core_pattern \(pattern)): \(left)")
    }
}
