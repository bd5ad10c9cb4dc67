#ifndef STRONGROOM_CCRYPTO_SHIM_H
#define STRONGROOM_CCRYPTO_SHIM_H

// libcrypto (OpenSSL 3), the same library libsqlcipher links for its own
// page encryption.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>

#endif
