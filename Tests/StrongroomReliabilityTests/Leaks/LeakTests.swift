import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 12's leaks: keys and marker values searched for where they must
/// not be. A core dump (`gcore`) of a process that used a database key, a
/// new key and a field key and then let them go; every file the CLI has
/// open while it works (read through `/proc/PID/fd`, so deleted temporary
/// files count too), every file that appears in its directory and in its
/// temporary directory, its command line and its environment, and what it
/// prints.
@Suite("Leaks: keys and markers where they must not be")
struct LeakTests {
    let dir = TemporaryDirectory()

    /// The forms a key may take in memory or text: its bytes, and its hex in both cases.
    static func forms(ofHex hex: String) -> [[UInt8]] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return [bytes, Array(hex.lowercased().utf8), Array(hex.uppercased().utf8)]
    }

    /// Whether `haystack` holds `needle` anywhere.
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                // memchr for the first byte, then memcmp: fast enough in a debug build.
                var start = 0
                let last = hay.count - pin.count
                while start <= last {
                    guard let hit = memchr(hay.baseAddress! + start, Int32(pin[0]), last - start + 1) else { return false }
                    let offset = UnsafeRawPointer(hit) - UnsafeRawPointer(hay.baseAddress!)
                    if memcmp(hay.baseAddress! + offset, pin.baseAddress!, pin.count) == 0 { return true }
                    start = offset + 1
                }
                return false
            }
        }
    }

    /// Not under `make sanitize`: a sanitized child maps terabytes of shadow
    /// memory, and gcore writes it out (a ThreadSanitizer child's core grew
    /// past 72 GB of real disk, of 15 TB, and filled the disk; seen under
    /// ThreadSanitizer only, but AddressSanitizer's shadow is as large). The search
    /// for keys in a dump is about the library, not the sanitizers; the
    /// unsanitized suite (`make test`, `make stress`) runs it.
    /// SANITIZER EXEMPTION(thread) SANITIZER EXEMPTION(address): Scripts/sanitize.sh counts them among the suppressions.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["STRONGROOM_SANITIZER"] != nil,
                    "gcore of a sanitized process writes its shadow memory: terabytes"))
    func noKeyIsLeftInACoreDumpAfterTheKeysAreReleased() async throws {
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--out", "old.key"], currentDirectory: dir.path).status == 0)
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--out", "new.key"], currentDirectory: dir.path).status == 0)
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--field", "--out", "fields.keyring"], currentDirectory: dir.path).status == 0)
        try await searchCoreDump(name: "core dump", operation: "after a pool opened, sealed, read and rekeyed, then closed",
                                 arguments: ["old.key", "new.key", "fields.keyring"],
                                 secrets: [("database key", Fixtures.hex(ofKeyFile: dir.file("old.key"))),
                                           ("new database key", Fixtures.hex(ofKeyFile: dir.file("new.key")))]
                               + Self.keyringKeys(Fixtures.bytes(of: dir.file("fields.keyring"))).map { ("field key", $0) },
                           passphrases: [])
    }

    /// Issue 27: the same with the keys from the new sources: the database
    /// key in a wrapped key file, the new key printed by a key command, the
    /// field keyring wrapped, both unwrapped with a passphrase a command prints.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["STRONGROOM_SANITIZER"] != nil,
                    "gcore of a sanitized process writes its shadow memory: terabytes"))
    func noKeyOrPassphraseIsLeftInACoreDumpAfterWrappedAndCommandKeysAreReleased() async throws {
        let passphrase = "wrap-passphrase-" + UUID().uuidString
        try Array((passphrase + "\n").utf8).withUnsafeBytes { FileManager.default.createFile(atPath: dir.file("passphrase.txt"), contents: Data($0)) }
        for (arguments, input) in [(["keygen", "--out", "old.key"], nil), (["keygen", "--out", "new.key"], nil),
                                   (["keygen", "--field", "--out", "fields.keyring"], nil),
                                   (["key", "wrap", "--in", "old.key", "--out", "old.wrapped", "--passphrase-stdin"], passphrase),
                                   (["key", "wrap", "--in", "fields.keyring", "--out", "fields.wrapped", "--passphrase-stdin"], passphrase)] {
            let made = try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, currentDirectory: dir.path)
            #expect(made.status == 0, "\(arguments): \(made.stderr)")
        }
        try await searchCoreDump(name: "core dump (wrapped key files, key command)",
                                 operation: "the same, the keys from a wrapped key file, a key command and a wrapped keyring",
                                 arguments: ["old.wrapped", "command:cat new.key", "fields.wrapped"],
                                 secrets: [("database key", Fixtures.hex(ofKeyFile: dir.file("old.key"))),
                                           ("new database key", Fixtures.hex(ofKeyFile: dir.file("new.key")))]
                               + Self.keyringKeys(Fixtures.bytes(of: dir.file("fields.keyring"))).map { ("field key", $0) },
                           passphrases: [passphrase])
    }

    /// The hex of each key in a keyring file's text.
    static func keyringKeys(_ text: [UInt8]) -> [String] {
        String(decoding: text, as: UTF8.self)
            .split(separator: "\n").filter { $0.hasPrefix("key ") }.compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    /// Runs `reliability-child release-keys app.db ARGUMENTS MARKER`, dumps its
    /// core once it says it released its keys, and searches the dump for each
    /// secret (as bytes and hex) and each passphrase.
    func searchCoreDump(name: String, operation: String, arguments: [String], secrets: [(String, String)], passphrases: [String]) async throws {
        let gcore = try #require(ProcessRunner.which("gcore"), "gcore (gdb) is installed by `make test-setup`")
        #expect(secrets.count == 3)
        let marker = "marker-" + UUID().uuidString

        let child = Process()
        child.executableURL = URL(fileURLWithPath: Fixtures.reliabilityChild)
        child.arguments = ["release-keys", "app.db"] + arguments + [marker]
        child.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) }; child.waitUntilExit() }
        let line = output.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self) == "released\n")

        let dump = try await ProcessRunner.run(gcore, ["-o", dir.file("core"), "\(child.processIdentifier)"])
        let core = Fixtures.bytes(of: dir.file("core.\(child.processIdentifier)"))
        #expect(dump.status == 0 && core.count > 1_000_000, "gcore: \(dump.stderr)")
        var found = 0
        for (name, hex) in secrets {
            for (form, bytes) in zip(["bytes", "lowercase hex", "uppercase hex"], Self.forms(ofHex: hex)) where Self.find(bytes, in: core) {
                found += 1
                Issue.record("the \(name) is in the core dump, as \(form)")
            }
        }
        for passphrase in passphrases where Self.find(Array(passphrase.utf8), in: core) {
            found += 1
            Issue.record("the wrapping passphrase is in the core dump")
        }
        // The core dump is a real image of the process: its own strings are in it.
        #expect(Self.find(Array("release-keys".utf8), in: core), "the dump does not hold the process's arguments")
        try ReliabilityResults.write("leaks", name: name, [
            "place": "a core dump (gcore) of the process", "operation": operation,
            "searched": "\(secrets.count) keys × 3 forms\(passphrases.isEmpty ? "" : " and \(passphrases.count) passphrase") in \(core.count / 1_048_576) MiB",
            "found": found,
        ])
    }

    /// What a watcher saw while a child ran.
    struct Sightings {
        var snapshots = 0
        /// Snapshots whose environment held a needle, and the first that held none.
        var environmentSightings: [Int] = []
        var firstCleanEnvironment: Int?
        /// Seconds from the start to the last sighting in the environment, and to the exit.
        var lastEnvironmentSighting = 0.0
        var duration = 0.0
        /// The first snapshot in which the process had one of the watched
        /// databases open: the key must be gone from its environment by then.
        var firstDatabaseOpen: Int?
        var filesSearched = Set<String>()
        var found: [String] = []
        /// Snapshots in which a child process (a key command) was seen.
        var childSightings = 0
    }

    /// The end of a key command the watcher must see: it waits until the
    /// watcher has seen it in 3 snapshots (`../child-seen`, from the
    /// command's folder, so the command is also watched more than 3 times), at
    /// most 30 s, well inside the command's timeout. Not a fixed sleep: a
    /// snapshot on a loaded machine can take longer than any sleep chosen
    /// (a 0.5 s one was missed), and the order is what the test needs.
    static let waitUntilSeen = "i=0; while [ ! -e ../child-seen ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done"

    /// The processes below `pid` (children, their children…), from `/proc/*/stat`.
    static func descendants(of pid: pid_t) -> [pid_t] {
        var parents: [pid_t: pid_t] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = pid_t(entry) else { continue }
            let stat = String(decoding: Fixtures.bytes(of: "/proc/\(entry)/stat"), as: UTF8.self)
            // "PID (COMM) STATE PPID …": COMM may hold spaces and parentheses; PPID follows the last ")".
            guard let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[child] = parent }
        }
        var found: [pid_t] = [], frontier = [pid]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }

    /// Polls the running `process` until it exits: its command line, its
    /// environment, every regular file it has open (through
    /// `/proc/PID/fd`, deleted ones included) but `allowed`, and every
    /// file in `folders`, each searched for every needle.
    /// `databases`: files whose opening marks the command at work (the
    /// first snapshot that finds one open is `firstDatabaseOpen`).
    static func watch(_ process: Process, folders: [String], allowed: Set<String>, needles: [(String, [UInt8])],
                      databases: Set<String> = [], childSeen: String? = nil) -> Sightings {
        var seen = Sightings()
        let pid = process.processIdentifier
        func search(_ bytes: [UInt8], _ place: String) {
            for (name, needle) in needles where find(needle, in: bytes) {
                seen.found.append("\(name) in \(place)")
            }
        }
        let started = Date()
        while process.isRunning {
            seen.snapshots += 1
            // Each file is read once a snapshot: an open file in a watched
            // folder is searched through its descriptor, not again by name.
            var searchedNow = Set<String>()
            search(Fixtures.bytes(of: "/proc/\(pid)/cmdline"), "the command line")
            // A key command's process, and what it starts: their command lines and environments.
            let children = descendants(of: pid)
            if !children.isEmpty {
                seen.childSightings += 1
                // Seen in 3 snapshots: the key command may end now (waitUntilSeen).
                if seen.childSightings == 3, let childSeen { FileManager.default.createFile(atPath: childSeen, contents: nil) }
            }
            for child in children {
                search(Fixtures.bytes(of: "/proc/\(child)/cmdline"), "a child's command line")
                search(Fixtures.bytes(of: "/proc/\(child)/environ"), "a child's environment")
            }
            // A database open now (looked at before the environment, so that
            // a key seen after it was there while the database was open).
            if seen.firstDatabaseOpen == nil, !databases.isEmpty {
                for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
                    if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"), databases.contains(target) {
                        seen.firstDatabaseOpen = seen.snapshots
                        break
                    }
                }
            }
            // A key given in the environment is there from exec until the
            // command has read it and wiped it: only those first snapshots may hold it.
            let environment = Fixtures.bytes(of: "/proc/\(pid)/environ")
            if needles.contains(where: { find($0.1, in: environment) }) {
                if let clean = seen.firstCleanEnvironment {
                    seen.found.append("a key back in the environment after it was wiped (snapshot \(seen.snapshots), clean since \(clean))")
                }
                seen.environmentSightings.append(seen.snapshots)
                seen.lastEnvironmentSighting = Date().timeIntervalSince(started)
            } else if seen.firstCleanEnvironment == nil, !environment.isEmpty {
                seen.firstCleanEnvironment = seen.snapshots
            }
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
                let link = "/proc/\(pid)/fd/\(fd)"
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link), target.hasPrefix("/"),
                      !allowed.contains(target.replacingOccurrences(of: " (deleted)", with: "")) else { continue }
                var info = stat()
                guard stat(link, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                seen.filesSearched.insert(target)
                searchedNow.insert(target)
                search(Fixtures.bytes(of: link), target)
            }
            for folder in folders {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                    let path = folder + "/" + name
                    seen.filesSearched.insert(path)
                    if searchedNow.insert(path).inserted { search(Fixtures.bytes(of: path), path) }
                }
            }
        }
        seen.duration = Date().timeIntervalSince(started)
        return seen
    }

    @Test func markersAndKeysStayOutOfEveryFileCommandLineAndEnvironmentWhileTheCLIWorks() async throws {
        // The plaintext source in a folder of its own; the work in another, with its own TMPDIR.
        for folder in ["source", "work", "tmp"] { try FileManager.default.createDirectory(atPath: dir.file(folder), withIntermediateDirectories: true) }
        let markers = (0..<3).map { _ in "MARKER-" + UUID().uuidString }
        do {
            let plain = try Connection(path: dir.file("source/plain.sqlite"), configuration: .plaintext)
            try plain.execute(sql: """
                CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT NOT NULL, extra TEXT);
                INSERT INTO note(body, extra) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
                  SELECT '\(markers[0])-' || i, CASE WHEN i % 3 = 0 THEN '\(markers[1])' END FROM n;
                CREATE INDEX note_body ON note(body);
                PRAGMA journal_mode = DELETE;
                """)
            plain.close()
        }
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--out", "work.key"], currentDirectory: dir.path).status == 0)
        #expect(try await ProcessRunner.run(Fixtures.strongroomBinary, ["keygen", "--out", "new.key"], currentDirectory: dir.path).status == 0)
        let keyHex = Fixtures.hex(ofKeyFile: dir.file("work.key")), newHex = Fixtures.hex(ofKeyFile: dir.file("new.key"))
        try FileManager.default.createDirectory(atPath: dir.file("work/Migrations"), withIntermediateDirectories: true)
        try """
            ALTER TABLE note RENAME TO old_note;
            CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT NOT NULL, extra TEXT, seen INTEGER NOT NULL DEFAULT 0);
            INSERT INTO note(id, body, extra) SELECT id, body, extra FROM old_note;
            DROP TABLE old_note;
            CREATE INDEX note_body ON note(body);
            UPDATE note SET extra = '\(markers[2])' WHERE id % 5 = 0;
            """.write(toFile: dir.file("work/Migrations/0001_rebuild.sql"), atomically: true, encoding: .utf8)

        var needles: [(String, [UInt8])] = markers.map { ("a marker", Array($0.utf8)) }
            + zip(["the key", "the key (lowercase hex)", "the key (uppercase hex)"], Self.forms(ofHex: keyHex)).map { ($0, $1) }
            + zip(["the new key", "the new key (lowercase hex)", "the new key (uppercase hex)"], Self.forms(ofHex: newHex)).map { ($0, $1) }
        // The key as a systemd credential for the migration (issue 27): a private
        // credentials directory, as systemd makes it for LoadCredentialEncrypted=.
        let credentials = dir.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try Fixtures.copy(dir.file("work.key"), to: credentials + "/work-key")
        chmod(credentials + "/work-key", 0o400)
        chmod(credentials, 0o700)
        // Issue 27: the new key wrapped under a passphrase a command prints, and
        // given by a key command (which outlives its output a little, to be watched).
        let passphrase = "wrap-passphrase-" + UUID().uuidString
        FileManager.default.createFile(atPath: dir.file("passphrase.txt"), contents: Data((passphrase + "\n").utf8))
        chmod(dir.file("passphrase.txt"), 0o600)
        let wrapped = try await ProcessRunner.run(Fixtures.strongroomBinary, ["key", "wrap", "--in", "new.key", "--out", "new.wrapped", "--passphrase-command", "cat passphrase.txt"],
                                                  currentDirectory: dir.path)
        #expect(wrapped.status == 0, "key wrap: \(wrapped.stderr)")
        needles.append(("the wrapping passphrase", Array(passphrase.utf8)))
        // The key through the environment for the import, as a user may give it.
        let runs: [(String, [String], [String: String])] = [
            ("import", ["import", "--from", dir.file("source/plain.sqlite"), "--database", "app.db", "--key-env", "APP_DB_KEY"], ["APP_DB_KEY": keyHex]),
            ("migrate", ["migrate", "--database", "app.db", "--key-credential", "work-key"], ["CREDENTIALS_DIRECTORY": credentials]),
            ("rekey", ["rekey", "--database", "app.db", "--key-file", "../work.key", "--new-key-file", "../new.key"], [:]),
            ("sql", ["sql", "--database", "app.db", "--key-file", "../new.wrapped", "--passphrase-command", "cat ../passphrase.txt; \(Self.waitUntilSeen)",
                     "--csv", "SELECT count(*) FROM note WHERE body LIKE '%9%'"], [:]),
            ("status", ["status", "--database", "app.db", "--key-command", "cat ../new.key; \(Self.waitUntilSeen)"], [:]),
        ]
        for (name, arguments, environment) in runs {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Fixtures.strongroomBinary)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TMPDIR": dir.file("tmp")]) { $1 }
            process.currentDirectoryURL = URL(fileURLWithPath: dir.file("work"))
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // The command runs niced, so that on a busy machine (make stress
            // runs the crash trials beside this) the watcher still gets to
            // look at it often while it works.
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(process.processIdentifier), 10)
            // The watcher looks for as long as the command runs: on a thread of
            // its own, not one of the cooperative pool's (OffThePool).
            let folders = [dir.file("work"), dir.file("tmp")]
            // The inputs that hold a marker or a key because the test wrote it
            // there: the migration's own SQL sets a marker, and migrate has the
            // file open while it reads it (make test found it open once).
            let allowed: Set<String> = [dir.file("source/plain.sqlite"), dir.file("work.key"), dir.file("new.key"), credentials + "/work-key",
                                        dir.file("passphrase.txt"), dir.file("work/Migrations/0001_rebuild.sql")]
            let databases: Set<String> = [dir.file("source/plain.sqlite"), dir.file("work/app.db")]
            let needles = needles
            let childSeen = dir.file("child-seen")
            let seen = await OffThePool.run {
                Self.watch(process, folders: folders, allowed: allowed, needles: needles, databases: databases, childSeen: childSeen)
            }
            unlink(childSeen)
            await process.ended()
            let printed = output.fileHandleForReading.readDataToEndOfFile() + errors.fileHandleForReading.readDataToEndOfFile()
            var found = seen.found
            for (needle, bytes) in needles where Self.find(bytes, in: [UInt8](printed)) { found.append("\(needle) in what it printed") }
            #expect(process.terminationStatus == 0, "\(name): \(String(decoding: printed, as: UTF8.self))")
            #expect(seen.snapshots > 3, "\(name): the watcher saw the process \(seen.snapshots) times")
            #expect(found.isEmpty, "\(name): \(Set(found).sorted())")
            let usesACommand = arguments.contains { $0.hasSuffix("-command") }
            if usesACommand {
                #expect(seen.childSightings > 0, "\(name): the key command's process was never seen")
            }
            let keyInEnvironment = environment.values.contains(keyHex)
            if keyInEnvironment {
                // Wiped once read, before the command opens a database: no
                // snapshot finds the key in the environment once a database
                // is open (the order, not how fast a loaded machine gets there).
                #expect(seen.firstCleanEnvironment != nil, "\(name): the key never left the environment in \(seen.snapshots) snapshots")
                if let opened = seen.firstDatabaseOpen {
                    #expect(seen.environmentSightings.allSatisfy { $0 < opened },
                            "\(name): the key was in the environment in snapshots \(seen.environmentSightings), a database open since snapshot \(opened)")
                }
            }
            try ReliabilityResults.write("leaks", name: "files while " + name, [
                "place": "open files (deleted ones too), the database folder, TMPDIR, command line, environment, output",
                "operation": "strongroom \(name)" + (keyInEnvironment ? " (key in the environment)" : !environment.isEmpty ? " (key from a systemd credential)"
                    : arguments.contains("--key-command") ? " (key from a key command; its process watched too)"
                    : arguments.contains("--passphrase-command") ? " (wrapped key file, passphrase from a command; its process watched too)" : ""),
                "searched": "\(seen.filesSearched.count) files in \(seen.snapshots) snapshots"
                    + (usesACommand ? ", the command's process in \(seen.childSightings)" : "")
                    + (!keyInEnvironment ? "" : String(format: "; the key in the environment until read and wiped: %.0f ms of %.1f s",
                                                         seen.lastEnvironmentSighting * 1000, seen.duration)
                        + "; last seen in snapshot \(seen.environmentSightings.last.map(String.init) ?? "none"), a database open from snapshot \(seen.firstDatabaseOpen.map(String.init) ?? "never seen")"),
                "found": found.count,
            ])
        }
        // The work was done: the migrated rows are under the new key.
        let db = try Connection(path: dir.file("work/app.db"), configuration: Configuration(key: DatabaseKey.load(keyFile: dir.file("new.key"))))
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note WHERE extra IS NOT NULL") ?? 0 > 50_000)
        db.close()
    }
}
