import Foundation
import Strongroom
import StrongroomTestSupport
import Testing

/// Closing any descriptor of a file drops every POSIX lock the process holds
/// on it. Opening a connection must never do that to another connection's lock.
@Suite("POSIX locks survive opening more connections")
struct FileLockTests {
    let dir = TemporaryDirectory()

    func otherProcessCanWrite(_ path: String, keyHex: String) async throws -> Bool {
        let shell = try #require(ProcessRunner.which("sqlcipher"))
        let result = try await ProcessRunner.run(shell, [path], input: "PRAGMA key = \"x'\(keyHex)'\";\nBEGIN IMMEDIATE;\nINSERT INTO t VALUES (2);\nCOMMIT;\n")
        return result.status == 0 && !result.stderr.contains("locked")
    }

    @Test func openingAnotherConnectionKeepsTheWriteLock() async throws {
        let keyPath = dir.file("k.key")
        let key = DatabaseKey.generate()
        try KeyFile.write(key, to: keyPath)
        let keyHex = String(decoding: Fixtures.bytes(of: keyPath), as: UTF8.self).trimmingCharacters(in: .newlines)
        let path = dir.file("locks.db")
        var config = Configuration(key: key)
        config.journalMode = .delete // locks live on the database file itself
        let holder = try Connection(path: path, configuration: config)
        try holder.execute(sql: "CREATE TABLE t(x)")
        try holder.execute(sql: "BEGIN IMMEDIATE")
        try holder.execute(sql: "INSERT INTO t VALUES (1)")
        #expect(!(try await otherProcessCanWrite(path, keyHex: keyHex)))

        // Opening more connections in this process reads the file's header.
        for _ in 0..<3 { _ = try Connection(path: path, configuration: config) }
        var readOnly = config
        readOnly.readOnly = true
        _ = try Connection(path: path, configuration: readOnly)
        #expect(!(try await otherProcessCanWrite(path, keyHex: keyHex)), "a connection's open released the holder's lock")

        // The hazard itself: a plain open/close of the file drops the lock.
        close(open(path, O_RDONLY))
        #expect(try await otherProcessCanWrite(path, keyHex: keyHex))
        try? holder.execute(sql: "ROLLBACK")
    }
}

/// The directory part of a path, as the key files and the creation lock
/// need it, without NSString.deletingLastPathComponent (which traps on a
/// one-character path in swift-corelibs-foundation, Swift 6.3).
@Suite("Paths")
struct PathTests {
    @Test(arguments: [("k", "."), ("ab", "."), ("/k", "/"), ("/", "/"), ("a/b", "a"), ("./k", "."), ("a//b", "a"),
                      ("a/b/", "a"), ("/x/y/z.db", "/x/y"), ("Keys/app.key", "Keys")])
    func theDirectoryOfAPath(path: String, directory: String) {
        #expect(FileSystem.directory(of: path) == directory)
    }
}
