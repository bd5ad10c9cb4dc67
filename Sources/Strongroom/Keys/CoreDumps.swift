internal import CSQLCipher
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeping a process's memory, and the keys in it, out of core dumps.
///
/// A core dump is a copy of a process's memory on disk: one taken while a
/// database key, a field keyring or opened values are live holds them, in
/// the clear. Strongroom's own secure memory (`SecureBytes`:
/// database keys, field keys, passphrases) is marked `MADV_DONTDUMP`, so no
/// core dump holds it. Copies it cannot mark are still dumped: the key
/// SQLCipher keeps for an open database, the key schedules OpenSSL keeps,
/// and every opened value the application reads. A host that holds keys
/// should therefore take no core dumps at all:
///
/// ```swift
/// try CoreDumps.disable()   // first thing in main(), before any key is read
/// ```
///
/// or, for a service, `LimitCORE=0` in its systemd unit (with
/// `systemd-coredump`, a dump also goes to the journal's store otherwise).
/// The `strongroom` command does this itself as it starts.
public enum CoreDumps {
    /// Makes this process leave no core dump: its core size limit becomes 0
    /// (`RLIMIT_CORE`, inherited by what it starts), and on Linux it is no
    /// longer dumpable (`PR_SET_DUMPABLE` 0: no core is written whatever the
    /// limit, and other processes of the same user may not attach to it).
    public static func disable() throws(StrongroomError) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(Int32(RLIMIT_CORE.rawValue), &none) == 0 else {
            throw StrongroomError(.permissionDenied, "Setting the core dump size limit to 0 failed (errno \(errno)).")
        }
        #if os(Linux)
        guard strongroom_prctl_set_not_dumpable() == 0 else {
            throw StrongroomError(.permissionDenied, "Making the process not dumpable failed (errno \(errno)).")
        }
        #endif
    }
}
