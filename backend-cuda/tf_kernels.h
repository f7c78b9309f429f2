/* Mersenne trial factoring on an NVIDIA GPU: the C interface of tf.cu (the
 * kernels) for cuda_tf.c (the pipeline that runs them; core/base/tf_ref.h
 * has the math).
 *
 * One pipeline per worker handle. A launch covers up to cuda_tf_launch_size()
 * consecutive indices n of one class (k = c + 4620 n, q = 2kp + 1) and runs
 * entirely on the GPU, sieve included:
 *   1. a memset sets one bit per n;
 *   2. the large sieve primes (above the segment size) clear their
 *      multiples with atomicAnd in that global bitmap, one thread a prime;
 *      the same kernel finds every smaller prime's first multiple;
 *   3. one block per segment sieves the small primes (13..61) with per-word
 *      patterns (each thread owns its words, no atomics) and the middle
 *      primes with shared-memory atomics, ANDs in the global bits, and
 *      turns the survivors into a list of offsets: a block-wide prefix sum
 *      and one atomicAdd per block;
 *   4. the exponentiation kernel reads that list's length on the device (no
 *      round trip) and tests 2^p mod q == 1 with 3x32-bit Montgomery
 *      arithmetic; factors go to a small buffer through an atomic counter.
 * Consecutive device launches alternate between two sets of buffers, so one
 * launch's sieve (atomics) overlaps the other's exponentiation (multiplies).
 * The engine's launch, as the launch driver sees it, is a batch of
 * LODE_TF_BATCH device launches whose kernels read each launch's start,
 * length and class from descriptors the host copies once per batch; device
 * launch i of a batch slot is one CUDA graph with every parameter fixed,
 * built once per exponent and bit size, so queuing it is an event wait and
 * a graph launch. The results come back in one copy, with one event at the
 * end (blocking sync): the host wakes once per batch. The per-exponent
 * tables are built on the GPU (tf_build_tables).
 * Tuning knobs, for measurements (docs/PERFORMANCE.md has the figures):
 * LODE_TF_SIEVE_PRIMES, LODE_TF_LAUNCH_BITS, LODE_TF_SEGMENT_BITS (16..18),
 * LODE_TF_INTERLEAVE (1, 2, 4), LODE_TF_EXP_BLOCKS_PER_SM, LODE_TF_BATCH,
 * LODE_CUDA_NO_GRAPHS=1, LODE_TF_PROFILE=1 (launches one at a time,
 * per-stage times printed on exit). */
#ifndef LODE_CUDA_TF_KERNELS_H
#define LODE_CUDA_TF_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/kernel_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block sizes of the kernels; the exponentiation's grid in blocks an SM
 * (LODE_TF_EXP_BLOCKS_PER_SM's default) and the blocks an SM its launch
 * bound makes room for (tf.cu says why the two differ). */
#define CUDA_TF_SIEVE_THREADS 256u
#define CUDA_TF_PREP_THREADS 128u
#define CUDA_TF_EXP_THREADS 256u
#define CUDA_TF_EXP_BLOCKS_PER_SM 5u
#define CUDA_TF_EXP_BOUND_BLOCKS 8u
/* The fewest sieve primes: the segments' pattern primes (13 .. 61,
 * TF_PATTERN_PRIMES of core/backend_support/kernels/tf_sieve.h) and one
 * more. */
#define CUDA_TF_MIN_SIEVE_PRIMES 14u
/* Candidates per thread at once, LODE_TF_INTERLEAVE's default: 2 for factors
 * below 2^92 (fewer instructions and less power a candidate), 1 for the
 * fully reduced kernel (2 measured 2.8% slower there at the same energy). */
#define CUDA_TF_INTERLEAVE_LAZY 2u
#define CUDA_TF_INTERLEAVE_FULL 1u
/* A device launch's results: counts[0] survivors of the sieve, counts[1]
 * factors, then found[LODE_TF_FOUND_CAP]. */
#define CUDA_TF_RESULT_WORDS (2u + LODE_TF_FOUND_CAP)

/* What varies between the device launches of one exponent and bit size:
 * the kernels read it from device memory (the host copies a batch's
 * descriptors once), so a device launch's graph never changes and queuing
 * it needs no parameter updates on the host. */
typedef struct cuda_tf_launch_desc {
    uint64_t n0;          /* the launch's first index */
    uint32_t count;       /* indices n0 .. n0 + count - 1 */
    uint32_t class_index; /* c of k = c + 4620 n */
    /* The report masks of the job (lode_tf_report_mask_lo, _hi). */
    uint64_t mask_lo;
    uint32_t mask_hi;
} cuda_tf_launch_desc;

/* The kernels, for graph nodes and cudaLaunchKernel. Their parameters, in
 * order:
 *   prepare (CUDA_TF_PREP_THREADS a block): prime, inv, pmod, n_small,
 *     n_all, desc, start, bits, counts;
 *   segments (CUDA_TF_SIEVE_THREADS; one block per 2^seg_log indices):
 *     prime, start, smod, minv, n_small, desc, bits, cand, cand_count;
 *   exponentiate (CUDA_TF_EXP_THREADS): cand, cand_count, p, desc, found,
 *     found_count. */
const void *cuda_tf_prepare_kernel(void);
/* seg_log: 16, 17 or 18 (anything else is 18). */
const void *cuda_tf_segments_kernel(unsigned seg_log);
/* The instance for factors below 2^bit_max with interleave candidates a
 * thread (1, 2, 4; 0 is the default for bit_max; anything else is 1). */
const void *cuda_tf_exp_kernel(unsigned interleave, unsigned bit_max);

/* Queues the build of exponent p's tables (entry i from primes[i], or
 * primes[i + 1] from skip on) on stream; count 0 queues nothing. Returns
 * cudaGetLastError(). */
cudaError_t cuda_tf_build_tables(const uint32_t *primes, unsigned count, unsigned skip, uint32_t p, uint32_t seg,
                                 uint32_t *prime, uint32_t *inv, uint32_t *pmod, uint32_t *smod, uint32_t *minv,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
