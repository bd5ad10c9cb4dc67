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
    func strongroom(_ arguments: [String], credentials: String?) throws -> ProcessResult {
        let environment = credentials.map { ["CREDENTIALS_DIRECTORY=\($0)"] } ?? []
        return try ProcessRunner.run("/usr/bin/env", ["-u", "CREDENTIALS_DIRECTORY"] + environment + [Fixtures.strongroomBinary] + arguments,
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

    @Test func aServiceOpensItsDatabaseWithAnEncryptedCredentialAndNoKeyOnDisk() throws {
        let (database, hex) = try makeDatabase()
        let creds = try #require(ProcessRunner.which("systemd-creds"), "systemd-creds (systemd 250 or later)")
        let sealed = try ProcessRunner.run(creds, ["encrypt", "--with-key=host", "--name=app-db-key", dir.file("made.key"), dir.file("app-db-key.cred")])
        #expect(sealed.status == 0, "systemd-creds encrypt: \(sealed.stderr)")
        // What lies on disk from now on: the database and the sealed credential, no key.
        unlink(dir.file("made.key"))
        #expect(!Fixtures.contains(Fixtures.bytes(of: dir.file("app-db-key.cred")), hex))

        // What systemd does at start-up for LoadCredentialEncrypted=app-db-key:…
        let credentials = dir.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        chmod(credentials, 0o700)
        let opened = try ProcessRunner.run(creds, ["decrypt", "--with-key=host", "--name=app-db-key", dir.file("app-db-key.cred"), credentials + "/app-db-key"])
        #expect(opened.status == 0, "systemd-creds decrypt: \(opened.stderr)")
        chmod(credentials + "/app-db-key", 0o400)

        let status = try strongroom(["status", "--database", database, "--key-credential", "app-db-key"], credentials: credentials)
        #expect(status.status == 0 && status.stdout.contains("ledger"), "\(status.stdout) \(status.stderr)")
        let row = try strongroom(["sql", "--database", database, "--key-credential", "app-db-key", "SELECT memo FROM ledger"], credentials: credentials)
        #expect(row.stdout.contains("credential-marker"), "\(row.stdout) \(row.stderr)")
        #expect(!(status.stdout + status.stderr + row.stdout + row.stderr).contains(hex))
        // A credential sealed under another name does not open as this one.
        let renamed = try ProcessRunner.run(creds, ["decrypt", "--with-key=host", "--name=other-name", dir.file("app-db-key.cred"), dir.file("other")])
        #expect(renamed.status != 0)
    }

    @Test func aMissingOrOpenCredentialIsATypedErrorThatSaysWhatToDo() throws {
        let (database, hex) = try makeDatabase()
        let before = Fixtures.bytes(of: database)
        let good = Array((hex + "\n").utf8)
        var cases: [(String, ProcessResult, Int32, String)] = []
        func attempt(_ what: String, credentials: String?, name: String = "app-db-key", status: Int32, saying: String) throws {
            cases.append((what, try strongroom(["status", "--database", database, "--key-credential", name], credentials: credentials), status, saying))
        }
        try attempt("not a service", credentials: nil, status: 66, saying: "CREDENTIALS_DIRECTORY is not set")
        try attempt("no directory", credentials: dir.file("nowhere"), status: 66, saying: "does not exist")
        try attempt("open directory", credentials: try credentialsDirectory("app-db-key", good, directoryMode: 0o755), status: 77, saying: "chmod 700")
        try attempt("no such credential", credentials: try credentialsDirectory("other", good), status: 66, saying: "LoadCredentialEncrypted=app-db-key")
        try attempt("readable by others", credentials: try credentialsDirectory("app-db-key", good, fileMode: 0o644), status: 77, saying: "chmod 600")
        let malformed = dir.file("malformed")
        try FileManager.default.createDirectory(atPath: malformed, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: malformed + "/app-db-key", contents: Data("a passphrase, not a key\n".utf8))
        chmod(malformed + "/app-db-key", 0o400)
        chmod(malformed, 0o700)
        try attempt("not a key", credentials: malformed, status: 65, saying: "64 lowercase hex")
        try attempt("a path for a name", credentials: try credentialsDirectory("path", good), name: "../made.key", status: 64, saying: "file name")
        // Review: a name that would break the one-line error, and a credential
        // that is a dangling symbolic link (refused as a link, not reported missing).
        try attempt("a newline in the name", credentials: try credentialsDirectory("newline", good), name: "x\nstrongroom: forged", status: 64, saying: "file name")
        let linked = dir.file("linked")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        symlink(dir.file("nowhere.key"), linked + "/app-db-key")
        chmod(linked, 0o700)
        try attempt("a dangling symbolic link", credentials: linked, status: 77, saying: "symbolic link")
        for (what, result, status, saying) in cases {
            #expect(result.status == status && result.stderr.contains(saying), "\(what): \(result.status) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(what): \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains(hex), "\(what): the key was shown")
        }
        #expect(Fixtures.bytes(of: database) == before)
    }
}
