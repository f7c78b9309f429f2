/* The CPU backend's scrypt(N=1024, r=1, p=1) PoW paths: Salsa20/8 over
 * several interleaved hashes per ISA (portable, SSE2, AVX2, AVX-512), with
 * PBKDF2-HMAC-SHA256 on the fast SHA-256 block function. */
#ifndef LODE_CPU_SCRYPT_CPU_H
#define LODE_CPU_SCRYPT_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "backend-cpu/sha256_cpu.h"

#define CPU_SCRYPT_N 1024u
#define CPU_SCRYPT_PAD_BYTES (CPU_SCRYPT_N * 128u) /* scratchpad of one hash */
#define CPU_SCRYPT_MAX_LANES 32u                    /* no path computes more at once */

typedef struct cpu_scrypt_job {
    uint8_t header[80];              /* bytes 76..79 (nonce) are replaced per hash */
    cpu_sha256_compress_fn compress; /* block function for PBKDF2 */
    uint32_t pre[16];                /* per-job precomputation (cpu_scrypt_prepare) */
} cpu_scrypt_job;

/* Fills job->pre from header and compress (shared by every path). */
void cpu_scrypt_prepare(cpu_scrypt_job *job);

typedef struct cpu_scrypt_path {
    const char *name;     /* variant name: "portable", "sse2", "avx2", "avx512" */
    uint32_t features;    /* CPU_FEATURE_* bits it needs */
    unsigned lanes;       /* hashes per call of hash(), at most CPU_SCRYPT_MAX_LANES */
    size_t scratch_bytes; /* scratch hash() needs, reused across calls */
    /* Writes to out[i] the scrypt PoW hash (32 bytes, internal order) of the
     * header with nonce nonce0 + i (mod 2^32), for i < lanes. scratch is
     * scratch_bytes long and 64-byte aligned. */
    void (*hash)(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32], void *scratch);
} cpu_scrypt_path;

extern const cpu_scrypt_path cpu_scrypt_portable;
#if defined(__x86_64__)
extern const cpu_scrypt_path cpu_scrypt_sse2;
extern const cpu_scrypt_path cpu_scrypt_avx2;
extern const cpu_scrypt_path cpu_scrypt_avx512;
#endif

#endif
