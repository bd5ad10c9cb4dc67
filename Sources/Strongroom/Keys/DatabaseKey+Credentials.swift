import Foundation

/// systemd credentials: a key the service manager hands a service at start-up.
///
/// A unit file names the credential; systemd decrypts it (`LoadCredentialEncrypted=`,
/// sealed with `systemd-creds encrypt` to the host key or a TPM) or copies it
/// (`LoadCredential=`) into a directory only that service can read, and names
/// the directory in `$CREDENTIALS_DIRECTORY`. No readable key lies on disk.
///
/// ```ini
/// [Service]
/// LoadCredentialEncrypted=app-db-key:/etc/credstore.encrypted/app-db-key
/// ExecStart=/usr/local/bin/app
/// ```
extension DatabaseKey {
    /// The environment variable systemd sets to a service's credentials directory.
    public static let credentialsDirectoryVariable = "CREDENTIALS_DIRECTORY"

    /// The raw key in the systemd credential `name`: the file
    /// `$CREDENTIALS_DIRECTORY/name`, in the format of a key file (64 lowercase
    /// hex characters, or a wrapped key file unwrapped with a passphrase from
    /// `passphrase`), with a key file's checks (mode, owner, directory).
    ///
    /// ```swift
    /// let key = try DatabaseKey.fromCredential("app-db-key")
    /// ```
    ///
    /// - Throws: ``StrongroomError/Code/keyMissing`` when `$CREDENTIALS_DIRECTORY`
    ///   is not set (not a systemd service with credentials);
    ///   ``StrongroomError/Code/notFound`` when the directory or the credential is
    ///   missing; ``StrongroomError/Code/keyFilePermissions`` when others may
    ///   read the directory or the credential; ``StrongroomError/Code/misuse``
    ///   for a name that is not one file name; the errors of ``KeyFile/read(at:unwrappingWith:)``.
    ///   None quotes the key.
    public static func fromCredential(_ name: String, unwrappingWith passphrase: PassphraseSource? = nil) throws(StrongroomError) -> DatabaseKey {
        let path = try SystemdCredential.path(of: name, holding: "the key")
        return try KeyFile.read(at: path, what: SystemdCredential.what, createHint: SystemdCredential.missingHint(name),
                                unwrappingWith: passphrase, source: (.credential, .wrappedCredential))
    }
}
