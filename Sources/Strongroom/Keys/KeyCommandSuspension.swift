import Foundation
import Synchronization

/// ^Z while a key command runs on this process's terminal: this process
/// stops only once the command has stopped.
///
/// With a controlling terminal, a ``KeyCommand`` runs in this process's job
/// (see `KeyCommandProcess`), and ^Z sends SIGTSTP to every process of the
/// job at once. Each stops when the kernel next runs it. The shell waits only
/// for its own children, this process among them, not for the command: once
/// they have stopped it reports the job stopped, takes the terminal back and
/// reads it, while a command that the kernel had not run yet may still be
/// inside its own read of the terminal, and takes the first bytes typed to
/// the shell (the `f` of `fg`). Resumed by `fg` before it stopped, it then
/// stops for good, and the job waits for it until the command's timeout.
///
/// So while such a command runs, SIGTSTP is caught: the handler waits until
/// each command's process has stopped or exited (all together at most
/// ``stopWaitMilliseconds``, for a command that ignores or catches SIGTSTP),
/// then stops this process the usual way, and catches SIGTSTP again once
/// continued. It is installed only while SIGTSTP has its default action: a
/// host that handles SIGTSTP itself keeps its handler, and the race.
///
/// What it changes for the host while installed: the thread the kernel runs
/// the handler on (the main thread, unless it blocks SIGTSTP) sees a call
/// that SA_RESTART does not restart (`poll`, `epoll_wait`, `nanosleep`,
/// `select`) fail with EINTR after `fg`, as under any handler.
///
/// Its limits: only the command's own process is waited for (the shell that
/// `/bin/sh -c` runs, which does the reading for `read < /dev/tty`); a
/// program the shell started cannot be told apart from the rest of the job.
/// At most ``slotCount`` commands running at once are waited for. A command
/// started by another thread during the wait received no SIGTSTP, and is
/// waited for until the time is up.
enum KeyCommandSuspension {
    /// How long, in all, a stop waits for commands that do not stop. A
    /// computed constant: nothing is initialized lazily in the handler.
    static var stopWaitMilliseconds: Int { 3_000 }

    /// How many commands running at once are waited for.
    static var slotCount: Int { 16 }

    /// The process ids the handler waits for, 0 in a free slot. Read by the
    /// signal handler, which may take no lock.
    private static let watched: InlineArray<16, Atomic<Int32>> = InlineArray { _ in Atomic(0) }

    /// How many slots are taken.
    private static let count = Mutex(0)
    /// Whether the handler is to stay installed; read by the handler when continued.
    private static let installed = Atomic(false)

    /// Starts waiting for `pid` at each ^Z; returns the slot to give to
    /// ``unwatch(_:)``, or nil when every slot is taken (that command is then
    /// not waited for).
    static func watch(_ pid: pid_t) -> Int? {
        count.withLock { count in
            guard let slot = (0..<slotCount).first(where: { watched[$0].load(ordering: .relaxed) == 0 }) else { return nil }
            watched[slot].store(pid, ordering: .releasing)
            if count == 0 { installed.store(installIfDefault(), ordering: .releasing) }
            count += 1
            return slot
        }
    }

    /// Stops waiting for the process in `slot`; the last one out puts
    /// SIGTSTP's default action back.
    ///
    /// Called after the process is reaped: a ^Z in between asks about a
    /// process id that is no longer this process's child, and gets ECHILD.
    static func unwatch(_ slot: Int) {
        count.withLock { count in
            watched[slot].store(0, ordering: .releasing)
            count -= 1
            if count == 0 && installed.exchange(false, ordering: .acquiringAndReleasing) { restoreIfOurs() }
        }
    }

    /// Installs the handler when SIGTSTP has its default action, or finds it
    /// installed (a handler that another thread's ``unwatch(_:)`` raced is
    /// put back to the default by the handler itself, but this stays safe).
    private static func installIfDefault() -> Bool {
        var current = sigaction()
        guard sigaction(SIGTSTP, nil, &current) == 0 else { return false }
        let handler = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        if handler == unsafeBitCast(onStop, to: Int.self) { return true }
        guard handler == unsafeBitCast(SIG_DFL, to: Int.self) else { return false }
        var ours = sigaction()
        ours.__sigaction_handler.sa_handler = onStop
        ours.sa_flags = SA_RESTART
        sigemptyset(&ours.sa_mask)
        return sigaction(SIGTSTP, &ours, nil) == 0
    }

    private static func restoreIfOurs() {
        var current = sigaction()
        guard sigaction(SIGTSTP, nil, &current) == 0,
              unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(onStop, to: Int.self) else { return }
        var standard = sigaction()
        standard.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&standard.sa_mask)
        sigaction(SIGTSTP, &standard, nil)
    }

    /// Waits for every watched command to stop, stops, and once continued
    /// catches SIGTSTP again. Only async-signal-safe calls, and plain loops
    /// over integers (no iterator whose type metadata a debug build would
    /// look up here first).
    private static let onStop: @convention(c) (Int32) -> Void = { _ in
        let savedErrno = errno
        // One budget for all the commands, a millisecond a step.
        var stepsLeft = stopWaitMilliseconds
        var slot = 0
        while slot < slotCount {
            let pid = watched[slot].load(ordering: .acquiring)
            while pid != 0 && stepsLeft > 0 && !KeyCommandSuspension.hasStoppedOrExited(pid) {
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                nanosleep(&pause, nil)
                stepsLeft -= 1
            }
            slot += 1
        }
        JobControl.stopInsideHandler()
        // Continued (SIGCONT): the next ^Z is caught again while commands
        // run. Installed, then looked at again: an `unwatch(_:)` by another
        // thread in between (which found SIGTSTP at its default and left it)
        // is seen here, and the default goes back.
        if installed.load(ordering: .acquiring) {
            signal(SIGTSTP, KeyCommandSuspension.onStop)
            if !installed.load(ordering: .acquiring) { signal(SIGTSTP, SIG_DFL) }
        }
        errno = savedErrno
    }

    /// True once `pid` has stopped or exited, or is not this process's child
    /// (any error but EINTR); its state is left for the real wait (WNOWAIT).
    private static func hasStoppedOrExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        if waitid(P_PID, id_t(pid), &info, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) != 0 { return errno != EINTR }
        // si_signo stays 0 while the process neither stopped nor exited (WNOHANG).
        return info.si_signo != 0
    }
}
