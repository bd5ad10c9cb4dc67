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
        // systemd's credential names: a file name, printable (no "/", no control character).
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StrongroomError(.misuse, "A credential name is a file name in $\(credentialsDirectoryVariable), not \(name.debugDescription); give the name of LoadCredential=/LoadCredentialEncrypted= in the unit.")
        }
        guard let directory = ProcessInfo.processInfo.environment[credentialsDirectoryVariable], !directory.isEmpty else {
            throw StrongroomError(.keyMissing, "$\(credentialsDirectoryVariable) is not set, so there is no systemd credential \(name): run this as a service whose unit has LoadCredentialEncrypted=\(name):PATH (or LoadCredential=), or give the key another way.")
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw StrongroomError(.notFound, "The credentials directory \(directory) ($\(credentialsDirectoryVariable)) does not exist; systemd creates it for a service with credentials.", path: directory)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StrongroomError(.notFound, "$\(credentialsDirectoryVariable) names \(directory), which is not a directory.", path: directory)
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StrongroomError(.keyFilePermissions, "The credentials directory \(directory) is open to group or others (mode \(mode)); systemd makes it private to the service: run `chmod 700 \(directory)` if you made it yourself.", path: directory)
        }
        return try KeyFile.read(at: directory + "/" + name, what: "systemd credential",
                                createHint: "add LoadCredentialEncrypted=\(name):PATH to the unit (PATH made with `systemd-creds encrypt --name=\(name)`)",
                                unwrappingWith: passphrase, source: (.credential, .wrappedCredential))
    }
}
