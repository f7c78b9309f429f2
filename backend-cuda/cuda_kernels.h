/* The C interface between the host glue (cuda_backend.c) and the kernels
 * (*.cu): per-job parameter blocks, the hit buffer, and launch wrappers.
 *
 * Everything a kernel needs per job travels as a kernel parameter (constant
 * bank on the device), so installing a job costs no copy and no sync. */
#ifndef LODE_CUDA_KERNELS_H
#define LODE_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/kernel_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hits of one launch, laid out as LODE_HITS_* (kernel_params.h) says. */
typedef struct cuda_hits {
    uint32_t count;
    uint32_t pad[LODE_HITS_NONCE0 - 1];
    uint32_t nonce[LODE_HITS_CAP];
} cuda_hits;
#ifndef __cplusplus
_Static_assert(offsetof(cuda_hits, nonce) == LODE_HITS_NONCE0 * sizeof(uint32_t), "hit buffer layout");
#endif

/* SHA-256d: everything that does not depend on the nonce, words
 * LODE_SHA256D_P_* (kernel_params.h; sha256d_kernel.cu has the round and
 * schedule bookkeeping). */
typedef struct cuda_sha256d_params {
    uint32_t w[LODE_SHA256D_PARAM_WORDS];
} cuda_sha256d_params;

/* Hashes nonces start .. start+count-1 (count >= 1, no wrap past 2^32),
 * threads_per_block threads each looping over about nonces_per_thread
 * nonces, and appends candidates (top 32 bits <= target_top) to hits.
 * fma_adds picks the kernel whose additions are IMADs (variant "imad") over
 * the one whose additions are IADD3s ("iadd3"). */
cudaError_t cuda_sha256d_launch(const cuda_sha256d_params *p, uint32_t start, uint32_t count,
                                unsigned threads_per_block, unsigned nonces_per_thread,
                                int fma_adds, cuda_hits *hits, cudaStream_t stream);

/* A version-rolled SHA-256d job: one parameter block per version, block k
 * at word k * LODE_SHA256D_PARAM_WORDS (sha256d_versions_init). */
typedef struct cuda_sha256d_versions_params {
    uint32_t w[LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS];
} cuda_sha256d_versions_params;

/* cuda_sha256d_launch for a version-rolled job: every nonce is hashed under
 * each of the LODE_SHA256D_VERSIONS versions, and a nonce whose top word
 * passes under any of them is appended once. Blocks are at most 256
 * threads (threads_per_block above that launches 256). */
cudaError_t cuda_sha256d_versions_launch(const cuda_sha256d_versions_params *p, uint32_t start, uint32_t count,
                                         unsigned threads_per_block, unsigned nonces_per_thread, int fma_adds,
                                         cuda_hits *hits, cudaStream_t stream);

/* scrypt(N=1024, r=1, p=1) of the 80-byte header: words LODE_SCRYPT_P_*. */
typedef struct cuda_scrypt_params {
    uint32_t w[LODE_SCRYPT_PARAM_WORDS];
} cuda_scrypt_params;

/* Per-slot device memory besides the scratchpad (state between kernels). */
#define CUDA_SCRYPT_STATE_BYTES (LODE_SCRYPT_STATE_WORDS * 4u)

/* How romix runs (see scrypt_kernel.cu):
 *   quad: four threads per hash, Salsa20/8 transposed by warp shuffles;
 *         `interleave` hashes per group of four (1, 2); `gap` is the lookup
 *         gap (1, 2, 4: every gap-th entry stored, the others recomputed).
 *   thread: a hash per thread, the scratchpad staged through shared memory;
 *         `gap` 0 stores every entry, 2, 4 or 8 leave out every gap-th one. */
typedef enum { CUDA_SCRYPT_QUAD, CUDA_SCRYPT_THREAD } cuda_scrypt_layout;
typedef struct cuda_scrypt_shape {
    cuda_scrypt_layout layout;
    unsigned gap;
    unsigned interleave; /* quad only */
    unsigned threads_per_block;
} cuda_scrypt_shape;

/* Scratchpad bytes of one hash slot. */
size_t cuda_scrypt_pad_bytes(const cuda_scrypt_shape *shape);
/* Hash slots of one block; 0 if the shape is not supported. */
unsigned cuda_scrypt_hashes_per_block(const cuda_scrypt_shape *shape);
/* Hash slots resident at once on the current device; 0 on error. */
unsigned cuda_scrypt_resident_slots(const cuda_scrypt_shape *shape);

/* Hashes nonces start .. start+count-1 with `slots` hash slots of scratch
 * and state (slots >= count rounded up to the hashes of a block), and
 * appends every nonce whose hash is <= target to hits. */
cudaError_t cuda_scrypt_launch(const cuda_scrypt_params *p, uint32_t start, uint32_t count,
                               unsigned slots, const cuda_scrypt_shape *shape, void *state,
                               void *scratch, cuda_hits *hits, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
