import Foundation
import Strongroom
import StrongroomFields
import Testing

/// Issue 38, item 2: keys as operators keep them. A missing, wrong or
/// world-readable key stops the start with one clear line and a non-zero
/// exit; keys from systemd credentials work; and nothing the process prints
/// holds a key or a sealed value.
@Suite("Keys at start: credentials, refusals, nothing printed")
struct StartupKeyTests {
    let fixture: ServiceFixture

    init() throws { fixture = try ServiceFixture() }

    /// Starts the service with `arguments`, expects it to exit non-zero without listening, and returns its one line.
    func refusesToStart(_ arguments: [String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let service = try ServiceProcess(fixture, arguments, label: "refused", environment: environment)
        let status = service.waitForExit(timeout: .seconds(60))
        #expect(status != nil && status != 0, "exit status \(String(describing: status))", sourceLocation: sourceLocation)
        let lines = (service.output + service.errors).split(separator: "\n")
        #expect(lines.count == 1, "\(lines)", sourceLocation: sourceLocation)
        #expect(ServiceProcess.listeningPort(in: service.errors) == nil, sourceLocation: sourceLocation)
        let line = String(lines.first ?? "")
        for secret in [fixture.keyHex] + fixture.fieldKeyHex {
            #expect(!line.contains(secret), sourceLocation: sourceLocation)
        }
        return line
    }

    /// A database made by the service (and stopped), so that a wrong key has something to be wrong for.
    func makeDatabase() throws {
        let service = try ServiceProcess.started(fixture)
        #expect(try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com"}"#).status == 201)
        #expect(service.terminate().status == 0)
    }

    @Test func aMissingKeyFile() throws {
        let line = try refusesToStart(["--database", fixture.database, "--key-file", fixture.path("nowhere.key"), "--field-keys", fixture.keyringFile])
        #expect(line.contains("nowhere.key"))
        #expect(!FileManager.default.fileExists(atPath: fixture.database))
    }

    @Test func aWrongDatabaseKey() throws {
        try makeDatabase()
        try KeyFile.write(DatabaseKey.generate(), to: fixture.path("other.key"))
        let line = try refusesToStart(["--database", fixture.database, "--key-file", fixture.path("other.key"), "--field-keys", fixture.keyringFile])
        #expect(line.lowercased().contains("key"))
    }

    @Test func aWrongFieldKeyring() throws {
        try makeDatabase()
        try FieldKeyring.generate().write(to: fixture.path("other.keyring"))
        let line = try refusesToStart(["--database", fixture.database, "--key-file", fixture.keyFile, "--field-keys", fixture.path("other.keyring")])
        #expect(line.contains("keyring"))
    }

    @Test func worldReadableKeys() throws {
        chmod(fixture.keyFile, 0o644)
        let keyLine = try refusesToStart(["--database", fixture.database] + fixture.keyArguments)
        #expect(keyLine.contains("chmod"))
        chmod(fixture.keyFile, 0o600)
        chmod(fixture.keyringFile, 0o604)
        let keyringLine = try refusesToStart(["--database", fixture.database] + fixture.keyArguments)
        #expect(keyringLine.contains("chmod"))
    }

    @Test func noKeyOptionIsAUsageError() throws {
        let service = try ServiceProcess(fixture, ["--database", fixture.database, "--field-keys", fixture.keyringFile], label: "usage")
        let status = service.waitForExit()
        #expect(status == 64)
        #expect(service.errors.contains("--key-file"))
    }

    /// A private directory holding `files` as systemd makes `$CREDENTIALS_DIRECTORY`: mode 0700, files 0400,
    /// each decrypted with `systemd-creds` from a credential encrypted to this host's key (the unit's `LoadCredentialEncrypted=`).
    func credentialsDirectory(_ files: [String: String], directoryMode: mode_t = 0o700) throws -> String {
        let directory = fixture.path("credentials-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        chmod(directory, 0o700)
        for (name, source) in files {
            let encrypted = fixture.path("\(name).cred")
            let encrypt = try runCommand("/usr/bin/systemd-creds", ["encrypt", "--with-key=host", "--name=\(name)", source, encrypted])
            #expect(encrypt.status == 0, "\(encrypt.output)")
            let decrypt = try runCommand("/usr/bin/systemd-creds", ["decrypt", "--name=\(name)", encrypted, directory + "/" + name])
            #expect(decrypt.status == 0, "\(decrypt.output)")
            chmod(directory + "/" + name, 0o400)
        }
        chmod(directory, directoryMode)
        return directory
    }

    @Test func keysFromSystemdCredentials() throws {
        let credentials = try credentialsDirectory(["customers-db-key": fixture.keyFile, "customers-field-keys": fixture.keyringFile])
        let service = try ServiceProcess(fixture, ["--database", fixture.database, "--key-credential", "customers-db-key",
                                                   "--field-keys-credential", "customers-field-keys"],
                                         environment: ["CREDENTIALS_DIRECTORY": credentials])
        try service.waitUntilListening()
        let created = try request(service.port, "POST", "/customers", json: #"{"name": "Ada", "email": "ada@example.com", "note": "from a credential"}"#)
        #expect(created.status == 201)
        #expect(service.terminate().status == 0)
        // The same database, read with the key files the credentials were made from.
        let pool = try fixture.openPool()
        let stored = try pool.read { db in try db.fetchOne(StoredCustomer.self, sql: StoredCustomer.select + " WHERE id = 1") }
        #expect(stored?.note == "from a credential")
    }

    @Test func credentialsRefused() throws {
        let open = try credentialsDirectory(["customers-db-key": fixture.keyFile, "customers-field-keys": fixture.keyringFile], directoryMode: 0o755)
        let arguments = ["--database", fixture.database, "--key-credential", "customers-db-key", "--field-keys-credential", "customers-field-keys"]
        #expect(try refusesToStart(arguments, environment: ["CREDENTIALS_DIRECTORY": open]).contains("chmod 700"))
        #expect(try refusesToStart(arguments).contains("CREDENTIALS_DIRECTORY"))
        let keyOnly = try credentialsDirectory(["customers-db-key": fixture.keyFile])
        #expect(try refusesToStart(arguments, environment: ["CREDENTIALS_DIRECTORY": keyOnly]).contains("customers-field-keys"))
    }

    /// `--key-env`: the key is taken, and the variable's value overwritten in
    /// the process's environment block (`/proc/PID/environ` shows the block the
    /// process started with, which `unsetenv` alone leaves as it was).
    @Test func aKeyFromTheEnvironmentIsWipedFromIt() throws {
        let service = try ServiceProcess(fixture, ["--database", fixture.database, "--key-env", "CUSTOMERS_DB_KEY", "--field-keys", fixture.keyringFile],
                                         environment: ["CUSTOMERS_DB_KEY": fixture.keyHex])
        try service.waitUntilListening()
        #expect(try request(service.port, "GET", "/ready").status == 200)
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(service.process.processIdentifier)/environ"))
        #expect(!environ.isEmpty)
        #expect(environ.range(of: Data(fixture.keyHex.utf8)) == nil)
        #expect(service.terminate().status == 0)
    }

    @Test func keysFromCommands() throws {
        let service = try ServiceProcess(fixture, ["--database", fixture.database, "--key-command", "cat '\(fixture.keyFile)'",
                                                   "--field-keys-command", "cat '\(fixture.keyringFile)'"])
        try service.waitUntilListening()
        #expect(try request(service.port, "GET", "/ready").status == 200)
        #expect(service.terminate().status == 0)
        let failing = try refusesToStart(["--database", fixture.database, "--key-command", "exit 3", "--field-keys", fixture.keyringFile])
        #expect(failing.contains("exit"))
    }

    /// A session at the most verbose log level, with every route, errors and
    /// conflicts among them: no key, no field key, no e-mail and no note in
    /// anything the process printed.
    @Test func nothingPrintedHoldsAKeyOrASealedValue() throws {
        let service = try ServiceProcess.started(fixture, ["--log-level", "trace"], label: "verbose")
        let port = service.port
        var sealed: [String] = []
        for index in 1...20 {
            let email = "secret-person-\(index)@sealed-domain.example"
            let note = "sealed-note-marker-\(index)"
            sealed += [email, note]
            let created = try request(port, "POST", "/customers", json: #"{"name": "N\#(index)", "email": "\#(email)", "note": "\#(note)"}"#)
            #expect(created.status == 201)
            let id = try #require(created.json?["id"] as? Int)
            #expect(try request(port, "GET", "/customers/\(id)").status == 200)
            #expect(try request(port, "GET", "/customers?email=\(email)").status == 200)
            #expect(try request(port, "POST", "/customers", json: #"{"name": "Dup", "email": "\#(email)"}"#).status == 409)
            let changed = "changed-sealed-note-\(index)"
            sealed.append(changed)
            #expect(try request(port, "PATCH", "/customers/\(id)", json: #"{"note": "\#(changed)"}"#).status == 200)
            _ = try request(port, "POST", "/customers", json: #"{"name": "Bad", "email": "\#(email)", "x": 1}"#)
            _ = try request(port, "POST", "/customers", json: #"{"name": "Bad", "email": "\#(email)"#)
        }
        _ = try request(port, "GET", "/customers?limit=100")
        #expect(service.terminate().status == 0)
        let printed = service.output + service.errors
        #expect(printed.contains("listening"))
        // Failures name which value by its place, never by any part of it (keys among them).
        for (index, value) in (sealed + [fixture.keyHex] + fixture.fieldKeyHex).enumerated() {
            #expect(!printed.contains(value), "printed: value \(index) of \(sealed.count) sealed values, then the database key, then the field keys")
        }
        // Not even in part: the domain and the note's marker.
        #expect(!printed.contains("sealed-domain"))
        #expect(!printed.contains("sealed-note-marker"))
    }

    /// Review of issue 38, M1: a start that finds the migration lock held (a
    /// long `strongroom migrate`) fails as temporary, exit 75, which the unit
    /// restarts; a key problem stays 78, which it does not.
    @Test func aHeldMigrationLockIsATemporaryFailure() throws {
        let lock = Process()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        lock.arguments = ["-x", fixture.database + "-migrate.lock", "sleep", "5"]
        try lock.run()
        defer { lock.terminate(); lock.waitUntilExit() }
        usleep(300_000)
        let service = try ServiceProcess(fixture, fixture.keyArguments + ["--database", fixture.database, "--lock-timeout", "1"], label: "locked")
        #expect(service.waitForExit(timeout: .seconds(30)) == 75, "\(service.errors)")
        let lines = service.errors.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("lock"), "\(lines)")
    }

    /// Review of issue 38, M3: the process turns core dumps off before it
    /// reads a key (a core would hold the database key and opened values).
    @Test func coreDumpsAreOff() throws {
        let service = try ServiceProcess(fixture, fixture.keyArguments + ["--database", fixture.database], label: "cores",
                                         launcher: ["/bin/sh", "-c", "ulimit -c unlimited && exec \"$@\"", "sh"])
        try service.waitUntilListening()
        let limits = try String(contentsOfFile: "/proc/\(service.process.processIdentifier)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(core?.dropFirst(4).first == "0", "\(String(describing: core))")
        #expect(service.terminate().status == 0)
    }
}
