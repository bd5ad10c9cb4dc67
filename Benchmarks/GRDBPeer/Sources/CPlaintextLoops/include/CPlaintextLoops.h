#ifndef STRONGROOM_C_PLAINTEXT_LOOPS_H
#define STRONGROOM_C_PLAINTEXT_LOOPS_H

#include <stdint.h>

/// The harness's C reads (Benchmarks/Sources/CBenchmarkLoops/read_loops.h)
/// on GRDB's engine: the system's plaintext SQLite, opened with the settings
/// the peer gives GRDB. Each returns the seconds of its loop, or -1.

/// Every row of `person` (5 columns), the texts copied out.
double c_plain_read_rows(const char *path, int64_t *checksum, int64_t *rows_read);

/// `lookups` reads of one row by a random primary key (SplitMix64 from `seed`).
double c_plain_point_lookups(const char *path, int64_t rows, int64_t lookups, uint64_t seed, int64_t *checksum);

#endif
