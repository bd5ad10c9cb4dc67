import Foundation
public import StrongroomCrypto

/// A program that prints a secret: a password manager, a vault's CLI, a
/// hardware token's tool (as restic's `--password-command`, borg's
/// `BORG_PASSCOMMAND` or git's credential helpers).
///
/// The command runs with `/bin/sh -c`, so it may hold arguments, quotes and
/// pipes. Its standard output is the secret: read into secure storage, one
/// trailing newline dropped, never logged or quoted in an error. Its standard
/// error passes through to the user. Its standard input is `/dev/null`: a
/// command that must ask opens the terminal (`/dev/tty`, as `pinentry` and
/// askpass scripts do). Where this process has a controlling terminal, the
/// command runs in this process's job (as restic's `--password-command`
/// does), so it may ask while the job is in the foreground, and ^Z, `bg`,
/// `fg` and ^C act on both as on any job; at the timeout its shell is killed.
/// While such a command runs, and SIGTSTP has its default action, this
/// process catches SIGTSTP: at ^Z it stops only once the command's own
/// process (its `/bin/sh`) has stopped, or 3 s have passed, so that the
/// shell running the job does not take the terminal back while that process
/// still reads it (a program the command's shell started is not waited
/// for). While the handler is installed, the thread it runs on (the main
/// thread, unless that blocks SIGTSTP) sees `poll`, `nanosleep` and the like
/// fail with EINTR after `fg`, as under any signal handler.
/// Where there is none (a service), it runs in a process group of its own,
/// killed whole at the timeout with whatever it started. The command is done
/// when its shell exits: a process it started that still holds the output
/// open gets a short grace (200 ms) for what was printed to arrive, then
/// reading stops and, where the command has a process group of its own, that
/// process is killed (with a terminal it is left running in the job). Its
/// exit status is checked: a process that ignores `SIGCHLD` lets the kernel
/// take that status, and a key command then fails, saying so (the
/// `strongroom` command resets `SIGCHLD` when it starts).
///
/// ```swift
/// let key = try DatabaseKey.fromCommand(KeyCommand("pass show app/db-key"))
/// let secret = try DatabaseKey.passphraseFromCommand(KeyCommand("vault kv get -field=passphrase secret/app"))
/// ```
///
/// Nothing of the secret is put in an argument or an environment variable,
/// of this process or of the command's.
public struct KeyCommand: Sendable, Hashable, CustomStringConvertible {
    /// The shell command line.
    public let command: String
    /// How long the command may run before it is killed.
    public let timeout: Duration

    /// The time a command gets unless told otherwise: long enough to type a
    /// passphrase into a password manager's prompt.
    public static let defaultTimeout: Duration = .seconds(60)

    /// A command, run with `/bin/sh -c command` when its output is needed.
    public init(_ command: String, timeout: Duration = KeyCommand.defaultTimeout) {
        self.command = command
        self.timeout = timeout
    }

    /// Names the command; the command line is not a secret, its output is.
    public var description: String { "KeyCommand(\(command.debugDescription), timeout \(Self.seconds(timeout)))" }

    /// Runs the command and returns its standard output, without one trailing
    /// newline (`\n` or `\r\n`), in secure storage.
    ///
    /// The output is read until it ends, or until a short grace (200 ms)
    /// after the command's shell has exited (what the command started may
    /// hold it open); what the command left running is then killed with its
    /// process group where it has one of its own.
    ///
    /// - Parameters:
    ///   - limit: the most bytes the output may have.
    ///   - what: what the output is, for messages ("database key").
    /// - Throws: ``StrongroomError/Code/keyCommandFailed`` when the command
    ///   cannot start, exits with a status other than 0, dies of a signal, or
    ///   its shell outlasts ``timeout`` (it is then killed with its process group);
    ///   ``StrongroomError/Code/keyMissing`` when it prints nothing;
    ///   ``StrongroomError/Code/malformedKey`` when it prints more than `limit`
    ///   bytes. No message quotes the output.
    public func output(limit: Int, what: String) throws(StrongroomError) -> SecureBytes {
        guard !command.isEmpty else {
            throw StrongroomError(.misuse, "The command for the \(what) is empty; give the program that prints it.")
        }
        let child = try KeyCommandProcess(command: command)
        // Room for the secret, a CR LF after it, and one byte more to tell a longer output.
        let buffer = SecureBytes(count: limit + 3) { _ in }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var length = 0
        var timedOut = false
        // Once the shell has exited, the end of reading: what it left running
        // may hold the output open for ever, and gets `exitGrace` to finish.
        var graceEnd: ContinuousClock.Instant?
        var graceOver = false
        buffer.withUnsafeBytes { raw in
            let out = UnsafeMutableRawBufferPointer(mutating: raw)
            while length < out.count {
                if graceEnd == nil && child.hasExited() { graceEnd = ContinuousClock.now.advanced(by: Self.exitGrace) }
                guard let remaining = Self.milliseconds(until: graceEnd ?? deadline) else {
                    if graceEnd == nil { timedOut = true } else { graceOver = true }
                    return
                }
                var poller = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
                // While the shell runs, it is looked at again every `exitPollInterval` ms.
                let ready = poll(&poller, 1, graceEnd == nil ? min(remaining, Self.exitPollInterval) : remaining)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { continue }
                let n = read(child.output, out.baseAddress! + length, out.count - length)
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if n <= 0 { return }
                length += n
            }
        }
        if timedOut {
            child.kill()
            throw StrongroomError(.keyCommandFailed, "The command for the \(what) did not finish within \(Self.seconds(timeout)) and was stopped; check that it runs unattended (or give it more time).")
        }
        // The shell exited and something it started still holds the output:
        // what was printed is taken, and what is left running is killed (in a
        // group of its own; with a terminal it is left in this process's job).
        if graceOver { child.killLeftovers() }
        var end = length
        buffer.withUnsafeBytes { bytes in
            if end > 0 && bytes[end - 1] == 0x0A { end -= 1 }
            if end > 0 && bytes[end - 1] == 0x0D { end -= 1 }
        }
        if end > limit {
            child.kill()
            throw StrongroomError(.malformedKey, "The command for the \(what) printed more than \(limit) bytes, more than a \(what) can be; it must print only the \(what).")
        }
        let status = child.wait(until: deadline)
        switch status {
        case .exited(0):
            break
        case .unknown:
            throw StrongroomError(.keyCommandFailed, "The exit status of the command for the \(what) cannot be known: this process ignores SIGCHLD (or reaps every child itself), so the kernel took it. Nothing was opened; set SIGCHLD to its default (SIG_DFL) before using a key command.")
        case .exited(let code):
            let hint = code == 127 ? " (127: the shell found no such program; check the command's path)" : code == 126 ? " (126: the program could not be run; check its mode)" : ""
            throw StrongroomError(.keyCommandFailed, "The command for the \(what) failed (exit status \(code)\(hint)); its own messages, if any, are above. Nothing was opened.")
        case .signaled(let signal):
            throw StrongroomError(.keyCommandFailed, "The command for the \(what) was killed by signal \(signal) (\(String(cString: strsignal(signal)))); nothing was opened.")
        case .timedOut:
            throw StrongroomError(.keyCommandFailed, "The command for the \(what) closed its output but did not exit within \(Self.seconds(timeout)), and was stopped; nothing was opened.")
        }
        guard end > 0 else {
            throw StrongroomError(.keyMissing, "The command for the \(what) exited successfully but printed nothing; it must print the \(what) on its standard output.")
        }
        return buffer.withUnsafeBytes { SecureBytes(copying: $0[0..<end]) }
    }

    /// How long reading goes on after the command's shell has exited, for
    /// what it printed to arrive, when something it started holds the output open.
    static let exitGrace: Duration = .milliseconds(200)

    /// How often (in milliseconds) reading looks whether the shell has exited.
    static let exitPollInterval: Int32 = 25

    /// Milliseconds left before `deadline` for poll(2), nil when it has passed.
    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32? {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return nil }
        let (seconds, attoseconds) = left.components
        // poll(2) takes an Int32 of milliseconds: a longer wait is taken in turns.
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds) s" : String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}

extension DatabaseKey {
    /// The raw key a command prints: the 64 lowercase hex characters of a key
    /// file, optionally followed by a newline.
    ///
    /// ```swift
    /// let key = try DatabaseKey.fromCommand(KeyCommand("pass show app/db-key"))
    /// ```
    ///
    /// - Throws: the errors of ``KeyCommand/output(limit:what:)``;
    ///   ``StrongroomError/Code/malformedKey`` when the output is not 64
    ///   lowercase hex characters (never quoted).
    public static func fromCommand(_ command: KeyCommand) throws(StrongroomError) -> DatabaseKey {
        let output = try command.output(limit: KeyFile.hexCharacterCount + 2, what: "database key")
        guard let key = KeyFile.parseHex(output) else {
            throw StrongroomError(.malformedKey, "The command for the database key must print exactly 64 lowercase hex characters (a 256-bit raw key, as in a key file); for a passphrase use a passphrase command.")
        }
        var loaded = try raw(key)
        loaded.source = .command
        return loaded
    }

    /// The passphrase a command prints (up to 4096 bytes, one trailing
    /// newline dropped), stretched by SQLCipher like any passphrase.
    ///
    /// ```swift
    /// let key = try DatabaseKey.passphraseFromCommand(KeyCommand("secret-tool lookup app db"))
    /// ```
    public static func passphraseFromCommand(_ command: KeyCommand) throws(StrongroomError) -> DatabaseKey {
        var key = try passphrase(command.output(limit: passphraseByteLimit, what: "passphrase"))
        key.source = .command
        return key
    }

    /// The longest passphrase read from standard input or a command.
    public static let passphraseByteLimit = 4096
}
