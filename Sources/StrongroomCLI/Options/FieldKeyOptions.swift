import ArgumentParser
import Strongroom
import StrongroomFields

/// Where the field keyring comes from: a file or a systemd credential (plain
/// or wrapped), or a command that prints it. Optional unless a command says otherwise.
struct FieldKeyOptions: ParsableArguments {
    @Option(name: .customLong("field-keys"), help: ArgumentHelp("The field keyring file (mode 0600), plain or wrapped (strongroom keygen --field --wrap), for sealed columns.", valueName: "path"))
    var path: String?

    @Option(name: .customLong("field-keys-credential"), help: ArgumentHelp("A systemd credential holding the field keyring file's text, plain or wrapped: $CREDENTIALS_DIRECTORY/NAME (LoadCredentialEncrypted= or LoadCredential= in the unit), instead of --field-keys.", valueName: "name"))
    var credential: String?

    @Option(name: .customLong("field-keys-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints the field keyring's text on its standard output, instead of --field-keys.", valueName: "command"))
    var command: String?

    @Flag(name: .customLong("field-keys-passphrase-stdin"), help: "Read the passphrase that unwraps a wrapped --field-keys or --field-keys-credential from standard input.")
    var passphraseFromStandardInput = false

    @Option(name: .customLong("field-keys-passphrase-command"), help: ArgumentHelp("A command that prints the passphrase that unwraps a wrapped --field-keys or --field-keys-credential.", valueName: "command"))
    var passphraseCommand: String?

    /// True when a keyring is given.
    var isGiven: Bool { path != nil || credential != nil || command != nil }

    /// The keyring, named for messages.
    var name: String { path ?? credential.map { "the systemd credential \($0)" } ?? "the keyring from --field-keys-command" }

    func validate() throws {
        guard [path != nil, credential != nil, command != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("Give the field keyring with only one of --field-keys, --field-keys-credential and --field-keys-command.")
        }
        guard !(passphraseFromStandardInput && passphraseCommand != nil) else {
            throw ValidationError("Give the passphrase of a wrapped field keyring with one of --field-keys-passphrase-stdin and --field-keys-passphrase-command.")
        }
        if (passphraseFromStandardInput || passphraseCommand != nil) && path == nil && credential == nil {
            throw ValidationError("--field-keys-passphrase-stdin and --field-keys-passphrase-command unwrap a wrapped --field-keys file or --field-keys-credential; give --field-keys PATH or --field-keys-credential NAME.")
        }
    }

    /// The passphrase source for a wrapped keyring file or credential, asked
    /// only when it is wrapped; a passphrase option for a plain keyring is refused first.
    func unwrapping(timeout: Duration) throws(StrongroomError) -> PassphraseSource {
        let options = "--field-keys-passphrase-stdin or --field-keys-passphrase-command"
        if passphraseFromStandardInput || passphraseCommand != nil {
            if let path {
                try Passphrases.refuseUnlessWrapped(path, what: "field keyring", options: options)
            } else if let credential {
                // The credential's checks first (a name, a private directory), then whether it is wrapped.
                try Passphrases.refuseUnlessWrapped(try SystemdCredential.path(of: credential, holding: "the field keyring"),
                                                    what: "field keyring credential", options: options)
            }
        }
        let what = credential.map { "the field keyring credential \($0)" } ?? "the field keyring \(path ?? "")"
        return Passphrases.unwrapping(standardInput: passphraseFromStandardInput, command: passphraseCommand, timeout: timeout,
                                      what: what, options: options)
    }

    /// The keyring, or nil when none is given. `key` is the database key's
    /// options: standard input serves one of them only.
    func load(key: KeyOptions?) throws(StrongroomError) -> FieldKeyring? {
        if passphraseFromStandardInput && key?.readsStandardInput == true {
            throw StrongroomError(.misuse, "Standard input cannot hold both the database passphrase and the field keyring's; give one of them with a command (--passphrase-command, --field-keys-passphrase-command).")
        }
        let timeout = key?.commandTimeout ?? KeyCommand.defaultTimeout
        if let command { return try FieldKeyring.load(fromCommand: KeyCommand(command, timeout: timeout)) }
        if let credential { return try FieldKeyring.fromCredential(credential, unwrappingWith: unwrapping(timeout: timeout)) }
        guard let path else { return nil }
        return try FieldKeyring.load(from: path, unwrappingWith: unwrapping(timeout: timeout))
    }

    /// The keyring file, for the commands that change it.
    func requirePath() throws(StrongroomError) -> String {
        guard let path else {
            throw StrongroomError(.misuse, "This command changes the keyring file: give it with --field-keys PATH (a keyring from a command or a systemd credential cannot be written back).")
        }
        return path
    }
}
