import Foundation
import StrongroomTestSupport
import Testing

@Suite("The pseudo-terminal driver the CLI tests type through")
struct PseudoTerminalTests {
    /// Two waits for texts that arrive in one read: the second wait must
    /// find its text after the first's, not only in what comes later. (It
    /// looked only at later output: a shell's prompt read together with
    /// the command's last line was missed, and the session ran to its time
    /// limit; under the whole suite's load, now and then.)
    @Test func waitsFindTextsThatArrivedInOneRead() async throws {
        let directory = FileManager.default.temporaryDirectory.path
        let result = try await PseudoTerminal.run("/bin/sh", ["-c", "printf 'one two\\n'; read answer; echo \"got $answer\""], in: directory, steps: [
            .expect("one"), .expect("two"), .type("yes\n"), .expect("got yes"),
        ], limit: 10)
        #expect(result.status == 0 && result.screen.contains("got yes") && !result.screen.contains("<killed"), "\(result.screen)")
    }
}
