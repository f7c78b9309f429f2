/* Momentum on an NVIDIA GPU: the C interface between cuda_backend.c and
 * momentum.cu. One engine per worker handle holds the device memory
 * of one sweep; a sweep returns a short list of (birthday, nonce)
 * candidates that contains every colliding nonce, and the host recovers the
 * exact pairs from it (core/backend_support/momentum_common.h). */
#ifndef LODE_CUDA_MOMENTUM_KERNELS_H
#define LODE_CUDA_MOMENTUM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/momentum_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuda_momentum_method {
    /* Seed 002: 2-bit saturating counters set with atomicOr in a table of
     * 2^table_bits counters, then filter rounds over the survivors in a
     * smaller table until few remain. */
    CUDA_MOMENTUM_FILTER,
    /* Baseline: CUB radix sort of all 2^26 (birthday, nonce) pairs, then
     * equal neighbours. */
    CUDA_MOMENTUM_RADIX,
    /* The filter with every atomic in shared memory: birthdays bucketed
     * by their top 14 bits, one block per bucket counts, filters and pairs
     * its entries exactly (momentum.cu). A sweep whose bucket
     * overflows is redone with the filter method (table_bits). */
    CUDA_MOMENTUM_BUCKET,
} cuda_momentum_method;

typedef struct cuda_momentum cuda_momentum;

/* table_bits: log2 of the first round's counters (2 bits each: 30 = the
 * seed's 256 MB); ignored by the radix method. */
cudaError_t cuda_momentum_new(cuda_momentum_method method, unsigned table_bits, cudaStream_t stream,
                              cuda_momentum **out);
void cuda_momentum_free(cuda_momentum *m);
/* Sweeps redone with the filter method after a bucket overflowed. */
unsigned cuda_momentum_redos(const cuda_momentum *m);
/* Device bytes an engine of this method and table size allocates. */
size_t cuda_momentum_bytes(cuda_momentum_method method, unsigned table_bits);

/* A launch is a batch of 1 .. cuda_momentum_batch() sweeps (the bucket
 * method's LODE_MOMENTUM_BATCH, one CUDA graph when full; 1 for the
 * others) with one event at its end: the host wakes once per batch. */
unsigned cuda_momentum_batch(const cuda_momentum *m);
/* Queues the sweeps of the 2^26 nonces of jobs c[0 .. n) as one batch (no
 * host wait); up to cuda_momentum_depth() batches may be queued before
 * waiting for the first (cudaErrorNotReady beyond). */
cudaError_t cuda_momentum_enqueue(cuda_momentum *m, const momentum_consts *c, unsigned n);
unsigned cuda_momentum_depth(const cuda_momentum *m);
/* Waits for the oldest queued batch; *n: its sweeps. */
cudaError_t cuda_momentum_wait(cuda_momentum *m, unsigned *n);
/* The candidates of sweep i of the batch last waited for (an overflowed
 * sweep is redone here, exactly); valid until the next call or the
 * enqueue after next. */
cudaError_t cuda_momentum_result(cuda_momentum *m, unsigned i, momentum_entry **list, size_t *count);
/* Waits for every queued sweep and drops their results. */
void cuda_momentum_discard(cuda_momentum *m);

#ifdef __cplusplus
}
#endif

#endif
