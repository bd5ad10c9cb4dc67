import ArgumentParser
import Strongroom
import StrongroomFields

/// Where the field keyring comes from: a file (plain or wrapped) or a
/// command that prints it. Optional unless a command says otherwise.
struct FieldKeyOptions: ParsableArguments {
    @Option(name: .customLong("field-keys"), help: ArgumentHelp("The field keyring file (mode 0600), plain or wrapped (strongroom keygen --field --wrap), for sealed columns.", valueName: "path"))
    var path: String?

    @Option(name: .customLong("field-keys-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints the field keyring's text on its standard output, instead of --field-keys.", valueName: "command"))
    var command: String?

    @Flag(name: .customLong("field-keys-passphrase-stdin"), help: "Read the passphrase that unwraps a wrapped --field-keys from standard input.")
    var passphraseFromStandardInput = false

    @Option(name: .customLong("field-keys-passphrase-command"), help: ArgumentHelp("A command that prints the passphrase that unwraps a wrapped --field-keys.", valueName: "command"))
    var passphraseCommand: String?

    /// True when a keyring is given.
    var isGiven: Bool { path != nil || command != nil }

    /// The keyring, named for messages.
    var name: String { path ?? "the keyring from --field-keys-command" }

    func validate() throws {
        guard path == nil || command == nil else {
            throw ValidationError("Give the field keyring with one of --field-keys and --field-keys-command, not both.")
        }
        guard !(passphraseFromStandardInput && passphraseCommand != nil) else {
            throw ValidationError("Give the passphrase of a wrapped field keyring with one of --field-keys-passphrase-stdin and --field-keys-passphrase-command.")
        }
        if (passphraseFromStandardInput || passphraseCommand != nil) && path == nil {
            throw ValidationError("--field-keys-passphrase-stdin and --field-keys-passphrase-command unwrap a wrapped --field-keys file; give --field-keys PATH.")
        }
    }

    /// The passphrase source for a wrapped keyring file, asked only when it is
    /// wrapped; a passphrase option for a plain keyring is refused first.
    func unwrapping(timeout: Duration) throws(StrongroomError) -> PassphraseSource {
        let options = "--field-keys-passphrase-stdin or --field-keys-passphrase-command"
        if let path, passphraseFromStandardInput || passphraseCommand != nil {
            try Passphrases.refuseUnlessWrapped(path, what: "field keyring", options: options)
        }
        return Passphrases.unwrapping(standardInput: passphraseFromStandardInput, command: passphraseCommand, timeout: timeout,
                                      what: "the field keyring \(path ?? "")", options: options)
    }

    /// The keyring, or nil when none is given. `key` is the database key's
    /// options: standard input serves one of them only.
    func load(key: KeyOptions?) throws(StrongroomError) -> FieldKeyring? {
        if passphraseFromStandardInput && key?.readsStandardInput == true {
            throw StrongroomError(.misuse, "Standard input cannot hold both the database passphrase and the field keyring's; give one of them with a command (--passphrase-command, --field-keys-passphrase-command).")
        }
        let timeout = key?.commandTimeout ?? KeyCommand.defaultTimeout
        if let command { return try FieldKeyring.load(fromCommand: KeyCommand(command, timeout: timeout)) }
        guard let path else { return nil }
        return try FieldKeyring.load(from: path, unwrappingWith: unwrapping(timeout: timeout))
    }

    /// The keyring file, for the commands that change it.
    func requirePath() throws(StrongroomError) -> String {
        guard let path else {
            throw StrongroomError(.misuse, "This command changes the keyring file: give it with --field-keys PATH (a command's keyring cannot be written back).")
        }
        return path
    }
}
