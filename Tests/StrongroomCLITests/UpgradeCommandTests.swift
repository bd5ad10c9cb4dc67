import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Issue 26, items 2 and 3 on the command line: the last release's SQLCipher 3
/// file is named as such (one sentence), opens with --cipher-compatibility 3,
/// and `strongroom upgrade` converts it; its migration history and sealed
/// values come along (`verify --field-keys`).
@Suite("strongroom upgrade and --cipher-compatibility")
struct UpgradeCommandTests {
    let dir = TemporaryDirectory()
    let isSQLCipher4 = SQLCipherLibrary.nativeFormat == .sqlcipher4

    func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    var key: [String] { ["--database", "legacy.db", "--key-file", "legacy.key"] }

    func json(_ result: ProcessResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func theLegacyFileIsToldOpensInCompatibilityModeAndUpgrades() throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let status = try run(["status"] + key)
        let compatible = try run(["status", "--cipher-compatibility", "3"] + key)
        #expect(compatible.status == 0 && compatible.stdout.contains("Customer") && compatible.stdout.contains("version 5"), "\(compatible.stdout) \(compatible.stderr)")
        // The format, and whether compatibility mode is on.
        #expect(compatible.stdout.contains("format        SQLCipher 3") && compatible.stdout.contains("compatibility mode") == isSQLCipher4, "\(compatible.stdout)")
        let compatibleJSON = json(try run(["status", "--json", "--cipher-compatibility", "3"] + key))
        #expect(compatibleJSON["format"] as? Int == 3 && compatibleJSON["compatibility_mode"] as? Bool == isSQLCipher4, "\(compatibleJSON)")
        if isSQLCipher4 {
            #expect((compatibleJSON["cipher_settings"] as? [String])?.contains { $0.contains("cipher_compatibility") || $0.contains("kdf_iter = 64000") } == true, "\(compatibleJSON)")
        }
        let upgrade = try run(["upgrade", "--json"] + key)
        guard isSQLCipher4 else {
            #expect(status.status == 0, "\(status.stderr)")
            #expect(upgrade.status == 64, "\(upgrade.stdout) \(upgrade.stderr)")
            #expect((json(upgrade)["error"] as? [String: Any])?["code"] as? String == "already_current", "\(upgrade.stdout)")
            return
        }
        // One sentence, no SQLCipher log line, and what to do.
        #expect(status.status == 65, "\(status.stdout) \(status.stderr)")
        #expect(status.stderr.split(separator: "\n").count == 1 && status.stderr.contains("SQLCipher 3")
                && status.stderr.contains("strongroom upgrade") && status.stderr.contains("--cipher-compatibility 3"), "\(status.stderr)")
        #expect(upgrade.status == 0, "\(upgrade.stdout) \(upgrade.stderr)")
        let report = json(upgrade)
        #expect(report["from"] as? Int == 3 && report["to"] as? Int == 4 && report["verified"] as? Bool == true, "\(upgrade.stdout)")
        #expect((report["tables"] as? [[String: Any]])?.count == Fixtures.legacyRowCounts.count, "\(upgrade.stdout)")
        // The migration history and the sealed values came along.
        let verify = try run(["verify", "--migrations", Fixtures.repositoryRoot + "/Migrations", "--field-keys", "legacy-fields.keyring"] + key)
        #expect(verify.status == 0 && verify.stdout.contains("version 5") && verify.stdout.contains("Every sealed value opens"), "\(verify.stdout) \(verify.stderr)")
        let after = try run(["status"] + key)
        #expect(after.status == 0 && after.stdout.contains("4.6") && after.stdout.contains("4096") && after.stdout.contains("HMAC_SHA512")
                && after.stdout.contains("PBKDF2_HMAC_SHA512") && after.stdout.contains("format        SQLCipher 4\n"), "\(after.stdout)")
        // Current now: refused, 64, nothing changed.
        let bytes = Fixtures.bytes(of: dir.file("legacy.db"))
        let again = try run(["upgrade"] + key)
        #expect(again.status == 64 && again.stderr.contains("nothing to upgrade"), "\(again.stderr)")
        #expect(Fixtures.bytes(of: dir.file("legacy.db")) == bytes)
    }

    @Test func aCompatibilityOtherThan3Or4IsAUsageError() throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let result = try run(["status", "--cipher-compatibility", "2"] + key)
        #expect(result.status == 64 && result.stderr.contains("3 or 4"), "\(result.stderr)")
    }
}
