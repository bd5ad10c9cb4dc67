#include <stdlib.h>
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
#include <stdio.h>
#include <string.h>
#include "CBenchmarkLoops.h"
#include "read_loops.h"

static sqlite3 *open_keyed(const char *path, const char *key_hex) {
    sqlite3 *db = open_database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    if (!db) return NULL;
    char key[70];
    snprintf(key, sizeof key, "x'%s'", key_hex);
    int keyed = sqlite3_key_v2(db, "main", key, (int)strlen(key));
    explicit_bzero(key, sizeof key); // memset of a dead buffer may be optimized away
    if (keyed != SQLITE_OK) { // else the loop would time a plaintext file
        sqlite3_close(db);
        return NULL;
    }
    return with_settings(db,
        "SELECT count(*) FROM sqlite_master;"
        "PRAGMA temp_store = MEMORY;"
        "PRAGMA cache_size = -65536;"
        "PRAGMA foreign_keys = ON;"
        "PRAGMA journal_mode = WAL;"
        "PRAGMA synchronous = NORMAL;");
}

double c_insert_rows(const char *path, const char *key_hex, int64_t rows,
                     const char *const *names, const char *const *emails, int32_t pool_size) {
    sqlite3 *db = open_keyed(path, key_hex);
    if (!db) return -1;
    if (sqlite3_exec(db, "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, score REAL NOT NULL, active INTEGER NOT NULL)", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    double start = now();
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO person(id, name, email, score, active) VALUES (?, ?, ?, ?, ?)", -1, &stmt, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_finalize(stmt);
        sqlite3_close(db);
        return -1;
    }
    for (int64_t i = 0; i < rows; i++) {
        const char *name = names[i % pool_size];
        const char *email = emails[i % pool_size];
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, i + 1);
        sqlite3_bind_text(stmt, 2, name, (int)strlen(name), SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 3, email, (int)strlen(email), SQLITE_TRANSIENT);
        sqlite3_bind_double(stmt, 4, (double)i * 0.5);
        sqlite3_bind_int64(stmt, 5, i & 1);
        if (sqlite3_step(stmt) != SQLITE_DONE) {
            sqlite3_finalize(stmt);
            sqlite3_close(db);
            return -1;
        }
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_finalize(stmt);
        sqlite3_close(db);
        return -1;
    }
    double elapsed = now() - start;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return elapsed;
}

double c_read_rows(const char *path, const char *key_hex, int64_t *checksum, int64_t *rows_read) {
    sqlite3 *db = open_keyed(path, key_hex);
    if (!db) return -1;
    double elapsed = read_all_rows(db, checksum, rows_read);
    sqlite3_close(db);
    return elapsed;
}

/// Stores each copy where the compiler must assume it is seen, so that it
/// cannot elide the malloc/free pair.
static void *volatile owned_sink;

/// As c_read_rows, but a text of more than 15 bytes is copied to the heap and
/// freed after use, as a Swift String does (up to 15 bytes it is inline).
double c_read_rows_owned(const char *path, const char *key_hex, int64_t *checksum, int64_t *rows_read) {
    sqlite3 *db = open_keyed(path, key_hex);
    if (!db) return -1;
    double start = now();
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, name, email, score, active FROM person", -1, &stmt, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    char inline_name[16], inline_email[16];
    int64_t sum = 0, n = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        n++;
        int64_t id = sqlite3_column_int64(stmt, 0);
        const unsigned char *n = sqlite3_column_text(stmt, 1);
        int nlen = sqlite3_column_bytes(stmt, 1);
        char *name = nlen > 15 ? malloc((size_t)nlen + 1) : inline_name;
        memcpy(name, n, (size_t)nlen + 1);
        const unsigned char *e = sqlite3_column_text(stmt, 2);
        int elen = sqlite3_column_bytes(stmt, 2);
        char *email = NULL;
        if (e) {
            email = elen > 15 ? malloc((size_t)elen + 1) : inline_email;
            memcpy(email, e, (size_t)elen + 1);
        }
        double score = sqlite3_column_double(stmt, 3);
        int64_t active = sqlite3_column_int64(stmt, 4);
        sum += id + nlen + elen + (int64_t)score + active + name[0] + (email ? email[0] : 0);
        owned_sink = name;
        owned_sink = email;
        if (nlen > 15) free(name);
        if (e && elen > 15) free(email);
    }
    double elapsed = now() - start;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    *checksum = sum;
    *rows_read = n;
    return rc == SQLITE_DONE ? elapsed : -1;
}

double c_point_lookups(const char *path, const char *key_hex, int64_t rows, int64_t lookups, uint64_t seed, int64_t *checksum) {
    sqlite3 *db = open_keyed(path, key_hex);
    if (!db) return -1;
    double elapsed = point_lookups(db, rows, lookups, seed, checksum);
    sqlite3_close(db);
    return elapsed;
}

#include <openssl/evp.h>

double c_gcm_seal_64(int64_t count, int64_t *checksum) {
    unsigned char key[32], nonce[12] = {0}, in[64], out[64], tag[16];
    memset(key, 0x5a, sizeof key);
    memset(in, 7, sizeof in);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return -1;
    int ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL) == 1;
    explicit_bzero(key, sizeof key);
    int64_t sum = 0;
    double start = now();
    for (int64_t i = 0; ok && i < count; i++) {
        memcpy(nonce, &i, sizeof i); // a new nonce for each message
        int len = 0, final_len = 0;
        ok = EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1
            && EVP_EncryptUpdate(ctx, out, &len, in, (int)sizeof in) == 1
            && EVP_EncryptFinal_ex(ctx, out + len, &final_len) == 1
            && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)sizeof tag, tag) == 1;
        sum += out[0] + tag[0];
    }
    double elapsed = now() - start;
    EVP_CIPHER_CTX_free(ctx);
    *checksum = sum;
    return ok ? elapsed / (double)count : -1;
}

double c_insert_indexed_customers(const char *path, const char *key_hex, int64_t rows, int32_t indexes) {
    if (indexes != 0 && indexes != 2) return -1;
    sqlite3 *db = open_keyed(path, key_hex);
    if (!db) return -1;
    const char *schema = indexes == 2
        ? "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, phone TEXT, email_exact BLOB, email_folded BLOB);"
          "CREATE UNIQUE INDEX customer_email_exact ON customer(email_exact);"
          "CREATE INDEX customer_email_folded ON customer(email_folded);"
        : "CREATE TABLE customer(id INTEGER PRIMARY KEY, email BLOB NOT NULL, phone TEXT, email_exact BLOB, email_folded BLOB);";
    sqlite3_stmt *stmt = NULL;
    double elapsed = -1, start = 0;
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "INSERT INTO customer(id, email, phone, email_exact, email_folded) VALUES (?, ?, ?, ?, ?)", -1, &stmt, NULL) != SQLITE_OK) {
        goto done;
    }
    start = now();
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) goto done;
    uint64_t state = 39;
    // As Strongroom stores them: the envelope of a 38-byte address (6-byte
    // header, 12-byte nonce, 39 bytes, 16-byte tag), and each index value
    // after the 4-byte id of the key it was made under: 16 bytes, and 20
    // bits in 3 bytes (the last 4 bits zero).
    unsigned char envelope[73], exact[20] = {0, 0, 0, 1}, folded[7] = {0, 0, 0, 1};
    char phone[24];
    for (int64_t i = 0; i < rows; i++) {
        for (size_t k = 0; k < sizeof envelope; k += 8) {
            uint64_t r = splitmix64(&state);
            memcpy(envelope + k, &r, sizeof envelope - k < 8 ? sizeof envelope - k : 8);
        }
        uint64_t a = splitmix64(&state), b = splitmix64(&state), c = splitmix64(&state);
        memcpy(exact + 4, &a, 8);
        memcpy(exact + 12, &b, 8);
        memcpy(folded + 4, &c, 3);
        folded[6] &= 0xF0;
        int phone_length = snprintf(phone, sizeof phone, "+1 555 01%d", (int)(i % 100));
        sqlite3_reset(stmt);
        sqlite3_bind_int64(stmt, 1, i + 1);
        sqlite3_bind_blob(stmt, 2, envelope, (int)sizeof envelope, SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 3, phone, phone_length, SQLITE_TRANSIENT);
        sqlite3_bind_blob(stmt, 4, exact, (int)sizeof exact, SQLITE_TRANSIENT);
        sqlite3_bind_blob(stmt, 5, folded, (int)sizeof folded, SQLITE_TRANSIENT);
        if (sqlite3_step(stmt) != SQLITE_DONE) goto done;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto done;
    elapsed = now() - start;
done:
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return elapsed;
}
