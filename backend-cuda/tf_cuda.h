/* Mersenne trial factoring on an NVIDIA GPU: the C interface between
 * cuda_backend.c and tf_kernel.cu (core/base/tf_ref.h has the math).
 *
 * One engine per worker handle. A launch covers up to cuda_tf_launch_size()
 * consecutive indices n of one class (k = c + 4620 n, q = 2kp + 1) and runs
 * entirely on the GPU (seed 001):
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
#ifndef LODE_CUDA_TF_CUDA_H
#define LODE_CUDA_TF_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/kernel_params.h"
#include "core/base/work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Factors one launch can report: LODE_TF_FOUND_CAP (kernel_params.h); more
 * is an overflow (the dispatcher then rescans the range in halves). */
#define CUDA_TF_DEFAULT_SIEVE_PRIMES 1000000u
#define CUDA_TF_MAX_SIEVE_PRIMES 2000000u

typedef struct cuda_tf cuda_tf;

/* CUDA_TF_DEFAULT_SIEVE_PRIMES odd primes from 13 on and device launches
 * of 2^28 indices on GPUs of 16 GiB or more, else 2^27 (measured best on
 * an H200); the LODE_TF_* settings override.
 * stream carries the table uploads. */
cudaError_t cuda_tf_new(cudaStream_t stream, cuda_tf **out);
void cuda_tf_free(cuda_tf *tf);
/* Indices of one full launch of the engine (a batch of device launches;
 * at most 2^31) and of one device launch. */
uint64_t cuda_tf_launch_size(const cuda_tf *tf);
uint64_t cuda_tf_device_launch_size(const cuda_tf *tf);
/* Installs a class (per exponent: the usable primes and their inverses are
 * computed once, on the GPU; per class: nothing but c). */
cudaError_t cuda_tf_set_job(cuda_tf *tf, const lode_tf_job *job);
/* Queues the indices [n0, n0 + count), 1 <= count <= the launch size; up to
 * cuda_tf_depth() launches may be queued (cudaErrorNotReady beyond). */
cudaError_t cuda_tf_enqueue(cuda_tf *tf, uint64_t n0, uint32_t count);
unsigned cuda_tf_depth(const cuda_tf *tf);
/* Waits for the oldest queued launch. found[] are offsets from its n0 (valid
 * until that launch's slot is queued again); *overflow when more than LODE_TF_FOUND_CAP were
 * reported (found[] then holds only some). */
cudaError_t cuda_tf_finish(cuda_tf *tf, uint64_t *n0, uint32_t *count, const uint32_t **found,
                           uint32_t *found_count, bool *overflow);
/* Waits for every queued launch and drops their results. */
void cuda_tf_discard(cuda_tf *tf);

#ifdef __cplusplus
}
#endif

#endif
