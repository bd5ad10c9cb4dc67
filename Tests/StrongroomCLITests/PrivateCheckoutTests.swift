import Foundation
import StrongroomTestSupport
import Testing

/// Issue 36, item 11: `make test` from a checkout inside a directory only its
/// owner may enter (0700), as root. The tests that run `strongroom` as
/// `nobody` failed on SQLCipher 4.6.1 there: `nobody` could start the binary
/// but not load `.build/sqlcipher4/lib/libsqlcipher.so.1` ("error while
/// loading shared libraries", exit 127). They now run a copy of the binary
/// and of the SQLCipher library it loads, from a directory everyone may read.
/// (Reproduced in a clone inside a 0700 directory: the three tests failed
/// with exit 127 before, and pass with the copy.)
@Suite("The command as nobody, wherever the checkout lives")
struct PrivateCheckoutTests {
    let dir = TemporaryDirectory()

    /// As `nobody`, the copy resolves its SQLCipher library to the readable
    /// copy (never to the checkout), and runs.
    @Test(.enabled(if: getuid() == 0, "only root can become nobody (setpriv)"))
    func nobodyLoadsTheSQLCipherOfTheReadableCopy() async throws {
        let copy = try Unprivileged.copy(Fixtures.strongroomBinary)
        let ldd = try await ProcessRunner.run(ProcessRunner.which("setpriv") ?? "/usr/bin/setpriv",
                                              ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.which("ldd") ?? "/usr/bin/ldd", copy.binary],
                                              environment: ["LD_LIBRARY_PATH": copy.libraryDirectory])
        let line = ldd.stdout.split(separator: "\n").first { $0.contains("libsqlcipher") }.map(String.init) ?? ""
        #expect(line.contains("=> \(copy.libraryDirectory)/libsqlcipher"), "\(ldd.stdout)")
        #expect(!ldd.stdout.contains(Fixtures.repositoryRoot), "\(ldd.stdout)")
        // A directory nobody may write to, for the key file it makes.
        chown(dir.path, 65534, 65534)
        let run = try await Unprivileged.run(["keygen", "--out", "nobody.key"], currentDirectory: dir.path)
        #expect(run.status == 0, "\(run.status): \(run.stderr)")
    }

    /// No test runs `strongroom` as nobody but through `Unprivileged`: a
    /// `setpriv` around the checkout's own binary fails again from a private
    /// checkout on SQLCipher 4.6.1 (exit 127), as the three tests did.
    @Test func noTestRunsTheCheckoutsBinaryAsNobody() throws {
        let tests = Fixtures.repositoryRoot + "/Tests"
        let files = FileManager.default.enumerator(atPath: tests)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 50)
        var offenders: [String] = []
        for file in files where !file.hasSuffix("/Unprivileged.swift") && !file.hasSuffix("/PrivateCheckoutTests.swift") {
            let text = (try? String(contentsOfFile: tests + "/" + file, encoding: .utf8)) ?? ""
            if text.contains("\"setpriv\"") || text.contains("/setpriv") { offenders.append(file) }
        }
        #expect(offenders.isEmpty, "run strongroom as nobody through Unprivileged.run: \(offenders)")
    }
}
