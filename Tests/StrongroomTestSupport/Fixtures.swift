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

    public static func copy(_ source: String, to destination: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}

extension Fixtures {
    /// The SQLCipher 3 database of `Tests/Fixtures/SQLCipher3/` (see its
    /// README), copied into `directory` with its key file and field keyring
    /// (mode 0600, which git does not keep).
    public static func legacyDatabase(in directory: TemporaryDirectory) throws -> (database: String, keyFile: String, keyring: String) {
        let source = repositoryRoot + "/Tests/Fixtures/SQLCipher3/"
        let copy = (database: directory.file("legacy.db"), keyFile: directory.file("legacy.key"), keyring: directory.file("legacy-fields.keyring"))
        try Self.copy(source + "legacy.db", to: copy.database)
        for (name, path) in [("legacy.key", copy.keyFile), ("legacy-fields.keyring", copy.keyring)] {
            try Self.copy(source + name, to: path)
            chmod(path, 0o600)
        }
        return copy
    }

    /// The legacy database's tables and their row counts (Chinook's, the
    /// migration history and the sealed-column registry).
    public static let legacyRowCounts: [String: Int] = [
        "Album": 347, "Artist": 275, "Customer": 59, "CustomerNote": 59, "Employee": 8, "Genre": 25, "Invoice": 412,
        "InvoiceLine": 2240, "MediaType": 5, "Playlist": 18, "PlaylistTrack": 8715, "Track": 3503,
        "strongroom_sealed_columns": 1, "strongroom_migrations": 5,
    ]
}
