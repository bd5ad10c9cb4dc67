import Foundation
import Testing

/// Issue 38, item 2: the checked-in units, as `systemd-analyze verify` reads
/// them (a warning fails too), with each option they pass to a command being
/// one that command takes, and each credential they name one they load.
@Suite("Deploy/*.service: systemd-analyze verify")
struct SystemdUnitTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Deploy").standardized.path

    /// The unit with its installed paths replaced by the built binaries, verified.
    func verify(_ unit: String, replacing installed: String, with built: String) throws -> String {
        let text = try String(contentsOfFile: Self.deploy + "/" + unit, encoding: .utf8)
        #expect(text.contains(installed))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try text.replacingOccurrences(of: installed, with: built).write(toFile: directory + "/" + unit, atomically: true, encoding: .utf8)
        let result = try runCommand("/usr/bin/systemd-analyze", ["verify", directory + "/" + unit])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(result.output)")
        return text
    }

    /// The `--options` of the unit's ExecStart=, each one `help` lists.
    func checkOptions(_ text: String, against help: String) {
        // ExecStart= and the lines it continues with a trailing backslash.
        var command = ""
        for line in text.components(separatedBy: "ExecStart=")[1].components(separatedBy: "\n") {
            command += " " + line
            if !line.hasSuffix("\\") { break }
        }
        let options = command.split(separator: " ").filter { $0.hasPrefix("--") }
        #expect(options.count >= 4)
        for option in options {
            #expect(help.contains(String(option) + " "), "\(option) is not an option")
        }
        for name in ["customers-db-key", "customers-field-keys"] {
            #expect(text.contains("LoadCredentialEncrypted=\(name):"))
        }
    }

    @Test func theServiceUnit() throws {
        let text = try verify("customer-service.service", replacing: "/usr/local/bin/CustomerService", with: ServiceProcess.binary)
        checkOptions(text, against: try runCommand(ServiceProcess.binary, ["--help"]).output)
        #expect(text.contains("--key-credential customers-db-key --field-keys-credential customers-field-keys"))
        #expect(text.contains("LimitCORE=0"))
    }

    @Test func theMigrationUnit() throws {
        let text = try verify("customer-service-migrate.service", replacing: "/usr/local/bin/strongroom", with: ServiceProcess.strongroom)
        checkOptions(text, against: try runCommand(ServiceProcess.strongroom, ["migrate", "--help"]).output)
    }
}
