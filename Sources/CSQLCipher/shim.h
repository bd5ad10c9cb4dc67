#ifndef STRONGROOM_CSQLCIPHER_SHIM_H
#define STRONGROOM_CSQLCIPHER_SHIM_H

// sqlite3_key_v2 and sqlite3_rekey_v2 are declared only under SQLITE_HAS_CODEC,
// and sqlcipher.pc does not define it. Include the SQLCipher header by its
// directory so the system's plain sqlite3.h can never be picked instead.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
// cannot import. It tells SQLite to copy the bound bytes before returning.
static inline sqlite3_destructor_type strongroom_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_config is variadic, which Swift cannot call. Memory statistics make
// every sqlite3_malloc take one process-wide mutex, which serializes
// connections working on different threads. Returns SQLITE_MISUSE when SQLite
// was already initialized (the setting then stays as it was).
static inline int strongroom_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// Syncs the database file of `db`'s main database through SQLite's own file
// (the VFS that opened it, as a checkpoint's sync goes), without writing
// anything: how long a checkpoint's sync of it takes now. A SQLite code.
static inline int strongroom_sync_database_file(sqlite3 *db) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc != SQLITE_OK) return rc;
    if (file == 0 || file->pMethods == 0 || file->pMethods->xSync == 0) return SQLITE_ERROR;
    return file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
}

// prctl is variadic, which Swift cannot call: makes this process not
// dumpable (no core dump, no ptrace by other processes of its user), for
// CoreDumps.disable(). Returns -1 where there is no prctl.
#if defined(__linux__)
#include <sys/prctl.h>
static inline int strongroom_prctl_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
#else
static inline int strongroom_prctl_set_not_dumpable(void) { return -1; }
#endif

// Names the calling thread (at most 15 bytes), as `top -H`, gdb and
// /proc/PID/task/TID/comm show it: a connection's own thread.
#if defined(__linux__)
static inline void strongroom_set_thread_name(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#else
static inline void strongroom_set_thread_name(const char *name) { (void)name; }
#endif

// Raises the calling thread's nice value by `increment` (a lower priority;
// any thread may lower its own): a pool's reader threads, so that a flood of
// reads cannot take the CPU the writer's thread needs. Returns 0 or -1.
#if defined(__linux__)
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
/* Runs the calling thread `levels` nice levels below the process's main
   thread (at most 19; 0: at the main thread's level), whichever thread
   created it: a thread inherits its creator's nice value, which may be a
   reader's, or a libdispatch worker's (10 for background work, -2 for
   high priority). Raising a thread back needs a privilege (root,
   CAP_SYS_NICE): without one, setpriority fails and the thread keeps its
   creator's level. Returns 0, or -1 with errno set. */
static inline int strongroom_set_thread_priority(int levels) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int process = getpriority(PRIO_PROCESS, (id_t)getpid());
    if (process == -1 && errno != 0) return -1;
    errno = 0;
    int now = getpriority(PRIO_PROCESS, (id_t)tid);
    if (now == -1 && errno != 0) return -1;
    int target = process + levels > 19 ? 19 : process + levels;
    if (now == target) return 0;
    return setpriority(PRIO_PROCESS, (id_t)tid, target);
}
#else
static inline int strongroom_set_thread_priority(int levels) { (void)levels; return -1; }
#endif

#endif
