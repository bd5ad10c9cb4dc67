import ArgumentParser
import Foundation
import Strongroom

/// `strongroom`: keys, status and conversions for SQLCipher databases.
@main
struct StrongroomCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strongroom",
        abstract: "Keys, migrations, queries, backups and conversions for encrypted SQLCipher databases.",
        discussion: """
        Keys are never taken from the command line: give them with --key-file PATH
        (plain, or wrapped under a passphrase: keygen --wrap), --key-env NAME (a
        variable holding the 64 hex characters), --key-credential NAME (a systemd
        credential: $CREDENTIALS_DIRECTORY/NAME), --key-command CMD (a program that
        prints the key), --passphrase-stdin or --passphrase-command CMD. The field
        keyring of sealed columns likewise: --field-keys PATH, --field-keys-credential
        NAME or --field-keys-command CMD.

        Exit codes (sysexits): 0 success; 1 a check found problems; 64 usage;
        65 data error (wrong key, plaintext where encrypted was expected, not a
        database, malformed key file, SQL that SQLite refuses); 66 input missing; 73 cannot create output;
        74 rekey did not take effect (the old key still opens the file);
        69 a key or passphrase command failed or timed out;
        75 temporarily unavailable (busy); 77 permission (key file mode); 70 internal error.
        """,
        subcommands: [Keygen.self, Key.self, Status.self, SQL.self, Migrate.self, Verify.self, Diff.self, Baseline.self, Rekey.self, Upgrade.self, Backup.self, Import.self, Export.self, Fields.self]
    )

    /// Runs the command. SIGCHLD is set back to its default first: ignored by
    /// whoever started this process (the setting survives exec), it would let
    /// the kernel take a key command's exit status. No core dump is left:
    /// one would hold the keys this process reads (``CoreDumps``).
    static func main() {
        signal(SIGCHLD, SIG_DFL)
        do {
            try CoreDumps.disable()
        } catch {
            Output.error("strongroom: \(error.message)")
            Foundation.exit(70)
        }
        main(nil)
    }
}
