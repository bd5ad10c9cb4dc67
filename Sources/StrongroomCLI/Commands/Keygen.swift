import ArgumentParser
import Strongroom
import StrongroomCrypto
import StrongroomFields

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a new random 256-bit database key file, or with --field a new field keyring (mode 0600, never overwrites); with --wrap, wrapped under a passphrase."
    )

    @Flag(help: "Write a field keyring (for sealed columns) with one new key, id 1, active.")
    var field = false

    @Option(help: ArgumentHelp("Where to write the key file.", valueName: "path"))
    var out: String

    @OptionGroup var wrapping: WrappingOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try CommandFailure.reporting(json: output.json) {
            let passphrase = try wrapping.newPassphrase(for: field ? "the new field keyring" : "the new key file")
            let wrapped = passphrase == nil ? "" : ", wrapped under your passphrase (scrypt N=2^\(WrappingOptions.parameters.log2N), AES-256-GCM)"
            if field {
                try FieldKeyring.generate().write(to: out, wrappingWith: passphrase)
                if output.json {
                    Output.json(["field_keyring": out, "wrapped": "\(passphrase != nil)"])
                } else {
                    print("Wrote a new field keyring to \(out) (mode 0600, key 1 active\(wrapped)). Keep it apart from the database key, out of version control, and backed up: without it sealed values cannot be read.")
                }
                return
            }
            try KeyFile.write(DatabaseKey.generate(), to: out, wrappingWith: passphrase)
            if output.json {
                Output.json(["key_file": out, "wrapped": "\(passphrase != nil)"])
            } else {
                print("Wrote a new database key to \(out) (mode 0600\(wrapped)). Keep it out of version control and back it up: without it\(passphrase == nil ? "" : ", or without the passphrase,") the database cannot be read.")
            }
        }
    }
}

/// `--wrap` and where its new passphrase comes from.
struct WrappingOptions: ParsableArguments {
    @Flag(help: "Wrap the new file under a passphrase (typed twice on a terminal, or --passphrase-stdin, or --passphrase-command).")
    var wrap = false

    @Flag(name: .customLong("passphrase-stdin"), help: "With --wrap: read the passphrase from standard input (up to the first newline).")
    var passphraseFromStandardInput = false

    @Option(name: .customLong("passphrase-command"), help: ArgumentHelp("With --wrap: a command (run with /bin/sh -c) that prints the passphrase.", valueName: "command"))
    var passphraseCommand: String?

    /// The scrypt cost of every file the CLI wraps.
    static let parameters = Scrypt.Parameters.interactive

    func validate() throws {
        if (passphraseFromStandardInput || passphraseCommand != nil) && !wrap {
            throw ValidationError("--passphrase-stdin and --passphrase-command go with --wrap here: they give the passphrase to wrap the new file under.")
        }
        if passphraseFromStandardInput && passphraseCommand != nil {
            throw ValidationError("Give the passphrase with one of --passphrase-stdin and --passphrase-command.")
        }
    }

    /// The passphrase to wrap under, or nil without --wrap.
    func newPassphrase(for what: String) throws(StrongroomError) -> SecureBytes? {
        guard wrap else { return nil }
        return try Passphrases.read(standardInput: passphraseFromStandardInput, command: passphraseCommand, timeout: KeyCommand.defaultTimeout,
                                    prompt: "New passphrase for \(what): ", confirm: true,
                                    options: "--passphrase-stdin or --passphrase-command")
    }
}
