import Foundation

/// Reading a secret from a terminal: a prompt on standard error and echo
/// off while it is typed, restored on every way out (signals included).
enum TerminalEcho {
    /// The terminal settings to restore, for the signal handler (which may
    /// capture nothing). Written before the handlers are installed, read by
    /// them and by `restore`.
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var isOff = false
    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// Runs `read` with echo off when standard input is a terminal, after
    /// printing `prompt` on standard error; otherwise just runs it.
    static func withoutEcho<T, E: Error>(prompt: String, _ read: () throws(E) -> T) throws(E) -> T {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return try read() }
        FileHandle.standardError.write(Data(prompt.utf8))
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        isOff = true
        for signal in signals {
            // Restore the terminal, then die of the signal as usual.
            Foundation.signal(signal) { received in
                TerminalEcho.restore()
                Foundation.signal(received, SIG_DFL)
                raise(received)
            }
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        defer {
            restore()
            for signal in signals { Foundation.signal(signal, SIG_DFL) }
        }
        return try read()
    }

    /// TCSANOW, never waiting for output to drain: a signal handler must
    /// not block on a terminal nobody reads.
    private static func restore() {
        guard isOff else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        isOff = false
    }
}
