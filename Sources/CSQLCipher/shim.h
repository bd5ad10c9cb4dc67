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

#endif
