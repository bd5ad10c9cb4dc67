import Foundation
import Strongroom

/// Reading a secret from a terminal: a prompt on standard error and echo
/// off while it is typed, restored on every way out (signals included).
enum TerminalEcho {
    /// The terminal settings to restore and to re-apply, for the signal
    /// handlers (which may capture nothing). Written before the handlers are
    /// installed, read by them.
    ///
    /// Allocated, not global `termios` variables: Swift 6.3 emits a
    /// zero-initialized global of an imported C struct without the struct's
    /// interior padding (57 bytes for Linux's 60-byte `termios`), so
    /// `tcgetattr` and whole-struct copies wrote 3 bytes past it, into `isOff`
    /// (AddressSanitizer: global-buffer-overflow, found by `make sanitize`).
    nonisolated(unsafe) private static let saved = allocateSettings()
    nonisolated(unsafe) private static let quiet = allocateSettings()
    nonisolated(unsafe) private static var isOff = false
    /// The prompt, for `onStop` to show again once continued with echo off
    /// (as sudo asks again): the shell has printed its job report since,
    /// and the prompt says when typing is safe again (no echo). Its length
    /// is 0 until the prompt is about to be shown, and when there is none
    /// to show again (standard error no terminal, a prompt longer than the
    /// room: never shown cut short).
    nonisolated(unsafe) private static let prompt = UnsafeMutablePointer<UInt8>.allocate(capacity: promptCapacity)
    nonisolated(unsafe) private static var promptLength = 0
    /// True from before the handlers are installed until the read's end
    /// puts them back; SIGTSTP's handler before ours. A handler that runs
    /// on another thread while the read ends puts itself back only while
    /// this is true, and looks again after (as `KeyCommandSuspension`).
    nonisolated(unsafe) private static var isReading = false
    nonisolated(unsafe) private static var previousStop: sighandler_t?
    /// Room for a prompt that names a file by its longest path (PATH_MAX).
    private static let promptCapacity = 4_200
    private static let endingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Runs `read` with echo off when standard input is a terminal, after
    /// printing `prompt` on standard error when that is a terminal too;
    /// otherwise just runs it. Echo goes off before the prompt appears: what
    /// is typed as soon as it shows is never echoed.
    static func withoutEcho<T, E: Error>(prompt: String, _ read: () throws(E) -> T) throws(E) -> T {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, saved) == 0 else { return try read() }
        quiet.pointee = saved.pointee
        quiet.pointee.c_lflag &= ~tcflag_t(ECHO)
        quiet.pointee.c_lflag |= tcflag_t(ECHONL)
        // Written before the handlers are installed, as the settings are.
        promptLength = 0
        let bytes = Array(prompt.utf8)
        let showsAgain = isatty(STDERR_FILENO) == 1 && bytes.count <= promptCapacity
        if showsAgain { Self.prompt.update(from: bytes, count: bytes.count) }
        var previousEnding: [(Int32, sighandler_t?)] = []
        isReading = true
        for (signal, handler) in endingSignals.map({ ($0, onEnd) }) + [(SIGTSTP, onStop)] {
            // A signal the command was started with ignored (nohup) stays ignored.
            let before = Foundation.signal(signal, handler)
            if let before, unsafeBitCast(before, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                Foundation.signal(signal, SIG_IGN)
            }
            if signal == SIGTSTP { previousStop = before } else { previousEnding.append((signal, before)) }
        }
        silence()
        defer {
            // SIGTSTP's handler goes back before the terminal is restored
            // (a ^Z in between ran ours after the restore: it turned echo
            // off again and asked again for what had been read); the ending
            // signals' after (each restores the terminal before it ends).
            // A handler already running on another thread can still turn
            // echo off (a window of a few instructions); it does not stay
            // installed (`isReading`).
            promptLength = 0
            isReading = false
            Foundation.signal(SIGTSTP, previousStop)
            restore()
            for (signal, handler) in previousEnding { Foundation.signal(signal, handler) }
        }
        // The length goes in before the prompt is written: a ^Z typed the
        // moment it shows could come before a later store, and the prompt
        // was then not shown again (seen under load). A ^Z typed before it
        // shows can show it twice.
        if showsAgain { promptLength = bytes.count }
        if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data(bytes)) }
        return try read()
    }

    /// Restores the terminal, then dies of the signal as usual.
    private static let onEnd: @convention(c) (Int32) -> Void = { received in
        TerminalEcho.restore()
        Foundation.signal(received, SIG_DFL)
        raise(received)
    }

    /// Suspended (^Z): gives the terminal back and stops; when continued,
    /// turns echo off again, then shows the prompt again, before the read
    /// goes on: what is typed once the prompt is back is not echoed.
    private static let onStop: @convention(c) (Int32) -> Void = { _ in
        let savedErrno = errno
        TerminalEcho.restore()
        JobControl.stopInsideHandler()
        TerminalEcho.silence()
        if TerminalEcho.promptLength > 0 { _ = write(STDERR_FILENO, TerminalEcho.prompt, TerminalEcho.promptLength) }
        if TerminalEcho.isReading {
            Foundation.signal(SIGTSTP, TerminalEcho.onStop)
            if !TerminalEcho.isReading { Foundation.signal(SIGTSTP, TerminalEcho.previousStop) }
        }
        errno = savedErrno
    }

    /// Room for one `termios` of its full C size, zeroed, never freed.
    private static func allocateSettings() -> UnsafeMutablePointer<termios> {
        let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        settings.initialize(to: termios())
        return settings
    }

    /// `isOff` first: a signal that ends the process while `tcsetattr` runs
    /// (^C as the command starts) found it false, and left echo off.
    private static func silence() {
        isOff = true
        tcsetattr(STDIN_FILENO, TCSANOW, quiet)
    }

    /// TCSANOW, never waiting for output to drain: a signal handler must
    /// not block on a terminal nobody reads.
    private static func restore() {
        guard isOff else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, saved)
        isOff = false
    }
}
