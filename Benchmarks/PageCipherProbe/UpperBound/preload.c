/*
 * The probe's caching provider (../probe.c), registered in any process that
 * links SQLCipher by LD_PRELOAD: for measuring a whole program (the example
 * service) with it, without changing the program. Measurement only, as
 * ../probe.c: Strongroom registers no provider.
 *
 *   cc -O2 -shared -fPIC $(pkg-config --cflags sqlcipher) -o preload3.so preload.c -lsqlcipher -lcrypto
 *   LD_PRELOAD=$PWD/preload3.so program ...
 *
 * Built against SQLCipher 3.4.1's headers (the system's); for 4.6.1 add
 * -DPROBE_SQLCIPHER4 with that engine's headers and library. The anchor
 * connection that keeps the provider registered (see ../probe.c) is keyed
 * with a random key made here, never printed, on a file under $TMPDIR that
 * is removed at exit. At exit it prints how many pages the provider
 * ciphered and whether a call of it failed.
 */
#define main probe_main
#include "../probe.c"
#undef main

static unsigned long cipherCalls;
static char anchorPath[4096];

static int counted_cipher(void *ctx, int mode, unsigned char *key, int keySize, unsigned char *iv, unsigned char *in, int inSize, unsigned char *out) {
  __atomic_fetch_add(&cipherCalls, 1, __ATOMIC_RELAXED);
  return cipher(ctx, mode, key, keySize, iv, in, inSize, out);
}

__attribute__((constructor)) static void preload_register(void) {
  unsigned char raw[32];
  const char *directory = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  if (RAND_bytes(raw, sizeof raw) != 1) { fprintf(stderr, "preload: no random key\n"); exit(1); }
  keyLiteral[0] = 'x';
  keyLiteral[1] = '\'';
  for (int i = 0; i < 32; i++) {
    static const char digits[] = "0123456789abcdef";
    keyLiteral[2 + 2 * i] = digits[raw[i] >> 4];
    keyLiteral[3 + 2 * i] = digits[raw[i] & 15];
  }
  keyLiteral[66] = '\'';
  OPENSSL_cleanse(raw, sizeof raw);
  snprintf(anchorPath, sizeof anchorPath, "%s/preload-anchor-%d.db", directory, (int)getpid());
  caching.cipher = counted_cipher;
  register_caching_provider(anchorPath);
  cleanse_key();
}

__attribute__((destructor)) static void preload_report(void) {
  remove(anchorPath);
  fprintf(stderr, "preload: the caching provider ciphered %lu pages; a call failed: %s\n", cipherCalls, providerFailed ? "yes" : "no");
}
