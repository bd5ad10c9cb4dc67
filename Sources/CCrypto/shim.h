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

// OSSL_PARAM arrays are built from C literals that Swift cannot keep alive
// on its own; these helpers build them on the C stack for one call.

// Initializes an HMAC context (EVP_MAC "HMAC") for SHA-256 with `key`.
// A NULL key reuses the key set before (EVP_MAC_init). Returns 1 on success.
static inline int strongroom_hmac_sha256_init(EVP_MAC_CTX *ctx, const unsigned char *key, size_t key_length) {
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_MAC_init(ctx, key, key_length, params);
}

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

#endif
