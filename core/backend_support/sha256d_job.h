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
#include "core/base/work.h"

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

/* A version-rolled job on the host, for the GPU backends' rolled kernels
 * (kernels/sha256d.h, sha256d_scan_versions): one job per version. */
typedef struct sha256d_version_set {
    uint32_t versions[LODE_VERSIONS_MAX];
    sha256d_job job[LODE_VERSIONS_MAX];
} sha256d_version_set;

/* Fills set from the header and work->header.versions (LODE_VERSIONS_MAX of
 * them), and params with the rolled kernel's blocks, LODE_SHA256D_VERSIONS *
 * LODE_SHA256D_PARAM_WORDS words. */
void sha256d_versions_init(sha256d_version_set *set, const lode_header_job *work, uint32_t *params);
/* Appends a hit (nonce, version) for each version under which a nonce the
 * rolled kernel reported meets target by the exact digest. Returns LODE_OK,
 * LODE_ERR_DEVICE if a nonce lies outside the launch over nonces [start,
 * start + count), or LODE_ERR_NO_MEMORY. */
int sha256d_versions_push_hits(const sha256d_version_set *set, lode_hits *hits, const uint32_t *nonces, uint32_t n,
                               uint64_t start, uint64_t count, const lode_u256 *target);

#endif
