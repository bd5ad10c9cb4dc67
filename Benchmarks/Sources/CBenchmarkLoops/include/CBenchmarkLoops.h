#ifndef STRONGROOM_C_BENCHMARK_LOOPS_H
#define STRONGROOM_C_BENCHMARK_LOOPS_H

#include <stdint.h>

/// The same work as the Swift scenarios, written directly against SQLCipher's C API.
/// Each returns the elapsed wall-clock seconds of the measured loop, or a negative
/// number on error. `key_hex` is the 64 hex characters of a raw key.

/// Opens `path` with the raw key and the settings Strongroom uses by default,
/// creates the `person` table, and inserts `rows` rows through one prepared
/// statement in one transaction.
double c_insert_rows(const char *path, const char *key_hex, int64_t rows,
                     const char *const *names, const char *const *emails, int32_t pool_size);

/// Reads every row of `person` (5 columns), copying the text columns out.
/// `checksum` receives a value derived from the data, so nothing is optimised away,
/// and `rows_read` the rows read (the caller checks the count).
double c_read_rows(const char *path, const char *key_hex, int64_t *checksum, int64_t *rows_read);

/// The same read into a struct that owns its text as a Swift String does:
/// a text of more than 15 bytes copied to the heap (malloc, memcpy) and
/// freed after use; up to 15 bytes, kept inline.
double c_read_rows_owned(const char *path, const char *key_hex, int64_t *checksum, int64_t *rows_read);

/// `lookups` reads of one row by a random primary key (SplitMix64 from
/// `seed`, ids 1…`rows`), all 5 columns, on one connection.
double c_point_lookups(const char *path, const char *key_hex, int64_t rows, int64_t lookups, uint64_t seed, int64_t *checksum);

/// Seconds per AES-256-GCM seal of one 64-byte message through libcrypto's
/// EVP interface, as a C program seals values: the context keyed once, then
/// for each message a new nonce, the update, the final and the tag.
double c_gcm_seal_64(int64_t count, int64_t *checksum);

/// The search group's insert without Strongroom: `rows` customers in one
/// transaction, each a random BLOB the size of the sealed e-mail's envelope,
/// a phone, and two random BLOBs the size of the two blind index values
/// (key id first), with their two SQL indexes (`indexes` 2, the first UNIQUE)
/// or with none (`indexes` 0). The difference is what SQLite itself spends
/// keeping two indexes on random keys. Any other `indexes` is an error (-1).
double c_insert_indexed_customers(const char *path, const char *key_hex, int64_t rows, int32_t indexes);

#endif
