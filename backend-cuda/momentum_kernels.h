/* The C interface of momentum.cu: Momentum's kernels behind one launch
 * wrapper each, and CUB's radix sort (cuda_momentum.c is the host side).
 * A sweep hashes the 2^26 nonces of one job; the kernels leave a short list
 * of (birthday, nonce) candidates that contains every colliding nonce, and
 * the host recovers the exact pairs from it
 * (core/backend_support/momentum_common.h). The launch wrappers queue on
 * stream s and check nothing: the caller reads cudaGetLastError(). */
#ifndef LODE_CUDA_MOMENTUM_KERNELS_H
#define LODE_CUDA_MOMENTUM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/momentum_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block sizes the kernels are written for: every kernel's but the bucket
 * find's, and the bucket find's. */
#define CUDA_MOMENTUM_THREADS 256
#define CUDA_MOMENTUM_FIND_THREADS 256
/* The birthday bits the radix method sorts on. */
#define CUDA_MOMENTUM_SORT_BITS 50

/* Filter method. Round 1: the SHA-512 of every nonce base; birthdays into B
 * (plane j = word j), counted in table (2-bit counters at index
 * (birthday * mixer) >> shift). The radix method passes table NULL: the
 * nonces go to V instead. */
void cuda_momentum_hash_launch(const momentum_consts *c, uint64_t *B, uint32_t *table, uint64_t mixer,
                               unsigned shift, uint32_t *V, cudaStream_t s);
/* Round 1's keep pass over all of B: entries counted twice are appended to
 * out, their number added to *count_out. */
void cuda_momentum_keep_all_launch(const uint64_t *B, const uint32_t *table, uint64_t mixer, unsigned shift,
                                   momentum_entry *out, uint32_t *count_out, cudaStream_t s);
/* Rounds 2..: count the *count_in entries of in, then keep those counted
 * twice. */
void cuda_momentum_count_list_launch(const momentum_entry *in, const uint32_t *count_in, uint32_t *table,
                                     uint64_t mixer, unsigned shift, cudaStream_t s);
void cuda_momentum_keep_list_launch(const momentum_entry *in, const uint32_t *count_in, const uint32_t *table,
                                    uint64_t mixer, unsigned shift, momentum_entry *out, uint32_t *count_out,
                                    cudaStream_t s);

/* Radix method: after the sort, keep every entry of the sorted keys K
 * (values V) equal to a neighbour. */
void cuda_momentum_keep_sorted_launch(const uint64_t *K, const uint32_t *V, momentum_entry *out,
                                      uint32_t *count_out, cudaStream_t s);
/* CUB's radix sort of the LODE_MOM_NONCES (key, value) pairs on the low
 * CUDA_MOMENTUM_SORT_BITS bits of the keys. temp NULL: sets *temp_bytes to
 * the temporary storage it needs and sorts nothing. */
cudaError_t cuda_momentum_radix_sort(void *temp, size_t *temp_bytes, const uint64_t *keys_in, uint64_t *keys_out,
                                     const uint32_t *values_in, uint32_t *values_out, cudaStream_t s);

/* Bucket method. The SHA-512 of every nonce base, each birthday appended to
 * its bucket of store (LODE_MOM_NBUCKETS x cap entries, counters bcount). */
void cuda_momentum_hash_bucket_launch(const momentum_consts *c, uint64_t *store, uint32_t *bcount, unsigned cap,
                                      cudaStream_t s);
/* One block per bucket: the colliding entries to out, flags[0] their
 * number, flags[1] nonzero when a bucket or a shared list overflowed. */
void cuda_momentum_bucket_find_launch(const uint64_t *store, const uint32_t *bcount, unsigned cap,
                                      momentum_entry *out, uint32_t *flags, cudaStream_t s);
/* The same two kernels, for graph kernel nodes: hash bucket
 * (LODE_MOM_NBASES / CUDA_MOMENTUM_THREADS blocks of CUDA_MOMENTUM_THREADS;
 * parameters c by value, store, bcount, cap) and bucket find
 * (LODE_MOM_NBUCKETS blocks of CUDA_MOMENTUM_FIND_THREADS; store, bcount,
 * cap, out, flags). */
const void *cuda_momentum_hash_bucket_kernel(void);
const void *cuda_momentum_bucket_find_kernel(void);

#ifdef __cplusplus
}
#endif

#endif
