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

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, currentDirectory: dir.path)
    }

    var key: [String] { ["--database", "legacy.db", "--key-file", "legacy.key"] }

    func json(_ result: ProcessResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func theLegacyFileIsToldOpensInCompatibilityModeAndUpgrades() async throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let status = try await run(["status"] + key)
        let compatible = try await run(["status", "--cipher-compatibility", "3"] + key)
        #expect(compatible.status == 0 && compatible.stdout.contains("Customer") && compatible.stdout.contains("version 5"), "\(compatible.stdout) \(compatible.stderr)")
        // The format, and whether compatibility mode is on.
        #expect(compatible.stdout.contains("format        SQLCipher 3") && compatible.stdout.contains("compatibility mode") == isSQLCipher4, "\(compatible.stdout)")
        let compatibleJSON = json(try await run(["status", "--json", "--cipher-compatibility", "3"] + key))
        #expect(compatibleJSON["format"] as? Int == 3 && compatibleJSON["compatibility_mode"] as? Bool == isSQLCipher4, "\(compatibleJSON)")
        if isSQLCipher4 {
            #expect((compatibleJSON["cipher_settings"] as? [String])?.contains { $0.contains("cipher_compatibility") || $0.contains("kdf_iter = 64000") } == true, "\(compatibleJSON)")
        }
        let upgrade = try await run(["upgrade", "--json"] + key)
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
        // The migration history and the sealed values came along. The
        // release signed no registry (issue 50): verify names it, and the
        // operator confirms it once.
        let unsigned = try await run(["verify", "--migrations", Fixtures.repositoryRoot + "/Migrations", "--field-keys", "legacy-fields.keyring"] + key)
        #expect(unsigned.status == 1 && unsigned.stdout.contains("[sealed_untrusted_registry] No signature"), "\(unsigned.stdout) \(unsigned.stderr)")
        let confirm = try await run(["fields", "confirm", "--field-keys", "legacy-fields.keyring"] + key)
        #expect(confirm.status == 0 && confirm.stdout.contains("strongroom_sealed_columns (Customer, Email): mode \"randomized\", index_column NULL"), "\(confirm.stdout) \(confirm.stderr)")
        let verify = try await run(["verify", "--migrations", Fixtures.repositoryRoot + "/Migrations", "--field-keys", "legacy-fields.keyring"] + key)
        #expect(verify.status == 0 && verify.stdout.contains("version 5") && verify.stdout.contains("Every sealed value opens"), "\(verify.stdout) \(verify.stderr)")
        let after = try await run(["status"] + key)
        #expect(after.status == 0 && after.stdout.contains("4.6") && after.stdout.contains("4096") && after.stdout.contains("HMAC_SHA512")
                && after.stdout.contains("PBKDF2_HMAC_SHA512") && after.stdout.contains("format        SQLCipher 4\n"), "\(after.stdout)")
        // Current now: refused, 64, nothing changed.
        let bytes = Fixtures.bytes(of: dir.file("legacy.db"))
        let again = try await run(["upgrade"] + key)
        #expect(again.status == 64 && again.stderr.contains("nothing to upgrade"), "\(again.stderr)")
        #expect(Fixtures.bytes(of: dir.file("legacy.db")) == bytes)
    }

    /// The fixture holds what the last release wrote: its schema as SQLite
    /// 3.15 wrote it, the sealed-column registry, the migration history
    /// (checksums and schema hashes), `user_version` and `application_id`
    /// are those recorded from the release's own file
    /// (`Tests/Fixtures/SQLCipher3/release-c1ae6b1.csv`), on both engines.
    @Test func theFixtureHoldsWhatTheLastReleaseWrote() async throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let queries = """
            SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name;
            SELECT * FROM strongroom_sealed_columns ORDER BY table_name, column_name;
            SELECT version, description, checksum, schema_hash, kind FROM strongroom_migrations ORDER BY version;
            PRAGMA user_version;
            PRAGMA application_id;
            """
        let result = try await ProcessRunner.run(Fixtures.strongroomBinary, ["sql", "--csv", "--cipher-compatibility", "3"] + key, input: queries, currentDirectory: dir.path)
        let recorded = try String(contentsOfFile: Fixtures.repositoryRoot + "/Tests/Fixtures/SQLCipher3/release-c1ae6b1.csv", encoding: .utf8)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == recorded)
        let status = json(try await run(["status", "--json", "--cipher-compatibility", "3"] + key))
        #expect(status["format"] as? Int == 3 && status["page_size"] as? Int == 1024 && status["journal_mode"] as? String == "delete", "\(status)")
        // Written by SQLite 3.15.2 (SQLCipher 3.4.1), as the release's file was: on SQLCipher 3 by the
        // linked engine itself; on SQLCipher 4, its shell reads the number from the decrypted page 1.
        guard isSQLCipher4 else {
            #expect(SQLCipherLibrary.sqliteVersionNumber == 3_015_002)
            return
        }
        let hex = Fixtures.hex(ofKeyFile: dir.file("legacy.key"))
        let info = try await ProcessRunner.run(try #require(ProcessRunner.which("sqlcipher")), [dir.file("legacy.db")],
                                               input: "PRAGMA key = \"x'\(hex)'\";\nPRAGMA cipher_compatibility = 3;\n.dbinfo\n")
        #expect(info.stdout.contains("software version:    3015002"), "\(info.stdout.split(separator: "\n").filter { $0.contains("version") })")
    }

    /// Review of the fixture: made in a directory whose path holds a quote,
    /// the fixture is still made, and no error of its making shows the key.
    @Test func theFixtureIsMadeWhereThePathHoldsAQuote() async throws {
        let quoted = dir.file("it's here")
        try FileManager.default.createDirectory(atPath: quoted, withIntermediateDirectories: false)
        do {
            let legacy = try Fixtures.legacyDatabase(inDirectory: quoted)
            let status = try await ProcessRunner.run(Fixtures.strongroomBinary, ["status", "--json", "--cipher-compatibility", "3", "--database", legacy.database, "--key-file", legacy.keyFile])
            #expect(json(status)["format"] as? Int == 3, "\(status.stdout) \(status.stderr)")
        } catch {
            let hex = Fixtures.hex(ofKeyFile: quoted + "/legacy.key")
            #expect(hex.count == 64 && !"\(error)".contains(hex.prefix(16)), "the error shows the key")
            Issue.record("the fixture was not made in \(quoted)")
        }
    }

    @Test func aCompatibilityOtherThan3Or4IsAUsageError() async throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let result = try await run(["status", "--cipher-compatibility", "2"] + key)
        #expect(result.status == 64 && result.stderr.contains("3 or 4"), "\(result.stderr)")
    }

    /// Review of issue 26: export honours --cipher-compatibility (the legacy
    /// error tells the user to pass it); import and upgrade, which write a
    /// file in the linked SQLCipher's format, refuse it rather than ignore it.
    @Test func exportHonoursCompatibilityAndImportAndUpgradeRefuseIt() async throws {
        _ = try Fixtures.legacyDatabase(in: dir)
        let export = try await run(["export", "--cipher-compatibility", "3", "--to", "plain.sqlite", "--i-understand-the-output-is-plaintext"] + key)
        #expect(export.status == 0, "\(export.stdout) \(export.stderr)")
        let upgrade = try await run(["upgrade", "--cipher-compatibility", "3"] + key)
        #expect(upgrade.status == 64 && upgrade.stderr.contains("--cipher-compatibility"), "\(upgrade.stderr)")
        let imported = try await run(["import", "--from", "plain.sqlite", "--database", "new.db", "--key-file", "legacy.key", "--cipher-compatibility", "3"])
        #expect(imported.status == 64 && imported.stderr.contains("--cipher-compatibility"), "\(imported.stderr)")
    }

    /// Review of issue 26: an upgrade that fails after it switched a WAL file
    /// to a rollback journal (here: the copy cannot be created, through an
    /// LD_PRELOAD shim that fails open(O_CREAT) of Strongroom's temporary
    /// files) leaves the file in WAL mode, as it found it.
    @Test func aFailedUpgradeLeavesTheJournalModeAsItWas() async throws {
        let legacy = try Fixtures.legacyDatabase(in: dir)
        var config = Configuration(key: try DatabaseKey.load(keyFile: legacy.keyFile))
        config.cipherCompatibility = .sqlcipher3
        config.journalMode = .wal
        try Connection(path: legacy.database, configuration: config).close()
        let compiler = try #require(ProcessRunner.which("cc") ?? ProcessRunner.which("clang"), "a C compiler (the Swift toolchain's clang)")
        FileManager.default.createFile(atPath: dir.file("shim.c"), contents: Data("""
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <fcntl.h>
            #include <stdarg.h>
            #include <string.h>
            typedef int (*open_t)(const char *, int, ...);
            static int refused(const char *path, int flags) { return (flags & O_CREAT) && strstr(path, "/.strongroom-") != NULL; }
            int open(const char *path, int flags, ...) {
                va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);
                if (refused(path, flags)) { errno = ENOSPC; return -1; }
                return ((open_t)dlsym(RTLD_NEXT, "open"))(path, flags, mode);
            }
            int open64(const char *path, int flags, ...) {
                va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);
                if (refused(path, flags)) { errno = ENOSPC; return -1; }
                return ((open_t)dlsym(RTLD_NEXT, "open64"))(path, flags, mode);
            }

            """.utf8))
        let built = try await ProcessRunner.run(compiler, ["-shared", "-fPIC", "-o", dir.file("shim.so"), dir.file("shim.c"), "-ldl"])
        try #require(built.status == 0, "\(built.stderr)")
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = dir.file("shim.so")
        let upgrade = try await ProcessRunner.run(Fixtures.strongroomBinary, ["upgrade"] + key, environment: environment, currentDirectory: dir.path)
        #expect(upgrade.status == (isSQLCipher4 ? 73 : 64), "\(upgrade.stdout) \(upgrade.stderr)")
        var keep = config
        keep.keepsJournalMode = true
        #expect(try Connection(path: legacy.database, configuration: keep).fetchOne(String.self, sql: "PRAGMA journal_mode") == "wal")
    }
}
