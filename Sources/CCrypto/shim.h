#ifndef STRONGROOM_CCRYPTO_SHIM_H
#define STRONGROOM_CCRYPTO_SHIM_H

// libcrypto (OpenSSL 3), the same library libsqlcipher links for its own
// page encryption.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <string.h>

// OSSL_PARAM arrays are built from C literals that Swift cannot keep alive
// on its own; these helpers build them on the C stack for one call.

// HKDF-SHA256 (RFC 5869, extract then expand) into `out`. An empty salt or
// info is left out, which RFC 5869 defines as the same as empty.
// Returns 1 on success.
static inline int strongroom_hkdf_sha256(EVP_KDF *kdf,
                                         const unsigned char *ikm, size_t ikm_length,
                                         const unsigned char *salt, size_t salt_length,
                                         const unsigned char *info, size_t info_length,
                                         unsigned char *out, size_t out_length) {
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[5], *p = params;
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_length);
    if (salt_length > 0) *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_length);
    if (info_length > 0) *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_length);
    *p = OSSL_PARAM_construct_end();
    int status = EVP_KDF_derive(ctx, out, out_length, params);
    EVP_KDF_CTX_free(ctx);
    return status;
}

// HMAC-SHA256 (RFC 2104) with the key's two padded blocks hashed once:
// each message then costs two SHA-256 compressions from copies of those
// states, where EVP_MAC copies two EVP_MD_CTX through the provider
// (about 200 ns against 100 ns a short message, measured). The states
// are key material: strongroom_hmac_sha256_clear wipes them.
// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP,
// which has no way to keep a hashed prefix short of EVP_MD_CTX_copy_ex,
// the cost avoided here; they remain in every OpenSSL 3 release.
typedef struct {
    SHA256_CTX inner;
    SHA256_CTX outer;
} strongroom_hmac_sha256_key;

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// Hashes `key` (any length; one longer than a block is hashed first, as
// RFC 2104 says) into the inner and outer states. Returns 1 on success.
static inline int strongroom_hmac_sha256_prepare(strongroom_hmac_sha256_key *k, const unsigned char *key, size_t key_length) {
    unsigned char block[SHA256_CBLOCK], pad[SHA256_CBLOCK];
    int ok = 1;
    OPENSSL_cleanse(block, sizeof block);
    if (key_length > SHA256_CBLOCK) {
        ok = SHA256(key, key_length, block) != NULL;
    } else if (key_length > 0) {
        memcpy(block, key, key_length);
    }
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    ok = ok && SHA256_Init(&k->inner) && SHA256_Update(&k->inner, pad, SHA256_CBLOCK);
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    ok = ok && SHA256_Init(&k->outer) && SHA256_Update(&k->outer, pad, SHA256_CBLOCK);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    return ok;
}

// The 32-byte HMAC of `message` under the prepared key, into `out`.
// Returns 1 on success.
static inline int strongroom_hmac_sha256(const strongroom_hmac_sha256_key *k, const unsigned char *message, size_t length, unsigned char *out) {
    SHA256_CTX ctx = k->inner;
    unsigned char inner[SHA256_DIGEST_LENGTH];
    int ok = SHA256_Update(&ctx, message, length) && SHA256_Final(inner, &ctx);
    ctx = k->outer;
    ok = ok && SHA256_Update(&ctx, inner, sizeof inner) && SHA256_Final(out, &ctx);
    OPENSSL_cleanse(&ctx, sizeof ctx);
    OPENSSL_cleanse(inner, sizeof inner);
    return ok;
}

#pragma GCC diagnostic pop
#pragma clang diagnostic pop

// Wipes a prepared key's states.
static inline void strongroom_hmac_sha256_clear(strongroom_hmac_sha256_key *k) {
    OPENSSL_cleanse(k, sizeof *k);
}

#endif
