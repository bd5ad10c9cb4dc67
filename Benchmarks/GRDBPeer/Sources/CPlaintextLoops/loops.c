#include <sqlite3.h>
#include "CPlaintextLoops.h"
#include "../../../Sources/CBenchmarkLoops/read_loops.h"

/// A plaintext database opened as the peer opens it for GRDB: one
/// connection, WAL, and the same pragmas.
static sqlite3 *open_plain(const char *path) {
    return with_settings(open_database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX),
        "PRAGMA cache_size = -65536;"
        "PRAGMA synchronous = NORMAL;"
        "PRAGMA temp_store = MEMORY;"
        "PRAGMA journal_mode = WAL;");
}

double c_plain_read_rows(const char *path, int64_t *checksum, int64_t *rows_read) {
    sqlite3 *db = open_plain(path);
    if (!db) return -1;
    double elapsed = read_all_rows(db, checksum, rows_read);
    sqlite3_close(db);
    return elapsed;
}

double c_plain_point_lookups(const char *path, int64_t rows, int64_t lookups, uint64_t seed, int64_t *checksum) {
    sqlite3 *db = open_plain(path);
    if (!db) return -1;
    double elapsed = point_lookups(db, rows, lookups, seed, checksum);
    sqlite3_close(db);
    return elapsed;
}
