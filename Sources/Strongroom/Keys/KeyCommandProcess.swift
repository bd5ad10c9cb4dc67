import Foundation

/// The child process of a ``KeyCommand``: `/bin/sh -c COMMAND` started with
/// `posix_spawn`, its standard output a pipe to this process, its standard
/// input `/dev/null`, its standard error this process's, in a process group
/// of its own (so that a timeout kills whatever it started too).
///
/// When this process is the terminal's foreground job, the command's group
/// is made the foreground job while it runs (as a shell does for the jobs it
/// starts), so that a command that asks on `/dev/tty` is not stopped as a
/// background job; the terminal is handed back when it ends.
final class KeyCommandProcess {
    /// The read end of the child's standard output.
    let output: Int32
    private let pid: pid_t
    private var reaped = false
    /// The terminal handed to the command's group, to hand back.
    private var terminal: Int32?

    enum Status: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        /// The child was reaped by someone else: this process ignores SIGCHLD
        /// (the kernel reaps), or the host reaps every child itself. Its exit
        /// status is lost, so it counts as a failure.
        case unknown
    }

    /// How the child ended, once it is reaped.
    private var ended: Status?

    init(command: String) throws(StrongroomError) {
        var pipeEnds: [Int32] = [-1, -1]
        // Both ends close on exec (in this process's other children too);
        // the child gets its copy of the write end by dup2 below.
        guard pipe(&pipeEnds) == 0, fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC) == 0,
              fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC) == 0 else {
            throw StrongroomError(.keyCommandFailed, "Cannot make a pipe for the key command: \(String(cString: strerror(errno))).")
        }
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        // dup2 clears O_CLOEXEC on the copy; the originals close at exec.
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO)
        // A process group of its own; signals this process ignores (SIGPIPE)
        // back to their defaults, and none blocked.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let words: [String] = ["/bin/sh", "-c", command]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        // posix_spawn returns an error number instead of setting errno.
        let result = posix_spawn(&child, "/bin/sh", &actions, &attributes, arguments, environ)
        close(pipeEnds[1])
        guard result == 0 else {
            close(pipeEnds[0])
            throw StrongroomError(.keyCommandFailed, "Cannot start the key command with /bin/sh: \(String(cString: strerror(result))).")
        }
        pid = child
        output = pipeEnds[0]
        // posix_spawn returns once the child has exec'd, in its own group (pgid = pid).
        // The controlling terminal, whatever standard input is; none for a service.
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if tty >= 0, tcgetpgrp(tty) == getpgrp(), Self.setForeground(child, of: tty) {
            terminal = tty
            // Had it read the terminal before it was handed over, it was stopped (SIGTTIN): go on.
            Foundation.kill(-child, SIGCONT)
        } else if tty >= 0 {
            close(tty)
        }
    }

    /// Makes `group` the terminal's foreground job. SIGTTOU is blocked
    /// meanwhile: from a background group, tcsetpgrp(3) would otherwise stop
    /// the caller.
    private static func setForeground(_ group: pid_t, of tty: Int32) -> Bool {
        var block = sigset_t(), previous = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &block, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return tcsetpgrp(tty, group) == 0
    }

    /// Hands the terminal back to this process's group.
    private func reclaimTerminal() {
        guard let tty = terminal else { return }
        _ = Self.setForeground(getpgrp(), of: tty)
        close(tty)
        terminal = nil
    }

    /// Kills the child's process group and reaps the child. The child is
    /// never reaped before this (see ``followStop()``): while it is unreaped,
    /// its process group id cannot be taken by another group, so what the
    /// command left running is killed, and nothing else.
    func kill() {
        guard !reaped else { return }
        Foundation.kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
        reclaimTerminal()
    }

    /// What the child's state says now, without reaping it (`waitid` with
    /// `WNOWAIT`): stopped, ended, or nil while it runs (or when the kernel
    /// reaped it already: see ``Status/unknown``).
    private func peek() -> Int? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) == 0,
              info._sifields._sigchld.si_pid == pid else {
            if errno == ECHILD { ended = .unknown }
            return nil
        }
        return Int(info.si_code)
    }

    /// Follows a command stopped from the terminal it was given (^Z): this
    /// process gives the terminal back and stops its whole job (`kill(0,
    /// SIGTSTP)`, as a terminal's ^Z would have), so the shell gets control.
    /// Once continued, it hands the terminal to the command again if it is
    /// in the foreground (after `fg`; not after `bg`, when the shell keeps it)
    /// and continues the command. Returns how long it was stopped, to add to
    /// a deadline. The child is never reaped here.
    func followStop() -> Duration {
        guard !reaped, let tty = terminal, peek() == Int(CLD_STOPPED) else { return .zero }
        var status: Int32 = 0
        // Takes the stop's report; had the command ended meanwhile, this reaps it: record how.
        if waitpid(pid, &status, WNOHANG | WUNTRACED) == pid && status & 0xff != 0x7f { reap(status); return .zero }
        let stopped = ContinuousClock.now
        // The terminal is taken back only from the command: after `bg` the shell has it.
        if tcgetpgrp(tty) == pid { _ = Self.setForeground(getpgrp(), of: tty) }
        // Discarded by the kernel when this job's group is orphaned: then it just goes on.
        // The stop lands on some thread of this process; the pause lets it land before going on.
        Foundation.kill(0, SIGTSTP)
        usleep(50_000)
        if tcgetpgrp(tty) == getpgrp() { _ = Self.setForeground(pid, of: tty) }
        Foundation.kill(-pid, SIGCONT)
        return ContinuousClock.now - stopped
    }

    /// Waits for the child to exit until `deadline`; past it, kills it.
    func wait(until deadline: ContinuousClock.Instant) -> Status {
        var deadline = deadline
        while ended == nil {
            deadline = deadline.advanced(by: followStop())
            let state = peek()
            if let state, [Int(CLD_EXITED), Int(CLD_KILLED), Int(CLD_DUMPED)].contains(state) {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { reap(status) }
                continue
            }
            if ended != nil { break }
            if KeyCommand.milliseconds(until: deadline) == nil {
                kill()
                return .timedOut
            }
            usleep(2_000)
        }
        return ended ?? .unknown
    }

    /// Records how the child ended, from a `waitpid` status.
    private func reap(_ status: Int32) {
        reaped = true
        reclaimTerminal()
        // The decoding of <sys/wait.h>'s WIFEXITED, WEXITSTATUS and WTERMSIG.
        ended = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
    }

    deinit {
        close(output)
        if !reaped { kill() }
        reclaimTerminal()
    }
}
