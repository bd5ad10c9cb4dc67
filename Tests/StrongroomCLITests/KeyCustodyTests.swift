import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 27: keys that do not sit beside the data. A service migrates and
/// reads with no readable key on disk (a wrapped key file and keyring, their
/// passphrases from commands; a key command); what rotates what; bad input is
/// a typed error with a sentence, and nothing is written.
@Suite("strongroom CLI: key commands and wrapped key files")
struct KeyCustodyTests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String], input: String? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, currentDirectory: dir.path)
    }

    /// A file only its owner may read, as a vault's CLI would read its secret.
    func secretFile(_ name: String, _ text: String) -> String {
        FileManager.default.createFile(atPath: dir.file(name), contents: Data((text + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return dir.file(name)
    }

    /// Every file under the scratch directory, for a search for keys.
    func everyFile() -> [String] {
        (FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String] ?? []).map(dir.file).filter {
            var info = stat()
            return stat($0, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
    }

    /// The customers of a small plaintext database, with e-mail addresses to seal.
    func plaintextSource() throws {
        let plain = try Connection(path: dir.file("source.sqlite"), configuration: .plaintext)
        try plain.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
            INSERT INTO customer(name, email) VALUES ('Ada', 'ada@example.com'), ('Grace', 'grace@example.com');
            """)
        plain.close()
    }

    @Test func aServiceMigratesAndReadsWithNoReadableKeyOnDisk() async throws {
        try plaintextSource()
        let dbPass = secretFile("db.pass", "db passphrase " + UUID().uuidString)
        let fieldPass = "field passphrase " + UUID().uuidString
        // Keys made plain, wrapped, and the plain files removed: the test knows the keys to search for.
        #expect(try await run(["keygen", "--out", "plain.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "plain.keyring"]).status == 0)
        let keyHex = Fixtures.hex(ofKeyFile: dir.file("plain.key"))
        let fieldHex = String(decoding: Fixtures.bytes(of: dir.file("plain.keyring")), as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("key ") }!.split(separator: " ").last.map(String.init)!
        let wrapKey = try await run(["key", "wrap", "--in", "plain.key", "--out", "db.wrapped", "--passphrase-command", "cat '\(dbPass)'"])
        #expect(wrapKey.status == 0 && wrapKey.stdout.contains("shred -u plain.key"), "\(wrapKey.stderr)")
        let wrapKeyring = try await run(["key", "wrap", "--in", "plain.keyring", "--out", "fields.wrapped", "--passphrase-stdin"], input: fieldPass + "\n")
        #expect(wrapKeyring.status == 0 && wrapKeyring.stdout.contains("field keyring"), "\(wrapKeyring.stderr)")
        unlink(dir.file("plain.key"))
        unlink(dir.file("plain.keyring"))

        let key = ["--key-file", "db.wrapped", "--passphrase-command", "cat '\(dbPass)'"]
        let keyring = ["--field-keys", "fields.wrapped", "--field-keys-passphrase-stdin"]
        let imported = try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--seal", "customer.email"] + key + keyring,
                                     input: fieldPass + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        try "ALTER TABLE customer ADD COLUMN tier TEXT NOT NULL DEFAULT 'basic';\n"
            .write(toFile: dir.file("Migrations/0001_tier.sql"), atomically: true, encoding: .utf8)
        let migrated = try await run(["migrate", "--database", "app.db"] + key + keyring, input: fieldPass + "\n")
        #expect(migrated.status == 0, "\(migrated.stderr)")

        let opened = try await run(["sql", "--database", "app.db", "--csv"] + key + keyring + ["SELECT id, name, strongroom_open(email, 'customer', 'email', id) AS email, tier FROM customer ORDER BY id"],
                                   input: fieldPass + "\n")
        #expect(opened.stdout == "id,name,email,tier\n1,Ada,ada@example.com,basic\n2,Grace,grace@example.com,basic\n", "\(opened.stdout) \(opened.stderr)")
        let status = try await run(["status", "--database", "app.db"] + key)
        #expect(status.stdout.contains("key source    wrapped key file") && status.stdout.contains("customer.email"), "\(status.stdout)")
        let json = try await run(["status", "--database", "app.db", "--json"] + key)
        #expect(json.stdout.contains("\"key_source\" : \"wrapped key file\""), "\(json.stdout)")

        // Nothing on disk holds a key in the clear; nothing printed does either.
        let printed = [wrapKey, wrapKeyring, imported, migrated, opened, status, json].map { $0.stdout + $0.stderr }.joined()
        for secret in [keyHex, keyHex.uppercased(), fieldHex, fieldPass, String(decoding: Fixtures.bytes(of: dbPass).dropLast(), as: UTF8.self)] {
            #expect(!printed.contains(secret), "a key or passphrase was printed")
        }
        for file in everyFile() where file != dbPass {
            #expect(!Fixtures.contains(Fixtures.bytes(of: file), keyHex) && !Fixtures.contains(Fixtures.bytes(of: file), fieldHex), "a key lies in \(file)")
        }
    }

    @Test func keysAndKeyringsFromCommandsAndTheCommandsOwnMessages() async throws {
        try plaintextSource()
        #expect(try await run(["keygen", "--out", "vault/db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "vault/fields.keyring"]).status == 0)
        let imported = try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--seal", "customer.email",
                                      "--key-command", "cat vault/db.key", "--field-keys-command", "cat vault/fields.keyring"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let opened = try await run(["sql", "--database", "app.db", "--csv", "--key-command", "cat vault/db.key", "--field-keys-command", "cat vault/fields.keyring",
                                    "SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer ORDER BY id"])
        #expect(opened.stdout == "id,email\n1,ada@example.com\n2,grace@example.com\n", "\(opened.stdout) \(opened.stderr)")
        let status = try await run(["status", "--database", "app.db", "--key-command", "cat vault/db.key"])
        #expect(status.stdout.contains("key source    key command"), "\(status.stdout)")
        // A passphrase database through --passphrase-command.
        let passphrased = try await run(["import", "--from", "source.sqlite", "--database", "pass.db", "--passphrase-command", "echo 'the db passphrase'"])
        #expect(passphrased.status == 0, "\(passphrased.stderr)")
        #expect(try await run(["status", "--database", "pass.db", "--passphrase-stdin"], input: "the db passphrase\n").status == 0)

        // The command's own stderr reaches the user, then one sentence of ours.
        let denied = try await run(["status", "--database", "app.db", "--key-command", "echo 'vault: permission denied for app/db' >&2; exit 2"])
        #expect(denied.status == 69, "\(denied.stderr)")
        #expect(denied.stderr.hasPrefix("vault: permission denied for app/db\n") && denied.stderr.contains("exit status 2"), "\(denied.stderr)")
        let json = try await run(["status", "--database", "app.db", "--json", "--key-command", "exit 1"])
        #expect(json.stdout.contains("\"code\" : \"key_command_failed\""), "\(json.stdout)")
    }

    /// Item 4: a new passphrase on a wrapped key rewrites one small file; a
    /// new database key rewrites every page; a new field key re-seals values.
    @Test func whatRotatesWhat() async throws {
        try plaintextSource()
        for (name, field) in [("db.key", false), ("fields.keyring", true)] {
            let made = try await run(["keygen", "--wrap", "--passphrase-stdin", "--out", name] + (field ? ["--field"] : []), input: "old\n")
            #expect(made.status == 0, "\(made.stderr)")
        }
        let key = ["--key-file", "db.key", "--passphrase-stdin"]
        let imported = try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--seal", "customer.email"] + key
                                     + ["--field-keys", "fields.keyring", "--field-keys-passphrase-command", "echo old"], input: "old\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        func sealedEmails() async throws -> [UInt8] {
            Array(try await run(["sql", "--database", "app.db", "--csv"] + key + ["SELECT hex(email) FROM customer ORDER BY id"], input: "old\n").stdout.utf8)
        }

        // 1. rewrap: the key file changes, the database not at all.
        let database = Fixtures.bytes(of: dir.file("app.db")), wrapped = Fixtures.bytes(of: dir.file("db.key"))
        let rewrapped = try await run(["key", "rewrap", "--file", "db.key", "--passphrase-stdin", "--new-passphrase-stdin"], input: "old\nnew\n")
        #expect(rewrapped.status == 0, "\(rewrapped.stderr)")
        #expect(Fixtures.bytes(of: dir.file("app.db")) == database && Fixtures.bytes(of: dir.file("db.key")) != wrapped)
        #expect(try await run(["status", "--database", "app.db"] + key, input: "old\n").status == 65)
        #expect(try await run(["status", "--database", "app.db"] + key, input: "new\n").status == 0)
        let reverted = try await run(["key", "rewrap", "--file", "db.key", "--passphrase-command", "echo new", "--new-passphrase-command", "echo old"])
        #expect(reverted.status == 0 && Fixtures.bytes(of: dir.file("app.db")) == database, "\(reverted.stderr)")

        // 2. rekey: every page is rewritten under the new key (wrapped too); the old key no longer opens it.
        #expect(try await run(["keygen", "--wrap", "--passphrase-command", "echo newer", "--out", "new.key"]).status == 0)
        let sealedBefore = try await sealedEmails()
        let rekeyed = try await run(["rekey", "--database", "app.db", "--new-key-file", "new.key", "--new-passphrase-command", "echo newer"] + key, input: "old\n")
        #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
        let after = Fixtures.bytes(of: dir.file("app.db"))
        #expect(after.count == database.count && zip(after, database).filter { $0 != $1 }.count > after.count / 2)
        #expect(try await run(["status", "--database", "app.db"] + key, input: "old\n").status == 65)
        let newKey = ["--key-file", "new.key", "--passphrase-command", "echo newer"]
        #expect(Array(try await run(["sql", "--database", "app.db", "--csv"] + newKey + ["SELECT hex(email) FROM customer ORDER BY id"]).stdout.utf8) == sealedBefore,
                "a rekey re-encrypts pages, not sealed values")

        // 3. a new field key: add, activate (the wrapped keyring stays wrapped), rotate re-seals every value.
        let keyring = ["--field-keys", "fields.keyring", "--field-keys-passphrase-command", "echo old"]
        #expect(try await run(["fields", "add-key"] + keyring).status == 0)
        #expect(try await run(["fields", "activate", "--key-id", "2"] + keyring).status == 0)
        #expect(WrappedKeyFile.isWrapped(at: dir.file("fields.keyring")))
        let rotated = try await run(["fields", "rotate", "--database", "app.db"] + newKey + keyring)
        #expect(rotated.status == 0 && rotated.stdout.contains("Re-sealed 2 values"), "\(rotated.stdout) \(rotated.stderr)")
        let resealed = Array(try await run(["sql", "--database", "app.db", "--csv"] + newKey + ["SELECT hex(email) FROM customer ORDER BY id"]).stdout.utf8)
        #expect(resealed != sealedBefore && resealed.count == sealedBefore.count)
        let opened = try await run(["sql", "--database", "app.db", "--csv"] + newKey + keyring + ["SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer ORDER BY id"])
        #expect(opened.stdout == "id,email\n1,ada@example.com\n2,grace@example.com\n", "\(opened.stderr)")
    }

    /// Item 5: each bad input is one sentence that says what to do, with
    /// its exit code, and leaves every file as it was.
    @Test func badInputIsATypedErrorAndNothingIsWritten() async throws {
        try plaintextSource()
        #expect(try await run(["keygen", "--wrap", "--passphrase-stdin", "--out", "db.key"], input: "right\n").status == 0)
        #expect(try await run(["keygen", "--out", "plain.key"]).status == 0)
        #expect(try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--key-file", "db.key", "--passphrase-stdin"], input: "right\n").status == 0)
        let wrapped = Fixtures.bytes(of: dir.file("db.key"))
        var tampered = wrapped
        tampered[100] ^= 0x40
        FileManager.default.createFile(atPath: dir.file("tampered.key"), contents: Data(tampered), attributes: [.posixPermissions: 0o600])
        FileManager.default.createFile(atPath: dir.file("truncated.key"), contents: Data(wrapped[0..<40]), attributes: [.posixPermissions: 0o600])
        FileManager.default.createFile(atPath: dir.file("open.key"), contents: Data(wrapped), attributes: [.posixPermissions: 0o644])
        let status = ["status", "--database", "app.db"]
        let cases: [(String, [String], String?, Int32, String)] = [
            ("wrong passphrase", status + ["--key-file", "db.key", "--passphrase-stdin"], "wrong\n", 65, "does not unwrap"),
            ("tampered file", status + ["--key-file", "tampered.key", "--passphrase-stdin"], "right\n", 65, "altered"),
            ("truncated file", status + ["--key-file", "truncated.key", "--passphrase-stdin"], "right\n", 65, "truncated"),
            ("readable by others", status + ["--key-file", "open.key", "--passphrase-stdin"], "right\n", 77, "chmod 600"),
            ("no passphrase, no terminal", status + ["--key-file", "db.key"], nil, 66, "--passphrase-stdin or --passphrase-command"),
            ("empty passphrase", status + ["--key-file", "db.key", "--passphrase-stdin"], "\n", 66, "empty"),
            ("passphrase for a plain file", status + ["--key-file", "plain.key", "--passphrase-stdin"], "right\n", 64, "is not wrapped"),
            ("passphrase command fails", status + ["--key-file", "db.key", "--passphrase-command", "exit 4"], nil, 69, "exit status 4"),
            ("passphrase command hangs", status + ["--key-file", "db.key", "--passphrase-command", "sleep 60", "--command-timeout", "1"], nil, 69, "within 1 s"),
            ("key command prints nothing", status + ["--key-command", "true"], nil, 66, "printed nothing"),
            ("key command prints a passphrase", status + ["--key-command", "echo right"], nil, 65, "64 lowercase hex"),
            ("two sources", status + ["--key-file", "plain.key", "--key-command", "cat plain.key"], nil, 64, "exactly one of"),
            ("rewrap, wrong passphrase", ["key", "rewrap", "--file", "db.key", "--passphrase-stdin", "--new-passphrase-command", "echo x"], "wrong\n", 65, "does not unwrap"),
            ("rewrap of a plain file", ["key", "rewrap", "--file", "plain.key", "--passphrase-stdin", "--new-passphrase-command", "echo x"], "right\n", 64, "key wrap"),
            ("wrap twice", ["key", "wrap", "--in", "db.key", "--out", "again.key", "--passphrase-stdin"], "x\n", 64, "wrapped already"),
            ("keygen, empty passphrase", ["keygen", "--wrap", "--passphrase-stdin", "--out", "new.key"], "\n", 66, "empty"),
            ("keygen, failing command", ["keygen", "--wrap", "--passphrase-command", "exit 1", "--out", "new.key"], nil, 69, "exit status 1"),
            ("keygen, no terminal", ["keygen", "--wrap", "--out", "new.key"], nil, 66, "not a terminal"),
        ]
        // Every file's bytes; a lock file beside a key file (`PATH.lock`, empty, as a
        // keyring's) may appear: it holds nothing and changes nothing.
        func files() -> [String: [UInt8]] {
            Dictionary(uniqueKeysWithValues: everyFile().filter { !$0.hasSuffix(".lock") }.map { ($0, Fixtures.bytes(of: $0)) })
        }
        let before = files()
        for (what, arguments, input, expected, saying) in cases {
            let result = try await run(arguments, input: input)
            #expect(result.status == expected, "\(what): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(saying), "\(what): \(result.stderr)")
            // One sentence of ours; a usage error is ArgumentParser's "Error: …" line, then the usage.
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.contains(saying) && (result.stderr.hasPrefix("Error: ") ? expected == 64 : result.stderr == first + "\n"),
                    "\(what): one sentence, not \(result.stderr)")
            #expect(!result.stderr.contains("right") || what == "passphrase for a plain file", "\(what): the passphrase in the message")
            let now = files()
            let changed = Set(now.keys).union(before.keys).filter { now[$0] != before[$0] }
            #expect(changed.isEmpty, "\(what) changed or made a file: \(changed.sorted())")
        }
    }

    /// On a terminal: the passphrase is asked for, typed twice for a new
    /// file, and never echoed (driven through a pseudo-terminal).
    @Test func onATerminalThePassphraseIsPromptedForAndNotEchoed() async throws {
        // Typed as soon as each prompt shows: were echo turned off after the
        // prompt, some of these would be echoed (a race, so several tries).
        var screens: [String] = []
        for attempt in 0..<4 {
            let keygen = try await PseudoTerminal.run(Fixtures.strongroomBinary, ["keygen", "--wrap", "--out", "tty\(attempt).key"], in: dir.path, steps: [
                .expect("New passphrase for the new key file:"), .type("typed secret\n"), .expect("Again:"), .type("typed secret\n"),
            ])
            #expect(keygen.status == 0 && keygen.screen.contains("Wrote a new database key to tty\(attempt).key"), "\(keygen.screen)")
            screens.append(keygen.screen)
        }
        try FileManager.default.moveItem(atPath: dir.file("tty0.key"), toPath: dir.file("tty.key"))
        let rewrap = try await PseudoTerminal.run(Fixtures.strongroomBinary, ["key", "rewrap", "--file", "tty.key"], in: dir.path, steps: [
            .expect("Current passphrase for tty.key:"), .type("typed secret\n"), .expect("New passphrase"), .type("other\n"),
            .expect("Again:"), .type("different\n"),
        ])
        #expect(rewrap.status == 64 && rewrap.screen.contains("differ"), "\(rewrap.screen)")
        for screen in screens + [rewrap.screen] {
            #expect(!screen.contains("typed secret") && !screen.contains("other") && !screen.contains("different"), "a passphrase was echoed: \(screen)")
        }
        // What was typed at the prompt wrapped the file; the failed rewrap left it so.
        #expect(try await run(["key", "rewrap", "--file", "tty.key", "--passphrase-stdin", "--new-passphrase-command", "echo z"], input: "typed secret\n").status == 0)
    }

    /// A command that asks on the terminal itself (`read < /dev/tty`, as an
    /// askpass script does) gets the terminal while it runs, and the
    /// terminal comes back after: it is not stopped as a background job.
    @Test func aKeyCommandThatAsksOnTheTerminalGetsIt() async throws {
        try plaintextSource()
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--key-file", "db.key"]).status == 0)
        let result = try await PseudoTerminal.run(Fixtures.strongroomBinary, ["status", "--database", "app.db", "--command-timeout", "10",
            "--key-command", Self.askingCommand], in: dir.path, steps: [.expect("Unlock:"), .type("open\n")])
        #expect(result.status == 0 && result.screen.contains("key source    key command"), "\(result.screen)")
    }

    /// A key command that asks on the terminal, and prints the key when told `open`.
    static let askingCommand = "printf 'Unlock: ' > /dev/tty; read -r answer < /dev/tty; [ \"$answer\" = open ] && cat db.key"

    /// Every option that takes a key file takes a wrapped one: a systemd
    /// credential holding a wrapped key file, and the new key of a backup.
    @Test func aWrappedCredentialAndAWrappedNewKeyFileAreTaken() async throws {
        try plaintextSource()
        #expect(try await run(["keygen", "--wrap", "--passphrase-command", "echo first", "--out", "db.key"]).status == 0)
        #expect(try await run(["import", "--from", "source.sqlite", "--database", "app.db", "--key-file", "db.key", "--passphrase-command", "echo first"]).status == 0)
        let credentials = dir.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: dir.file("db.key"), toPath: credentials + "/app-db-key")
        chmod(credentials + "/app-db-key", 0o400)
        chmod(credentials, 0o700)
        let status = try await ProcessRunner.run(Fixtures.strongroomBinary, ["status", "--database", "app.db", "--key-credential", "app-db-key", "--passphrase-command", "echo first"],
                                                 environment: ["CREDENTIALS_DIRECTORY": credentials], currentDirectory: dir.path)
        #expect(status.status == 0 && status.stdout.contains("key source    wrapped systemd credential"), "\(status.stdout) \(status.stderr)")

        #expect(try await run(["keygen", "--wrap", "--passphrase-command", "echo second", "--out", "backup.key"]).status == 0)
        let backup = try await run(["backup", "--database", "app.db", "--to", "copy.db", "--new-key-file", "backup.key", "--new-passphrase-command", "echo second",
                                    "--key-file", "db.key", "--passphrase-command", "echo first"])
        #expect(backup.status == 0, "\(backup.stderr)")
        let copy = try await run(["sql", "--database", "copy.db", "--csv", "--key-file", "backup.key", "--passphrase-command", "echo second", "SELECT name FROM customer ORDER BY id"])
        #expect(copy.stdout == "name\nAda\nGrace\n", "\(copy.stdout) \(copy.stderr)")
        let noPassphrase = try await run(["backup", "--database", "app.db", "--to", "other.db", "--new-key-file", "backup.key", "--key-file", "db.key", "--passphrase-command", "echo first"])
        #expect(noPassphrase.status == 66 && !FileManager.default.fileExists(atPath: dir.file("other.db")), "\(noPassphrase.stderr)")
    }
}
