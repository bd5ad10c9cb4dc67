#include "fault_vfs.h"

#include <pthread.h>
#include <sqlcipher/sqlite3.h>
#include <string.h>

typedef struct FaultFile {
    sqlite3_file base;   // must come first: SQLite sees a FaultFile as a sqlite3_file
    const char *name;    // valid until xClose (SQLite's guarantee for xOpen's zName)
    sqlite3_file *real;  // the platform file, allocated right after this struct
    long serial;         // the order in which files were opened
} FaultFile;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs fault_vfs;
static pthread_mutex_t fault_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fault_released = PTHREAD_COND_INITIALIZER;  // signalled at disarm
static char fault_path[4096];
static int fault_armed;
static int fault_kind;  // a StrongroomFault
static int fault_count;
static int sync_count;  // for STRONGROOM_FAULT_COUNTED
static char busy_path[4096];
static long busy_after_serial = -1;  // files opened after this one are kept out
static long open_serial;

static int should_fail(FaultFile *file, int kind) {
    int fail = 0;
    pthread_mutex_lock(&fault_mutex);
    if (fault_armed && fault_kind == kind && file->name && strcmp(file->name, fault_path) == 0) {
        fail = 1;
        fault_count++;
    }
    pthread_mutex_unlock(&fault_mutex);
    return fail;
}

#define REAL(f) (((FaultFile *)(f))->real)

static int fClose(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int fRead(sqlite3_file *f, void *p, int n, sqlite3_int64 o) {
    if (should_fail((FaultFile *)f, STRONGROOM_FAULT_READ_ERROR)) return SQLITE_IOERR_READ;
    return REAL(f)->pMethods->xRead(REAL(f), p, n, o);
}
static int fWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 o) {
    if (should_fail((FaultFile *)f, STRONGROOM_FAULT_FULL)) return SQLITE_FULL;
    if (should_fail((FaultFile *)f, STRONGROOM_FAULT_WRITE_ERROR)) return SQLITE_IOERR_WRITE;
    (void)should_fail((FaultFile *)f, STRONGROOM_FAULT_COUNTED);  // counted, not failed
    return REAL(f)->pMethods->xWrite(REAL(f), p, n, o);
}
static int fTruncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int fSync(sqlite3_file *f, int flags) {
    if (should_fail((FaultFile *)f, STRONGROOM_FAULT_SYNC_ERROR)) return SQLITE_IOERR_FSYNC;
    FaultFile *file = (FaultFile *)f;
    pthread_mutex_lock(&fault_mutex);
    if (fault_armed && fault_kind == STRONGROOM_FAULT_COUNTED && file->name && strcmp(file->name, fault_path) == 0) sync_count++;
    pthread_mutex_unlock(&fault_mutex);
    if (should_fail((FaultFile *)f, STRONGROOM_FAULT_SYNC_HELD)) {
        // Waits for disarm, then syncs as usual.
        pthread_mutex_lock(&fault_mutex);
        while (fault_armed && fault_kind == STRONGROOM_FAULT_SYNC_HELD) pthread_cond_wait(&fault_released, &fault_mutex);
        pthread_mutex_unlock(&fault_mutex);
    }
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int fFileSize(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int fLock(sqlite3_file *f, int lock) {
    FaultFile *file = (FaultFile *)f;
    int busy = 0;
    pthread_mutex_lock(&fault_mutex);
    if (busy_after_serial >= 0 && file->serial > busy_after_serial && file->name && strcmp(file->name, busy_path) == 0) busy = 1;
    pthread_mutex_unlock(&fault_mutex);
    if (busy) return SQLITE_BUSY;
    return REAL(f)->pMethods->xLock(REAL(f), lock);
}
static int fUnlock(sqlite3_file *f, int lock) { return REAL(f)->pMethods->xUnlock(REAL(f), lock); }
static int fCheckReservedLock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int fFileControl(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int fSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out) { return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out); }
static int fShmLock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void fShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fShmUnmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }
static int fFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **out) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, out); }
static int fUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods fault_methods = {
    3, fClose, fRead, fWrite, fTruncate, fSync, fFileSize, fLock, fUnlock,
    fCheckReservedLock, fFileControl, fSectorSize, fDeviceCharacteristics,
    fShmMap, fShmLock, fShmBarrier, fShmUnmap, fFetch, fUnfetch,
};

static int vOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *file = (FaultFile *)f;
    file->name = name;
    file->real = (sqlite3_file *)(file + 1);
    pthread_mutex_lock(&fault_mutex);
    file->serial = ++open_serial;
    pthread_mutex_unlock(&fault_mutex);
    int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, outFlags);
    // SQLite calls xClose only when pMethods is set: set it only when the
    // platform file opened (it then has methods of its own).
    file->base.pMethods = file->real->pMethods ? &fault_methods : 0;
    return rc;
}
static int vDelete(sqlite3_vfs *v, const char *name, int sync) { (void)v; return real_vfs->xDelete(real_vfs, name, sync); }
static int vAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return real_vfs->xAccess(real_vfs, name, flags, out); }
static int vFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return real_vfs->xFullPathname(real_vfs, name, n, out); }
static void *vDlOpen(sqlite3_vfs *v, const char *name) { (void)v; return real_vfs->xDlOpen(real_vfs, name); }
static void vDlError(sqlite3_vfs *v, int n, char *out) { (void)v; real_vfs->xDlError(real_vfs, n, out); }
static void (*vDlSym(sqlite3_vfs *v, void *h, const char *sym))(void) { (void)v; return real_vfs->xDlSym(real_vfs, h, sym); }
static void vDlClose(sqlite3_vfs *v, void *h) { (void)v; real_vfs->xDlClose(real_vfs, h); }
static int vRandomness(sqlite3_vfs *v, int n, char *out) { (void)v; return real_vfs->xRandomness(real_vfs, n, out); }
static int vSleep(sqlite3_vfs *v, int us) { (void)v; return real_vfs->xSleep(real_vfs, us); }
static int vCurrentTime(sqlite3_vfs *v, double *out) { (void)v; return real_vfs->xCurrentTime(real_vfs, out); }
static int vGetLastError(sqlite3_vfs *v, int n, char *out) { (void)v; return real_vfs->xGetLastError(real_vfs, n, out); }
static int vCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return real_vfs->xCurrentTimeInt64(real_vfs, out); }

int strongroom_fault_vfs_install(void) {
    int rc = SQLITE_OK;
    pthread_mutex_lock(&fault_mutex);
    if (!real_vfs) {
        rc = sqlite3_initialize();
        sqlite3_vfs *platform = rc == SQLITE_OK ? sqlite3_vfs_find(0) : 0;
        if (platform) {
            real_vfs = platform;
            fault_vfs = (sqlite3_vfs){
                2, (int)sizeof(FaultFile) + platform->szOsFile, platform->mxPathname, 0,
                "strongroom-fault", 0,
                vOpen, vDelete, vAccess, vFullPathname, vDlOpen, vDlError, vDlSym, vDlClose,
                vRandomness, vSleep, vCurrentTime, vGetLastError, vCurrentTimeInt64,
                0, 0, 0,
            };
            rc = sqlite3_vfs_register(&fault_vfs, 1);
            if (rc != SQLITE_OK) real_vfs = 0;
        } else if (rc == SQLITE_OK) {
            rc = SQLITE_ERROR;
        }
    }
    pthread_mutex_unlock(&fault_mutex);
    return rc;
}

void strongroom_fault_vfs_arm(const char *path) { strongroom_fault_vfs_arm_with(path, STRONGROOM_FAULT_FULL); }

void strongroom_fault_vfs_arm_with(const char *path, int kind) {
    pthread_mutex_lock(&fault_mutex);
    fault_kind = kind;
    strncpy(fault_path, path, sizeof fault_path - 1);
    fault_path[sizeof fault_path - 1] = 0;
    fault_armed = 1;
    fault_count = 0;
    sync_count = 0;
    pthread_mutex_unlock(&fault_mutex);
}

void strongroom_fault_vfs_disarm(void) {
    pthread_mutex_lock(&fault_mutex);
    fault_armed = 0;
    pthread_cond_broadcast(&fault_released);
    pthread_mutex_unlock(&fault_mutex);
}

int strongroom_fault_vfs_failed_writes(void) {
    pthread_mutex_lock(&fault_mutex);
    int count = fault_count;
    pthread_mutex_unlock(&fault_mutex);
    return count;
}

int strongroom_fault_vfs_counted_syncs(void) {
    pthread_mutex_lock(&fault_mutex);
    int count = sync_count;
    pthread_mutex_unlock(&fault_mutex);
    return count;
}

void strongroom_fault_vfs_keep_out(const char *path) {
    pthread_mutex_lock(&fault_mutex);
    strncpy(busy_path, path, sizeof busy_path - 1);
    busy_path[sizeof busy_path - 1] = 0;
    busy_after_serial = open_serial;
    pthread_mutex_unlock(&fault_mutex);
}

void strongroom_fault_vfs_let_in(void) {
    pthread_mutex_lock(&fault_mutex);
    busy_after_serial = -1;
    pthread_mutex_unlock(&fault_mutex);
}
