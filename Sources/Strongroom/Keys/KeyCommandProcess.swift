import Foundation

/// The child process of a ``KeyCommand``: `/bin/sh -c COMMAND` started with
/// `posix_spawn`, its standard output a pipe to this process, its standard
/// input `/dev/null`, its standard error this process's.
///
/// Which process group it runs in depends on whether this process has a
/// controlling terminal:
/// - **None** (a service, cron, CI): a group of its own, killed whole at a
///   timeout, so that whatever the command started goes too. The shell is never
///   reaped before that kill: while it is unreaped, its process group id cannot
///   be taken by another group, so nothing else is killed.
/// - **A terminal**: this process's own group, as a shell's job or restic's
///   `--password-command` runs. The command belongs to the same job: it may ask
///   on `/dev/tty` when the job is in the foreground, and ^Z, `bg`, `fg` and
///   ^C act on the whole job as the shell's job control does, with nothing to
///   hand over; at ^Z this process stops only once the shell has (see
///   `KeyCommandSuspension`). At a timeout only the command's shell is killed
///   (its own children cannot be told apart from this job's other processes).
///
/// ``hasExited()`` tells that the shell has exited without reaping it, so that
/// ``killLeftovers()`` can still kill its group after that.
final class KeyCommandProcess {
    /// The read end of the child's standard output.
    let output: Int32
    private let pid: pid_t
    /// True when the child runs in a process group of its own.
    private let ownGroup: Bool
    private var reaped = false {
        didSet { if reaped, let slot = suspensionSlot { KeyCommandSuspension.unwatch(slot); suspensionSlot = nil } }
    }
    /// Where ^Z waits for the shell to stop (with a terminal only).
    private var suspensionSlot: Int?
    /// True once ``hasExited()`` has seen the shell exit (it is then a zombie, not reaped).
    private var exited = false

    enum Status: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        /// The child was reaped by someone else: this process ignores SIGCHLD
        /// (the kernel reaps), or the host reaps every child itself. Its exit
        /// status is lost, so it counts as a failure.
        case unknown
    }

    init(command: String) throws(StrongroomError) {
        var pipeEnds: [Int32] = [-1, -1]
        // Both ends close on exec (in this process's other children too);
        // the child gets its copy of the write end by dup2 below.
        guard pipe(&pipeEnds) == 0, fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC) == 0,
              fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC) == 0 else {
            throw StrongroomError(.keyCommandFailed, "Cannot make a pipe for the key command: \(String(cString: strerror(errno))).")
        }
        // A controlling terminal, whatever standard input is: none for a service.
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if tty >= 0 { close(tty) }
        ownGroup = tty < 0

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
        // Signals this process ignores (SIGPIPE) back to their defaults, and none blocked.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

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
        if !ownGroup { suspensionSlot = KeyCommandSuspension.watch(child) }
    }

    /// True once the command's shell has exited (or was reaped by someone
    /// else: see ``Status/unknown``). The shell is left unreaped, a zombie
    /// whose process group id no other group can take, and its status is
    /// left for ``wait(until:)``.
    func hasExited() -> Bool {
        guard !exited && !reaped else { return true }
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            // ECHILD: reaped by the kernel or the host; EINTR: asked again next time.
            return errno == ECHILD
        }
        // si_signo stays 0 while the shell runs (WNOHANG), SIGCHLD once it has exited.
        exited = info.si_signo == SIGCHLD
        return exited
    }

    /// Kills what the command's exited shell left running: its process group,
    /// when it has one of its own. With a terminal, nothing: what it left runs
    /// in this process's job and cannot be told apart. Does not reap the shell.
    func killLeftovers() {
        guard ownGroup, exited, !reaped else { return }
        Foundation.kill(-pid, SIGKILL)
    }

    /// Kills the command (its whole group when it has one of its own) and
    /// reaps its shell.
    func kill() {
        guard !reaped else { return }
        Foundation.kill(ownGroup ? -pid : pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }

    /// Waits for the command's shell to exit until `deadline`; past it, kills the command.
    func wait(until deadline: ContinuousClock.Instant) -> Status {
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                reaped = true
                // The decoding of <sys/wait.h>'s WIFEXITED, WEXITSTATUS and WTERMSIG.
                return status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            }
            if result < 0 && errno == ECHILD {
                // Reaped by the kernel or the host: there is nothing left of it to kill.
                reaped = true
                return .unknown
            }
            if KeyCommand.milliseconds(until: deadline) == nil {
                kill()
                return .timedOut
            }
            usleep(2_000)
        }
    }

    deinit {
        close(output)
        if !reaped { kill() }
    }
}
