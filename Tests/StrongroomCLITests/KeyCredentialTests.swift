import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 27, item 2: the key as a systemd credential. `systemd-creds encrypt
/// --with-key=host` seals the key file; what systemd would do at start-up
/// (decrypt it into the service's private `$CREDENTIALS_DIRECTORY`) is done
/// here with `systemd-creds decrypt`; `--key-credential NAME` opens the
/// database with it, and no readable key is left on disk.
@Suite("--key-credential: systemd credentials")
struct KeyCredentialTests {
    let dir = TemporaryDirectory()

    /// `strongroom ARGUMENTS` with `$CREDENTIALS_DIRECTORY` set to `credentials`, or unset.
    func strongroom(_ arguments: [String], credentials: String?) async throws -> ProcessResult {
        let environment = credentials.map { ["CREDENTIALS_DIRECTORY=\($0)"] } ?? []
        return try await ProcessRunner.run("/usr/bin/env", ["-u", "CREDENTIALS_DIRECTORY"] + environment + [Fixtures.strongroomBinary] + arguments,
                                           currentDirectory: dir.path)
    }

    /// A database under a new key; the key file's text.
    func makeDatabase() throws -> (database: String, hex: String) {
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: dir.file("made.key"))
        let hex = Fixtures.hex(ofKeyFile: dir.file("made.key"))
        try Connection(path: dir.file("app.db"), configuration: Configuration(key: key))
            .execute(sql: "CREATE TABLE ledger(id INTEGER PRIMARY KEY, memo TEXT); INSERT INTO ledger(memo) VALUES ('credential-marker')")
        return (dir.file("app.db"), hex)
    }

    /// A private credentials directory holding `contents` as `name`, mode 0400, as systemd makes it.
    func credentialsDirectory(_ name: String, _ contents: [UInt8], directoryMode: mode_t = 0o700, fileMode: mode_t = 0o400) throws -> String {
        let credentials = dir.file("credentials-\(name)-\(String(directoryMode, radix: 8))-\(String(fileMode, radix: 8))")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: credentials + "/" + name, contents: Data(contents))
        chmod(credentials + "/" + name, fileMode)
        chmod(credentials, directoryMode)
        return credentials
    }

    @Test func aServiceOpensItsDatabaseWithAnEncryptedCredentialAndNoKeyOnDisk() async throws {
        let (database, hex) = try makeDatabase()
        let creds = try #require(ProcessRunner.which("systemd-creds"), "systemd-creds (systemd 250 or later)")
        let sealed = try await ProcessRunner.run(creds, ["encrypt", "--with-key=host", "--name=app-db-key", dir.file("made.key"), dir.file("app-db-key.cred")])
        #expect(sealed.status == 0, "systemd-creds encrypt: \(sealed.stderr)")
        // What lies on disk from now on: the database and the sealed credential, no key.
        unlink(dir.file("made.key"))
        #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file("app-db-key.cred")), hex))

        // What systemd does at start-up for LoadCredentialEncrypted=app-db-key:…
        let credentials = dir.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        chmod(credentials, 0o700)
        let opened = try await ProcessRunner.run(creds, ["decrypt", "--with-key=host", "--name=app-db-key", dir.file("app-db-key.cred"), credentials + "/app-db-key"])
        #expect(opened.status == 0, "systemd-creds decrypt: \(opened.stderr)")
        chmod(credentials + "/app-db-key", 0o400)

        let status = try await strongroom(["status", "--database", database, "--key-credential", "app-db-key"], credentials: credentials)
        #expect(status.status == 0 && status.stdout.contains("ledger"), "\(status.stdout) \(status.stderr)")
        let row = try await strongroom(["sql", "--database", database, "--key-credential", "app-db-key", "SELECT memo FROM ledger"], credentials: credentials)
        #expect(row.stdout.contains("credential-marker"), "\(row.stdout) \(row.stderr)")
        #expect(!(status.stdout + status.stderr + row.stdout + row.stderr).contains(hex))
        // A credential sealed under another name does not open as this one.
        let renamed = try await ProcessRunner.run(creds, ["decrypt", "--with-key=host", "--name=other-name", dir.file("app-db-key.cred"), dir.file("other")])
        #expect(renamed.status != 0)
    }

    @Test func aMissingOrOpenCredentialIsATypedErrorThatSaysWhatToDo() async throws {
        let (database, hex) = try makeDatabase()
        let before = Fixtures.bytes(of: database)
        let good = Array((hex + "\n").utf8)
        var cases: [(String, ProcessResult, Int32, String)] = []
        func attempt(_ what: String, credentials: String?, name: String = "app-db-key", status: Int32, saying: String) async throws {
            cases.append((what, try await strongroom(["status", "--database", database, "--key-credential", name], credentials: credentials), status, saying))
        }
        try await attempt("not a service", credentials: nil, status: 66, saying: "CREDENTIALS_DIRECTORY is not set")
        try await attempt("no directory", credentials: dir.file("nowhere"), status: 66, saying: "does not exist")
        try await attempt("open directory", credentials: try credentialsDirectory("app-db-key", good, directoryMode: 0o755), status: 77, saying: "chmod 700")
        try await attempt("no such credential", credentials: try credentialsDirectory("other", good), status: 66, saying: "LoadCredentialEncrypted=app-db-key")
        try await attempt("readable by others", credentials: try credentialsDirectory("app-db-key", good, fileMode: 0o644), status: 77, saying: "chmod 600")
        let malformed = dir.file("malformed")
        try FileManager.default.createDirectory(atPath: malformed, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: malformed + "/app-db-key", contents: Data("a passphrase, not a key\n".utf8))
        chmod(malformed + "/app-db-key", 0o400)
        chmod(malformed, 0o700)
        try await attempt("not a key", credentials: malformed, status: 65, saying: "64 lowercase hex")
        try await attempt("a path for a name", credentials: try credentialsDirectory("path", good), name: "../made.key", status: 64, saying: "file name")
        // Review: a name that would break the one-line error, and a credential
        // that is a dangling symbolic link (refused as a link, not reported missing).
        try await attempt("a newline in the name", credentials: try credentialsDirectory("newline", good), name: "x\nstrongroom: forged", status: 64, saying: "file name")
        let linked = dir.file("linked")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        symlink(dir.file("nowhere.key"), linked + "/app-db-key")
        chmod(linked, 0o700)
        try await attempt("a dangling symbolic link", credentials: linked, status: 77, saying: "symbolic link")
        for (what, result, status, saying) in cases {
            #expect(result.status == status && result.stderr.contains(saying), "\(what): \(result.status) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(what): \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains(hex), "\(what): the key was shown")
        }
        #expect(Fixtures.bytes(of: database) == before)
    }

    // MARK: The field keyring as a credential (issue 38, item 2)

    /// A database with a sealed column (customer.email), made with a new key
    /// file `db.key` and keyring `fields.keyring`; their hex.
    func makeSealedDatabase() async throws -> (database: String, keyHex: String, keyringHex: String) {
        let plain = try Connection(path: dir.file("source.sqlite"), configuration: .plaintext)
        try plain.execute(sql: """
            CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
            INSERT INTO customer(name, email) VALUES ('Ada', 'ada@example.com'), ('Grace', 'grace@example.com');
            """)
        plain.close()
        #expect(try await strongroom(["keygen", "--out", "db.key"], credentials: nil).status == 0)
        #expect(try await strongroom(["keygen", "--field", "--out", "fields.keyring"], credentials: nil).status == 0)
        let imported = try await strongroom(["import", "--from", "source.sqlite", "--database", "app.db", "--seal", "customer.email",
                                             "--key-file", "db.key", "--field-keys", "fields.keyring"], credentials: nil)
        #expect(imported.status == 0, "\(imported.stderr)")
        let keyringHex = String(decoding: Fixtures.bytes(of: dir.file("fields.keyring")), as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("key ") }!.split(separator: " ").last.map(String.init)!
        return (dir.file("app.db"), Fixtures.hex(ofKeyFile: dir.file("db.key")), keyringHex)
    }

    static let opened = "id,email\n1,ada@example.com\n2,grace@example.com\n"

    /// Both keys sealed with `systemd-creds encrypt --with-key=host`, the
    /// files removed, and decrypted as systemd would at start-up into a private
    /// directory: `--key-credential` and `--field-keys-credential` open the
    /// database and its sealed column, with no readable key on disk.
    @Test func aServiceReadsSealedColumnsWithTheKeyAndTheKeyringAsEncryptedCredentials() async throws {
        let (database, keyHex, keyringHex) = try await makeSealedDatabase()
        let creds = try #require(ProcessRunner.which("systemd-creds"), "systemd-creds (systemd 250 or later)")
        for (file, name) in [("db.key", "app-db-key"), ("fields.keyring", "app-fields")] {
            let sealed = try await ProcessRunner.run(creds, ["encrypt", "--with-key=host", "--name=\(name)", dir.file(file), dir.file(name + ".cred")])
            #expect(sealed.status == 0, "systemd-creds encrypt: \(sealed.stderr)")
            unlink(dir.file(file))
            #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file(name + ".cred")), keyHex))
            #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file(name + ".cred")), keyringHex))
        }
        let credentials = dir.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        chmod(credentials, 0o700)
        for name in ["app-db-key", "app-fields"] {
            let opened = try await ProcessRunner.run(creds, ["decrypt", "--with-key=host", "--name=\(name)", dir.file(name + ".cred"), credentials + "/" + name])
            #expect(opened.status == 0, "systemd-creds decrypt: \(opened.stderr)")
            chmod(credentials + "/" + name, 0o400)
        }

        let keys = ["--key-credential", "app-db-key", "--field-keys-credential", "app-fields"]
        let row = try await strongroom(["sql", "--database", database, "--csv"] + keys + ["SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer ORDER BY id"], credentials: credentials)
        #expect(row.status == 0 && row.stdout == Self.opened, "\(row.stdout) \(row.stderr)")
        // Without the keyring the column is sealed: the credential did the opening.
        let sealed = try await strongroom(["sql", "--database", database, "--csv", "--key-credential", "app-db-key", "SELECT typeof(email) FROM customer"],
                                          credentials: credentials)
        #expect(sealed.stdout == "typeof(email)\nblob\nblob\n", "\(sealed.stdout) \(sealed.stderr)")
        let verify = try await strongroom(["verify", "--database", database] + keys, credentials: credentials)
        #expect(verify.stdout.contains("Every sealed value opens with the systemd credential app-fields."), "\(verify.stdout) \(verify.stderr)")
        // A plain credential takes no passphrase.
        let passphrase = try await strongroom(["sql", "--database", database, "--csv"] + keys + ["--field-keys-passphrase-command", "echo x", "SELECT 1"],
                                              credentials: credentials)
        #expect(passphrase.status == 64 && passphrase.stderr.contains("not wrapped"), "\(passphrase.status) \(passphrase.stderr)")
        for result in [row, sealed, verify, passphrase] {
            #expect(!(result.stdout + result.stderr).contains(keyHex) && !(result.stdout + result.stderr).contains(keyringHex), "a key was shown")
        }
        for file in FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String] ?? [] where !file.hasPrefix("credentials") {
            #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file(file)), keyringHex), "the keyring lies in \(file)")
        }
    }

    /// A credential holding a wrapped keyring is unwrapped with
    /// `--field-keys-passphrase-command` (or standard input), as a wrapped `--field-keys` is.
    @Test func aWrappedKeyringCredentialTakesItsPassphrase() async throws {
        let (database, _, keyringHex) = try await makeSealedDatabase()
        let wrapped = try await strongroom(["key", "wrap", "--in", "fields.keyring", "--out", "fields.wrapped", "--passphrase-command", "echo field-pass"], credentials: nil)
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        let credentials = try credentialsDirectory("app-fields", Fixtures.bytes(of: dir.file("fields.wrapped")))
        let keys = ["--key-file", "db.key", "--field-keys-credential", "app-fields"]
        let query = ["SELECT id, strongroom_open(email, 'customer', 'email', id) AS email FROM customer ORDER BY id"]
        let byCommand = try await strongroom(["sql", "--database", database, "--csv"] + keys + ["--field-keys-passphrase-command", "echo field-pass"] + query,
                                             credentials: credentials)
        #expect(byCommand.status == 0 && byCommand.stdout == Self.opened, "\(byCommand.stdout) \(byCommand.stderr)")
        let byInput = try await ProcessRunner.run("/usr/bin/env", ["CREDENTIALS_DIRECTORY=\(credentials)", Fixtures.strongroomBinary, "sql", "--database", database, "--csv"]
                                                  + keys + ["--field-keys-passphrase-stdin"] + query, input: "field-pass\n", currentDirectory: dir.path)
        #expect(byInput.status == 0 && byInput.stdout == Self.opened, "\(byInput.stdout) \(byInput.stderr)")
        let wrong = try await strongroom(["sql", "--database", database, "--csv"] + keys + ["--field-keys-passphrase-command", "echo other"] + query,
                                         credentials: credentials)
        #expect(wrong.status == 65, "\(wrong.status) \(wrong.stderr)")
        let none = try await strongroom(["sql", "--database", database, "--csv"] + keys + query, credentials: credentials)
        #expect(none.status == 66 && none.stderr.contains("--field-keys-passphrase-stdin"), "\(none.status) \(none.stderr)")
        for result in [byCommand, byInput, wrong, none] {
            #expect(!(result.stdout + result.stderr).contains(keyringHex), "the keyring was shown")
        }
    }

    @Test func anOpenKeyringCredentialsDirectoryIsOneClearLineAndNothingOfTheKey() async throws {
        let (database, keyHex, keyringHex) = try await makeSealedDatabase()
        let keyring = Fixtures.bytes(of: dir.file("fields.keyring"))
        let before = Fixtures.bytes(of: database)
        var cases: [(String, ProcessResult, Int32, String)] = []
        func attempt(_ what: String, credentials: String?, name: String = "app-fields", status: Int32, saying: String) async throws {
            let result = try await strongroom(["sql", "--database", database, "--csv", "--key-file", "db.key", "--field-keys-credential", name,
                                               "SELECT email FROM customer"], credentials: credentials)
            cases.append((what, result, status, saying))
        }
        try await attempt("world-readable directory", credentials: try credentialsDirectory("app-fields", keyring, directoryMode: 0o755), status: 77, saying: "chmod 700")
        try await attempt("world-readable credential", credentials: try credentialsDirectory("app-fields", keyring, fileMode: 0o644), status: 77, saying: "chmod 600")
        try await attempt("not a service", credentials: nil, status: 66, saying: "CREDENTIALS_DIRECTORY is not set")
        try await attempt("no such credential", credentials: try credentialsDirectory("other", keyring), status: 66, saying: "LoadCredentialEncrypted=app-fields")
        try await attempt("a database key for a keyring", credentials: try credentialsDirectory("app-fields", Fixtures.bytes(of: dir.file("db.key"))),
                          status: 65, saying: "malformed")
        try await attempt("a path for a name", credentials: try credentialsDirectory("path", keyring), name: "../fields.keyring", status: 64, saying: "file name")
        for (what, result, status, saying) in cases {
            #expect(result.status == status && result.stderr.contains(saying), "\(what): \(result.status) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(what): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(what): \(result.stdout)")
            #expect(!(result.stdout + result.stderr).contains(keyringHex) && !(result.stdout + result.stderr).contains(keyHex), "\(what): a key was shown")
        }
        #expect(Fixtures.bytes(of: database) == before)
    }

    @Test func theKeyringComesFromOneSourceOnly() async throws {
        let keyring = try credentialsDirectory("app-fields", Array("strongroom field keyring 1\n".utf8))
        for other in [["--field-keys", "fields.keyring"], ["--field-keys-command", "cat fields.keyring"]] {
            let both = try await strongroom(["sql", "--database", "app.db", "--key-file", "db.key", "--field-keys-credential", "app-fields"] + other + ["SELECT 1"],
                                            credentials: keyring)
            #expect(both.status == 64 && both.stderr.contains("only one of --field-keys, --field-keys-credential and --field-keys-command"),
                    "\(other[0]): \(both.status) \(both.stderr)")
        }
        // The keyring file commands change cannot be a credential.
        let added = try await strongroom(["fields", "add-key", "--field-keys-credential", "app-fields"], credentials: keyring)
        #expect(added.status == 64 && added.stderr.contains("--field-keys PATH"), "\(added.status) \(added.stderr)")
        // fields rotate without any keyring names the credential among the ways to give one.
        let rotate = try await strongroom(["fields", "rotate", "--database", "app.db", "--key-file", "db.key"], credentials: nil)
        #expect(rotate.status == 64 && rotate.stderr.contains("--field-keys-credential"), "\(rotate.status) \(rotate.stderr)")
    }
}
