import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomTestSupport
import Testing

/// Issue 27, items 1 and 5: a key (or passphrase) printed by a command, as
/// password managers and vault CLIs give them: its exit status, its time
/// limit, its process group, an empty or oversized output, each a typed error
/// that never quotes what it printed.
@Suite("Key commands")
struct KeyCommandTests {
    let dir = TemporaryDirectory()

    /// A database under a new raw key, and the key file the commands `cat`.
    func database() throws -> (database: String, keyFile: String) {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("vault.key"))
        let db = try Connection(path: dir.file("app.db"), configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES ('command-marker')")
        db.close()
        return (dir.file("app.db"), dir.file("vault.key"))
    }

    func marker(_ database: String, _ key: DatabaseKey) throws -> String? {
        let db = try Connection(path: database, configuration: Configuration(key: key))
        defer { db.close() }
        return try db.fetchOne(String.self, sql: "SELECT x FROM t")
    }

    @Test func aCommandPrintsTheRawKeyOrAPassphrase() throws {
        let (database, keyFile) = try database()
        let key = try DatabaseKey.fromCommand(KeyCommand("cat '\(keyFile)'"))
        #expect(key.source == .command && !key.isPassphrase)
        #expect(try marker(database, key) == "command-marker")
        // Without its newline, and with a CR LF, too.
        let hex = Fixtures.hex(ofKeyFile: keyFile)
        FileManager.default.createFile(atPath: dir.file("crlf"), contents: Data((hex + "\r\n").utf8))
        #expect(try marker(database, DatabaseKey.fromCommand(KeyCommand("cat '\(dir.file("crlf"))'"))) == "command-marker")
        #expect(try marker(database, DatabaseKey.fromCommand(KeyCommand("printf %s \"$(cat '\(keyFile)')\""))) == "command-marker")

        let passphrase = try DatabaseKey.passphraseFromCommand(KeyCommand("echo 'a passphrase with spaces'"))
        #expect(passphrase.isPassphrase && passphrase.source == .command)
        let db = try Connection(path: dir.file("pass.db"), configuration: Configuration(key: passphrase))
        try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES ('command-marker')")
        db.close()
        #expect(try marker(dir.file("pass.db"), DatabaseKey.passphrase("a passphrase with spaces")) == "command-marker")
    }

    /// Each failure: its code, words of its sentence, and never the output.
    @Test(arguments: [
        ("exit 3", "echo 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef; exit 3", StrongroomError.Code.keyCommandFailed, "exit status 3"),
        ("not found", "/nonexistent/vault-tool get key", .keyCommandFailed, "exit status 127"),
        ("killed", "echo partial; kill -9 $$", .keyCommandFailed, "signal 9"),
        ("silent", "true", .keyMissing, "printed nothing"),
        ("a newline only", "echo", .keyMissing, "printed nothing"),
        ("stdin is /dev/null", "cat", .keyMissing, "printed nothing"),
        ("not hex", "echo 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", .malformedKey, "64 lowercase hex"),
        ("too long", "head -c 100000 /dev/zero | tr '\\0' a", .malformedKey, "more than"),
    ])
    func aFailingCommandIsATypedErrorThatQuotesNothing(what: String, command: String, code: StrongroomError.Code, saying: String) throws {
        let error = #expect(throws: StrongroomError.self, "\(what)") { try DatabaseKey.fromCommand(KeyCommand(command, timeout: .seconds(20))) }
        #expect(error?.code == code, "\(what): \(String(describing: error))")
        #expect(error?.message.contains(saying) == true, "\(what): \(error?.message ?? "")")
        for printed in ["0123456789abcdef", "0123456789ABCDEF", "partial", "aaaa"] {
            #expect(error?.message.contains(printed) == false, "\(what) quotes its output")
        }
    }

    /// A service's command, with no controlling terminal (`setsid`): at the
    /// timeout its whole process group goes, what it started in the background too.
    /// (With a terminal the command belongs to the caller's job, and only its shell is killed.)
    @Test func aCommandThatHangsIsKilledWithEverythingItStarted() async throws {
        let pidFile = dir.file("grandchild.pid")
        let started = ContinuousClock.now
        let result = try await withoutTerminal(["--command-timeout", "0.5", "--key-command", "sleep 300 & echo $! > '\(pidFile)'; wait"])
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 69 && result.stderr.contains("did not finish within 0.5 s"), "\(result.stderr)")
        // Far below the 300 s the command would run: a loaded machine's delay is no verdict.
        #expect(elapsed < .seconds(60), "\(elapsed)")
        // The background `sleep` was in the command's process group: killed too.
        try expectGone(pidFile, "the command's background process outlived the timeout")
    }

    /// `strongroom status` on `database` with `options` in a session of its own, with no controlling terminal, as a service runs.
    func withoutTerminal(_ options: [String], database: String? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run("/usr/bin/setsid", ["-w", Fixtures.strongroomBinary, "status", "--database", database ?? dir.file("none.db")] + options,
                                    currentDirectory: dir.path)
    }

    /// Expects the process whose id the command wrote to `pidFile` to be gone
    /// (or a zombie) within 2 s; kills it if not.
    func expectGone(_ pidFile: String, _ message: String) throws {
        let pid = try #require(pid_t(String(decoding: Fixtures.bytes(of: pidFile), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        var gone = false
        for _ in 0..<200 where !gone {
            let stat = String(decoding: Fixtures.bytes(of: "/proc/\(pid)/stat"), as: UTF8.self)
            gone = stat.isEmpty || stat.contains(") Z ")
            if !gone { usleep(10_000) }
        }
        #expect(gone, "\(message) (process \(pid))")
        if !gone { kill(pid, SIGKILL) }
    }

    @Test func aCommandThatClosesItsOutputButDoesNotExitIsStoppedToo() throws {
        let (_, keyFile) = try database()
        let error = #expect(throws: StrongroomError.self) {
            try DatabaseKey.fromCommand(KeyCommand("cat '\(keyFile)'; exec >&-; sleep 300", timeout: .milliseconds(500)))
        }
        #expect(error?.code == .keyCommandFailed && error?.message.contains("did not exit") == true, "\(String(describing: error))")
    }

    @Test func theCommandLineIsNotSecretButItsOutputIs() throws {
        let command = KeyCommand("pass show app/db", timeout: .seconds(5))
        #expect(command.description == "KeyCommand(\"pass show app/db\", timeout 5 s)")
        let output = try KeyCommand("echo secret-output").output(limit: 64, what: "test secret")
        #expect(output.count == "secret-output".count && !"\(output)".contains("secret-output"))
    }

    /// Review: a timeout meant as "for ever" overflowed the poll(2) arithmetic.
    @Test func aTimeoutOfTheLargestDurationIsTaken() throws {
        let output = try KeyCommand("echo forever", timeout: .seconds(Int64.max)).output(limit: 64, what: "test secret")
        #expect(output.count == 7)
    }

    /// Second review: once the shell had exited and was reaped, a timeout or
    /// an over-long output no longer killed what it had left running (a service's command).
    /// Issue 36, item 7: reading now ends shortly after the shell exits, so
    /// a background process holding the output no longer runs into the
    /// timeout: the command fails for what it printed (nothing, too much) or
    /// its exit status, and what it left running is killed all the same.
    @Test(arguments: [
        ("printed nothing", "sleep 300 & echo $! > '%@'; exit 0", Int32(66), "printed nothing"),
        ("failed", "echo 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef; sleep 300 & echo $! > '%@'; exit 3", 69, "exit status 3"),
        ("too long", "sleep 300 & echo $! > '%@'; printf %0100d 0; exit 0", 65, "more than"),
    ])
    func whatAnExitedShellLeftRunningIsKilledToo(what: String, command: String, status: Int32, saying: String) async throws {
        let pidFile = dir.file("left-\(what.replacingOccurrences(of: " ", with: "-")).pid")
        let result = try await withoutTerminal(["--command-timeout", "2", "--key-command", command.replacingOccurrences(of: "%@", with: pidFile)])
        #expect(result.status == status && result.stderr.contains(saying), "\(what): \(result.stderr)")
        try expectGone(pidFile, "\(what): the process the command left behind is still running")
    }

    /// Issue 36, item 7: a command that prints the key and exits, leaving a
    /// background process that holds its standard output, gives the key at
    /// once (not a "did not finish" at the timeout), and in a service what
    /// it left running is killed.
    @Test func aKeyPrintedByAShellThatExitedIsTakenThoughAChildHoldsItsOutput() async throws {
        let (database, keyFile) = try database()
        let pidFile = dir.file("holder.pid")
        // The background `sleep` inherits the command's standard output.
        let command = "cat '\(keyFile)'; sleep 300 & echo $! > '\(pidFile)'"
        let started = ContinuousClock.now
        // Waiting for the child would end at the timeout, a failure (status 69) whatever the machine's speed.
        let result = try await withoutTerminal(["--command-timeout", "120", "--key-command", command], database: database)
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 0 && result.stdout.contains("key command"), "\(result.status) \(result.stderr)")
        #expect(elapsed < .seconds(60), "\(elapsed)")
        try expectGone(pidFile, "the process holding the command's output outlived it")
    }

    /// The same through the API, in whichever mode this test process runs
    /// (with a terminal, what the command left running is not this
    /// process's to kill: the test kills it).
    @Test func theAPIReturnsTheKeyPromptlyThoughAChildHoldsTheOutput() throws {
        let (database, keyFile) = try database()
        let pidFile = dir.file("api-holder.pid")
        let started = ContinuousClock.now
        let key = try DatabaseKey.fromCommand(KeyCommand("cat '\(keyFile)'; sleep 300 & echo $! > '\(pidFile)'", timeout: .seconds(120)))
        let elapsed = ContinuousClock.now - started
        if let pid = pid_t(String(decoding: Fixtures.bytes(of: pidFile), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
        #expect(elapsed < .seconds(60), "\(elapsed)")
        #expect(try marker(database, key) == "command-marker")
    }
}
