/* The plain reference SHA-256: portable C, no SIMD, no tricks, sharing no
 * code with any backend's fast path. It is the oracle of the test suite, the
 * device self-tests and the re-check of every hit. Do not optimise it. */
#ifndef LODE_CORE_SHA256_REF_H
#define LODE_CORE_SHA256_REF_H

#include <stddef.h>
#include <stdint.h>

typedef struct lode_ref_sha256_ctx {
    uint32_t state[8];
    uint64_t length; /* bytes absorbed so far */
    uint8_t block[64];
    size_t fill;
} lode_ref_sha256_ctx;

void lode_ref_sha256_init(lode_ref_sha256_ctx *ctx);
void lode_ref_sha256_update(lode_ref_sha256_ctx *ctx, const void *data, size_t len);
void lode_ref_sha256_final(lode_ref_sha256_ctx *ctx, uint8_t digest[32]);

void lode_ref_sha256(const void *data, size_t len, uint8_t digest[32]);
/* SHA-256 applied twice: the Bitcoin block hash (digest in internal order). */
void lode_ref_sha256d(const void *data, size_t len, uint8_t digest[32]);
/* SHA-256d of an 80-byte block header: its proof-of-work hash. */
void lode_ref_sha256d_pow(const uint8_t header[80], uint8_t hash[32]);
/* The state after compressing the first 64 bytes of a header: what GPU and
 * SIMD kernels start from. */
void lode_ref_sha256_midstate(const uint8_t first64[64], uint32_t state[8]);

void lode_ref_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                          uint8_t mac[32]);
void lode_ref_pbkdf2_sha256(const void *password, size_t password_len, const void *salt,
                            size_t salt_len, uint64_t iterations, uint8_t *out, size_t out_len);

#endif
