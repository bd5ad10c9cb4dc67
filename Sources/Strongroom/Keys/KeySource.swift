/// Where a ``DatabaseKey`` came from, as `strongroom status` reports it: the
/// kind of source, never its path, name or contents.
///
/// ```swift
/// let key = try KeyFile.read(at: "Keys/app.key", unwrappingWith: .standardInput)
/// print(key.source)   // "wrapped key file" or "key file"
/// ```
public enum KeySource: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Made or handed over by the application itself (``DatabaseKey/generate()``,
    /// ``DatabaseKey/raw(_:)-(SecureBytes)``, ``DatabaseKey/passphrase(_:)-(String)``).
    case application = "application"
    /// A plain key file (``KeyFile``).
    case keyFile = "key file"
    /// A key file wrapped under a passphrase (``WrappedKeyFile``).
    case wrappedKeyFile = "wrapped key file"
    /// An environment variable (``DatabaseKey/fromEnvironment(_:)``).
    case environment = "environment variable"
    /// A passphrase on standard input (``DatabaseKey/passphraseFromStandardInput()``).
    case standardInput = "standard input"
    /// A command's output (``KeyCommand``).
    case command = "key command"
    /// A systemd credential (``DatabaseKey/fromCredential(_:unwrappingWith:)``).
    case credential = "systemd credential"
    /// A systemd credential holding a wrapped key file.
    case wrappedCredential = "wrapped systemd credential"

    /// The kind, in words.
    public var description: String { rawValue }

}
