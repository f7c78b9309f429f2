/* The SHA-256d job on the host, shared by every backend: the per-job
 * midstate and precomputation that the CPU paths and the GPU kernels start
 * from, and the exact digest that re-checks a candidate on the host.
 *
 * This is the fast side; core/base/sha256_ref.c is the independent oracle,
 * and nothing here includes it. */
#ifndef LODE_BACKEND_SUPPORT_SHA256D_JOB_H
#define LODE_BACKEND_SUPPORT_SHA256D_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/u256.h"

extern const uint32_t sha256_iv[8];
/* The 64 round constants, 64-byte aligned for vector loads. */
extern const uint32_t sha256_k[64];

/* Compresses one 64-byte block into state (FIPS 180-4 words, host order):
 * the plain-C block function every build has. */
void sha256_compress_portable(uint32_t state[8], const uint8_t block[64]);

/* Everything a SHA-256d scan needs that does not depend on the nonce. */
typedef struct sha256d_job {
    uint32_t midstate[8]; /* state after compressing header bytes 0..63 */
    uint32_t tail[3];     /* header bytes 64..75 as big-endian message words */
    uint32_t target_top;  /* most significant 32 bits of the target (lode_u256 w[7]) */
    uint32_t pre[64];     /* a path's own per-job precomputation (filled by prepare) */
} sha256d_job;

/* Fills midstate, tail and target_top from an 80-byte header (its nonce is
 * ignored); sha256d_prepare_lanes() (sha256d_lanes.h) or a CPU path's own
 * prepare() then fills pre. */
void sha256d_job_init(sha256d_job *job, const uint8_t header[80], uint32_t target_top);

/* Exact SHA-256d digest (internal byte order) of the job's header with this
 * nonce, computed from the midstate with the portable block function. */
void sha256d_digest(const sha256d_job *job, uint32_t nonce, uint8_t digest[32]);
/* The exact check of a prefilter candidate: does that digest meet target? */
bool sha256d_meets_target(const sha256d_job *job, uint32_t nonce, const lode_u256 *target);

#endif
