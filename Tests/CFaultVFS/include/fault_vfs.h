#ifndef STRONGROOM_FAULT_VFS_H
#define STRONGROOM_FAULT_VFS_H

// A SQLite VFS for tests, in the manner of SQLite's own test_vfs.c: it wraps
// the platform VFS, forwards every call to it, and when armed makes writes to
// one named file fail with SQLITE_FULL, as a full disk would, or keeps new
// connections out of one file as another process's lock would. Files other
// than the armed one are untouched, so it can be the process's default VFS
// while unrelated tests run beside it.

// Registers the VFS as the default for connections opened from now on.
// Returns a SQLite result code. Calling it again does nothing.
int strongroom_fault_vfs_install(void);

// Makes every write to the file named exactly `path` (as SQLite names it:
// the database path, or path + "-wal", "-journal") fail with SQLITE_FULL.
void strongroom_fault_vfs_arm(const char *path);

// What an armed file does.
enum StrongroomFault {
    STRONGROOM_FAULT_FULL = 0,         // writes fail with SQLITE_FULL
    STRONGROOM_FAULT_WRITE_ERROR = 1,  // writes fail with SQLITE_IOERR_WRITE (EIO)
    STRONGROOM_FAULT_READ_ERROR = 2,   // reads fail with SQLITE_IOERR_READ
    STRONGROOM_FAULT_SYNC_ERROR = 3,   // fsync fails with SQLITE_IOERR_FSYNC
    STRONGROOM_FAULT_SYNC_HELD = 4,    // fsync waits until disarmed, then syncs
    STRONGROOM_FAULT_COUNTED = 5,      // nothing fails: writes and fsyncs are counted
};

// Like strongroom_fault_vfs_arm, with another fault: a StrongroomFault.
void strongroom_fault_vfs_arm_with(const char *path, int kind);

// Writes succeed again; syncs held wait no longer.
void strongroom_fault_vfs_disarm(void);

// Makes every lock request on the file named exactly `path` fail with
// SQLITE_BUSY for connections that open it from now on, as if another
// process held it; connections that have it open already are not affected.
void strongroom_fault_vfs_keep_out(const char *path);

// New connections may lock the file again.
void strongroom_fault_vfs_let_in(void);

// How many operations failed since the last arm (for STRONGROOM_FAULT_COUNTED,
// how many writes there were).
int strongroom_fault_vfs_failed_writes(void);

// How many fsyncs of the armed file a STRONGROOM_FAULT_COUNTED arm counted.
int strongroom_fault_vfs_counted_syncs(void);

#endif
