/* Momentum on an NVIDIA GPU: the kernels and their launch wrappers
 * (momentum_kernels.h; cuda_momentum.c is the host side, docs/ARCHITECTURE.md
 * the overview).
 *
 * One thread computes the SHA-512 of one nonce base, i.e. eight birthdays.
 * SHA-512 is 64-bit arithmetic on 32-bit lanes: rotations are two funnel
 * shifts (SHF), three-way XORs one LOP3 per half, additions IADD3 pairs.
 *
 * Filter method: birthdays are written to B (2^26 x 8 bytes,
 * plane j holds word j of every hash, so every later pass reads B
 * coalesced) and each is counted in a table of 2-bit counters with
 * atomicOr: the first arrival sets the low bit, a later one finding it set
 * sets the high bit. A counter's high bit set means two or more birthdays
 * share its index. Round 1 keeps every nonce whose counter has the high bit
 * (a superset of the colliding nonces: a filter only errs towards keeping).
 * Rounds 2.. repeat the count-and-keep over the survivors with a fresh,
 * independent hash into a small L2-resident table until few survive; the
 * host sorts those few and pairs equal birthdays exactly.
 *
 * Bucket method (the default): the filter above with its first table
 * split so that every atomic lands in shared memory. The hash kernel
 * appends each birthday to one of 2^14 buckets by its top 14 bits, packed
 * with its nonce into 8 bytes (36 low birthday bits << 26 | nonce), slot
 * taken with one atomicAdd on the bucket's counter. One block per bucket
 * then counts its ~4096 entries in a 2^17-counter (32 KiB) shared table of
 * 2-bit counters (load 1/32: ~3% survive), counts those survivors again on
 * 17 other bits, and compares each survivor of both rounds with every
 * first-round survivor of its bucket exactly: only colliding nonces leave
 * the GPU. A bucket past its capacity (never seen: 12 standard deviations)
 * or a shared list past its size raises a flag, and the sweep is redone
 * with the filter method, so the result stays exact.
 *
 * Radix method (the baseline the filter and bucket methods are measured
 * against): CUB sorts all 2^26 (birthday, nonce) pairs on the 50 birthday
 * bits; equal neighbours are kept. */
#include <cub/cub.cuh>

#include "backend-cuda/momentum_kernels.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/sha512.h"

#define TPB CUDA_MOMENTUM_THREADS
/* Rounds 2.. of the filter: grid-stride kernels of LIST_BLOCKS blocks. */
#define LIST_BLOCKS 2048
/* Bucket method: LODE_MOM_NBUCKETS buckets of up to LODE_MOM_BK_CAP slots
 * (kernel_params.h), entries of LODE_MOM_BK_RBITS birthday bits. */
#define BK_TPB CUDA_MOMENTUM_FIND_THREADS
#define BK_TAB_BITS 17                  /* shared counters per round */
#define BK_TAB_WORDS (1u << (BK_TAB_BITS - 4))
#define BK_SURV 1024u                   /* first-round survivors a block keeps */

/* Counts a birthday in a table of 2-bit counters (16 per word). */
__device__ __forceinline__ void count(uint32_t *table, uint64_t bd, uint64_t mixer, unsigned shift)
{
    const uint64_t idx = (bd * mixer) >> shift;
    const uint32_t bit = 1u << ((uint32_t)(idx & 15) * 2);
    const uint32_t old = atomicOr(&table[idx >> 4], bit);
    if ((old & (bit * 3)) == bit) /* seen once before: saturate */
        atomicOr(&table[idx >> 4], bit << 1);
}

__device__ __forceinline__ bool counted_twice(const uint32_t *table, uint64_t bd, uint64_t mixer,
                                              unsigned shift)
{
    const uint64_t idx = (bd * mixer) >> shift;
    return (__ldg(&table[idx >> 4]) >> ((uint32_t)(idx & 15) * 2 + 1)) & 1;
}

/* Appends (bd, nonce) where keep holds, with one atomicAdd per block (a
 * single counter takes every block's atomic, so per-warp atomics would
 * serialise at one L2 slice). The whole block calls it. */
__device__ __forceinline__ void append(bool keep, uint64_t bd, uint32_t nonce, momentum_entry *out,
                                       uint32_t *count_out)
{
    __shared__ uint32_t warp_base[TPB / 32];
    __shared__ uint32_t block_base;
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_base[warp] = __popc(mask);
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t sum = 0;
        for (unsigned w = 0; w < TPB / 32; w++) {
            const uint32_t c = warp_base[w];
            warp_base[w] = sum;
            sum += c;
        }
        block_base = sum != 0 ? atomicAdd(count_out, sum) : 0;
    }
    __syncthreads();
    if (keep) {
        ulonglong2 v = make_ulonglong2(bd, nonce);
        *(ulonglong2 *)&out[block_base + warp_base[warp] + __popc(mask & ((1u << lane) - 1))] = v;
    }
    __syncthreads(); /* the shared words are reused by the next call */
}

/* SHA-512 of every nonce base: birthdays into B (plane j = word j); the
 * filter counts them in table, the radix method writes the nonces to V. */
__global__ void __launch_bounds__(TPB) mom_hash(momentum_consts c, uint64_t *__restrict__ B,
                                                uint32_t *__restrict__ table, uint64_t mixer,
                                                unsigned shift, uint32_t *__restrict__ V)
{
    const uint32_t t = blockIdx.x * TPB + threadIdx.x;
    uint64_t bd[8];
    momentum_birthdays8(c.w0_low, c.w1, c.w2, c.w3, c.w4, t * 8, bd); /* sha512.h */
#pragma unroll
    for (int j = 0; j < 8; j++)
        B[(size_t)j * LODE_MOM_NBASES + t] = bd[j];
    if (table != nullptr) {
#pragma unroll
        for (int j = 0; j < 8; j++)
            count(table, bd[j], mixer, shift);
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++)
            V[(size_t)j * LODE_MOM_NBASES + t] = t * 8 + j;
    }
}

/* Round 1's keep pass over all of B. */
__global__ void __launch_bounds__(TPB) mom_keep_all(const uint64_t *__restrict__ B,
                                                    const uint32_t *__restrict__ table, uint64_t mixer,
                                                    unsigned shift, momentum_entry *out, uint32_t *count_out)
{
    const uint32_t i = blockIdx.x * TPB + threadIdx.x;
    const uint64_t bd = B[i];
    append(counted_twice(table, bd, mixer, shift), bd, (i & (LODE_MOM_NBASES - 1)) * 8 + (i >> 23), out, count_out);
}

/* Rounds 2..: count the survivors, then keep those counted twice. */
__global__ void __launch_bounds__(TPB) mom_count_list(const momentum_entry *__restrict__ in,
                                                      const uint32_t *__restrict__ count_in,
                                                      uint32_t *__restrict__ table, uint64_t mixer,
                                                      unsigned shift)
{
    const uint32_t n = *count_in;
    for (uint32_t i = blockIdx.x * TPB + threadIdx.x; i < n; i += gridDim.x * TPB)
        count(table, in[i].birthday, mixer, shift);
}

__global__ void __launch_bounds__(TPB) mom_keep_list(const momentum_entry *__restrict__ in,
                                                     const uint32_t *__restrict__ count_in,
                                                     const uint32_t *__restrict__ table, uint64_t mixer,
                                                     unsigned shift, momentum_entry *out,
                                                     uint32_t *count_out)
{
    const uint32_t n = *count_in;
    /* Block-uniform trips: append() needs the whole block. */
    for (uint32_t i0 = blockIdx.x * TPB; i0 < n; i0 += gridDim.x * TPB) {
        const uint32_t i = i0 + threadIdx.x;
        const bool in_range = i < n;
        const ulonglong2 v = in_range ? *(const ulonglong2 *)&in[i] : make_ulonglong2(0, 0);
        const bool keep = in_range && counted_twice(table, v.x, mixer, shift);
        append(keep, v.x, (uint32_t)v.y, out, count_out);
    }
}

/* Radix method: keep every sorted entry equal to a neighbour. */
__global__ void __launch_bounds__(TPB) mom_keep_sorted(const uint64_t *__restrict__ K,
                                                       const uint32_t *__restrict__ V, momentum_entry *out,
                                                       uint32_t *count_out)
{
    const uint32_t i = blockIdx.x * TPB + threadIdx.x;
    const uint64_t k = K[i];
    const bool keep = (i > 0 && K[i - 1] == k) || (i + 1 < LODE_MOM_NONCES && K[i + 1] == k);
    append(keep, k, V[i], out, count_out);
}


/* ---- bucket method ---- */

/* SHA-512 of every nonce base; each birthday goes to its bucket. A bucket
 * counter past cap still counts (the find kernel sees the overflow). */
__global__ void __launch_bounds__(TPB) mom_hash_bucket(momentum_consts c, uint64_t *__restrict__ store,
                                                       uint32_t *__restrict__ bcount, unsigned cap)
{
    const uint32_t t = blockIdx.x * TPB + threadIdx.x;
    uint64_t bd[8];
    momentum_birthdays8(c.w0_low, c.w1, c.w2, c.w3, c.w4, t * 8, bd); /* sha512.h */
    uint32_t slot[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        slot[j] = atomicAdd(&bcount[bd[j] >> LODE_MOM_BK_RBITS], 1u);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (slot[j] < cap)
            store[(size_t)(bd[j] >> LODE_MOM_BK_RBITS) * cap + slot[j]] =
                (bd[j] & ((1ull << LODE_MOM_BK_RBITS) - 1)) << 26 | (t * 8 + j);
}

/* 2-bit saturating counter idx of a shared table. */
__device__ __forceinline__ void scount(uint32_t *tab, uint32_t idx)
{
    const uint32_t bit = 1u << ((idx & 15) * 2);
    const uint32_t old = atomicOr(&tab[idx >> 4], bit);
    if ((old & (bit * 3)) == bit)
        atomicOr(&tab[idx >> 4], bit << 1);
}

__device__ __forceinline__ bool stwice(const uint32_t *tab, uint32_t idx)
{
    return (tab[idx >> 4] >> ((idx & 15) * 2 + 1)) & 1;
}

__device__ __forceinline__ void sclear(uint32_t *tab)
{
    for (uint32_t i = threadIdx.x; i < BK_TAB_WORDS / 4; i += BK_TPB)
        ((uint4 *)tab)[i] = make_uint4(0, 0, 0, 0);
}

/* One block per bucket. flags[0]: entries out; flags[1]: nonzero when a
 * bucket or a shared list overflowed (the sweep must be redone). */
__global__ void __launch_bounds__(BK_TPB) mom_bucket_find(const uint64_t *__restrict__ store,
                                                          const uint32_t *__restrict__ bcount, unsigned cap,
                                                          momentum_entry *__restrict__ out,
                                                          uint32_t *__restrict__ flags)
{
    __shared__ __align__(16) uint32_t tab[BK_TAB_WORDS];
    __shared__ uint64_t surv[BK_SURV];
    __shared__ uint32_t nsurv;
    const uint32_t b = blockIdx.x, n = bcount[b];
    if (n > cap) {
        if (threadIdx.x == 0)
            atomicOr(&flags[1], 1u);
        return;
    }
    const uint64_t *e = store + (size_t)b * cap;
    sclear(tab);
    if (threadIdx.x == 0)
        nsurv = 0;
    __syncthreads();
    const uint32_t mask = (1u << BK_TAB_BITS) - 1;
    for (uint32_t i = threadIdx.x; i < n; i += BK_TPB)
        scount(tab, (uint32_t)(e[i] >> 26) & mask);
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < n; i += BK_TPB) {
        const uint64_t v = e[i];
        if (stwice(tab, (uint32_t)(v >> 26) & mask)) {
            const uint32_t k = atomicAdd(&nsurv, 1u);
            if (k < BK_SURV)
                surv[k] = v;
        }
    }
    __syncthreads();
    const uint32_t k = nsurv;
    if (k > BK_SURV) {
        if (threadIdx.x == 0)
            atomicOr(&flags[1], 2u);
        return;
    }
    sclear(tab);
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < k; i += BK_TPB)
        scount(tab, (uint32_t)(surv[i] >> (26 + BK_TAB_BITS)) & mask);
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < k; i += BK_TPB) {
        const uint64_t v = surv[i];
        if (!stwice(tab, (uint32_t)(v >> (26 + BK_TAB_BITS)) & mask))
            continue;
        const uint64_t r = v >> 26;
        bool hit = false;
        for (uint32_t j = 0; j < k && !hit; j++)
            hit = j != i && (surv[j] >> 26) == r;
        if (hit) {
            const uint32_t o = atomicAdd(&flags[0], 1u);
            if (o < LODE_MOM_BK_OUT_CAP) {
                momentum_entry me;
                me.birthday = (uint64_t)b << LODE_MOM_BK_RBITS | r;
                me.nonce = (uint32_t)v & ((1u << 26) - 1);
                me.pad = 0;
                out[o] = me;
            } else {
                atomicOr(&flags[1], 4u);
            }
        }
    }
}

/* ---- launch wrappers (momentum_kernels.h) ---- */

extern "C" void cuda_momentum_hash_launch(const momentum_consts *c, uint64_t *B, uint32_t *table, uint64_t mixer,
                                          unsigned shift, uint32_t *V, cudaStream_t s)
{
    mom_hash<<<LODE_MOM_NBASES / TPB, TPB, 0, s>>>(*c, B, table, mixer, shift, V);
}

extern "C" void cuda_momentum_keep_all_launch(const uint64_t *B, const uint32_t *table, uint64_t mixer,
                                              unsigned shift, momentum_entry *out, uint32_t *count_out,
                                              cudaStream_t s)
{
    mom_keep_all<<<LODE_MOM_NONCES / TPB, TPB, 0, s>>>(B, table, mixer, shift, out, count_out);
}

extern "C" void cuda_momentum_count_list_launch(const momentum_entry *in, const uint32_t *count_in,
                                                uint32_t *table, uint64_t mixer, unsigned shift, cudaStream_t s)
{
    mom_count_list<<<LIST_BLOCKS, TPB, 0, s>>>(in, count_in, table, mixer, shift);
}

extern "C" void cuda_momentum_keep_list_launch(const momentum_entry *in, const uint32_t *count_in,
                                               const uint32_t *table, uint64_t mixer, unsigned shift,
                                               momentum_entry *out, uint32_t *count_out, cudaStream_t s)
{
    mom_keep_list<<<LIST_BLOCKS, TPB, 0, s>>>(in, count_in, table, mixer, shift, out, count_out);
}

extern "C" void cuda_momentum_keep_sorted_launch(const uint64_t *K, const uint32_t *V, momentum_entry *out,
                                                 uint32_t *count_out, cudaStream_t s)
{
    mom_keep_sorted<<<LODE_MOM_NONCES / TPB, TPB, 0, s>>>(K, V, out, count_out);
}

extern "C" void cuda_momentum_hash_bucket_launch(const momentum_consts *c, uint64_t *store, uint32_t *bcount,
                                                 unsigned cap, cudaStream_t s)
{
    mom_hash_bucket<<<LODE_MOM_NBASES / TPB, TPB, 0, s>>>(*c, store, bcount, cap);
}

extern "C" void cuda_momentum_bucket_find_launch(const uint64_t *store, const uint32_t *bcount, unsigned cap,
                                                 momentum_entry *out, uint32_t *flags, cudaStream_t s)
{
    mom_bucket_find<<<LODE_MOM_NBUCKETS, BK_TPB, 0, s>>>(store, bcount, cap, out, flags);
}

extern "C" const void *cuda_momentum_hash_bucket_kernel(void) { return (const void *)mom_hash_bucket; }

extern "C" const void *cuda_momentum_bucket_find_kernel(void) { return (const void *)mom_bucket_find; }

extern "C" cudaError_t cuda_momentum_radix_sort(void *temp, size_t *temp_bytes, const uint64_t *keys_in,
                                                uint64_t *keys_out, const uint32_t *values_in, uint32_t *values_out,
                                                cudaStream_t s)
{
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys_in, keys_out, values_in, values_out,
                                           (int)LODE_MOM_NONCES, 0, CUDA_MOMENTUM_SORT_BITS, s);
}
