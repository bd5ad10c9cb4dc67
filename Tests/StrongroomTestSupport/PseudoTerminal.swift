import Foundation

/// Runs a program on a pseudo-terminal of its own (Python's `pty`), as a
/// person at a terminal would: waits for text, types, pauses.
public enum PseudoTerminal {
    /// What the person does, in order.
    public enum Step: Sendable {
        /// Wait until the screen shows this text (since the last wait).
        case expect(String)
        /// Type these characters (`\n` for Return, `\u{1A}` for ^Z).
        case type(String)
        /// Do nothing for a while.
        case pause(seconds: Double)
    }

    /// What a run showed.
    public struct Result: Sendable {
        /// The program's exit status (128 + N for signal N).
        public let status: Int32
        /// Seconds from the first `type` step to the program's end.
        public let seconds: Double
        /// Everything the terminal showed, `|` marking where text was typed.
        public let screen: String
    }

    private static let driver = """
        import json, os, pty, select, signal, sys, time
        steps = json.loads(sys.argv[1])
        limit = time.monotonic() + float(sys.argv[4])
        pid, fd = pty.fork()
        if pid == 0:
            # A person's terminal session: no signal ignored or blocked (Python ignores SIGPIPE,
            # a test runner may ignore more), whatever this process inherited.
            for number in range(1, signal.NSIG):
                try:
                    signal.signal(number, signal.SIG_DFL)
                except (OSError, ValueError, RuntimeError):
                    pass
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.chdir(sys.argv[2])
            os.execv(sys.argv[3], [sys.argv[3]] + sys.argv[5:])
        seen, mark, started = b"", 0, None
        def read_more():
            global seen
            # Past the time limit the program is killed: a test never hangs.
            if not select.select([fd], [], [], max(0, limit - time.monotonic()))[0]:
                try:
                    os.kill(pid, signal.SIGKILL)
                    seen += b"<killed: time limit>"
                except ProcessLookupError:
                    pass
                return False
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            seen += chunk
            return bool(chunk)
        for kind, value in steps:
            if kind == "expect":
                while value.encode() not in seen[mark:]:
                    if not read_more(): break
                # The next wait looks after this text, not after all that was
                # read with it: a prompt may come in the same read.
                found = seen.find(value.encode(), mark)
                mark = found + len(value.encode()) if found >= 0 else len(seen)
            elif kind == "type":
                started = started or time.monotonic()
                os.write(fd, value.encode())
                seen += b"|"
                mark = len(seen)
            else:
                time.sleep(float(value))
        while read_more():
            pass
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        print(json.dumps({"status": code if code >= 0 else 128 - code,
                          "seconds": time.monotonic() - (started or time.monotonic()),
                          "screen": seen.decode(errors="replace")}))
        """

    /// Runs `executable` with `arguments` in `directory` on a new pseudo-terminal,
    /// taking `steps`; killed (and `<killed: time limit>` shown) after `limit` seconds.
    public static func run(_ executable: String, _ arguments: [String], in directory: String, steps: [Step],
                           limit: Double = 60) async throws -> Result {
        let encoded = steps.map { step -> [String] in
            switch step {
            case .expect(let text): return ["expect", text]
            case .type(let text): return ["type", text]
            case .pause(let seconds): return ["pause", String(seconds)]
            }
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: encoded), as: UTF8.self)
        let run = try await ProcessRunner.run("/usr/bin/python3", ["-c", driver, json, directory, executable, String(limit)] + arguments)
        guard let object = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let status = object["status"] as? Int, let seconds = object["seconds"] as? Double, let screen = object["screen"] as? String else {
            throw FixtureError("the pseudo-terminal driver failed: \(run.stdout) \(run.stderr)")
        }
        return Result(status: Int32(status), seconds: seconds, screen: screen)
    }
}
