import Foundation
import StrongroomTestSupport
import Testing

/// Real keys never enter git, and neither do test keys: a key in the
/// repository is a key every clone holds, and a test that needs one makes its
/// own (`strongroom keygen`, `DatabaseKey.generate()`). Every file git tracks
/// is read; none may be a database key file (64 hex characters), a field
/// keyring, or be named like one. The one exception is the fuzzers' corpus
/// (`Fuzz/Corpus/key-file`, `Fuzz/Corpus/keyring`): inputs for the parsers,
/// which no database or sealed value was ever encrypted under.
@Suite("Repository")
struct RepositoryKeysTests {
    @Test func gitTracksNoKeyFileAndNoFieldKeyring() async throws {
        let listed = try await ProcessRunner.run("/usr/bin/env", ["git", "-C", Fixtures.repositoryRoot, "ls-files", "-z"])
        try #require(listed.status == 0, "git ls-files: \(listed.stderr)")
        let files = listed.stdout.split(separator: "\0").map(String.init)
        try #require(files.contains("Package.swift"), "git ls-files listed \(files.count) files")
        var keys: [String] = []
        for file in files where !file.hasPrefix("Fuzz/Corpus/") {
            let name = (file as NSString).lastPathComponent
            if name.hasSuffix(".key") || name.hasSuffix(".keyring") {
                keys.append(file)
                continue
            }
            let bytes = Fixtures.bytes(of: Fixtures.repositoryRoot + "/" + file)
            guard bytes.count < 4096 else { continue }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let isHexKey = text.count == 64 && text.allSatisfy(\.isHexDigit)
            if isHexKey || text.hasPrefix("strongroom field keyring") { keys.append(file) }
        }
        #expect(keys.isEmpty, "key material tracked by git (tests must make their own keys): \(keys)")
    }
}
