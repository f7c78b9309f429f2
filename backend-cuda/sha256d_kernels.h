/* The C interface of sha256d.cu: SHA-256d's parameter blocks and launch
 * wrappers (cuda_sha256d.c is the host side). */
#ifndef LODE_CUDA_SHA256D_KERNELS_H
#define LODE_CUDA_SHA256D_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend-cuda/cuda_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SHA-256d: everything that does not depend on the nonce, words
 * LODE_SHA256D_P_* (kernel_params.h; sha256d.cu has the round and
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

#ifdef __cplusplus
}
#endif

#endif
