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
