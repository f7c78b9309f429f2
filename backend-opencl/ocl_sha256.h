/* A small SHA-256 (FIPS 180-4) for the OpenCL host code: the per-job
 * precomputation of the kernels' parameters and the exact re-hash of each
 * SHA-256d candidate the kernel reports. Deliberately separate from
 * core/sha256_ref.c, the independent oracle that checks every hit again. */
#ifndef LODE_OCL_SHA256_H
#define LODE_OCL_SHA256_H

#include <stdint.h>

extern const uint32_t ocl_sha256_iv[8];
extern const uint32_t ocl_sha256_k[64];

static inline uint32_t ocl_rotr(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }
static inline uint32_t ocl_bsig0(uint32_t x) { return ocl_rotr(x, 2) ^ ocl_rotr(x, 13) ^ ocl_rotr(x, 22); }
static inline uint32_t ocl_bsig1(uint32_t x) { return ocl_rotr(x, 6) ^ ocl_rotr(x, 11) ^ ocl_rotr(x, 25); }
static inline uint32_t ocl_ssig0(uint32_t x) { return ocl_rotr(x, 7) ^ ocl_rotr(x, 18) ^ x >> 3; }
static inline uint32_t ocl_ssig1(uint32_t x) { return ocl_rotr(x, 17) ^ ocl_rotr(x, 19) ^ x >> 10; }
static inline uint32_t ocl_ch(uint32_t e, uint32_t f, uint32_t g) { return (e & f) | (~e & g); }
static inline uint32_t ocl_maj(uint32_t a, uint32_t b, uint32_t c) { return (a & b) | (c & (a ^ b)); }

static inline uint32_t ocl_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Rounds 0..rounds-1 of one block of big-endian words m on the working
 * variables v[0..7] = a..h, without the final feed-forward. */
void ocl_sha256_rounds(uint32_t v[8], const uint32_t m[16], int rounds);
/* One full compression of m into state. */
void ocl_sha256_block(uint32_t state[8], const uint32_t m[16]);
/* SHA-256 of any byte string (the program cache key). */
void ocl_sha256(const void *data, uint64_t len, uint8_t digest[32]);
/* SHA-256d of the 80-byte header with its nonce field set to nonce, as the
 * digest bytes in output order (what lode_hash_meets_target reads). */
void ocl_sha256d_header(const uint8_t header[80], uint32_t nonce, uint8_t digest[32]);

#endif
