import ArgumentParser
import Foundation
import Strongroom

/// Where the key of the database comes from. Exactly one source is required;
/// none of them puts the key on the command line.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp("A key file: 64 lowercase hex characters, mode 0600.", valueName: "path"))
    var keyFile: String?

    @Option(name: .customLong("key-env"), help: ArgumentHelp("An environment variable holding the 64 hex characters of the key (wiped from this process's environment once read).", valueName: "name"))
    var keyEnvironment: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("A systemd credential holding the key file's 64 hex characters: $CREDENTIALS_DIRECTORY/NAME (LoadCredentialEncrypted= or LoadCredential= in the unit).", valueName: "name"))
    var keyCredential: String?

    @Flag(name: .customLong("passphrase-stdin"), help: "Read a passphrase from standard input (up to the first newline; on a terminal, prompted and not echoed).")
    var passphraseFromStandardInput = false

    @Option(name: .customLong("cipher-compatibility"), help: ArgumentHelp("Open a file in an older SQLCipher's format as it is: 3 for a file SQLCipher 3 wrote, on SQLCipher 4 (PRAGMA cipher_compatibility). `strongroom upgrade` converts it once instead.", valueName: "3"))
    var cipherCompatibility: Int?

    func validate() throws {
        let count = [keyFile != nil, keyEnvironment != nil, keyCredential != nil, passphraseFromStandardInput].filter { $0 }.count
        guard count == 1 else {
            throw ValidationError("Give the database key with exactly one of --key-file, --key-env, --key-credential or --passphrase-stdin.")
        }
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

    /// Overwrites the value of `name` in place, then removes the variable:
    /// `/proc/PID/environ` (and `ps e`) show the environment block the
    /// process started with, which `unsetenv` alone leaves as it was.
    static func wipeEnvironmentVariable(_ name: String) {
        if let value = getenv(name) { memset(value, 0, strlen(value)) }
        unsetenv(name)
    }

    func loadKey() throws(StrongroomError) -> DatabaseKey {
        if let keyFile { return try DatabaseKey.load(keyFile: keyFile) }
        if let keyCredential { return try DatabaseKey.fromCredential(keyCredential) }
        if let keyEnvironment {
            let key = try DatabaseKey.fromEnvironment(keyEnvironment)
            Self.wipeEnvironmentVariable(keyEnvironment)
            return key
        }
        // On a terminal: a prompt, and nothing of the passphrase on screen.
        return try TerminalEcho.withoutEcho(prompt: "Passphrase: ") { () throws(StrongroomError) in
            try DatabaseKey.passphraseFromStandardInput()
        }
    }
}

/// `--json`, shared by every command.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print machine-readable JSON on standard output.")
    var json = false
}
