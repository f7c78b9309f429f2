/* The CPU backend's fast SHA-256: one block function per ISA, and the
 * SHA-256d nonce-scan paths (portable, SHA-NI, AVX2, AVX-512).
 *
 * This is the fast side; core/sha256_ref.c is the independent oracle, and
 * nothing here includes it. */
#ifndef LODE_CPU_SHA256_CPU_H
#define LODE_CPU_SHA256_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/u256.h"

/* Compresses one 64-byte block into state (FIPS 180-4 words, host order). */
typedef void (*cpu_sha256_compress_fn)(uint32_t state[8], const uint8_t block[64]);

void cpu_sha256_compress_portable(uint32_t state[8], const uint8_t block[64]);
#if defined(__x86_64__)
void cpu_sha256_compress_shani(uint32_t state[8], const uint8_t block[64]); /* needs SHANI|SSE41|SSSE3 */
#endif
/* The fastest block function for these CPU_FEATURE_* bits. */
cpu_sha256_compress_fn cpu_sha256_compress_best(uint32_t features);

extern const uint32_t cpu_sha256_iv[8];
/* The 64 round constants, 64-byte aligned for vector loads. */
extern const uint32_t cpu_sha256_k[64];

/* Everything a SHA-256d scan needs that does not depend on the nonce. */
typedef struct cpu_sha256d_job {
    uint32_t midstate[8]; /* state after compressing header bytes 0..63 */
    uint32_t tail[3];     /* header bytes 64..75 as big-endian message words */
    uint32_t target_top;  /* most significant 32 bits of the target (lode_u256 w[7]) */
    uint32_t pre[64];     /* a path's own per-job precomputation (filled by prepare) */
} cpu_sha256d_job;

/* One implementation of the SHA-256d inner loop. */
typedef struct cpu_sha256d_path {
    const char *name;       /* variant name: "portable", "shani", "avx2", "avx512" */
    uint32_t features;      /* CPU_FEATURE_* bits it needs */
    unsigned lanes;         /* nonces per call of candidates(), 1..32 */
    /* Fills job->pre from the other fields; may be NULL. */
    void (*prepare)(cpu_sha256d_job *job);
    /* Hashes nonces nonce0 + i (mod 2^32) for i < lanes and returns a mask
     * with bit i set when the most significant 32 bits of that nonce's hash
     * (as a little-endian 256-bit integer: byteswap of final state word 7)
     * are <= job->target_top. A cheap prefilter: every set bit is checked
     * exactly afterwards, and no hit may be missed. */
    uint32_t (*candidates)(const cpu_sha256d_job *job, uint32_t nonce0);
} cpu_sha256d_path;

/* Fills midstate, tail and target_top from an 80-byte header (its nonce is
 * ignored); a path's prepare() then fills pre. The GPU backends use this and
 * cpu_sha256d_prepare_lanes() for their per-job precomputation too. */
void cpu_sha256d_job_init(cpu_sha256d_job *job, const uint8_t header[80], uint32_t target_top);

/* Exact SHA-256d digest (internal byte order) of the job's header with this
 * nonce, computed from the midstate with the portable block function. */
void cpu_sha256d_digest(const cpu_sha256d_job *job, uint32_t nonce, uint8_t digest[32]);
/* The exact check of a prefilter candidate: does that digest meet target? */
bool cpu_sha256d_meets_target(const cpu_sha256d_job *job, uint32_t nonce, const lode_u256 *target);

extern const cpu_sha256d_path cpu_sha256d_portable;
#if defined(__x86_64__)
extern const cpu_sha256d_path cpu_sha256d_shani;
extern const cpu_sha256d_path cpu_sha256d_avx2;
extern const cpu_sha256d_path cpu_sha256d_avx512;
#endif

#endif
