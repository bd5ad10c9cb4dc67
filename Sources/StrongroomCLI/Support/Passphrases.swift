import Foundation
import Strongroom
import StrongroomCrypto

/// Passphrases the commands ask for: from standard input, a command, or a
/// prompt on the terminal (not echoed). Never from an argument.
enum Passphrases {
    /// A passphrase from standard input (`standardInput`), a command, or else
    /// the terminal, where `confirm` asks twice (for a new passphrase).
    ///
    /// - Throws: `key_missing` with no terminal and neither option;
    ///   `misuse` when the two typed passphrases differ.
    static func read(standardInput: Bool, command: String?, timeout: Duration, prompt: String,
                     confirm: Bool, options: String) throws(StrongroomError) -> SecureBytes {
        if let command {
            return try PassphraseSource.command(KeyCommand(command, timeout: timeout)).passphrase()
        }
        if !standardInput && isatty(STDIN_FILENO) != 1 {
            throw StrongroomError(.keyMissing, "No passphrase: standard input is not a terminal to ask on; give \(options).")
        }
        let first = try prompted(prompt)
        guard confirm && !standardInput else { return first }
        let again = try prompted("Again: ")
        guard first == again else {
            throw StrongroomError(.misuse, "The two passphrases differ; nothing was written. Try again.")
        }
        return first
    }

    /// The passphrase that unwraps a wrapped key file or keyring, asked only
    /// when it is wrapped: from standard input, a command, or the terminal;
    /// with none of them, a wrapped file is refused as `key_missing`, naming
    /// `options`, the ones that give this file's passphrase.
    static func unwrapping(standardInput: Bool, command: String?, timeout: Duration, what: String, options: String) -> PassphraseSource {
        if let command { return .command(KeyCommand(command, timeout: timeout)) }
        guard standardInput || isatty(STDIN_FILENO) == 1 else {
            return PassphraseSource { () throws(StrongroomError) in
                throw StrongroomError(.keyMissing, "\(what.prefix(1).uppercased() + what.dropFirst()) is wrapped under a passphrase, and there is no terminal to ask on: give the passphrase with \(options).")
            }
        }
        return PassphraseSource { () throws(StrongroomError) in try prompted("Passphrase for \(what): ") }
    }

    /// Refuses a passphrase option for a file that is not wrapped: it would
    /// mean something it does not.
    static func refuseUnlessWrapped(_ path: String, what: String, options: String) throws(StrongroomError) {
        // Only a regular file this process can read is known not to be wrapped; a link, a
        // missing or unreadable file is left to the reader, which names what is wrong.
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0,
              !WrappedKeyFile.isWrapped(at: path) else { return }
        throw StrongroomError(.misuse, "The \(what) \(path) is not wrapped, so it takes no passphrase; drop \(options), or wrap it with `strongroom key wrap`.", path: path)
    }

    /// A line of standard input, echo off and `prompt` shown on a terminal.
    private static func prompted(_ prompt: String) throws(StrongroomError) -> SecureBytes {
        try TerminalEcho.withoutEcho(prompt: prompt) { () throws(StrongroomError) in
            try PassphraseSource.standardInput.passphrase()
        }
    }
}
