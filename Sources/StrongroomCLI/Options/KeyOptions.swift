import ArgumentParser
import Foundation
import Strongroom

/// Where the key of the database comes from. Exactly one source is required
/// (a wrapped key file or credential also takes the passphrase that unwraps
/// it); none of them puts the key on the command line.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("A key file: 64 lowercase hex characters, mode 0600; or a wrapped key file (strongroom keygen --wrap), unwrapped with a passphrase typed on the terminal, or given by --passphrase-stdin or --passphrase-command.", valueName: "path"))
    var keyFile: String?

    @Option(name: .customLong("key-env"), help: ArgumentHelp("An environment variable holding the 64 hex characters of the key (wiped from this process's environment once read).", valueName: "name"))
    var keyEnvironment: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("A systemd credential holding the key file's 64 hex characters: $CREDENTIALS_DIRECTORY/NAME (LoadCredentialEncrypted= or LoadCredential= in the unit).", valueName: "name"))
    var keyCredential: String?

    @Option(name: .customLong("key-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints the key's 64 lowercase hex characters on its standard output, as a password manager does; its exit status is checked, its stderr shown.", valueName: "command"))
    var keyCommand: String?

    @Flag(name: .customLong("passphrase-stdin"), help: "Read a passphrase from standard input (up to the first newline; on a terminal, prompted and not echoed): the database's passphrase, or with a wrapped --key-file or --key-credential, the one that unwraps it.")
    var passphraseFromStandardInput = false

    @Option(name: .customLong("passphrase-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints a passphrase: the database's, or with a wrapped --key-file or --key-credential, the one that unwraps it.", valueName: "command"))
    var passphraseCommand: String?

    @Option(name: .customLong("command-timeout"), help: ArgumentHelp("Seconds a --key-command, --passphrase-command or --field-keys-command may run before it is stopped.", valueName: "seconds"))
    var commandTimeoutSeconds: Double = 60

    @Option(name: .customLong("cipher-compatibility"), help: ArgumentHelp("Open a file in an older SQLCipher's format as it is: 3 for a file SQLCipher 3 wrote, on SQLCipher 4 (PRAGMA cipher_compatibility). `strongroom upgrade` converts it once instead.", valueName: "3"))
    var cipherCompatibility: Int?

    func validate() throws {
        let files = [keyFile != nil, keyCredential != nil].filter { $0 }.count
        let others = [keyEnvironment != nil, keyCommand != nil].filter { $0 }.count
        let passphrases = [passphraseFromStandardInput, passphraseCommand != nil].filter { $0 }.count
        guard files + others <= 1, passphrases <= 1, files + others + passphrases >= 1, others + passphrases <= 1 else {
            throw ValidationError("Give the database key with exactly one of --key-file, --key-env, --key-credential, --key-command, --passphrase-stdin or --passphrase-command (a wrapped --key-file or --key-credential may add --passphrase-stdin or --passphrase-command for the passphrase that unwraps it).")
        }
        guard commandTimeoutSeconds >= 0.1, commandTimeoutSeconds <= 86_400 else {
            throw ValidationError("--command-timeout takes a number of seconds from 0.1 to 86400, not \(commandTimeoutSeconds).")
        }
        // Taken now, and its variable wiped, before any command runs: a keyring or
        // passphrase command started before the key is loaded must not inherit it.
        if let keyEnvironment { EnvironmentKeys.shared.take(keyEnvironment) }
        if let cipherCompatibility, CipherFormat(rawValue: cipherCompatibility) == nil {
            throw ValidationError("--cipher-compatibility takes 3 or 4 (the SQLCipher major version that wrote the file), not \(cipherCompatibility).")
        }
    }

    /// How the commands open an existing database: with this key, never
    /// creating a file, read-only unless they change it, keeping its journal mode.
    func open(_ path: String, readOnly: Bool) throws(StrongroomError) -> Connection {
        try Connection(path: path, configuration: existing(try loadKey(), readOnly: readOnly))
    }

    /// The configuration for a database the command did not create, in the
    /// format --cipher-compatibility names.
    func existing(_ key: DatabaseKey, readOnly: Bool = false) -> Configuration {
        var configuration = Self.existing(key, readOnly: readOnly)
        configuration.cipherCompatibility = cipherCompatibility.flatMap(CipherFormat.init(rawValue:))
        return configuration
    }

    /// The configuration for a database the command did not create.
    static func existing(_ key: DatabaseKey, readOnly: Bool = false) -> Configuration {
        var configuration = Configuration(key: key)
        configuration.readOnly = readOnly
        configuration.createIfMissing = false
        configuration.keepsJournalMode = true
        return configuration
    }

    /// How long a key or passphrase command may run.
    var commandTimeout: Duration { .milliseconds(Int64(commandTimeoutSeconds * 1000)) }

    /// True when the key, or the passphrase that unwraps it, is read from standard input.
    var readsStandardInput: Bool { passphraseFromStandardInput }

    func loadKey() throws(StrongroomError) -> DatabaseKey {
        if keyFile != nil || keyCredential != nil {
            let what = keyFile.map { "the key file \($0)" } ?? "the credential \(keyCredential!)"
            let unwrapping = Passphrases.unwrapping(standardInput: passphraseFromStandardInput, command: passphraseCommand, timeout: commandTimeout,
                                                    what: what, options: "--passphrase-stdin or --passphrase-command")
            let key = if let keyFile {
                try DatabaseKey.load(keyFile: keyFile, unwrappingWith: unwrapping)
            } else {
                try DatabaseKey.fromCredential(keyCredential!, unwrappingWith: unwrapping)
            }
            // A passphrase option with a plain key file would mean something else than it does.
            if (passphraseFromStandardInput || passphraseCommand != nil) && !(key.source == .wrappedKeyFile || key.source == .wrappedCredential) {
                throw StrongroomError(.misuse, "\(what.prefix(1).uppercased() + what.dropFirst()) is not wrapped, so it takes no passphrase; drop --passphrase-stdin/--passphrase-command, or wrap it with `strongroom key wrap`.")
            }
            return key
        }
        if let keyEnvironment { return try EnvironmentKeys.shared.key(keyEnvironment) }
        if let keyCommand { return try DatabaseKey.fromCommand(KeyCommand(keyCommand, timeout: commandTimeout)) }
        if let passphraseCommand { return try DatabaseKey.passphraseFromCommand(KeyCommand(passphraseCommand, timeout: commandTimeout)) }
        // On a terminal: a prompt, and nothing of the passphrase on screen.
        return try TerminalEcho.withoutEcho(prompt: "Passphrase: ") { () throws(StrongroomError) in
            try DatabaseKey.passphraseFromStandardInput()
        }
    }
}

/// The passphrase of a wrapped `--new-key-file` (rekey, upgrade, backup):
/// printed by a command, or typed on the terminal.
struct NewKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-passphrase-command"), help: ArgumentHelp("A command that prints the passphrase of a wrapped --new-key-file (on a terminal it is asked for otherwise).", valueName: "command"))
    var newPassphraseCommand: String?

    /// The new key in the key file at `path`, unwrapped when it is wrapped.
    func load(_ path: String, timeout: Duration) throws(StrongroomError) -> DatabaseKey {
        if newPassphraseCommand != nil {
            try Passphrases.refuseUnlessWrapped(path, what: "new key file", options: "--new-passphrase-command")
        }
        return try DatabaseKey.load(keyFile: path, unwrappingWith: Passphrases.unwrapping(
            standardInput: false, command: newPassphraseCommand, timeout: timeout, what: "the new key file \(path)", options: "--new-passphrase-command"))
    }
}

/// Keys given in the environment (`--key-env`), taken once as soon as the
/// options are checked, their variables wiped at once.
final class EnvironmentKeys: @unchecked Sendable {
    // @unchecked Sendable: `taken` is guarded by `lock`.
    static let shared = EnvironmentKeys()
    private let lock = NSLock()
    private var taken: [String: Result<DatabaseKey, StrongroomError>] = [:]

    /// Reads the key in `name` (or the error that says why not), and wipes the variable.
    func take(_ name: String) {
        lock.withLock {
            guard taken[name] == nil else { return }
            taken[name] = Result { () throws(StrongroomError) in try DatabaseKey.takeFromEnvironment(name) }
        }
    }

    /// The key taken from `name`.
    func key(_ name: String) throws(StrongroomError) -> DatabaseKey {
        take(name)
        return try lock.withLock { taken[name]! }.get()
    }
}

/// `--json`, shared by every command.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print machine-readable JSON on standard output.")
    var json = false
}
