#ifndef STRONGROOM_FUZZ_SQLITE_COMPLETE_H
#define STRONGROOM_FUZZ_SQLITE_COMPLETE_H

/// SQLite's own test for "this text ends a complete statement" (sqlite3.h):
/// 1 when the text ends with a semicolon that is not inside a literal, a
/// comment or a trigger body. Declared alone, not through sqlite3.h, so that
/// this module does not claim the header the library's CSQLCipher module owns.
int sqlite3_complete(const char *sql);

#endif
