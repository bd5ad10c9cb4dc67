import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Our files open in the stock `sqlcipher` shell, with the key given on its
/// standard input exactly as Keys/README.md documents.
@Suite("Interoperability with the stock sqlcipher shell")
struct SQLCipherShellTests {
    let dir = TemporaryDirectory()

    func shell() throws -> String {
        try #require(ProcessRunner.which("sqlcipher"), "the sqlcipher shell is installed by `make setup`")
    }

    func makeDatabase(key: DatabaseKey) throws -> String {
        let path = dir.file("interop.db")
        let db = try Connection(path: path, configuration: Configuration(key: key))
        try db.execute(sql: "CREATE TABLE t(x TEXT); INSERT INTO t VALUES ('visible with the key')")
        db.close()
        return path
    }

    @Test func opensWithTheRawKeyFromAKeyFile() async throws {
        let keyPath = dir.file("interop.key")
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: keyPath)
        let path = try makeDatabase(key: key)
        let hex = String(decoding: Fixtures.bytes(of: keyPath), as: UTF8.self).trimmingCharacters(in: .newlines)
        let result = try await ProcessRunner.run(try shell(), [path], input: "PRAGMA key = \"x'\(hex)'\";\nSELECT x FROM t;\n")
        #expect(result.stdout.contains("visible with the key"), "\(result.stderr)")

        let wrong = try await ProcessRunner.run(try shell(), [path], input: "PRAGMA key = \"x'\(String(repeating: "00", count: 32))'\";\nSELECT x FROM t;\n")
        #expect(!wrong.stdout.contains("visible with the key"))
        #expect(wrong.stderr.contains("not a database"))
    }

    @Test func opensWithThePassphrase() async throws {
        let path = try makeDatabase(key: try .passphrase("it's a passphrase"))
        let result = try await ProcessRunner.run(try shell(), [path], input: "PRAGMA key = 'it''s a passphrase';\nSELECT x FROM t;\n")
        #expect(result.stdout.contains("visible with the key"), "\(result.stderr)")
    }

    @Test func weOpenWhatTheShellEncrypts() async throws {
        let path = dir.file("shell.db")
        let result = try await ProcessRunner.run(try shell(), [path], input: "PRAGMA key = 'made by the shell';\nCREATE TABLE s(v); INSERT INTO s VALUES (7);\n")
        #expect(result.status == 0, "\(result.stderr)")
        let db = try Connection(path: path, configuration: Configuration(key: try .passphrase("made by the shell")))
        #expect(try db.fetchOne(Int.self, sql: "SELECT v FROM s") == 7)
    }
}
