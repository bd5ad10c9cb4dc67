import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// The `strongroom` command run as a built binary, as a user runs it.
@Suite("strongroom CLI")
struct CLITests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String], input: String? = nil, environment: [String: String]? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, environment: environment, currentDirectory: dir.path)
    }

    func keygen(_ name: String = "db.key") async throws -> String {
        let result = try await run(["keygen", "--out", name])
        #expect(result.status == 0, "\(result.stderr)")
        return dir.file(name)
    }

    func importChinook(_ name: String = "c.db", key: String = "db.key") async throws -> String {
        let result = try await run(["import", "--from", Fixtures.chinook, "--database", name, "--key-file", key])
        #expect(result.status == 0, "\(result.stderr)")
        return dir.file(name)
    }

    @Test func keygenWritesOwnerOnlyKeyAndNeverOverwrites() async throws {
        let path = try await keygen()
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
        #expect(mode == 0o600)
        let before = Fixtures.bytes(of: path)
        let again = try await run(["keygen", "--out", "db.key"])
        #expect(again.status == 73)
        #expect(again.stderr.contains("already exists"))
        #expect(Fixtures.bytes(of: path) == before)
        // A missing directory is made, owner-only (issue 9: the docs' Keys/
        // in a new app); one that cannot be made (under a file) exits 73.
        #expect(try await run(["keygen", "--out", "no/such/dir/k.key"]).status == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: dir.file("no/such/dir"))[.posixPermissions] as! NSNumber).intValue == 0o700)
        #expect(try await run(["keygen", "--out", "db.key/dir/k.key"]).status == 73)
    }

    /// Foundation's NSString.deletingLastPathComponent traps on a path of one
    /// character (swift-corelibs-foundation, Swift 6.3): `keygen --out k`
    /// and a database named `d` crashed the command.
    @Test func oneCharacterFileNamesDoNotCrash() async throws {
        let key = try await run(["keygen", "--out", "k"])
        #expect(key.status == 0, "\(key.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        let migrate = try await run(["migrate", "--database", "d", "--key-file", "k", "--migrations", "Migrations"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let status = try await run(["status", "--database", "d", "--key-file", "k"])
        #expect(status.status == 0 && status.stdout.contains("encrypted     yes"), "\(status.stderr)")
    }

    /// A new key file must survive a power cut: the file is synced before it
    /// is linked into place, and its directory after (issue 7, item 5). The
    /// system calls are watched with strace, on the real binary.
    @Test func keygenSyncsTheKeyFileAndItsDirectory() async throws {
        let strace = try #require(ProcessRunner.which("strace"), "strace watches the system calls; `make test-setup` installs it")
        let log = dir.file("strace.log")
        let result = try await ProcessRunner.run(strace, ["-f", "-e", "trace=openat,fsync,fdatasync,link,unlink", "-o", log, Fixtures.strongroomBinary, "keygen", "--out", dir.file("k.key")], environment: ProcessRunner.underStrace)
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "\n")
        let linked = try #require(calls.firstIndex { $0.contains("link(") && $0.contains("k.key") && !$0.contains("unlink(") })
        #expect(calls[..<linked].contains { $0.contains("fsync(") }, "the key file is synced before it is linked")
        // After the link: the directory is opened and synced.
        let after = calls[linked...]
        let directoryOpen = after.first { $0.contains("openat(") && $0.contains("\"\(dir.path)\"") && $0.contains("O_DIRECTORY") }
        let descriptor = try #require(directoryOpen?.components(separatedBy: "= ").last?.trimmingCharacters(in: .whitespaces), "the directory is opened after the link: \(after.joined(separator: "\n"))")
        #expect(after.contains { $0.contains("fsync(\(descriptor))") && $0.hasSuffix("= 0") }, "\(after.joined(separator: "\n"))")
    }

    /// Review of issue 9: a directory made for a new key file is synced into
    /// its parent, or a power cut can lose it, and the key with it.
    @Test func keygenSyncsTheDirectoriesItMakes() async throws {
        let strace = try #require(ProcessRunner.which("strace"), "strace watches the system calls; `make test-setup` installs it")
        let log = dir.file("strace.log")
        let result = try await ProcessRunner.run(strace, ["-f", "-e", "trace=openat,fsync,mkdir", "-o", log, Fixtures.strongroomBinary, "keygen", "--out", dir.file("New/Sub/k.key")], environment: ProcessRunner.underStrace)
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "\n")
        for parent in [dir.path, dir.file("New")] {
            let opened = calls.filter { $0.contains("openat(") && $0.contains("\"\(parent)\"") && $0.contains("O_DIRECTORY") }
            let descriptors = opened.compactMap { $0.components(separatedBy: "= ").last?.trimmingCharacters(in: .whitespaces) }
            #expect(descriptors.contains { descriptor in calls.contains { $0.contains("fsync(\(descriptor))") && $0.hasSuffix("= 0") } },
                    "\(parent) is synced after a directory is made in it: \(calls.joined(separator: "\n"))")
        }
    }

    /// Issue 7, item 14: on a terminal, `--passphrase-stdin` prompts on
    /// stderr and does not echo what is typed. A real pseudo-terminal (Python's
    /// `pty`) runs the binary, types a passphrase, and reads the screen.
    @Test func passphraseOnATerminalIsPromptedAndNotEchoed() async throws {
        let screen = try await runOnTerminal(["status", "--database", dir.file("absent.db"), "--passphrase-stdin"], typing: "tty-secret-passphrase")
        #expect(screen.contains("Passphrase"), "a prompt is shown: \(screen)")
        #expect(!screen.contains("tty-secret-passphrase"), "the passphrase is not echoed: \(screen)")
        #expect(screen.contains("No database"), "the command went on: \(screen)")
    }

    /// Issue 7, item 16: on a terminal, import shows its progress on stderr;
    /// through a pipe (every other test) it does not.
    @Test func importShowsProgressOnATerminal() async throws {
        _ = try await keygen()
        let screen = try await runOnTerminal(["import", "--from", Fixtures.chinook, "--database", "tty.db", "--key-file", "db.key"])
        #expect(screen.contains("copying: "), "\(screen)")
        #expect(screen.contains("Encrypted"), "\(screen)")
        let piped = try await run(["import", "--from", Fixtures.chinook, "--database", "piped.db", "--key-file", "db.key"])
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("copying"))
    }

    /// Runs the binary in `dir` on a real pseudo-terminal (Python's `pty`),
    /// types `typing` and a newline after half a second (passed to Python on
    /// its standard input, never in its arguments), and returns the screen.
    func runOnTerminal(_ arguments: [String], typing: String? = nil) async throws -> String {
        let python = try #require(ProcessRunner.which("python3"))
        let script = """
            import os, pty, sys, termios, time
            typed = sys.stdin.buffer.read()
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(sys.argv[2])
                os.execv(sys.argv[1], sys.argv[1:2] + sys.argv[3:])
            if typed:
                # Type once the command has turned echo off (or after 10 s):
                # a fixed wait lost the race to a slow start (make sanitize).
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and termios.tcgetattr(fd)[3] & termios.ECHO:
                    time.sleep(0.02)
                os.write(fd, typed + b"\\n")
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode("utf-8", "replace"))
            """
        return try await ProcessRunner.run(python, ["-c", script, Fixtures.strongroomBinary, dir.path] + arguments, input: typing ?? "").stdout
    }

    /// Killed while it waits for the passphrase, the command gives the
    /// terminal its echo back.
    @Test func aSignalWhileWaitingForThePassphraseRestoresEcho() async throws {
        let python = try #require(ProcessRunner.which("python3"))
        let script = """
            import os, signal, subprocess, sys, termios, time
            master, slave = os.openpty()
            # As from a shell: no signal blocked (the test runner's threads block some).
            child = subprocess.Popen([sys.argv[1], "status", "--database", sys.argv[2], "--passphrase-stdin"],
                                     stdin=slave, stdout=slave, stderr=slave,
                                     preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, []))
            # Until echo goes off (or 10 s): a fixed wait lost the race to a
            # slow start (make sanitize).
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and termios.tcgetattr(slave)[3] & termios.ECHO:
                time.sleep(0.02)
            during = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            after = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
            print(f"during={during} after={after} status={child.returncode}")
            """
        let result = try await ProcessRunner.run(python, ["-c", script, Fixtures.strongroomBinary, dir.file("absent.db")])
        #expect(result.stdout.contains("during=False"), "echo is off while it waits: \(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("after=True"), "echo is back after SIGTERM: \(result.stdout)")
        #expect(result.stdout.contains("status=-15"), "it died of the signal: \(result.stdout)")
    }

    /// A signal the command was started with ignored (as under nohup) stays
    /// ignored while it waits for the passphrase.
    @Test func anIgnoredSignalStaysIgnoredWhileWaitingForThePassphrase() async throws {
        let python = try #require(ProcessRunner.which("python3"))
        let script = """
            import os, signal, subprocess, sys, time
            master, slave = os.openpty()
            def child_setup():
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
            child = subprocess.Popen([sys.argv[1], "status", "--database", sys.argv[2], "--passphrase-stdin"],
                                     stdin=slave, stdout=slave, stderr=slave, preexec_fn=child_setup)
            time.sleep(0.5)
            child.send_signal(signal.SIGHUP)
            time.sleep(0.3)
            alive = child.poll() is None
            os.write(master, b"a passphrase\\n")
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            print(f"alive={alive} status={child.returncode}")
            """
        let result = try await ProcessRunner.run(python, ["-c", script, Fixtures.strongroomBinary, dir.file("absent.db")])
        #expect(result.stdout.contains("alive=True"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("status=66"), "it went on to report the missing database: \(result.stdout)")
    }

    @Test func importThenStatus() async throws {
        _ = try await keygen()
        let db = try await importChinook()
        #expect(!Fixtures.contains(Fixtures.bytes(of: db), "SQLite format 3"))
        let status = try await run(["status", "--database", "c.db", "--key-file", "db.key"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Customer"))
        #expect(status.stdout.contains("59 rows"))
        #expect(status.stdout.contains("AES-256"))

        let json = try await run(["status", "--database", "c.db", "--key-file", "db.key", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["encrypted"] as? Bool == true)
        #expect(object["user_version"] as? Int == 0)
        #expect((object["cipher_version"] as? String)?.isEmpty == false)
        let tables = try #require(object["tables"] as? [[String: Any]])
        #expect(tables.count == 11)
        #expect(tables.contains { $0["name"] as? String == "Track" && $0["row_count"] as? Int == 3503 })
    }

    /// Issue 36, item 9: `verify` on a database made by `import` (no
    /// migration history), where there is no Migrations/ directory, checks
    /// what it can (integrity, foreign keys, triggers and views on sealed
    /// tables), as it does for such a database beside a Migrations/; it
    /// exited 66 "Cannot read the migrations directory". A database with a
    /// history still needs its migrations (66, naming the directory).
    @Test func verifyWithoutAMigrationsDirectoryChecksWhatItCan() async throws {
        _ = try await keygen()
        _ = try await importChinook()
        #expect(!FileManager.default.fileExists(atPath: dir.file("Migrations")))
        let verify = try await run(["verify", "--database", "c.db", "--key-file", "db.key"])
        #expect(verify.status == 0, "\(verify.status) \(verify.stderr)")
        #expect(verify.stdout.contains("no migration history"), "\(verify.stdout)")
        #expect(verify.stdout.contains("Migrations"), "it says there is no migrations directory: \(verify.stdout)")
        let json = try await run(["verify", "--database", "c.db", "--key-file", "db.key", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["drift_checked"] as? Bool == false)
        #expect((report["findings"] as? [Any])?.isEmpty == true)
        // A finding is still found: a broken foreign key.
        let db = try Connection(path: dir.file("c.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        try db.execute(sql: "PRAGMA foreign_keys = OFF; UPDATE Track SET AlbumId = 99999 WHERE TrackId = 1")
        db.close()
        let broken = try await run(["verify", "--database", "c.db", "--key-file", "db.key"])
        #expect(broken.status == 1, "\(broken.stderr)")
        #expect(broken.stdout.contains("[foreign_key]"), "\(broken.stdout)")
        // With a history, the migrations are needed to compare with.
        try FileManager.default.createDirectory(atPath: dir.file("M"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("M/0001_t.sql"), contents: Data("CREATE TABLE t(x);".utf8))
        #expect(try await run(["migrate", "--database", "m.db", "--key-file", "db.key", "--migrations", "M"]).status == 0)
        let managed = try await run(["verify", "--database", "m.db", "--key-file", "db.key"])
        #expect(managed.status == 66, "\(managed.stdout) \(managed.stderr)")
        #expect(managed.stderr.contains("Migrations"), "\(managed.stderr)")
    }

    /// Issue 36, item 9: `status` on a live WAL database printed "size 1024
    /// bytes (8 pages of 1024 bytes)": the file held one page, the other
    /// seven were in its -wal, which the size left out. The size counts the
    /// file and its -wal, each named, and the JSON gives `wal_size`.
    @Test func statusOfALiveWALDatabaseCountsItsWAL() async throws {
        let keyPath = try await keygen()
        let db = try Connection(path: dir.file("live.db"), configuration: Configuration(key: try KeyFile.read(at: keyPath)))
        defer { db.close() }
        try db.execute(sql: "CREATE TABLE a(x); CREATE TABLE b(y)")
        for _ in 0..<20 { try db.execute(sql: "INSERT INTO a VALUES (randomblob(300))") }
        func size(_ name: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: dir.file(name))[.size] as! NSNumber).intValue
        }
        let fileSize = try size("live.db"), walSize = try size("live.db-wal")
        #expect(walSize > 0)
        let json = try await run(["status", "--database", "live.db", "--key-file", "db.key", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let pages = try #require(object["page_count"] as? Int), pageSize = try #require(object["page_size"] as? Int)
        #expect(pages * pageSize > fileSize, "some pages are only in the -wal: \(pages) × \(pageSize), file \(fileSize)")
        #expect(object["file_size"] as? Int == fileSize)
        #expect(object["wal_size"] as? Int == walSize, "\(json.stdout)")
        let text = try await run(["status", "--database", "live.db", "--key-file", "db.key"])
        let line = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("size") }.map(String.init), "\(text.stdout)")
        #expect(line.contains("\(fileSize) bytes") && line.contains("\(walSize) bytes") && line.contains("-wal"), "\(line)")
        #expect(line.contains("\(pages) pages of \(pageSize) bytes"), "\(line)")
        // Without a -wal (checkpointed and truncated), the size line is the file's alone.
        _ = try db.fetchAll(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        let quiet = try await run(["status", "--database", "live.db", "--key-file", "db.key"])
        let checkpointed = try size("live.db")
        #expect(quiet.stdout.contains("size          \(checkpointed) bytes (\(checkpointed / pageSize) pages of \(pageSize) bytes)"), "\(quiet.stdout)")
    }

    @Test func exitCodesFollowSysexits() async throws {
        _ = try await keygen()
        _ = try await keygen("other.key")
        _ = try await importChinook()
        // 65: wrong key, plaintext given a key
        let wrong = try await run(["status", "--database", "c.db", "--key-file", "other.key"])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("key does not open"))
        #expect(try await run(["status", "--database", Fixtures.chinook, "--key-file", "db.key"]).status == 65)
        // 66: missing database, and it is not created
        #expect(try await run(["status", "--database", "missing.db", "--key-file", "db.key"]).status == 66)
        #expect(!FileManager.default.fileExists(atPath: dir.file("missing.db")))
        // 77: a key file others can read
        chmod(dir.file("other.key"), 0o644)
        let loose = try await run(["status", "--database", "c.db", "--key-file", "other.key"])
        #expect(loose.status == 77)
        #expect(loose.stderr.contains("chmod 600"))
        // 65: malformed key file
        FileManager.default.createFile(atPath: dir.file("bad.key"), contents: Data("nothex".utf8), attributes: [.posixPermissions: 0o600])
        #expect(try await run(["status", "--database", "c.db", "--key-file", "bad.key"]).status == 65)
        // 64: usage (no key source, two key sources)
        #expect(try await run(["status", "--database", "c.db"]).status == 64)
        #expect(try await run(["status", "--database", "c.db", "--key-file", "db.key", "--key-env", "X"]).status == 64)
        // 66: unset key variable
        #expect(try await run(["status", "--database", "c.db", "--key-env", "STRONGROOM_UNSET_FOR_TEST"]).status == 66)
        // 73: import onto an existing file
        #expect(try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key"]).status == 73)
    }

    /// A database file the user may not read: as root, the command runs as
    /// `nobody` (setpriv); otherwise the file's mode is taken away.
    @Test func unreadableDatabaseExits77() async throws {
        let keyPath = try await keygen()
        _ = try await importChinook()
        chmod(dir.path, 0o755)
        chmod(dir.file("c.db"), 0o600)
        let hex = String(decoding: Fixtures.bytes(of: keyPath), as: UTF8.self).trimmingCharacters(in: .newlines)
        let result: ProcessResult
        if getuid() == 0 {
            // A copy nobody may load, wherever the checkout lives (issue 36, item 11).
            result = try await Unprivileged.run(["status", "--database", "c.db", "--key-env", "K"], environment: ["K": hex], currentDirectory: dir.path)
        } else {
            chmod(dir.file("c.db"), 0o000)
            defer { chmod(dir.file("c.db"), 0o600) }
            result = try await run(["status", "--database", "c.db", "--key-env", "K"], environment: ["K": hex])
        }
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("Permission denied"))
    }

    @Test func busyDatabaseExits75() async throws {
        _ = try await keygen()
        let db = try await importChinook()
        let holder = try Connection(path: db, configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        try holder.execute(sql: "BEGIN IMMEDIATE")
        defer { try? holder.execute(sql: "ROLLBACK") }
        _ = try await keygen("new.key")
        let result = try await run(["rekey", "--database", "c.db", "--key-file", "db.key", "--new-key-file", "new.key"])
        #expect(result.status == 75, "\(result.stderr)")
    }

    @Test func rekeyWithKeyFiles() async throws {
        _ = try await keygen()
        _ = try await importChinook()
        _ = try await keygen("new.key")
        let result = try await run(["rekey", "--database", "c.db", "--key-file", "db.key", "--new-key-file", "new.key"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await run(["status", "--database", "c.db", "--key-file", "new.key"]).status == 0)
        #expect(try await run(["status", "--database", "c.db", "--key-file", "db.key"]).status == 65)
    }

    /// Issue 7, item 1: the disk fills during the rewrite (a file-size limit,
    /// with SIGXFSZ ignored so that writes fail instead of killing the
    /// process). The command says which key opens the file now: the old one.
    ///
    /// Not under ThreadSanitizer: its runtime dies of SIGBUS in its own shadow
    /// memory under a file-size limit (`strongroom rekey --help` does, with
    /// `ulimit -f 232`), before the command runs. A full disk under rekey is
    /// also tested through the fault VFS (DiskFaultTests.rekeyOnAFullDisk…), which runs there.
    /// SANITIZER EXEMPTION(thread): Scripts/sanitize.sh counts it among the suppressions.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["STRONGROOM_SANITIZER"] == "thread",
                    "ThreadSanitizer's runtime dies of SIGBUS under a file-size limit"))
    func rekeyOnAFullDiskSaysTheOldKeyStillOpensTheFile() async throws {
        _ = try await keygen()
        let db = try await importChinook()
        _ = try await keygen("new.key")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: db)[.size] as? Int)
        // bash counts -f in KiB: a limit well under the size of the rewrite.
        let limit = String(max(size / 1024 / 4, 16))
        let result = try await ProcessRunner.run("/bin/bash", [
            "-c", "trap '' XFSZ; ulimit -f \(limit); exec \"$0\" \"$@\"", Fixtures.strongroomBinary,
            "rekey", "--database", "c.db", "--key-file", "db.key", "--new-key-file", "new.key",
        ], currentDirectory: dir.path)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("still opens with the old key"), "\(result.stderr)")
        #expect(try await run(["status", "--database", "c.db", "--key-file", "db.key"]).status == 0)
        #expect(try await run(["status", "--database", "c.db", "--key-file", "new.key"]).status == 65)
        let check = try Connection(path: db, configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        #expect(try check.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
        #expect(try check.fetchOne(Int.self, sql: "SELECT count(*) FROM Track") == 3503)
    }

    @Test func keyFromEnvironmentAndPassphraseFromStdin() async throws {
        let keyPath = try await keygen()
        _ = try await importChinook()
        let hex = String(decoding: Fixtures.bytes(of: keyPath), as: UTF8.self).trimmingCharacters(in: .newlines)
        let env = try await run(["status", "--database", "c.db", "--key-env", "APP_DB_KEY"], environment: ["APP_DB_KEY": hex])
        #expect(env.status == 0, "\(env.stderr)")

        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", "p.db", "--passphrase-stdin"], input: "a passphrase on stdin\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try await run(["status", "--database", "p.db", "--passphrase-stdin"], input: "a passphrase on stdin\n").status == 0)
        let wrong = try await run(["status", "--database", "p.db", "--passphrase-stdin"], input: "another passphrase\n")
        #expect(wrong.status == 65)
        #expect(!wrong.stderr.contains("another passphrase"))
        #expect(try await run(["status", "--database", "p.db", "--passphrase-stdin"], input: "").status == 66)
    }

    /// Issue 7, item 3: outputs are created owner-only and exclusively, never
    /// through a symlink, and never appear half-written at their final path.
    @Test func importAndExportOutputsAreOwnerOnlyExclusiveAndNeverFollowLinks() async throws {
        _ = try await keygen()
        _ = try await importChinook()
        func mode(_ name: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: dir.file(name))[.posixPermissions] as! NSNumber).intValue
        }
        #expect(try mode("c.db") == 0o600, "import output")
        let exported = try await run(["export", "--database", "c.db", "--to", "plain.sqlite", "--key-file", "db.key", "--i-understand-the-output-is-plaintext"])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(try mode("plain.sqlite") == 0o600, "plaintext export")
        // A dangling symlink at the output path is not followed.
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.sqlite"), withDestinationPath: dir.file("elsewhere.sqlite"))
        let linked = try await run(["export", "--database", "c.db", "--to", "link.sqlite", "--key-file", "db.key", "--i-understand-the-output-is-plaintext"])
        #expect(linked.status == 73, "\(linked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere.sqlite")))
        // No temporary file is left beside the outputs.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// `import --seal` writes its sealing and VACUUM with SQLite's syncs off
    /// (the copy has no name yet; issue 51): the copy must still be synced
    /// after its last write and before it is linked into place, or a power
    /// cut could leave a named file whose pages never reached the disk.
    @Test func aSealedImportSyncsItsCopyBeforeNamingIt() async throws {
        let strace = try #require(ProcessRunner.which("strace"), "strace watches the system calls; `make test-setup` installs it")
        _ = try await keygen()
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        let log = dir.file("strace.log")
        let result = try await ProcessRunner.run(strace, ["-f", "-y", "-e", "trace=pwrite64,write,fsync,fdatasync,link,rename", "-o", log, Fixtures.strongroomBinary,
                                                          "import", "--from", Fixtures.chinook, "--database", "sealed.db", "--seal", "Customer.Email:indexed",
                                                          "--key-file", "db.key", "--field-keys", "fields.keyring"],
                                                 environment: ProcessRunner.underStrace, currentDirectory: dir.path)
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "\n")
        // The copy: `.strongroom-<pid>-<n>.tmp`, shown by strace -y beside its descriptor.
        func onCopy(_ call: String) -> Bool { call.range(of: #"<[^>]*/\.strongroom-[0-9]+-[0-9]+\.tmp>"#, options: .regularExpression) != nil }
        let named = try #require(calls.firstIndex { ($0.contains("link(") && !$0.contains("unlink(") || $0.contains("rename(")) && $0.contains("sealed.db") },
                                 "the copy is linked into place")
        let lastWrite = try #require(calls[..<named].lastIndex { ($0.contains("pwrite64(") || $0.contains(" write(")) && onCopy($0) }, "the copy is written")
        #expect(calls[lastWrite..<named].contains { ($0.contains("fsync(") || $0.contains("fdatasync(")) && onCopy($0) && $0.hasSuffix("= 0") },
                "no sync of the copy between its last write and its link:\n\(calls[lastWrite...named].joined(separator: "\n"))")
    }

    /// Filesystems without hard links (FAT, some SMB shares) refuse link(2)
    /// with EPERM: simulated with strace's fault injection (review of issue 7).
    @Test func importWorksWhereHardLinksAreRefused() async throws {
        let strace = try #require(ProcessRunner.which("strace"))
        _ = try await keygen()
        let result = try await ProcessRunner.run(strace, ["-f", "-e", "inject=link:error=EPERM", "-o", "/dev/null", Fixtures.strongroomBinary,
                                                          "import", "--from", Fixtures.chinook, "--database", dir.file("fat.db"), "--key-file", dir.file("db.key")], environment: ProcessRunner.underStrace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await run(["status", "--database", "fat.db", "--key-file", "db.key"]).status == 0)
    }

    /// A copy left by a killed import or export (its process gone) is removed
    /// by the next one in that directory; long output names still work.
    @Test func staleCopiesAreRemovedAndLongNamesWork() async throws {
        _ = try await keygen()
        let finished = try await ProcessRunner.run("/bin/true", [])
        #expect(finished.status == 0)
        // A process id that is not running: the largest one the kernel hands out.
        let maximum = (try? String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "4194304"
        let stale = ".strongroom-\(maximum)-42.tmp"
        FileManager.default.createFile(atPath: dir.file(stale), contents: Data("plaintext rows".utf8))
        FileManager.default.createFile(atPath: dir.file(stale + "-journal"), contents: Data("more".utf8))
        let longName = String(repeating: "n", count: 220) + ".db"
        let imported = try await run(["import", "--from", Fixtures.chinook, "--database", longName, "--key-file", "db.key"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file(stale)))
        #expect(!FileManager.default.fileExists(atPath: dir.file(stale + "-journal")))
    }

    @Test func exportNeedsTheExplicitFlag() async throws {
        _ = try await keygen()
        _ = try await importChinook()
        let refused = try await run(["export", "--database", "c.db", "--to", "plain.sqlite", "--key-file", "db.key"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("UNENCRYPTED"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("plain.sqlite")))
        let exported = try await run(["export", "--database", "c.db", "--to", "plain.sqlite", "--key-file", "db.key", "--i-understand-the-output-is-plaintext", "--json"])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(Fixtures.bytes(of: dir.file("plain.sqlite")).starts(with: Array("SQLite format 3\0".utf8)))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any])
        #expect((report["tables"] as? [Any])?.count == 11)
    }

    @Test func errorsAreOneSentenceWithoutKeyMaterial() async throws {
        let keyPath = try await keygen()
        _ = try await importChinook()
        let hex = String(decoding: Fixtures.bytes(of: keyPath), as: UTF8.self).trimmingCharacters(in: .newlines)
        let results = [
            try await run(["status", "--database", "c.db", "--key-env", "K"], environment: ["K": hex + "0"]),
            try await run(["status", "--database", Fixtures.chinook, "--key-env", "K"], environment: ["K": hex]),
            try await run(["rekey", "--database", "c.db", "--key-env", "K", "--new-key-file", "db.key", "--json"], environment: ["K": String(hex.reversed())]),
        ]
        for result in results {
            #expect(result.status != 0)
            #expect(result.stderr.hasPrefix("strongroom: "))
            #expect(!result.stderr.contains(hex) && !result.stdout.contains(hex))
            #expect(!result.stderr.contains(String(hex.reversed())))
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(results[2].stdout.utf8)) as? [String: Any])
        #expect((json["error"] as? [String: Any])?["code"] as? String == "wrong_key")
    }
}

/// migrate, verify, baseline and status against real encrypted files.
@Suite("strongroom migrate, verify, baseline")
struct MigrationCLITests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    func write(_ name: String, _ sql: String) throws {
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("Migrations/" + name), contents: Data(sql.utf8))
    }

    func prepare() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        try write("0001_customer.sql", "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, fax TEXT);\nINSERT INTO customer(name) VALUES ('a');")
        try write("0002_order.sql", "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id) ON DELETE CASCADE);\nINSERT INTO orders(customer_id) VALUES (1);")
        try write("0003_drop_fax.sql", "ALTER TABLE customer DROP COLUMN fax;")
        _ = try Connection(path: dir.file("app.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
    }

    @Test func migrateVerifyAndStatus() async throws {
        try await prepare()
        let dry = try await run(["migrate", "--database", "app.db", "--key-file", "db.key", "--dry-run"])
        #expect(dry.status == 0)
        let dropFax = dry.stdout.split(separator: "\n").filter { $0.contains("0003_drop_fax.sql") }
        #expect(dropFax.count == 1, "\(dry.stdout)")
        if SQLCipherLibrary.sqliteVersionNumber >= 3_035_000 {
            // SQLite 3.35+ drops the column itself: no rebuild to announce.
            #expect(dropFax.allSatisfy { $0.hasSuffix("0003_drop_fax.sql, 1 statement(s))") }, "\(dry.stdout)")
        } else {
            // SQLite 3.15 has no DROP COLUMN: the runner rebuilds customer.
            #expect(dropFax.allSatisfy { $0.hasSuffix("0003_drop_fax.sql, 1 statement(s), rebuilds tables)") }, "\(dry.stdout)")
        }
        let partial = try await run(["migrate", "--database", "app.db", "--key-file", "db.key", "--to", "2", "--json"])
        #expect(partial.status == 0, "\(partial.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(partial.stdout.utf8)) as? [String: Any])
        #expect(report["to_version"] as? Int == 2)
        let status = try await run(["status", "--database", "app.db", "--key-file", "db.key", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let migrations = try #require(object["migrations"] as? [String: Any])
        #expect(migrations["current_version"] as? Int == 2)
        #expect((migrations["pending"] as? [[String: Any]])?.map { $0["version"] as? Int } == [3])
        #expect(try await run(["verify", "--database", "app.db", "--key-file", "db.key"]).status == 1)
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key"]).status == 0)
        let verify = try await run(["verify", "--database", "app.db", "--key-file", "db.key"])
        #expect(verify.status == 0, "\(verify.stdout)")
        // A hand-made change is drift: exit 1, every finding listed.
        try Connection(path: dir.file("app.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key")))).execute(sql: "CREATE TABLE extra(x)")
        let drift = try await run(["verify", "--database", "app.db", "--key-file", "db.key", "--json"])
        #expect(drift.status == 1)
        let findings = try #require((try JSONSerialization.jsonObject(with: Data(drift.stdout.utf8)) as? [String: Any])?["findings"] as? [[String: Any]])
        #expect(findings.map { $0["code"] as? String } == ["schema_drift"])
    }

    @Test func failuresMapToExitCodes() async throws {
        try await prepare()
        try write("0004_bad.sql", "CREATE TABLE ok(x);\nINSERT INTO nowhere VALUES (1);")
        let failed = try await run(["migrate", "--database", "app.db", "--key-file", "db.key"])
        #expect(failed.status == 65)
        #expect(failed.stderr.contains("0004_bad.sql") && failed.stderr.contains("no such table: nowhere"))
        #expect(failed.stderr.contains("INSERT INTO nowhere VALUES (1);"))
        try write("0004_bad.sql", "CREATE TABLE ok(x);")
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key"]).status == 0)
        try write("0001_customer.sql", "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, fax TEXT);")
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key"]).status == 65)
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key", "--migrations", "nowhere"]).status == 66)
        // A dry run never creates a database; nor does migrate in a directory that does not exist.
        #expect(try await run(["migrate", "--database", "missing.db", "--key-file", "db.key", "--dry-run"]).status == 66)
        #expect(!FileManager.default.fileExists(atPath: dir.file("missing.db")))
        #expect(try await run(["migrate", "--database", "nowhere/missing.db", "--key-file", "db.key"]).status == 66)
        #expect(!FileManager.default.fileExists(atPath: dir.file("nowhere")))
    }

    @Test func migrateCreatesANewEncryptedDatabase() async throws {
        try await prepare()
        let result = try await run(["migrate", "--database", "new.db", "--key-file", "db.key"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Created new.db"), "\(result.stdout)")
        #expect(result.stdout.contains("migrated from version 0 to 3"), "\(result.stdout)")
        let bytes = Fixtures.bytes(of: dir.file("new.db"))
        #expect(!bytes.isEmpty && !bytes.starts(with: Array("SQLite format 3".utf8)))
        let db = try Connection(path: dir.file("new.db"), configuration: Configuration(key: try KeyFile.read(at: dir.file("db.key"))))
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM orders") == 1)
        db.close()
        // Run again: it exists now, nothing is created or applied.
        let again = try await run(["migrate", "--database", "new.db", "--key-file", "db.key", "--json"])
        #expect(again.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(object["created"] as? Bool == false)
        let created = try await run(["migrate", "--database", "other.db", "--key-file", "db.key", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["created"] as? Bool == true)
        // A glob never creates; commands that only read refuse a missing file.
        #expect(try await run(["migrate", "--database", "fleet/*.db", "--key-file", "db.key"]).status == 66)
        for command in ["status", "verify"] {
            #expect(try await run([command, "--database", "absent.db", "--key-file", "db.key"]).status == 66, "\(command)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("absent.db")))
        // A wrong key for an existing database is still refused, never "created".
        #expect(try await run(["keygen", "--out", "other.key"]).status == 0)
        #expect(try await run(["migrate", "--database", "new.db", "--key-file", "other.key"]).status == 65)
    }

    /// A database path that is a symlink to a file not made yet: migrate
    /// creates the file it points to.
    @Test func migrateCreatesTheTargetOfADanglingSymlink() async throws {
        try await prepare()
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.db"), withDestinationPath: dir.file("target.db"))
        let result = try await run(["migrate", "--database", "link.db", "--key-file", "db.key"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("target.db")))
    }

    @Test func migrateCreatesNothingItCannotMigrate() async throws {
        try await prepare()
        for path in ["", ":memory:"] {
            #expect(try await run(["migrate", "--database", path, "--key-file", "db.key"]).status == 64, "\(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("-migrate.lock")))
        // A first run whose first migration fails says that it created the
        // database (which another runner may already be waiting on: it is
        // never deleted) and what to do.
        try FileManager.default.createDirectory(atPath: dir.file("Bad"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("Bad/0001_bad.sql"), contents: Data("CREATE TABLE ok(x);\nINSERT INTO nowhere VALUES (1);\n".utf8))
        let failed = try await run(["migrate", "--database", "fresh.db", "--key-file", "db.key", "--migrations", "Bad"])
        #expect(failed.status == 65)
        #expect(failed.stderr.contains("fresh.db was created") && failed.stderr.contains("no migration"), "\(failed.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("fresh.db")))
    }

    /// The commands keep an existing file's journal mode (issue 7, item 12).
    @Test func commandsKeepTheJournalModeOfAnExistingDatabase() async throws {
        try await prepare()
        let key = try KeyFile.read(at: dir.file("db.key"))
        var configuration = Configuration(key: key)
        configuration.journalMode = .delete
        try Connection(path: dir.file("legacy.db"), configuration: configuration).execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, fax TEXT); INSERT INTO customer(name) VALUES ('a')")
        for name in ["fleet-a.db", "fleet-b.db"] {
            try Connection(path: dir.file(name), configuration: configuration).execute(sql: "CREATE TABLE other(x)")
        }
        func journalMode(_ name: String) throws -> String? {
            var reading = Configuration(key: key)
            reading.readOnly = true
            return try Connection(path: dir.file(name), configuration: reading).fetchOne(String.self, sql: "PRAGMA journal_mode")
        }
        #expect(try await run(["baseline", "--database", "legacy.db", "--version", "1", "--key-file", "db.key"]).status == 0)
        let migrated = try await run(["migrate", "--database", "legacy.db", "--key-file", "db.key"])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(try await run(["keygen", "--out", "new.key"]).status == 0)
        #expect(try await run(["rekey", "--database", "legacy.db", "--new-key-file", "new.key", "--key-file", "db.key"]).status == 0)
        #expect(try await run(["migrate", "--database", "fleet-*.db", "--key-file", "db.key"]).status == 0)
        let newKey = try KeyFile.read(at: dir.file("new.key"))
        var reading = Configuration(key: newKey)
        reading.readOnly = true
        #expect(try Connection(path: dir.file("legacy.db"), configuration: reading).fetchOne(String.self, sql: "PRAGMA journal_mode") == "delete")
        #expect(try journalMode("fleet-a.db") == "delete")
        #expect(!FileManager.default.fileExists(atPath: dir.file("legacy.db-wal")))
    }

    @Test func baselineCoversTheVersionsBelowIt() async throws {
        try await prepare()
        let key = try KeyFile.read(at: dir.file("db.key"))
        let legacy = try Connection(path: dir.file("legacy.db"), configuration: Configuration(key: key))
        try legacy.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, fax TEXT);
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id) ON DELETE CASCADE);
            """)
        legacy.close()
        #expect(try await run(["baseline", "--database", "legacy.db", "--version", "2", "--key-file", "db.key"]).status == 0)
        let status = try await run(["status", "--database", "legacy.db", "--key-file", "db.key", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let migrations = try #require(object["migrations"] as? [String: Any])
        #expect(migrations["current_version"] as? Int == 2)
        #expect((migrations["pending"] as? [[String: Any]])?.map { $0["version"] as? Int } == [3])
        let migrate = try await run(["migrate", "--database", "legacy.db", "--key-file", "db.key"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("applied 3") && !migrate.stdout.contains("applied 1"), "\(migrate.stdout)")
        let verify = try await run(["verify", "--database", "legacy.db", "--key-file", "db.key"])
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    @Test func heldLockExits75() async throws {
        try await prepare()
        let fd = open(dir.file("app.db-migrate.lock"), O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let result = try await run(["migrate", "--database", "app.db", "--key-file", "db.key", "--lock-timeout", "0.2"])
        #expect(result.status == 75)
        #expect(result.stderr.contains("Another migration runner holds the lock"))
        flock(fd, LOCK_UN)
        #expect(try await run(["migrate", "--database", "app.db", "--key-file", "db.key"]).status == 0)
    }

    @Test func baselineAndFleet() async throws {
        try await prepare()
        let key = try KeyFile.read(at: dir.file("db.key"))
        try FileManager.default.createDirectory(atPath: dir.file("tenants"), withIntermediateDirectories: true)
        for i in 0..<4 {
            try Connection(path: dir.file("tenants/t\(i).db"), configuration: Configuration(key: key)).close()
        }
        try Connection(path: dir.file("tenants/t2.db"), configuration: Configuration(key: key)).execute(sql: "CREATE TABLE orders(x)")
        let fleet = try await run(["migrate", "--database", "tenants/*.db", "--key-file", "db.key", "--jobs", "2"])
        #expect(fleet.status == 1)
        #expect(fleet.stdout.contains("3 of 4 databases migrated"))
        #expect(fleet.stdout.contains("FAILED  tenants/t2.db  at version 1"))

        let legacy = try Connection(path: dir.file("legacy.db"), configuration: Configuration(key: key))
        try legacy.execute(sql: "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, fax TEXT); INSERT INTO customer(name) VALUES ('legacy')")
        legacy.close()
        #expect(try await run(["baseline", "--database", "legacy.db", "--version", "1", "--key-file", "db.key"]).status == 0)
        #expect(try await run(["migrate", "--database", "legacy.db", "--key-file", "db.key"]).status == 0)
        #expect(try await run(["verify", "--database", "legacy.db", "--key-file", "db.key"]).status == 0)
        #expect(try await run(["baseline", "--database", "legacy.db", "--version", "9", "--key-file", "db.key"]).status == 64)
    }
}
