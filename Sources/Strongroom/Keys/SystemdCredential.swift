import Foundation

/// The checks every systemd credential gets before it is read, in one place:
/// ``DatabaseKey/fromCredential(_:unwrappingWith:)`` and
/// `FieldKeyring.fromCredential(_:unwrappingWith:)` (StrongroomFields) both
/// find their file here, then read it as a secret file (`SecretFile`), which
/// holds it to a key file's rules.
///
/// ```swift
/// let path = try SystemdCredential.path(of: "app-fields", holding: "the field keyring")
/// let file = try SecretFile.read(at: path, maximumSize: 4096, what: SystemdCredential.what,
///                                createHint: SystemdCredential.missingHint("app-fields"), malformed: .malformedKey)
/// ```
package enum SystemdCredential {
    /// What a credential is called in the messages of the file's own checks.
    package static let what = "systemd credential"

    /// The path of the systemd credential `name`, `$CREDENTIALS_DIRECTORY/name`,
    /// once `name` is one file name and the directory is there, is a directory
    /// and is closed to group and others, as systemd makes it for a service.
    ///
    /// The file itself is not looked at: read it with `SecretFile.read(at:…)`,
    /// naming it ``what`` and saying ``missingHint(_:)`` when it is missing,
    /// which refuses a symbolic link, a file not the user's own or open to
    /// group or others.
    ///
    /// ```swift
    /// let path = try SystemdCredential.path(of: "app-db-key", holding: "the key")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The credential's name in the unit (`LoadCredentialEncrypted=NAME:PATH`).
    ///   - secret: What the credential holds, for the messages ("the key", "the field keyring").
    /// - Throws: ``StrongroomError/Code/misuse`` for a name that is not one
    ///   file name; ``StrongroomError/Code/keyMissing`` when
    ///   `$CREDENTIALS_DIRECTORY` is not set; ``StrongroomError/Code/notFound``
    ///   when the directory is missing or not a directory;
    ///   ``StrongroomError/Code/keyFilePermissions`` when group or others may
    ///   use the directory. Each message says what to do; none can quote a key,
    ///   since no file is read.
    package static func path(of name: String, holding secret: String) throws(StrongroomError) -> String {
        let variable = DatabaseKey.credentialsDirectoryVariable
        // systemd's credential names: a file name, printable (no "/", no control character).
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StrongroomError(.misuse, "A credential name is a file name in $\(variable), not \(name.debugDescription); give the name of LoadCredential=/LoadCredentialEncrypted= in the unit.")
        }
        guard let directory = ProcessInfo.processInfo.environment[variable], !directory.isEmpty else {
            throw StrongroomError(.keyMissing, "$\(variable) is not set, so there is no systemd credential \(name): run this as a service whose unit has LoadCredentialEncrypted=\(name):PATH (PATH made with `systemd-creds encrypt --name=\(name)`; or LoadCredential=), or give \(secret) another way.")
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw StrongroomError(.notFound, "The credentials directory \(directory) ($\(variable)) does not exist; systemd creates it for a service with credentials.", path: directory)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StrongroomError(.notFound, "$\(variable) names \(directory), which is not a directory.", path: directory)
        }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw StrongroomError(.keyFilePermissions, "The credentials directory \(directory) is open to group or others (mode \(mode)); systemd makes it private to the service: run `chmod 700 \(directory)` if you made it yourself.", path: directory)
        }
        return directory + "/" + name
    }

    /// What to do when the credential `name` is not in the directory: the
    /// `createHint` of `SecretFile.read(at:…)`.
    ///
    /// ```swift
    /// SystemdCredential.missingHint("app-db-key")
    /// // add LoadCredentialEncrypted=app-db-key:PATH to the unit (PATH made with `systemd-creds encrypt --name=app-db-key`)
    /// ```
    package static func missingHint(_ name: String) -> String {
        "add LoadCredentialEncrypted=\(name):PATH to the unit (PATH made with `systemd-creds encrypt --name=\(name)`)"
    }
}
