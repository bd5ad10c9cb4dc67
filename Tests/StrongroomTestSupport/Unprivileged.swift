import Foundation

/// Runs the `strongroom` command as `nobody` (`setpriv`), for the tests of
/// what a user without rights meets, wherever the checkout lives.
///
/// In a checkout inside a directory only its owner may enter (mode 0700, as
/// root's home is), `nobody` may start the binary but not load a library
/// from it: the SQLCipher 4 run links `.build/sqlcipher4/lib/libsqlcipher.so.1`
/// (issue 36, item 11: "error while loading shared libraries", exit 127).
/// So the binary and the SQLCipher library it loads are copied, once per
/// process, into a directory everyone may read, and the command finds the
/// library there (`LD_LIBRARY_PATH`, which an rpath's `RUNPATH` yields to).
public enum Unprivileged {
    /// Runs `strongroom arguments` as `nobody`, in `currentDirectory`.
    public static func run(_ arguments: [String], environment: [String: String] = [:], currentDirectory: String) async throws -> ProcessResult {
        let setpriv = ProcessRunner.which("setpriv") ?? "/usr/bin/setpriv"
        let copy = try readableCopy.get()
        return try await ProcessRunner.run(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", copy.binary] + arguments,
                                           environment: environment.merging(["LD_LIBRARY_PATH": copy.libraryDirectory]) { $1 },
                                           currentDirectory: currentDirectory)
    }

    private static let readableCopy = Result { try copy(Fixtures.strongroomBinary) }

    /// `binary` and the SQLCipher library it loads (found with `ldd`), copied
    /// into a new directory that everyone may read and enter.
    public static func copy(_ binary: String) throws -> (binary: String, libraryDirectory: String) {
        var template = Array((NSTemporaryDirectory() + "strongroom-unprivileged-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw FixtureError("mkdtemp: errno \(errno)") }
        let directory = String(cString: made)
        chmod(directory, 0o755)
        let copied = directory + "/strongroom"
        try FileManager.default.copyItem(atPath: binary, toPath: copied)
        chmod(copied, 0o755)
        let ldd = try ProcessRunner.run(ProcessRunner.which("ldd") ?? "/usr/bin/ldd", [binary])
        // "libsqlcipher.so.1 => /path/libsqlcipher.so.1 (0x…)"
        for line in ldd.stdout.split(separator: "\n") where line.contains("libsqlcipher") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, fields[1] == "=>" else { continue }
            let name = String(fields[0].drop { $0 == "\t" })
            let target = directory + "/" + name
            try FileManager.default.copyItem(atPath: URL(fileURLWithPath: String(fields[2])).resolvingSymlinksInPath().path, toPath: target)
            chmod(target, 0o644)
        }
        return (copied, directory)
    }
}
