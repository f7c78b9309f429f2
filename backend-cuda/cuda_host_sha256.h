/* Plain SHA-256 on the host for the CUDA backend: the per-job
 * precomputation of the kernels' parameters and the exact re-hash of each
 * SHA-256d candidate. Independent of core/sha256_ref.c, the oracle that
 * checks every hit again. */
#ifndef LODE_CUDA_HOST_SHA256_H
#define LODE_CUDA_HOST_SHA256_H

#include <stdint.h>

extern const uint32_t cuda_sha256_iv[8];
extern const uint32_t cuda_sha256_k[64];

uint32_t cuda_sha256_bsig0(uint32_t x);
uint32_t cuda_sha256_bsig1(uint32_t x);
uint32_t cuda_sha256_ssig0(uint32_t x);
uint32_t cuda_sha256_ssig1(uint32_t x);
uint32_t cuda_sha256_ch(uint32_t e, uint32_t f, uint32_t g);
uint32_t cuda_sha256_maj(uint32_t a, uint32_t b, uint32_t c);

/* Runs rounds 0..rounds-1 of one block (big-endian message words m) on the
 * working variables v (a..h), without the final addition. */
void cuda_sha256_rounds(uint32_t v[8], const uint32_t m[16], int rounds);
/* Compresses one block of big-endian message words into state. */
void cuda_sha256_compress(uint32_t state[8], const uint32_t m[16]);

uint32_t cuda_load_be32(const uint8_t *p);

/* SHA-256d of an 80-byte header with its nonce field replaced, as the 32
 * digest bytes in internal order (what lode_hash_meets_target reads). */
void cuda_sha256d_header(const uint8_t header[80], uint32_t nonce, uint8_t digest[32]);

#endif
