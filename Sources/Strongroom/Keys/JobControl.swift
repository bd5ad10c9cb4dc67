import Foundation

/// Stopping this process from inside its own SIGTSTP handler: for handlers
/// that act before and after a stop (the CLI's passphrase prompt gives the
/// terminal its echo back; `KeyCommandSuspension` waits for the command).
package enum JobControl {
    /// Stops this process as SIGTSTP's default action does, and returns once
    /// it is continued (SIGCONT), with SIGTSTP's action left at its default
    /// for the caller to put its handler back.
    ///
    /// SIGTSTP is blocked while its handler runs: it is unblocked here for
    /// the raise to stop the process now. Left blocked, it stayed pending,
    /// was caught again when the handler returned, and the handler ran in a
    /// loop on a whole core (the mask comes back when the handler returns).
    /// Only async-signal-safe calls.
    package static func stopInsideHandler() {
        signal(SIGTSTP, SIG_DFL)
        var stop = sigset_t()
        sigemptyset(&stop)
        sigaddset(&stop, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &stop, nil)
        raise(SIGTSTP)
    }
}
