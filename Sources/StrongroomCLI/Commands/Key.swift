import ArgumentParser
import Foundation
import Strongroom
import StrongroomCrypto
import StrongroomFields

/// `strongroom key …`: wrapping key files and keyrings under a passphrase.
struct Key: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Wrap a key file or field keyring under a passphrase, or change the passphrase of a wrapped one (the database is not touched).",
        subcommands: [Wrap.self, Rewrap.self]
    )

    struct Wrap: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a wrapped copy of a plain key file or field keyring (the plain file is left for you to remove once the copy is backed up).")
        @Option(name: .customLong("in"), help: ArgumentHelp("The plain key file or field keyring.", valueName: "path")) var input: String
        @Option(help: ArgumentHelp("Where to write the wrapped copy (never overwrites).", valueName: "path")) var out: String
        @Flag(name: .customLong("passphrase-stdin"), help: "Read the passphrase from standard input (up to the first newline).")
        var passphraseFromStandardInput = false
        @Option(name: .customLong("passphrase-command"), help: ArgumentHelp("A command (run with /bin/sh -c) that prints the passphrase.", valueName: "command"))
        var passphraseCommand: String?
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if passphraseFromStandardInput && passphraseCommand != nil {
                throw ValidationError("Give the passphrase with one of --passphrase-stdin and --passphrase-command.")
            }
        }

        /// Whether the file's first line begins as a keyring's: only those
        /// bytes are read (not secret), never through a link or from a FIFO.
        static func startsAsAKeyring(_ path: String) -> Bool {
            let header = Array("strongroom field keyring".utf8)
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            // Into secure storage: of a plain key file, these are 24 of its hex digits.
            var count = 0
            let first = SecureBytes(count: header.count) { buffer in count = read(fd, buffer.baseAddress, buffer.count) }
            return count == header.count && first.withUnsafeBytes { $0.elementsEqual(header) }
        }

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                // A misspelled path is named before a passphrase is asked for.
                guard FileManager.default.fileExists(atPath: input) else {
                    throw StrongroomError(.notFound, "There is no file at \(input) to wrap; give the path of a plain key file or field keyring.", path: input)
                }
                let passphrase = try Passphrases.read(standardInput: passphraseFromStandardInput, command: passphraseCommand,
                                                      timeout: KeyCommand.defaultTimeout, prompt: "New passphrase for \(out): ",
                                                      confirm: true, options: "--passphrase-stdin or --passphrase-command")
                // Read (and so checked) as what it is, then written anew, wrapped.
                let what: String
                if WrappedKeyFile.isWrapped(at: input) {
                    throw StrongroomError(.misuse, "\(input) is wrapped already; change its passphrase with `strongroom key rewrap`.", path: input)
                } else if Self.startsAsAKeyring(input) {
                    what = "field keyring"
                    try FieldKeyring.load(from: input).write(to: out, wrappingWith: passphrase, parameters: WrappingOptions.parameters)
                } else {
                    what = "key file"
                    try KeyFile.write(try KeyFile.read(at: input), to: out, wrappingWith: passphrase, parameters: WrappingOptions.parameters)
                }
                if output.json {
                    Output.json(["wrapped": out, "from": input, "contents": what])
                } else {
                    print("Wrote \(out), the \(what) \(input) wrapped under your passphrase. Check that it opens, back it up, then remove the plain file (`shred -u \(input)`).")
                }
            }
        }
    }

    struct Rewrap: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the passphrase of a wrapped key file or field keyring; the key inside, and every database under it, stay as they are.")
        @Option(help: ArgumentHelp("The wrapped key file or field keyring (replaced atomically).", valueName: "path")) var file: String
        @Flag(name: .customLong("passphrase-stdin"), help: "Read the current passphrase from standard input (the first line).")
        var passphraseFromStandardInput = false
        @Option(name: .customLong("passphrase-command"), help: ArgumentHelp("A command that prints the current passphrase.", valueName: "command"))
        var passphraseCommand: String?
        @Flag(name: .customLong("new-passphrase-stdin"), help: "Read the new passphrase from standard input (after the current one, when both are read there).")
        var newPassphraseFromStandardInput = false
        @Option(name: .customLong("new-passphrase-command"), help: ArgumentHelp("A command that prints the new passphrase.", valueName: "command"))
        var newPassphraseCommand: String?
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if (passphraseFromStandardInput && passphraseCommand != nil) || (newPassphraseFromStandardInput && newPassphraseCommand != nil) {
                throw ValidationError("Give each passphrase one way: --passphrase-stdin or --passphrase-command, --new-passphrase-stdin or --new-passphrase-command.")
            }
        }

        func run() throws {
            try CommandFailure.reporting(json: output.json) {
                guard FileManager.default.fileExists(atPath: file) else {
                    throw StrongroomError(.notFound, "There is no file at \(file); give the path of a wrapped key file or field keyring.", path: file)
                }
                guard WrappedKeyFile.isWrapped(at: file) else {
                    throw StrongroomError(.misuse, "\(file) is not a wrapped key file or keyring; wrap it first with `strongroom key wrap --in \(file) --out NEW`.", path: file)
                }
                let current = try Passphrases.read(standardInput: passphraseFromStandardInput, command: passphraseCommand,
                                                   timeout: KeyCommand.defaultTimeout, prompt: "Current passphrase for \(file): ",
                                                   confirm: false, options: "--passphrase-stdin or --passphrase-command")
                let new = try Passphrases.read(standardInput: newPassphraseFromStandardInput, command: newPassphraseCommand,
                                               timeout: KeyCommand.defaultTimeout, prompt: "New passphrase for \(file): ",
                                               confirm: true, options: "--new-passphrase-stdin or --new-passphrase-command")
                let contents = try WrappedKeyFile.rewrap(at: file, from: .bytes(current), to: new, parameters: WrappingOptions.parameters)
                let what = contents == .fieldKeyring ? "field keyring" : "key file"
                if output.json {
                    Output.json(["rewrapped": file, "contents": what])
                } else {
                    print("Changed the passphrase of the wrapped \(what) \(file); the key inside is the same, so nothing else changes. Only the new passphrase opens it now; back it up again.")
                }
            }
        }
    }
}
