/*
 * PageCipherProbe: what SQLCipher's page cipher costs an insert, and how much
 * of that is the stock OpenSSL provider's per-page set-up rather than AES and
 * HMAC themselves (issue 51, item 2).
 *
 * It inserts rows shaped like CustomerService's (a name, an 80-byte sealed
 * e-mail, a country, a 16-byte blind index under a UNIQUE index) into a new WAL
 * database, in transactions of GROUP inserts, each in its own savepoint (none
 * with PROBE_SAVEPOINTS=0), as the service's group commit does in either of
 * its Configuration.groupedWriteUndo modes. The database is opened one of three ways:
 *
 *   plaintext  no key: SQLite alone, the floor
 *   stock      a raw key, SQLCipher's own OpenSSL provider, which for every
 *              page allocates a cipher and an HMAC context, fetches the
 *              algorithms (on SQLCipher 4.6.1 also the HMAC implementation),
 *              keys both and frees them again
 *   caching    a raw key, through a provider registered with
 *              sqlcipher_register_provider that keeps, per provider context
 *              (3.4.1: one per cipher context, a codec's read and write ones;
 *              4.6.1: one per codec, shared by both directions), a keyed
 *              cipher context per direction and a keyed HMAC context, and
 *              only sets the IV per page. Same algorithms,
 *              same bytes on disk: run.sh checks that each engine's stock shell
 *              opens and verifies what it writes. Only what SQLCipher's defaults
 *              use is supported (AES-256-CBC; HMAC and PBKDF2 over SHA1, SHA256
 *              or SHA512); anything else is refused, as an error.
 *
 * The probe exits 1 when the provider that ran is not the mode's (PRAGMA
 * cipher_provider) or when the caching provider failed a call (SQLCipher 3.4.1
 * ignores some of its providers' errors), so a wrong run is not timed as right.
 *
 * A measurement probe, not library code: Strongroom registers no provider.
 * Build and run with run.sh (both engines), which makes a fresh raw key for the
 * run in a 0600 file: the probe reads it from there, never from its arguments.
 */
#include <sqlite3.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef PROBE_SQLCIPHER4
/* SQLCipher 3.4.1's provider (src/sqlcipher.h at v3.4.1). */
typedef struct {
  int (*activate)(void *ctx);
  int (*deactivate)(void *ctx);
  const char *(*get_provider_name)(void *ctx);
  int (*add_random)(void *ctx, void *buffer, int length);
  int (*random)(void *ctx, void *buffer, int length);
  int (*hmac)(void *ctx, unsigned char *hmac_key, int key_sz, unsigned char *in, int in_sz, unsigned char *in2, int in2_sz, unsigned char *out);
  int (*kdf)(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz, int workfactor, int key_sz, unsigned char *key);
  int (*cipher)(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv, unsigned char *in, int in_sz, unsigned char *out);
  int (*set_cipher)(void *ctx, const char *cipher_name);
  const char *(*get_cipher)(void *ctx);
  int (*get_key_sz)(void *ctx);
  int (*get_iv_sz)(void *ctx);
  int (*get_block_sz)(void *ctx);
  int (*get_hmac_sz)(void *ctx);
  int (*ctx_copy)(void *target_ctx, void *source_ctx);
  int (*ctx_cmp)(void *c1, void *c2);
  int (*ctx_init)(void **ctx);
  int (*ctx_free)(void **ctx);
  int (*fips_status)(void *ctx);
  const char *(*get_provider_version)(void *ctx);
} provider;
extern void sqlcipher_activate(void);
#else
/* SQLCipher 4.6.1's provider (src/sqlcipher.h at v4.6.1). */
typedef struct {
  int (*activate)(void *ctx);
  int (*deactivate)(void *ctx);
  const char *(*get_provider_name)(void *ctx);
  int (*add_random)(void *ctx, void *buffer, int length);
  int (*random)(void *ctx, void *buffer, int length);
  int (*hmac)(void *ctx, int algorithm, unsigned char *hmac_key, int key_sz, unsigned char *in, int in_sz, unsigned char *in2, int in2_sz, unsigned char *out);
  int (*kdf)(void *ctx, int algorithm, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz, int workfactor, int key_sz, unsigned char *key);
  int (*cipher)(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv, unsigned char *in, int in_sz, unsigned char *out);
  const char *(*get_cipher)(void *ctx);
  int (*get_key_sz)(void *ctx);
  int (*get_iv_sz)(void *ctx);
  int (*get_block_sz)(void *ctx);
  int (*get_hmac_sz)(void *ctx, int algorithm);
  int (*ctx_init)(void **ctx);
  int (*ctx_free)(void **ctx);
  int (*fips_status)(void *ctx);
  const char *(*get_provider_version)(void *ctx);
} provider;
#endif
extern int sqlcipher_register_provider(provider *p);
#ifndef PROBE_SQLCIPHER4
extern void *sqlcipher_malloc(int);
#else
extern void *sqlcipher_malloc(sqlite3_uint64);
#endif
/* SQLCipher's header declares it only under SQLITE_HAS_CODEC. */
extern int sqlite3_key_v2(sqlite3 *db, const char *name, const void *key, int length);

/* The raw key as SQLCipher takes it: x'<64 hex digits>' (67 bytes). */
static char keyLiteral[67];

static void cleanse_key(void) { OPENSSL_cleanse(keyLiteral, sizeof keyLiteral); }

static void read_key(const char *keyFile) {
  char buffer[80];
  int fd = open(keyFile, O_RDONLY | O_CLOEXEC);
  ssize_t length = fd < 0 ? -1 : read(fd, buffer, sizeof buffer);
  if (fd >= 0) close(fd);
  /* Exactly 64 hex digits, then at most a newline. */
  int valid = length == 64 || (length == 65 && buffer[64] == '\n');
  for (int i = 0; valid && i < 64; i++) valid = isxdigit((unsigned char)buffer[i]) != 0;
  if (!valid) {
    OPENSSL_cleanse(buffer, sizeof buffer);
    fprintf(stderr, "probe: %s does not hold a raw key: 64 hex digits (and at most a newline) are expected\n", keyFile);
    exit(2);
  }
  keyLiteral[0] = 'x';
  keyLiteral[1] = '\'';
  memcpy(keyLiteral + 2, buffer, 64);
  keyLiteral[66] = '\'';
  OPENSSL_cleanse(buffer, sizeof buffer);
}

/* Set when a call of the caching provider failed. */
static int providerFailed;

/* One provider context (3.4.1: one per cipher context; 4.6.1: one per codec): keyed contexts, reused while the key is the same. */
typedef struct {
  EVP_CIPHER *cipher;
  EVP_CIPHER_CTX *directions[2];
  unsigned char cipherKeys[2][64];
  int cipherKeySizes[2];
  EVP_MAC_CTX *mac;
  unsigned char macKey[64];
  int macKeySize, macAlgorithm;
} caching_ctx;

static EVP_MAC *hmacImplementation;

static int noop(void *ctx) { (void)ctx; return SQLITE_OK; }
static const char *name(void *ctx) { (void)ctx; return "probe-caching-openssl"; }
static const char *version(void *ctx) { (void)ctx; return OPENSSL_VERSION_TEXT; }
static int add_random(void *ctx, void *buffer, int length) { (void)ctx; RAND_add(buffer, length, 0); return SQLITE_OK; }
static int failed(void) { providerFailed = 1; return SQLITE_ERROR; }
static int random_bytes(void *ctx, void *buffer, int length) { (void)ctx; return RAND_bytes(buffer, length) == 1 ? SQLITE_OK : failed(); }

/* SQLCipher's numbering: 0 SHA1, 1 SHA256, 2 SHA512. */
static const char *digest_name(int algorithm) { return algorithm == 0 ? "SHA1" : algorithm == 1 ? "SHA256" : algorithm == 2 ? "SHA512" : NULL; }

static int mac_call(caching_ctx *c, int algorithm, unsigned char *key, int keySize, unsigned char *in, int inSize, unsigned char *in2, int in2Size, unsigned char *out) {
  size_t length;
  if (digest_name(algorithm) == NULL) return SQLITE_ERROR;
  if (c->mac == NULL && (c->mac = EVP_MAC_CTX_new(hmacImplementation)) == NULL) return SQLITE_ERROR;
  if (keySize > (int)sizeof c->macKey) return SQLITE_ERROR;
  if (c->macKeySize != keySize || c->macAlgorithm != algorithm || CRYPTO_memcmp(c->macKey, key, keySize) != 0) {
    OSSL_PARAM params[] = { OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest_name(algorithm), 0), OSSL_PARAM_END };
    if (!EVP_MAC_init(c->mac, key, keySize, params)) { c->macKeySize = -1; return SQLITE_ERROR; }
    memcpy(c->macKey, key, keySize);
    c->macKeySize = keySize;
    c->macAlgorithm = algorithm;
  } else if (!EVP_MAC_init(c->mac, NULL, 0, NULL)) {
    return SQLITE_ERROR;
  }
  if (!EVP_MAC_update(c->mac, in, inSize)) return SQLITE_ERROR;
  if (in2 != NULL && !EVP_MAC_update(c->mac, in2, in2Size)) return SQLITE_ERROR;
  return EVP_MAC_final(c->mac, out, &length, 64) ? SQLITE_OK : SQLITE_ERROR;
}

static int mac(caching_ctx *c, int algorithm, unsigned char *key, int keySize, unsigned char *in, int inSize, unsigned char *in2, int in2Size, unsigned char *out) {
  return mac_call(c, algorithm, key, keySize, in, inSize, in2, in2Size, out) == SQLITE_OK ? SQLITE_OK : failed();
}

static int cipher_call(caching_ctx *c, int mode, unsigned char *key, int keySize, unsigned char *iv, unsigned char *in, int inSize, unsigned char *out) {
  int direction = mode ? 1 : 0, first, last;
  EVP_CIPHER_CTX *e = c->directions[direction];
  if (e == NULL) {
    if ((e = c->directions[direction] = EVP_CIPHER_CTX_new()) == NULL) return SQLITE_ERROR;
    c->cipherKeySizes[direction] = -1;
  }
  if (keySize > 64) return SQLITE_ERROR;
  if (c->cipherKeySizes[direction] != keySize || CRYPTO_memcmp(c->cipherKeys[direction], key, keySize) != 0) {
    if (!EVP_CipherInit_ex(e, c->cipher, NULL, key, iv, mode)) { c->cipherKeySizes[direction] = -1; return SQLITE_ERROR; }
    EVP_CIPHER_CTX_set_padding(e, 0);
    memcpy(c->cipherKeys[direction], key, keySize);
    c->cipherKeySizes[direction] = keySize;
  } else if (!EVP_CipherInit_ex(e, NULL, NULL, NULL, iv, mode)) {
    return SQLITE_ERROR;
  }
  if (!EVP_CipherUpdate(e, out, &first, in, inSize)) return SQLITE_ERROR;
  if (!EVP_CipherFinal_ex(e, out + first, &last)) return SQLITE_ERROR;
  return first + last == inSize ? SQLITE_OK : SQLITE_ERROR;
}

static int cipher(void *ctx, int mode, unsigned char *key, int keySize, unsigned char *iv, unsigned char *in, int inSize, unsigned char *out) {
  return cipher_call(ctx, mode, key, keySize, iv, in, inSize, out) == SQLITE_OK ? SQLITE_OK : failed();
}

static void forget(caching_ctx *c) {
  for (int i = 0; i < 2; i++) { EVP_CIPHER_CTX_free(c->directions[i]); c->directions[i] = NULL; c->cipherKeySizes[i] = -1; }
  EVP_MAC_CTX_free(c->mac);
  c->mac = NULL;
  c->macKeySize = -1;
  OPENSSL_cleanse(c->cipherKeys, sizeof c->cipherKeys);
  OPENSSL_cleanse(c->macKey, sizeof c->macKey);
}

static int ctx_init(void **ctx) {
  caching_ctx *c = calloc(1, sizeof *c);
  if (c == NULL) return SQLITE_NOMEM;
  c->cipher = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
  c->cipherKeySizes[0] = c->cipherKeySizes[1] = c->macKeySize = -1;
  *ctx = c;
  return c->cipher ? SQLITE_OK : failed();
}

static int ctx_free(void **ctx) {
  caching_ctx *c = *ctx;
  if (c) { forget(c); EVP_CIPHER_free(c->cipher); free(c); }
  *ctx = NULL;
  return SQLITE_OK;
}

/* As the stock provider names it (EVP_CIPHER_get0_name). */
static const char *cipher_name(void *ctx) { (void)ctx; return "AES-256-CBC"; }
static int key_size(void *ctx) { (void)ctx; return 32; }
static int iv_size(void *ctx) { (void)ctx; return 16; }
static int block_size(void *ctx) { (void)ctx; return 16; }

#ifndef PROBE_SQLCIPHER4
static int hmac3(void *ctx, unsigned char *key, int keySize, unsigned char *in, int inSize, unsigned char *in2, int in2Size, unsigned char *out) {
  return mac(ctx, 0, key, keySize, in, inSize, in2, in2Size, out);
}
static int kdf3(void *ctx, const unsigned char *pass, int passSize, unsigned char *salt, int saltSize, int iterations, int keySize, unsigned char *key) {
  (void)ctx;
  return PKCS5_PBKDF2_HMAC_SHA1((const char *)pass, passSize, salt, saltSize, iterations, keySize, key) ? SQLITE_OK : failed();
}
/* Only the default cipher; the stock provider takes any EVP cipher name. */
static int set_cipher(void *ctx, const char *cipherName) { (void)ctx; return strcasecmp(cipherName, "aes-256-cbc") == 0 ? SQLITE_OK : SQLITE_ERROR; }
static int hmac_size3(void *ctx) { (void)ctx; return 20; }
/* The target's keyed contexts are its own: a copy starts them afresh. */
static int ctx_copy(void *target, void *source) { (void)source; forget(target); return SQLITE_OK; }
static int ctx_cmp(void *a, void *b) { (void)a; (void)b; return 1; }
static provider caching = { noop, noop, name, add_random, random_bytes, hmac3, kdf3, cipher, set_cipher, cipher_name, key_size, iv_size,
                            block_size, hmac_size3, ctx_copy, ctx_cmp, ctx_init, ctx_free, (int (*)(void *))noop, version };
#else
static int hmac4(void *ctx, int algorithm, unsigned char *key, int keySize, unsigned char *in, int inSize, unsigned char *in2, int in2Size, unsigned char *out) {
  return mac(ctx, algorithm, key, keySize, in, inSize, in2, in2Size, out);
}
static int kdf4(void *ctx, int algorithm, const unsigned char *pass, int passSize, unsigned char *salt, int saltSize, int iterations, int keySize, unsigned char *key) {
  (void)ctx;
  const EVP_MD *md = algorithm == 0 ? EVP_sha1() : algorithm == 1 ? EVP_sha256() : algorithm == 2 ? EVP_sha512() : NULL;
  if (md == NULL) return SQLITE_ERROR;
  return PKCS5_PBKDF2_HMAC((const char *)pass, passSize, salt, saltSize, iterations, md, keySize, key) ? SQLITE_OK : failed();
}
/* 0 for an algorithm it does not know, as the stock provider answers. */
static int hmac_size4(void *ctx, int algorithm) { (void)ctx; return algorithm == 0 ? 20 : algorithm == 1 ? 32 : algorithm == 2 ? 64 : 0; }
static provider caching = { noop, noop, name, add_random, random_bytes, hmac4, kdf4, cipher, cipher_name, key_size, iv_size,
                            block_size, hmac_size4, ctx_init, ctx_free, (int (*)(void *))noop, version };
#endif

/* `what` names the step; it never holds the key. */
static void fail(sqlite3 *db, const char *what) {
  fprintf(stderr, "probe: %s: %s\n", what, db ? sqlite3_errmsg(db) : "cannot open");
  cleanse_key();
  exit(1);
}

/* Keys `db` with the raw key, from memory (never through SQL text). */
static void key(sqlite3 *db) {
  if (sqlite3_key_v2(db, "main", keyLiteral, (int)sizeof keyLiteral) != SQLITE_OK) fail(db, "keying");
}

static void exec(sqlite3 *db, const char *sql) {
  if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
  sqlite3_stmt *statement;
  if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK) fail(db, sql);
  return statement;
}

static void run(sqlite3 *db, sqlite3_stmt *statement) {
  int rc = sqlite3_step(statement);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(db, sqlite3_sql(statement));
  sqlite3_reset(statement);
}

/* SQLCipher frees a registered provider when its last codec goes, then
   registers its own again: keep one keyed connection open for the process. */
static sqlite3 *register_caching_provider(const char *anchorPath) {
  if ((hmacImplementation = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL) { fprintf(stderr, "probe: OpenSSL has no HMAC\n"); cleanse_key(); exit(1); }
  sqlite3_initialize();
  sqlite3 *anchor;
  remove(anchorPath);
  if (sqlite3_open(anchorPath, &anchor) != SQLITE_OK) fail(anchor, "opening the anchor");
  key(anchor);
  exec(anchor, "SELECT count(*) FROM sqlite_master;");
  provider *p = sqlcipher_malloc(sizeof *p);
  if (p == NULL) { fprintf(stderr, "probe: out of memory\n"); cleanse_key(); exit(1); }
  *p = caching;
  if (sqlcipher_register_provider(p) != SQLITE_OK) fail(anchor, "registering the provider");
  return anchor;
}

/* A whole number in [minimum, maximum], or exit 2 naming the argument. */
static int argument(const char *text, const char *name, long minimum, long maximum) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < minimum || value > maximum) {
    fprintf(stderr, "probe: %s must be a whole number from %ld to %ld, not \"%s\"\n", name, minimum, maximum, text);
    exit(2);
  }
  return (int)value;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: probe PATH plaintext|stock|caching KEY_FILE [ROWS [GROUP [CIPHER_PAGE_SIZE]]]\n");
    return 2;
  }
  const char *path = argv[1], *mode = argv[2];
  if (strcmp(mode, "plaintext") != 0 && strcmp(mode, "stock") != 0 && strcmp(mode, "caching") != 0) {
    fprintf(stderr, "probe: the mode is plaintext, stock or caching, not \"%s\"\n", mode);
    return 2;
  }
  int rows = argc > 4 ? argument(argv[4], "ROWS", 1, 100000000) : 50000;
  int group = argc > 5 ? argument(argv[5], "GROUP", 1, 1000000) : 16;
  int pageSize = argc > 6 ? argument(argv[6], "CIPHER_PAGE_SIZE", 0, 65536) : 0;
  /* PROBE_SAVEPOINTS=0: no savepoint around each insert (what
     Configuration.groupedWriteUndo = .runningTheOthersAgain runs). */
  const char *savepointSetting = getenv("PROBE_SAVEPOINTS");
  int savepoints = !(savepointSetting && strcmp(savepointSetting, "0") == 0);
  if (pageSize != 0 && (pageSize < 512 || (pageSize & (pageSize - 1)) != 0)) {
    fprintf(stderr, "probe: CIPHER_PAGE_SIZE is 0 (the engine's default) or a power of two from 512 to 65536, not %d\n", pageSize);
    return 2;
  }
  int keyed = strcmp(mode, "plaintext") != 0;
  read_key(argv[3]);
  char anchorPath[4096];
  snprintf(anchorPath, sizeof anchorPath, "%s.anchor", path);
  sqlite3 *anchor = strcmp(mode, "caching") == 0 ? register_caching_provider(anchorPath) : NULL;

  char wal[4096], shm[4096];
  snprintf(wal, sizeof wal, "%s-wal", path);
  snprintf(shm, sizeof shm, "%s-shm", path);
  remove(path); remove(wal); remove(shm);
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK) fail(db, "open");
  char setup[512];
  if (keyed) {
    key(db);
    if (pageSize) { snprintf(setup, sizeof setup, "PRAGMA cipher_page_size = %d;", pageSize); exec(db, setup); }
  }
  exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
           "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email BLOB NOT NULL, note BLOB, country TEXT, email_index BLOB);"
           "CREATE UNIQUE INDEX customer_email_index ON customer(email_index);");
  sqlite3_stmt *insert = prepare(db, "INSERT INTO customer(name, email, note, country, email_index) VALUES (?, ?, NULL, ?, ?)");
  sqlite3_stmt *begin = prepare(db, "BEGIN IMMEDIATE"), *commit = prepare(db, "COMMIT");
  sqlite3_stmt *savepoint = prepare(db, "SAVEPOINT one"), *release = prepare(db, "RELEASE one");
  unsigned char email[80], blindIndex[16];
  double start = now();
  for (int done = 0; done < rows;) {
    run(db, begin);
    for (int i = 0; i < group && done < rows; i++, done++) {
      if (savepoints) run(db, savepoint);
      RAND_bytes(email, sizeof email);
      RAND_bytes(blindIndex, sizeof blindIndex);
      sqlite3_bind_text(insert, 1, "Ada Lovelace", -1, SQLITE_STATIC);
      sqlite3_bind_blob(insert, 2, email, sizeof email, SQLITE_STATIC);
      sqlite3_bind_text(insert, 3, "GB", -1, SQLITE_STATIC);
      sqlite3_bind_blob(insert, 4, blindIndex, sizeof blindIndex, SQLITE_STATIC);
      run(db, insert);
      if (savepoints) run(db, release);
    }
    run(db, commit);
  }
  double seconds = now() - start;
  sqlite3_finalize(insert); sqlite3_finalize(begin); sqlite3_finalize(commit);
  sqlite3_finalize(savepoint); sqlite3_finalize(release);
  const char *provider = "none";
  char providerName[64] = "none";
  if (keyed) {
    sqlite3_stmt *p = prepare(db, "PRAGMA cipher_provider");
    if (sqlite3_step(p) == SQLITE_ROW && sqlite3_column_text(p, 0)) snprintf(providerName, sizeof providerName, "%s", sqlite3_column_text(p, 0));
    sqlite3_finalize(p);
    provider = providerName;
  }
  if (sqlite3_close(db) != SQLITE_OK) fail(db, "close");
  const char *expected = strcmp(mode, "caching") == 0 ? "probe-caching-openssl" : strcmp(mode, "stock") == 0 ? "openssl" : "none";
  if (strcmp(provider, expected) != 0 || providerFailed) {
    fprintf(stderr, "probe: %s ran with the provider \"%s\"%s: not timed\n", mode, provider, providerFailed ? ", and a call of it failed" : "");
    cleanse_key();
    return 1;
  }
  printf("{\"mode\":\"%s\",\"provider\":\"%s\",\"version\":\"%s\",\"rows\":%d,\"group\":%d,\"cipher_page_size\":%d,\"savepoints\":%d,\"us_per_insert\":%.2f}\n",
         mode, provider, sqlite3_libversion(), rows, group, pageSize, savepoints, seconds * 1e6 / rows);
  if (anchor) sqlite3_close(anchor);
  remove(anchorPath);
  cleanse_key();
  return 0;
}
