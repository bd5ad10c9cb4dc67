import Foundation
import Strongroom
import StrongroomFields

/// A scratch directory with a database key and a field keyring (mode 0600),
/// removed at the end.
final class ServiceFixture: @unchecked Sendable {
    // @unchecked Sendable: every property is a constant.
    let directory: String
    let database: String
    let keyFile: String
    let keyringFile: String
    let key: DatabaseKey
    let keyring: FieldKeyring

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("customer-service-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = directory + "/customers.db"
        keyFile = directory + "/db.key"
        keyringFile = directory + "/fields.keyring"
        key = DatabaseKey.generate()
        try KeyFile.write(key, to: keyFile)
        keyring = FieldKeyring.generate()
        try keyring.write(to: keyringFile)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ name: String) -> String { directory + "/" + name }

    /// The key options of a service started on this fixture's files.
    var keyArguments: [String] { ["--key-file", keyFile, "--field-keys", keyringFile] }

    /// Everything the fixture's processes printed: what no key or sealed value may appear in.
    var keyHex: String {
        (try? String(contentsOfFile: keyFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// The hex of each field key, from the keyring file.
    var fieldKeyHex: [String] {
        ((try? String(contentsOfFile: keyringFile, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.hasPrefix("key ") }.compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    /// A connection with the database key only, as an operator or a copied file has it: sealed columns are envelopes.
    func openWithoutKeyring() throws -> Connection {
        var configuration = Configuration(key: key)
        configuration.createIfMissing = false
        return try Connection(path: database, configuration: configuration)
    }

    /// A pool on the database with the service's sealed columns, for checks from outside the service.
    func openPool() throws -> DatabasePool {
        var configuration = Configuration(key: key)
        configuration.createIfMissing = false
        configuration.seal([.indexed("email", in: "customer", indexColumn: "email_index"), .randomized("note", in: "customer")], keyring: keyring,
                           rowKeys: ["customer": ["id"]])
        return try DatabasePool(path: database, configuration: configuration)
    }
}

/// The built `CustomerService`, started as a process of its own, its
/// standard output and error kept in files.
final class ServiceProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is used from the test's task only; the files are read, never shared.
    let process = Process()
    let outputFile: String
    let errorFile: String
    private(set) var port = 0

    /// `CustomerService` beside the test bundle (SwiftPM builds both into one folder).
    static var binary: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("CustomerService").path
    }

    /// The `strongroom` command of the library's own build: `$STRONGROOM_CLI`, or `../../.build/debug/strongroom`.
    static var strongroom: String {
        if let path = ProcessInfo.processInfo.environment["STRONGROOM_CLI"], !path.isEmpty { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../../.build/debug/strongroom").standardized.path
    }

    /// Starts the service with `arguments` (after `--host 127.0.0.1 --port 0`), in `environment` (the test's without
    /// `CREDENTIALS_DIRECTORY` by default) and output files named after `label` in `fixture`'s directory.
    /// `launcher`: a command the service is started through (its last argument is followed by the service's path and arguments).
    init(_ fixture: ServiceFixture, _ arguments: [String], label: String = "service", environment: [String: String] = [:],
         launcher: [String] = []) throws {
        let run = "\(label)-\(UUID().uuidString.prefix(8))"
        outputFile = fixture.path("\(run).out")
        errorFile = fixture.path("\(run).err")
        _ = FileManager.default.createFile(atPath: outputFile, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
        let command = launcher + [Self.binary, "--host", "127.0.0.1", "--port", "0"] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var inherited = ProcessInfo.processInfo.environment
        inherited["CREDENTIALS_DIRECTORY"] = nil
        process.environment = inherited.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: outputFile)
        process.standardError = FileHandle(forWritingAtPath: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits until the service logs the port it listens on; throws when it exits first.
    func waitUntilListening(timeout: Duration = .seconds(60)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let port = Self.listeningPort(in: errors) {
                self.port = port
                return
            }
            guard process.isRunning else {
                throw HTTPFailure(description: "CustomerService exited with \(process.terminationStatus) before listening: \(errors)")
            }
            usleep(20_000)
        }
        throw HTTPFailure(description: "CustomerService did not listen within \(timeout): \(errors)")
    }

    static func listeningPort(in log: String) -> Int? {
        for line in log.split(separator: "\n") where line.contains("[CustomerService] listening") {
            if let range = line.range(of: "port="), let port = Int(line[range.upperBound...].prefix { $0.isNumber }) { return port }
        }
        return nil
    }

    /// Starts the service and waits until it listens.
    static func started(_ fixture: ServiceFixture, _ arguments: [String] = [], label: String = "service") throws -> ServiceProcess {
        let service = try ServiceProcess(fixture, fixture.keyArguments + ["--database", fixture.database] + arguments, label: label)
        try service.waitUntilListening()
        return service
    }

    /// Waits for the process to exit; its status, or nil after `timeout`.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(30)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline { return nil }
            usleep(5_000)
        }
        return process.terminationStatus
    }

    /// SIGTERM, then the exit status and how long it took (nil status: still running after `timeout`).
    func terminate(timeout: Duration = .seconds(30)) -> (status: Int32?, took: Duration) {
        let started = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        let status = waitForExit(timeout: timeout)
        return (status, ContinuousClock.now - started)
    }

    /// SIGKILL, and waits for the process to be gone.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        waitForExit()
    }

    var output: String { (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}

/// Runs a command to its end; its status and everything it printed.
func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A row of `customer` as the tests read it from the file, sealed fields opened.
struct StoredCustomer: Decodable, Equatable, SealedRecord {
    static let sealedProperties = [SealedProperty("email", of: "customer"), SealedProperty("note", of: "customer")]
    let id: Int64
    let name: String
    let email: String
    let note: String?
    let country: String?

    static let select = "SELECT id, name, email, note, country FROM customer"
}
