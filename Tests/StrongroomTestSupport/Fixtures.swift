import Foundation

/// Paths and byte helpers shared by the test targets.
public enum Fixtures {
    /// The repository root, found from this file's path.
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The built `strongroom` command: the test bundle sits next to the
    /// products in `.build/<configuration>/`.
    public static let strongroomBinary = product("strongroom")

    /// The reliability tests' child process (`Tests/ReliabilityChild`).
    public static let reliabilityChild = product("reliability-child")

    /// A built executable of this package, beside the test bundle.
    static func product(_ name: String) -> String {
        let products = URL(fileURLWithPath: CommandLine.arguments.first { $0.contains(".xctest") } ?? CommandLine.arguments[0])
            .deletingLastPathComponent().path
        for candidate in [products + "/" + name, repositoryRoot + "/.build/debug/" + name]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return repositoryRoot + "/.build/debug/" + name
    }

    /// The Chinook sample database (MIT, see Examples/README.md).
    public static let chinook = repositoryRoot + "/Examples/chinook.sqlite"

    public static func bytes(of path: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
    }

    public static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let n = Array(needle.utf8)
        guard !n.isEmpty, haystack.count >= n.count else { return false }
        for i in 0...(haystack.count - n.count) where haystack[i] == n[0] {
            if Array(haystack[i..<(i + n.count)]) == n { return true }
        }
        return false
    }

    /// The 64 hex characters of the key file at `path` (for searching output for the key).
    public static func hex(ofKeyFile path: String) -> String {
        String(decoding: bytes(of: path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func copy(_ source: String, to destination: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}

extension Fixtures {
    /// What the last release (c1ae6b1) wrote, as plaintext:
    /// `Tests/Fixtures/SQLCipher3/release-c1ae6b1.sqlite` (see its README).
    public static let legacyRelease = repositoryRoot + "/Tests/Fixtures/SQLCipher3/release-c1ae6b1.sqlite"

    /// A SQLCipher 3 database holding what the last release wrote (schema,
    /// migration history, rows, `user_version` 7, `application_id`
    /// 1398165071, Customer.Email sealed), written by SQLCipher 3.4.1 (SQLite
    /// 3.15.2) under a key and field keyring made here (mode 0600): tests
    /// make their own keys.
    ///
    /// The `strongroom` command imports the release's content and seals
    /// Customer.Email. On SQLCipher 3 that file is the fixture. On SQLCipher 4
    /// it is exported as plaintext (sealed values stay sealed), and SQLCipher
    /// 3's own shell (the system's `sqlcipher` 3.x, found on PATH or in
    /// /usr/bin) encrypts that into the fixture with `sqlcipher_export`, so
    /// the file SQLCipher 4 is tested on was written by SQLCipher 3.
    public static func legacyDatabase(in directory: TemporaryDirectory) throws -> (database: String, keyFile: String, keyring: String) {
        try legacyDatabase(inDirectory: directory.path)
    }

    /// ``legacyDatabase(in:)`` in a directory of the caller's.
    public static func legacyDatabase(inDirectory directory: String) throws -> (database: String, keyFile: String, keyring: String) {
        let made = (database: directory + "/legacy.db", keyFile: directory + "/legacy.key", keyring: directory + "/legacy-fields.keyring")
        let native = directory + "/legacy-native.db", plain = directory + "/legacy-plain.sqlite"
        @discardableResult
        func strongroom(_ arguments: String...) throws -> ProcessResult {
            let result = try ProcessRunner.run(strongroomBinary, arguments, currentDirectory: directory)
            guard result.status == 0 else { throw FixtureError("strongroom \(arguments[0]) exited \(result.status): \(result.stderr)") }
            return result
        }
        try strongroom("keygen", "--out", made.keyFile)
        try strongroom("keygen", "--field", "--out", made.keyring)
        try strongroom("import", "--from", legacyRelease, "--database", native, "--key-file", made.keyFile,
                       "--field-keys", made.keyring, "--seal", "Customer.Email")
        try strongroom("sql", "--write", "--database", native, "--key-file", made.keyFile, "PRAGMA journal_mode = DELETE")
        // The release recorded no field key checks (issue 36): its file has no such table.
        try strongroom("sql", "--write", "--database", native, "--key-file", made.keyFile, "DROP TABLE strongroom_field_keys")
        // Nor did it sign its registry (issue 50): a database of that release is confirmed by the operator.
        try strongroom("sql", "--write", "--database", native, "--key-file", made.keyFile, "DROP TABLE strongroom_registry_signature")
        let status = try strongroom("status", "--json", "--database", native, "--key-file", made.keyFile)
        let format = ((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any])?["format"] as? Int
        switch format {
        case 3:
            guard rename(native, made.database) == 0 else { throw FixtureError("rename: errno \(errno)") }
        case 4:
            defer { for path in [native, plain] { unlink(path) } }
            try strongroom("export", "--database", native, "--key-file", made.keyFile, "--to", plain, "--i-understand-the-output-is-plaintext")
            let shell = try sqlcipher3Shell()
            let hex = hex(ofKeyFile: made.keyFile)
            let quoted = "'" + made.database.replacingOccurrences(of: "'", with: "''") + "'"
            let copy = try ProcessRunner.run(shell, ["-bail", plain], input: """
                ATTACH DATABASE \(quoted) AS legacy KEY "x'\(hex)'";
                SELECT sqlcipher_export('legacy');
                PRAGMA legacy.user_version = \(legacyUserVersion);
                PRAGMA legacy.application_id = \(legacyApplicationID);
                DETACH DATABASE legacy;
                """)
            // The shell echoes a statement it cannot parse, key included: its output stays out of the error.
            guard copy.status == 0, copy.stderr.isEmpty else {
                throw FixtureError("SQLCipher 3's sqlcipher shell (\(shell)) exited \(copy.status) while encrypting the fixture; its output is withheld, since it may hold the key")
            }
        default:
            throw FixtureError("strongroom status reported no format: \(status.stdout)")
        }
        guard chmod(made.database, 0o600) == 0 else { throw FixtureError("chmod: errno \(errno)") }
        return made
    }

    /// A `sqlcipher` shell of SQLCipher 3 (the system's, on Debian 12), on
    /// PATH or in /usr/bin: what wrote the files of the last release.
    public static func sqlcipher3Shell() throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/sqlcipher") {
            let shell = directory + "/sqlcipher"
            if let version = try? ProcessRunner.run(shell, [":memory:", "PRAGMA cipher_version;"]), version.stdout.hasPrefix("3.") {
                return shell
            }
        }
        throw FixtureError("no sqlcipher shell of SQLCipher 3 on PATH or in /usr/bin (Debian 12's sqlcipher package): the SQLCipher 3 fixture is written with it")
    }

    /// The release file's `user_version` and `application_id`.
    public static let legacyUserVersion = 7, legacyApplicationID = 1_398_165_071

    /// The legacy database's tables and their row counts (Chinook's, the
    /// migration history and the sealed-column registry).
    public static let legacyRowCounts: [String: Int] = [
        "Album": 347, "Artist": 275, "Customer": 59, "CustomerNote": 59, "Employee": 8, "Genre": 25, "Invoice": 412,
        "InvoiceLine": 2240, "MediaType": 5, "Playlist": 18, "PlaylistTrack": 8715, "Track": 3503,
        "strongroom_sealed_columns": 1, "strongroom_migrations": 5,
    ]
}

/// A fixture that could not be made, and why.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
