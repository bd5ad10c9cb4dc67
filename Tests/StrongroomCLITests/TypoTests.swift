import Foundation
import StrongroomTestSupport
import Testing

/// Issue 36, item 9: a user's typo is a user error (64 usage, 65 data,
/// 66 input missing; 73 for an output that exists), with a message naming
/// what is wrong, never 70 ("internal error"). Every command `strongroom
/// --help` lists is run with the typos a user makes: a misspelled table,
/// column, file, directory, option or value.
@Suite("strongroom CLI: typos")
struct TypoTests {
    let dir = TemporaryDirectory()

    func run(_ arguments: [String], input: String? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run(Fixtures.strongroomBinary, arguments, input: input, currentDirectory: dir.path)
    }

    /// A command line with a typo, the exit status it must give and words
    /// its message must hold (naming what is wrong).
    struct Typo {
        let arguments: [String]
        let status: Int32
        let names: [String]
        var input: String? = nil
        /// Words the message must not hold (a wrong explanation).
        var not: [String] = []
    }

    @Test func noCommonTypoExitsSeventy() async throws {
        #expect(try await run(["keygen", "--out", "db.key"]).status == 0)
        #expect(try await run(["keygen", "--field", "--out", "fields.keyring"]).status == 0)
        #expect(try await run(["import", "--from", Fixtures.chinook, "--database", "c.db", "--key-file", "db.key"]).status == 0)
        try FileManager.default.createDirectory(atPath: dir.file("Migrations"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.file("Migrations/0001_t.sql"), contents: Data("CREATE TABLE t(x);".utf8))
        FileManager.default.createFile(atPath: dir.file("notes.sql"), contents: Data("CREATE TABLE n(x);".utf8))
        FileManager.default.createFile(atPath: dir.file("pass"), contents: Data("a passphrase\n".utf8))
        let key = ["--key-file", "db.key"]
        let importing = ["import", "--from", Fixtures.chinook, "--key-file", "db.key", "--field-keys", "fields.keyring"]
        let typos: [Typo] = [
            // A misspelled command or option.
            Typo(arguments: ["stauts"], status: 64, names: ["stauts"]),
            Typo(arguments: ["status", "--databse", "c.db"] + key, status: 64, names: ["--database"]),
            Typo(arguments: ["fields", "rotat"], status: 64, names: ["rotat"]),
            // keygen, key wrap, key rewrap
            Typo(arguments: ["keygen"], status: 64, names: ["--out"]),
            Typo(arguments: ["keygen", "--out", "db.key"], status: 73, names: ["db.key", "already exists"]),
            Typo(arguments: ["key", "wrap", "--in", "nosuch.key", "--out", "w.key", "--passphrase-command", "cat pass"], status: 66, names: ["nosuch.key"]),
            Typo(arguments: ["key", "wrap", "--in", "nosuch.key", "--out", "w.key", "--passphrase-stdin"], status: 66, names: ["nosuch.key"], input: ""),
            Typo(arguments: ["key", "rewrap", "--file", "nosuch.key", "--passphrase-command", "cat pass", "--new-passphrase-command", "cat pass"], status: 66, names: ["nosuch.key"]),
            // status
            Typo(arguments: ["status", "--database", "nosuch.db"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["status", "--database", "c.db", "--key-file", "nosuch.key"], status: 66, names: ["nosuch.key"]),
            Typo(arguments: ["status", "--database", "c.db", "--key-env", "STRONGROOM_NO_SUCH_VARIABLE"], status: 66, names: ["STRONGROOM_NO_SUCH_VARIABLE"]),
            Typo(arguments: ["status", "--database", "c.db", "--key-file", "fields.keyring"], status: 65, names: ["fields.keyring"]),
            Typo(arguments: ["status", "--database", "c.db", "--cipher-compatibility", "5"] + key, status: 64, names: ["5"]),
            Typo(arguments: ["status", "--database", "c.db", "--migrations", "Migratoins"] + key, status: 66, names: ["Migratoins"]),
            // sql
            Typo(arguments: ["sql", "--database", "c.db"] + key + ["SELEC 1"], status: 65, names: ["SELEC"]),
            Typo(arguments: ["sql", "--database", "c.db"] + key + ["SELECT * FROM nosuch"], status: 65, names: ["nosuch"]),
            Typo(arguments: ["sql", "--database", "c.db"] + key + ["SELECT nosuch FROM Customer"], status: 65, names: ["nosuch"]),
            Typo(arguments: ["sql", "--database", "c.db"] + key + ["--write", "INSERT INTO Customer(nosuch) VALUES (1)"], status: 65, names: ["nosuch"]),
            Typo(arguments: ["sql", "--database", "c.db"] + key + ["--field-keys", "nosuch.keyring", "SELECT 1"], status: 66, names: ["nosuch.keyring"]),
            // migrate, verify, baseline, diff
            Typo(arguments: ["migrate", "--database", "c.db", "--migrations", "nosuch"] + key, status: 66, names: ["nosuch"]),
            Typo(arguments: ["migrate", "--database", "c.db", "--migrations", "notes.sql"] + key, status: 66, names: ["notes.sql", "not a directory"]),
            Typo(arguments: ["migrate", "--database", "c.db", "--to", "99"] + key, status: 64, names: ["99"]),
            Typo(arguments: ["migrate", "--database", "nosuch/*.db"] + key, status: 66, names: ["nosuch/*.db"]),
            Typo(arguments: ["verify", "--database", "c.db", "--migrations", "nosuch"] + key, status: 66, names: ["nosuch"]),
            Typo(arguments: ["verify", "--database", "nosuch.db"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["baseline", "--database", "c.db", "--version", "99"] + key, status: 64, names: ["99"]),
            Typo(arguments: ["baseline", "--database", "c.db", "--version", "one"] + key, status: 64, names: ["one"]),
            Typo(arguments: ["diff", "--model", "nosuch.sql"], status: 66, names: ["nosuch.sql"]),
            Typo(arguments: ["diff", "--model", "Migrations"], status: 66, names: ["Migrations", "directory"], not: ["Error Domain"]),
            Typo(arguments: ["diff", "--rename", "x"], status: 64, names: ["x"]),
            // rekey, upgrade, backup
            Typo(arguments: ["rekey", "--database", "c.db", "--new-key-file", "nosuch.key"] + key, status: 66, names: ["nosuch.key"]),
            Typo(arguments: ["upgrade", "--database", "nosuch.db"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["backup", "--database", "nosuch.db", "--to", "b.db"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["backup", "--database", "c.db", "--to", "b.db", "--new-key-file", "nosuch.key"] + key, status: 66, names: ["nosuch.key"]),
            // import, with --seal
            Typo(arguments: ["import", "--from", "nosuch.sqlite", "--database", "n.db"] + key, status: 66, names: ["nosuch.sqlite"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "Customer.nosuch"], status: 64, names: ["Customer", "nosuch", "no column"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "nosuch.Email"], status: 64, names: ["nosuch", "no table"], not: ["PRIMARY KEY"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "nosuch.Email:deterministic"], status: 64, names: ["nosuch", "no table"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "Customer.Email:indexd"], status: 64, names: ["indexd"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "Customer"], status: 64, names: ["TABLE.COLUMN"]),
            Typo(arguments: importing + ["--database", "n.db", "--seal", "Customer.CustomerId"], status: 64, names: ["primary key"]),
            // export
            Typo(arguments: ["export", "--database", "c.db", "--to", "e.sqlite"] + key, status: 64, names: ["--i-understand-the-output-is-plaintext"]),
            Typo(arguments: ["export", "--database", "nosuch.db", "--to", "e.sqlite", "--i-understand-the-output-is-plaintext"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["export", "--database", "c.db", "--to", "e.sqlite", "--i-understand-the-output-is-plaintext", "--field-keys", "nosuch.keyring"] + key, status: 66, names: ["nosuch.keyring"]),
            // fields
            Typo(arguments: ["fields", "add-key", "--field-keys", "nosuch.keyring"], status: 66, names: ["nosuch.keyring"]),
            Typo(arguments: ["fields", "activate", "--field-keys", "fields.keyring", "--key-id", "9"], status: 65, names: ["9"]),
            Typo(arguments: ["fields", "rotate", "--database", "nosuch.db", "--field-keys", "fields.keyring"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["fields", "status", "--database", "nosuch.db"] + key, status: 66, names: ["nosuch.db"]),
            Typo(arguments: ["fields", "retire", "--database", "c.db", "--field-keys", "fields.keyring", "--key-id", "9"] + key, status: 65, names: ["9"]),
        ]
        for typo in typos {
            let result = try await run(typo.arguments, input: typo.input)
            let line = "strongroom " + typo.arguments.joined(separator: " ")
            #expect(result.status != 70, "\(line) exited 70 (internal error): \(result.stderr)")
            #expect(result.status == typo.status, "\(line) exited \(result.status), not \(typo.status): \(result.stderr)")
            for name in typo.names {
                #expect(result.stderr.localizedCaseInsensitiveContains(name), "\(line): the message does not name \(name): \(result.stderr)")
            }
            for wrong in typo.not {
                #expect(!result.stderr.contains(wrong), "\(line): the message says \(wrong): \(result.stderr)")
            }
        }
        // Every command `strongroom --help` lists is tried.
        let help = try await run(["--help"])
        let commands = help.stdout.components(separatedBy: "SUBCOMMANDS:").last!
            .split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
            .filter { $0 != "See" }
        #expect(commands.count >= 14, "\(help.stdout)")
        for command in commands {
            #expect(typos.contains { $0.arguments.first == command }, "no typo tried for `strongroom \(command)`")
        }
        for (command, subcommands) in ["key": ["wrap", "rewrap"], "fields": ["add-key", "activate", "rotate", "status", "retire"]] {
            for subcommand in subcommands {
                #expect(typos.contains { $0.arguments.prefix(2) == [command, subcommand] }, "no typo tried for `strongroom \(command) \(subcommand)`")
            }
        }
    }
}
