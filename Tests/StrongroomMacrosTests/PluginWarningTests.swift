import Foundation
import StrongroomTestSupport
import Testing

/// Issue 36, item 9: a user's build compiles the macro plugin, and on
/// Swift 6.3 it warned "capture of non-Sendable type 'Context.Type' in an
/// isolated closure [#SendableMetatypes]" (a static method of the generic
/// `TableReader<Context>` passed as a closure). The plugin's sources are
/// type-checked here as the package builds them (Swift 6, its upcoming
/// features), against the swift-syntax modules this build made, and must
/// give no warning.
@Suite("@Table plugin: a user's build")
struct PluginWarningTests {
    /// The directory of this build's products (`.build/debug`, say).
    static var products: String {
        CommandLine.arguments.first { $0.contains(".xctest") }
            .map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } ?? Fixtures.repositoryRoot + "/.build/debug"
    }

    @Test func thePluginCompilesWithoutAWarning() async throws {
        let swiftc = try #require(ProcessRunner.which("swiftc"), "swiftc type-checks the plugin")
        let modules = try #require(["/Modules-tool", "/Modules"].map { Self.products + $0 }
            .first { FileManager.default.fileExists(atPath: $0 + "/SwiftSyntaxMacros.swiftmodule") }, "the swift-syntax modules of this build, in \(Self.products)")
        let shims = Fixtures.repositoryRoot + "/.build/checkouts/swift-syntax/Sources/_SwiftSyntaxCShims/include"
        let directory = Fixtures.repositoryRoot + "/Sources/StrongroomMacrosPlugin"
        let sources = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".swift") }.sorted().map { directory + "/" + $0 }
        #expect(sources.count >= 5)
        let result = try await ProcessRunner.run(swiftc, ["-typecheck", "-swift-version", "6",
                                                          "-enable-upcoming-feature", "ExistentialAny", "-enable-upcoming-feature", "InternalImportsByDefault",
                                                          "-I", modules, "-I", shims, "-module-name", "StrongroomMacrosPlugin"] + sources)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning:"), "\(result.stderr)")
        #expect(!result.stderr.contains("SendableMetatypes"), "\(result.stderr)")
    }
}
