// The C reads every engine is measured with, on a database its includer has
// opened: included after that engine's sqlite3.h by this target's loops.c
// (SQLCipher, keyed) and by the GRDB peer's CPlaintextLoops (the system's
// plaintext SQLite, which must never share a binary with SQLCipher). One
// text for both, so that "our layer over our C" and "GRDB's layer over its
// C" are over the same C.
#ifndef STRONGROOM_READ_LOOPS_H
#define STRONGROOM_READ_LOOPS_H

#include <stdint.h>
#include <string.h>
#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/// The database at `path` opened with `flags`, or NULL (a handle SQLite
/// returns on failure is closed).
static inline sqlite3 *open_database(const char *path, int flags) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/// `db` after running `settings` on it, or NULL (and `db` closed) if they
/// fail or `db` is NULL.
static inline sqlite3 *with_settings(sqlite3 *db, const char *settings) {
    if (db && sqlite3_exec(db, settings, NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/// Reads the 5 columns of the current row, copying the texts out (into
/// stack buffers) as an app would; returns a checksum of them. (The
/// benchmark's texts are never empty nor NULL, so their first byte is set.)
/// Always inlined: as a plain call the loop ran ~16 more instructions a row
/// than the loop written inline, which would flatter every ratio to C.
static inline __attribute__((always_inline)) int64_t read_row(sqlite3_stmt *stmt) {
    char name[256], email[256];
    int64_t id = sqlite3_column_int64(stmt, 0);
    const unsigned char *n = sqlite3_column_text(stmt, 1);
    int nlen = sqlite3_column_bytes(stmt, 1);
    memcpy(name, n, (size_t)(nlen < 255 ? nlen : 255));
    const unsigned char *e = sqlite3_column_text(stmt, 2);
    int elen = sqlite3_column_bytes(stmt, 2);
    if (e) memcpy(email, e, (size_t)(elen < 255 ? elen : 255));
    double score = sqlite3_column_double(stmt, 3);
    int64_t active = sqlite3_column_int64(stmt, 4);
    return id + nlen + elen + (int64_t)score + active + name[0] + email[0];
}

/// Every row of `person`, timed from the prepare to the last step; the
/// seconds, or -1.
static inline double read_all_rows(sqlite3 *db, int64_t *checksum, int64_t *rows_read) {
    double start = now();
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, name, email, score, active FROM person", -1, &stmt, NULL) != SQLITE_OK) return -1;
    int64_t sum = 0, n = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        sum += read_row(stmt);
        n++;
    }
    double elapsed = now() - start;
    sqlite3_finalize(stmt);
    *checksum = sum;
    *rows_read = n;
    return rc == SQLITE_DONE ? elapsed : -1;
}

static inline uint64_t splitmix64(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// `lookups` reads of one row by a random primary key (SplitMix64 from
/// `seed`, ids 1…`rows`), one statement prepared before the timer; the
/// seconds, or -1 (a miss is an error: every id exists).
static inline double point_lookups(sqlite3 *db, int64_t rows, int64_t lookups, uint64_t seed, int64_t *checksum) {
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, name, email, score, active FROM person WHERE id = ?", -1, &stmt, NULL) != SQLITE_OK) return -1;
    int64_t sum = 0, found = 0;
    uint64_t state = seed;
    double start = now();
    for (int64_t i = 0; i < lookups; i++) {
        sqlite3_bind_int64(stmt, 1, (int64_t)(splitmix64(&state) % (uint64_t)rows) + 1);
        if (sqlite3_step(stmt) == SQLITE_ROW) {
            sum += read_row(stmt);
            found++;
        }
        sqlite3_reset(stmt);
    }
    double elapsed = now() - start;
    sqlite3_finalize(stmt);
    *checksum = sum;
    return found == lookups ? elapsed : -1;
}

#endif
