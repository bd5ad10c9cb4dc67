import Foundation
public import StrongroomCrypto

/// Where the passphrase that unwraps a wrapped key file or keyring comes
/// from. It is asked for only when the file turns out to be wrapped, and
/// only once per file read.
///
/// ```swift
/// let key = try KeyFile.read(at: "Keys/app.key", unwrappingWith: .standardInput)
/// let viaVault = try KeyFile.read(at: "Keys/app.key",
///                                 unwrappingWith: .command(KeyCommand("vault kv get -field=wrap secret/app")))
/// ```
public struct PassphraseSource: Sendable {
    private let read: @Sendable () throws(StrongroomError) -> SecureBytes

    /// A source that calls `read` when a passphrase is needed (a prompt in
    /// an app's own UI, say). An empty passphrase is refused.
    public init(_ read: @escaping @Sendable () throws(StrongroomError) -> SecureBytes) {
        self.read = read
    }

    /// The passphrase, read now.
    ///
    /// - Throws: what the source throws; ``StrongroomError/Code/keyMissing``
    ///   for an empty passphrase.
    public func passphrase() throws(StrongroomError) -> SecureBytes {
        let bytes = try read()
        guard bytes.count > 0 else {
            throw StrongroomError(.keyMissing, "The passphrase to unwrap the key is empty; give the passphrase it was wrapped under.")
        }
        return bytes
    }

    /// Standard input up to its end or its first newline (not echoed; see
    /// ``DatabaseKey/passphraseFromStandardInput()``).
    public static let standardInput = PassphraseSource { () throws(StrongroomError) in
        try DatabaseKey.readSecretLine(from: STDIN_FILENO, limit: DatabaseKey.passphraseByteLimit)
    }

    /// What `command` prints (see ``KeyCommand``).
    public static func command(_ command: KeyCommand) -> PassphraseSource {
        PassphraseSource { () throws(StrongroomError) in
            try command.output(limit: DatabaseKey.passphraseByteLimit, what: "passphrase")
        }
    }

    /// A passphrase the application holds already.
    public static func bytes(_ passphrase: SecureBytes) -> PassphraseSource {
        PassphraseSource { () throws(StrongroomError) in passphrase }
    }
}
