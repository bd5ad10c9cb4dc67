import ArgumentParser
import Foundation
import StrongroomMacros

/// Where the database key and the field keyring come from: the options of
/// the `strongroom` command, with the same names and meanings. A service has
/// no terminal, so a passphrase comes from a command, never a prompt. No
/// option takes a key itself: a key on the command line would show in `ps`.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("A key file: 64 lowercase hex characters, mode 0600; or a wrapped key file, unwrapped with --passphrase-command.", valueName: "path"))
    var keyFile: String?

    @Option(name: .customLong("key-env"), help: ArgumentHelp("An environment variable holding the key's 64 hex characters (wiped from the process's environment once read).", valueName: "name"))
    var keyEnvironment: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("A systemd credential holding the key file: $CREDENTIALS_DIRECTORY/NAME (LoadCredentialEncrypted= in the unit).", valueName: "name"))
    var keyCredential: String?

    @Option(name: .customLong("key-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints the key's 64 lowercase hex characters.", valueName: "command"))
    var keyCommand: String?

    @Option(name: .customLong("passphrase-command"), help: ArgumentHelp("A command that prints the passphrase of a wrapped --key-file or --key-credential.", valueName: "command"))
    var passphraseCommand: String?

    @Option(name: .customLong("field-keys"), help: ArgumentHelp("The field keyring file (mode 0600), plain or wrapped, for the sealed e-mail and note.", valueName: "path"))
    var fieldKeys: String?

    @Option(name: .customLong("field-keys-credential"), help: ArgumentHelp("A systemd credential holding the field keyring: $CREDENTIALS_DIRECTORY/NAME.", valueName: "name"))
    var fieldKeysCredential: String?

    @Option(name: .customLong("field-keys-command"), help: ArgumentHelp("A command that prints the field keyring's text.", valueName: "command"))
    var fieldKeysCommand: String?

    @Option(name: .customLong("field-keys-passphrase-command"), help: ArgumentHelp("A command that prints the passphrase of a wrapped --field-keys or --field-keys-credential.", valueName: "command"))
    var fieldKeysPassphraseCommand: String?

    @Option(name: .customLong("command-timeout"), help: ArgumentHelp("Seconds a key, keyring or passphrase command may run.", valueName: "seconds"))
    var commandTimeoutSeconds: Double = 60

    @Flag(help: "Open a plaintext database file (a benchmark peer): no database key; e-mail and note stay sealed.")
    var plaintext = false

    func validate() throws {
        let keys = [keyFile, keyEnvironment, keyCredential, keyCommand].compactMap { $0 }.count
        if plaintext {
            guard keys == 0, passphraseCommand == nil else { throw ValidationError("--plaintext takes no database key: drop the key options.") }
        } else {
            guard keys == 1 else {
                throw ValidationError("Give the database key with exactly one of --key-file, --key-env, --key-credential or --key-command.")
            }
        }
        guard [fieldKeys, fieldKeysCredential, fieldKeysCommand].compactMap({ $0 }).count == 1 else {
            throw ValidationError("Give the field keyring with exactly one of --field-keys, --field-keys-credential or --field-keys-command.")
        }
        guard commandTimeoutSeconds >= 0.1, commandTimeoutSeconds <= 86_400 else {
            throw ValidationError("--command-timeout takes a number of seconds from 0.1 to 86400.")
        }
    }

    private var timeout: Duration { .milliseconds(Int64(commandTimeoutSeconds * 1000)) }

    /// The database key; nil with --plaintext.
    func databaseKey() throws(StrongroomError) -> DatabaseKey? {
        let passphrase = passphraseCommand.map { PassphraseSource.command(KeyCommand($0, timeout: timeout)) }
        if let keyFile { return try DatabaseKey.load(keyFile: keyFile, unwrappingWith: passphrase) }
        if let keyCredential { return try DatabaseKey.fromCredential(keyCredential, unwrappingWith: passphrase) }
        if let keyCommand { return try DatabaseKey.fromCommand(KeyCommand(keyCommand, timeout: timeout)) }
        if let keyEnvironment { return try DatabaseKey.takeFromEnvironment(keyEnvironment) }
        return nil
    }

    /// The field keyring.
    func fieldKeyring() throws(StrongroomError) -> FieldKeyring {
        let passphrase = fieldKeysPassphraseCommand.map { PassphraseSource.command(KeyCommand($0, timeout: timeout)) }
        if let fieldKeys { return try FieldKeyring.load(from: fieldKeys, unwrappingWith: passphrase) }
        if let fieldKeysCredential { return try FieldKeyring.fromCredential(fieldKeysCredential, unwrappingWith: passphrase) }
        return try FieldKeyring.load(fromCommand: KeyCommand(fieldKeysCommand!, timeout: timeout))
    }
}
