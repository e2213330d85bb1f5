#ifndef MODELCAST_CLIBCRYPTO_SHIM_H
#define MODELCAST_CLIBCRYPTO_SHIM_H

// Only the EVP API is visible to Swift: the low-level SHA256_* and HMAC_*
// functions are deprecated in OpenSSL 3 and hidden by these two defines.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
// P-256 keys in PEM (model signing): PEM and memory BIOs, PKCS#8 encryption.
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/pkcs12.h>

#endif
