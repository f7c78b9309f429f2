/* The CPU backend's fast SHA-256: one block function per ISA, and the
 * SHA-256d nonce-scan paths (portable, SHA-NI, AVX2, AVX-512). The portable
 * block function and the SHA-256d job (midstate, precomputation, exact
 * check) are shared with the GPU backends: core/backend_support/sha256d_job.h.
 *
 * This is the fast side; core/base/sha256_ref.c is the independent oracle, and
 * nothing here includes it. */
#ifndef LODE_CPU_SHA256_CPU_H
#define LODE_CPU_SHA256_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend_support/sha256d_job.h"

/* Compresses one 64-byte block into state (FIPS 180-4 words, host order). */
typedef void (*cpu_sha256_compress_fn)(uint32_t state[8], const uint8_t block[64]);

#if defined(__x86_64__)
void cpu_sha256_compress_shani(uint32_t state[8], const uint8_t block[64]); /* needs SHANI|SSE41|SSSE3 */
#endif
/* The fastest block function for these CPU_FEATURE_* bits. */
cpu_sha256_compress_fn cpu_sha256_compress_best(uint32_t features);

/* One implementation of the SHA-256d inner loop. */
typedef struct cpu_sha256d_path {
    const char *name;       /* variant name: "portable", "shani", "avx2", "avx512" */
    uint32_t features;      /* CPU_FEATURE_* bits it needs */
    unsigned lanes;         /* nonces per call of candidates(), 1..32 */
    /* Fills job->pre from the other fields; may be NULL. */
    void (*prepare)(sha256d_job *job);
    /* Hashes nonces nonce0 + i (mod 2^32) for i < lanes and returns a mask
     * with bit i set when the most significant 32 bits of that nonce's hash
     * (as a little-endian 256-bit integer: byteswap of final state word 7)
     * are <= job->target_top. A cheap prefilter: every set bit is checked
     * exactly afterwards, and no hit may be missed. */
    uint32_t (*candidates)(const sha256d_job *job, uint32_t nonce0);
} cpu_sha256d_path;

extern const cpu_sha256d_path cpu_sha256d_portable;
#if defined(__x86_64__)
extern const cpu_sha256d_path cpu_sha256d_shani;
extern const cpu_sha256d_path cpu_sha256d_avx2;
extern const cpu_sha256d_path cpu_sha256d_avx512;
#endif

#endif
