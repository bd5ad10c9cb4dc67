import Foundation
import StrongroomTestSupport
import Testing

/// `make docs` (Scripts/build-docs.sh) must fail on a broken symbol link and
/// on a public symbol without a doc comment: run in a scratch copy of the
/// package, with each defect planted in StrongroomCrypto (the smallest module).
@Suite("Documentation build")
struct DocumentationBuildTests {
    @Test(.timeLimit(.minutes(10))) func aBrokenLinkOrAnUndocumentedSymbolFailsTheBuild() async throws {
        let dir = TemporaryDirectory()
        let copy = dir.file("package")
        let manager = FileManager.default
        try manager.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for item in ["Package.swift", "Sources", "Tests", "Scripts", "Examples", "Snippets"] {
            try manager.copyItem(atPath: Fixtures.repositoryRoot + "/" + item, toPath: copy + "/" + item)
        }
        let file = copy + "/Sources/StrongroomCrypto/Support/SecureRandom.swift"
        let original = try String(contentsOfFile: file, encoding: .utf8)
        func docs() async throws -> ProcessResult {
            try await ProcessRunner.run("/bin/bash", [copy + "/Scripts/build-docs.sh", "StrongroomCrypto"], currentDirectory: copy)
        }

        // As it is, the copy builds.
        let clean = try await docs()
        #expect(clean.status == 0, "\(clean.stderr)")

        // A link to a symbol that does not exist.
        try original.replacingOccurrences(of: "public enum SecureRandom", with: "/// See ``NoSuchSymbol``.\npublic enum SecureRandom")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let broken = try await docs()
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("NoSuchSymbol"), "\(broken.stderr)")

        // A public function without a doc comment.
        try (original + "\nextension SecureRandom {\n    public static func undocumentedHelper() {}\n}\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let undocumented = try await docs()
        #expect(undocumented.status != 0)
        #expect(undocumented.stderr.contains("undocumentedHelper()"), "\(undocumented.stderr)")
    }
}
