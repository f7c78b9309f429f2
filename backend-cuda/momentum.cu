/* Momentum on an NVIDIA GPU (see momentum_kernels.h and docs/ARCHITECTURE.md).
 *
 * One thread computes the SHA-512 of one nonce base, i.e. eight birthdays.
 * SHA-512 is 64-bit arithmetic on 32-bit lanes: rotations are two funnel
 * shifts (SHF), three-way XORs one LOP3 per half, additions IADD3 pairs.
 *
 * Filter method (seed 002): birthdays are written to B (2^26 x 8 bytes,
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
 * Radix method (the baseline the seed compares with): CUB sorts all 2^26
 * (birthday, nonce) pairs on the 50 birthday bits; equal neighbours are
 * kept. */
#include <cub/cub.cuh>

#include <stdio.h>
#include <stdlib.h>

#include "backend-cuda/momentum_kernels.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/sha512.h"
#include "core/base/settings.h"

#define TPB 256
/* Later rounds: table of 2^LIST_TABLE_BITS counters (16 MiB), kept in L2. */
#define LIST_TABLE_BITS 26
#define LIST_ROUNDS 4
#define LIST_BLOCKS 2048
/* Candidates copied back with every sweep; more come in a second copy. */
#define HOST_CAP 4096u
#define SLOTS 2
/* A sweep's results: a header of 4 words (the count of entries, then the
 * bucket method's overflow flags) and the entries, on the device (the
 * bucket method: LODE_MOM_BK_OUT_CAP entries, one area per sweep of a
 * batch) and in the pinned host copy (HOST_CAP entries). */
#define HEADER_BYTES 16u
#define AREA_BYTES ((size_t)HEADER_BYTES + (size_t)LODE_MOM_BK_OUT_CAP * sizeof(momentum_entry))
#define HOST_AREA_BYTES ((size_t)HEADER_BYTES + (size_t)HOST_CAP * sizeof(momentum_entry))
/* Bucket method: LODE_MOM_NBUCKETS buckets of LODE_MOM_BK_CAP slots
 * (kernel_params.h), entries of LODE_MOM_BK_RBITS birthday bits. */
#define BK_TPB 256
#define BK_TAB_BITS 17                  /* shared counters per round */
#define BK_TAB_WORDS (1u << (BK_TAB_BITS - 4))
#define BK_SURV 1024u                   /* first-round survivors a block keeps */

static const unsigned long long mixers[1 + LIST_ROUNDS] = {
    0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull,
    0xFF51AFD7ED558CCDull};

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

struct cuda_momentum {
    cuda_momentum_method method;
    unsigned table_bits;
    cudaStream_t stream;
    uint64_t *B, *B_sorted;
    uint32_t *V, *V_sorted;
    void *cub_temp;
    size_t cub_temp_bytes;
    uint32_t *table, *list_table;
    uint64_t *store;  /* bucket method: LODE_MOM_NBUCKETS x bucket_cap entries */
    uint32_t *bcount; /* bucket method: one counter per bucket */
    unsigned bucket_cap;
    /* Bucket method: a launch is a batch of up to `batch` sweeps with one
     * event at its end (the host wakes once per batch), queued as one CUDA
     * graph when full (one call and a parameter update per sweep instead of
     * eight calls per sweep). */
    unsigned batch;
    bool graphs;
    cudaGraph_t graph[SLOTS];
    cudaGraphExec_t exec[SLOTS];
    cudaGraphNode_t *hash_node[SLOTS]; /* batch each: the sweeps' hash kernels */
    unsigned batch_n[SLOTS];           /* sweeps of the batch in the slot */
    momentum_consts *job[SLOTS]; /* batch each: the queued sweeps', for a redo */
    cuda_momentum *fallback; /* bucket method: the filter engine that redoes an overflowed sweep */
    unsigned redos;
    momentum_entry *list[2];
    uint32_t *counts; /* device: one per round, and one more (the bucket method's flags) */
    int final_list, final_count;
    /* Up to SLOTS batches in flight, each with its own host copies:
     * batch k uses slot k % SLOTS. */
    unsigned queued, finished;
    char *host[SLOTS];  /* pinned: batch x HOST_AREA_BYTES */
    char *areas;        /* bucket method: SLOTS x batch x AREA_BYTES on the device */
    momentum_entry *more; /* malloc'd: the rest when more than HOST_CAP */
    size_t more_cap;
    cudaEvent_t done[SLOTS];
    /* LODE_MOMENTUM_PROFILE=1: events between the stages of each sweep,
     * summed and printed when the engine is freed (for measurements). */
    bool profile;
    cudaEvent_t ev[SLOTS][4];
    double stage_ms[3];
    unsigned sweeps;
};

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return err_;                                                                           \
    } while (0)

/* The bucket method's sweeps per launch (LODE_MOMENTUM_BATCH); profiling
 * times each sweep's stages with events: one sweep a launch. */
static unsigned bucket_batch(void)
{
    return lode_setting_flag(LODE_SETTING_MOMENTUM_PROFILE)
               ? 1
               : lode_setting_unsigned_in(LODE_SETTING_MOMENTUM_BATCH, 16, 1, 64);
}

extern "C" size_t cuda_momentum_bytes(cuda_momentum_method method, unsigned table_bits)
{
    size_t lists = 2 * (size_t)LODE_MOM_NONCES * sizeof(momentum_entry);
    if (method == CUDA_MOMENTUM_BUCKET) /* a redo allocates a filter engine besides */
        return (size_t)LODE_MOM_NBUCKETS * LODE_MOM_BK_CAP * 8 + LODE_MOM_NBUCKETS * 4 +
               SLOTS * bucket_batch() * AREA_BYTES;
    if (method == CUDA_MOMENTUM_RADIX)
        return (size_t)LODE_MOM_NONCES * (8 + 8 + 4 + 4) + (size_t)LODE_MOM_NONCES * sizeof(momentum_entry) + (64u << 20);
    return (size_t)LODE_MOM_NONCES * 8 + ((size_t)1 << table_bits) / 4 + ((size_t)1 << LIST_TABLE_BITS) / 4 + lists;
}

extern "C" unsigned cuda_momentum_redos(const cuda_momentum *m)
{
    return m != nullptr ? m->redos : 0;
}

extern "C" void cuda_momentum_free(cuda_momentum *m)
{
    if (m == nullptr)
        return;
    if (m->stream != nullptr)
        cudaStreamSynchronize(m->stream);
    if (m->profile && m->sweeps > 0)
        fprintf(stderr,
                "momentum %s: %u sweeps (%u redone), ms per sweep: hash+count %.3f, keep/sort/find %.3f, rest %.3f\n",
                m->method == CUDA_MOMENTUM_RADIX ? "radix" : m->method == CUDA_MOMENTUM_BUCKET ? "bucket" : "filter",
                m->sweeps, m->redos, m->stage_ms[0] / m->sweeps, m->stage_ms[1] / m->sweeps,
                m->stage_ms[2] / m->sweeps);
    cuda_momentum_free(m->fallback);
    cudaFree(m->store);
    cudaFree(m->bcount);
    for (int k = 0; k < SLOTS; k++) {
        if (m->exec[k] != nullptr)
            cudaGraphExecDestroy(m->exec[k]);
        if (m->graph[k] != nullptr)
            cudaGraphDestroy(m->graph[k]);
        delete[] m->hash_node[k];
        delete[] m->job[k];
        for (int i = 0; i < 4; i++)
            if (m->ev[k][i] != nullptr)
                cudaEventDestroy(m->ev[k][i]);
        cudaFreeHost(m->host[k]);
        if (m->done[k] != nullptr)
            cudaEventDestroy(m->done[k]);
    }
    cudaFree(m->B);
    cudaFree(m->B_sorted);
    cudaFree(m->V);
    cudaFree(m->V_sorted);
    cudaFree(m->cub_temp);
    cudaFree(m->table);
    cudaFree(m->list_table);
    cudaFree(m->list[0]);
    cudaFree(m->areas);
    cudaFree(m->list[1]);
    cudaFree(m->counts);
    free(m->more);
    delete m;
}

static cudaError_t setup(cuda_momentum *m)
{
    if (m->method == CUDA_MOMENTUM_BUCKET) {
        /* LODE_MOMENTUM_BUCKET_CAP (tests): fewer slots, to force redos. */
        m->bucket_cap = lode_setting_unsigned_in(LODE_SETTING_MOMENTUM_BUCKET_CAP, LODE_MOM_BK_CAP, 64, LODE_MOM_BK_CAP);
        CHECK_CUDA(cudaMalloc(&m->store, (size_t)LODE_MOM_NBUCKETS * m->bucket_cap * 8));
        CHECK_CUDA(cudaMalloc(&m->bcount, LODE_MOM_NBUCKETS * sizeof(uint32_t)));
        m->batch = bucket_batch();
        CHECK_CUDA(cudaMalloc(&m->areas, SLOTS * m->batch * AREA_BYTES));
    } else {
        m->batch = 1;
        CHECK_CUDA(cudaMalloc(&m->B, (size_t)LODE_MOM_NONCES * 8));
        CHECK_CUDA(cudaMalloc(&m->list[0], (size_t)LODE_MOM_NONCES * sizeof(momentum_entry)));
    }
    CHECK_CUDA(cudaMalloc(&m->counts, (2 + LIST_ROUNDS) * sizeof(uint32_t)));
    m->profile = lode_setting_flag(LODE_SETTING_MOMENTUM_PROFILE);
    m->graphs = !lode_setting_flag(LODE_SETTING_CUDA_NO_GRAPHS);
    for (int k = 0; k < SLOTS; k++) {
        m->job[k] = new (std::nothrow) momentum_consts[m->batch];
        m->hash_node[k] = new (std::nothrow) cudaGraphNode_t[m->batch];
        if (m->job[k] == nullptr || m->hash_node[k] == nullptr)
            return cudaErrorMemoryAllocation;
        CHECK_CUDA(cudaMallocHost(&m->host[k], m->batch * HOST_AREA_BYTES));
        CHECK_CUDA(cudaEventCreateWithFlags(&m->done[k], cudaEventBlockingSync | cudaEventDisableTiming));
        for (int i = 0; i < 4 && m->profile; i++)
            CHECK_CUDA(cudaEventCreate(&m->ev[k][i]));
    }
    if (m->method == CUDA_MOMENTUM_RADIX) {
        CHECK_CUDA(cudaMalloc(&m->B_sorted, (size_t)LODE_MOM_NONCES * 8));
        CHECK_CUDA(cudaMalloc(&m->V, (size_t)LODE_MOM_NONCES * 4));
        CHECK_CUDA(cudaMalloc(&m->V_sorted, (size_t)LODE_MOM_NONCES * 4));
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, m->cub_temp_bytes, m->B, m->B_sorted, m->V,
                                                   m->V_sorted, (int)LODE_MOM_NONCES, 0, 50, m->stream));
        CHECK_CUDA(cudaMalloc(&m->cub_temp, m->cub_temp_bytes));
    } else if (m->method == CUDA_MOMENTUM_FILTER) {
        CHECK_CUDA(cudaMalloc(&m->table, ((size_t)1 << m->table_bits) / 4));
        CHECK_CUDA(cudaMalloc(&m->list_table, ((size_t)1 << LIST_TABLE_BITS) / 4));
        CHECK_CUDA(cudaMalloc(&m->list[1], (size_t)LODE_MOM_NONCES * sizeof(momentum_entry)));
    }
    return cudaSuccess;
}

extern "C" cudaError_t cuda_momentum_new(cuda_momentum_method method, unsigned table_bits,
                                         cudaStream_t stream, cuda_momentum **out)
{
    cuda_momentum *m = new (std::nothrow) cuda_momentum();
    if (m == nullptr)
        return cudaErrorMemoryAllocation;
    m->method = method;
    m->table_bits = table_bits < 24 ? 24 : table_bits > 34 ? 34 : table_bits;
    m->stream = stream;
    cudaError_t err = setup(m);
    if (err != cudaSuccess) {
        cuda_momentum_free(m);
        return err;
    }
    *out = m;
    return cudaSuccess;
}

#define MARK(i)                                                                                    \
    do {                                                                                           \
        if (m->profile)                                                                            \
            CHECK_CUDA(cudaEventRecord(m->ev[slot][i], s));                                        \
    } while (0)

static char *bucket_area(cuda_momentum *m, unsigned slot, unsigned i)
{
    return m->areas + ((size_t)slot * m->batch + i) * AREA_BYTES;
}

/* Queues sweep i of the batch in slot call by call: its candidates and
 * counts come back into the slot's i-th host copies. */
static cudaError_t enqueue_sweep(cuda_momentum *m, unsigned slot, unsigned i, const momentum_consts *c)
{
    cudaStream_t s = m->stream;
    MARK(0);
    if (m->method == CUDA_MOMENTUM_BUCKET) { /* into the sweep's area; copied back with the batch */
        char *area = bucket_area(m, slot, i);
        CHECK_CUDA(cudaMemsetAsync(area, 0, HEADER_BYTES, s));
        CHECK_CUDA(cudaMemsetAsync(m->bcount, 0, LODE_MOM_NBUCKETS * sizeof(uint32_t), s));
        mom_hash_bucket<<<LODE_MOM_NBASES / TPB, TPB, 0, s>>>(*c, m->store, m->bcount, m->bucket_cap);
        MARK(1);
        mom_bucket_find<<<LODE_MOM_NBUCKETS, BK_TPB, 0, s>>>(
            m->store, m->bcount, m->bucket_cap, (momentum_entry *)(area + HEADER_BYTES), (uint32_t *)area);
        MARK(2);
        CHECK_CUDA(cudaGetLastError());
        MARK(3);
        return cudaSuccess;
    }
    CHECK_CUDA(cudaMemsetAsync(m->counts, 0, (2 + LIST_ROUNDS) * sizeof(uint32_t), s));
    if (m->method == CUDA_MOMENTUM_RADIX) {
        mom_hash<<<LODE_MOM_NBASES / TPB, TPB, 0, s>>>(*c, m->B, nullptr, 0, 0, m->V);
        MARK(1);
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(m->cub_temp, m->cub_temp_bytes, m->B, m->B_sorted, m->V,
                                                   m->V_sorted, (int)LODE_MOM_NONCES, 0, 50, s));
        mom_keep_sorted<<<LODE_MOM_NONCES / TPB, TPB, 0, s>>>(m->B_sorted, m->V_sorted, m->list[0], &m->counts[0]);
        MARK(2);
        m->final_list = 0;
        m->final_count = 0;
    } else {
        const unsigned shift = 64 - m->table_bits, list_shift = 64 - LIST_TABLE_BITS;
        CHECK_CUDA(cudaMemsetAsync(m->table, 0, ((size_t)1 << m->table_bits) / 4, s));
        mom_hash<<<LODE_MOM_NBASES / TPB, TPB, 0, s>>>(*c, m->B, m->table, mixers[0], shift, nullptr);
        MARK(1);
        mom_keep_all<<<LODE_MOM_NONCES / TPB, TPB, 0, s>>>(m->B, m->table, mixers[0], shift, m->list[0], &m->counts[0]);
        MARK(2);
        for (int r = 1; r <= LIST_ROUNDS; r++) {
            const momentum_entry *in = m->list[(r - 1) & 1];
            momentum_entry *out = m->list[r & 1];
            CHECK_CUDA(cudaMemsetAsync(m->list_table, 0, ((size_t)1 << LIST_TABLE_BITS) / 4, s));
            mom_count_list<<<LIST_BLOCKS, TPB, 0, s>>>(in, &m->counts[r - 1], m->list_table, mixers[r],
                                                      list_shift);
            mom_keep_list<<<LIST_BLOCKS, TPB, 0, s>>>(in, &m->counts[r - 1], m->list_table, mixers[r],
                                                     list_shift, out, &m->counts[r]);
        }
        m->final_list = LIST_ROUNDS & 1;
        m->final_count = LIST_ROUNDS;
    }
    CHECK_CUDA(cudaGetLastError());
    char *host = m->host[slot] + i * HOST_AREA_BYTES;
    CHECK_CUDA(cudaMemcpyAsync(host, &m->counts[m->final_count], 2 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaMemcpyAsync(host + HEADER_BYTES, m->list[m->final_list], HOST_CAP * sizeof(momentum_entry),
                               cudaMemcpyDeviceToHost, s));
    MARK(3);
    return cudaSuccess;
}

/* The bucket method's results of a batch of n sweeps, their areas' heads
 * in one strided copy. */
static cudaMemcpy3DParms areas_copy(cuda_momentum *m, unsigned slot, unsigned n)
{
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(bucket_area(m, slot, 0), AREA_BYTES, HOST_AREA_BYTES, n);
    p.dstPtr = make_cudaPitchedPtr(m->host[slot], HOST_AREA_BYTES, HOST_AREA_BYTES, n);
    p.extent = make_cudaExtent(HOST_AREA_BYTES, n, 1);
    p.kind = cudaMemcpyDeviceToHost;
    return p;
}

/* The bucket method's full batch for slot as one graph: per sweep, clear
 * the area's header and the bucket counters, hash into buckets, find; a
 * chain (the sweeps share the buckets), then one copy of every sweep's
 * results. The hash kernels' job is set per launch. Kernel and memset
 * nodes cost the host next to nothing at launch, copies about 2 us each
 * (backend-cuda/probes/host_cost.cu). */
static cudaError_t build_graph(cuda_momentum *m, unsigned slot)
{
    cudaGraph_t g;
    CHECK_CUDA(cudaGraphCreate(&g, 0));
    m->graph[slot] = g;
    cudaGraphNode_t prev = nullptr;
    const momentum_consts zero = {};
    unsigned cap = m->bucket_cap;
    void *hash_args[] = {(void *)&zero, &m->store, &m->bcount, &cap};
    const cudaKernelNodeParams hash = {(void *)mom_hash_bucket, dim3(LODE_MOM_NBASES / TPB), dim3(TPB), 0, hash_args,
                                       nullptr};
    cudaMemsetParams bcount{};
    bcount.dst = m->bcount;
    bcount.elementSize = 4;
    bcount.width = LODE_MOM_NBUCKETS;
    bcount.height = 1;
    for (unsigned i = 0; i < m->batch; i++) {
        char *area = bucket_area(m, slot, i);
        momentum_entry *out = (momentum_entry *)(area + HEADER_BYTES);
        uint32_t *flags = (uint32_t *)area;
        void *find_args[] = {&m->store, &m->bcount, &cap, &out, &flags};
        const cudaKernelNodeParams find = {(void *)mom_bucket_find, dim3(LODE_MOM_NBUCKETS), dim3(BK_TPB), 0,
                                           find_args, nullptr};
        cudaMemsetParams header{};
        header.dst = area;
        header.elementSize = 4;
        header.width = HEADER_BYTES / 4;
        header.height = 1;
        const size_t deps = prev != nullptr ? 1 : 0;
        cudaGraphNode_t header_cleared, cleared;
        CHECK_CUDA(cudaGraphAddMemsetNode(&header_cleared, g, &prev, deps, &header));
        CHECK_CUDA(cudaGraphAddMemsetNode(&cleared, g, &header_cleared, 1, &bcount));
        CHECK_CUDA(cudaGraphAddKernelNode(&m->hash_node[slot][i], g, &cleared, 1, &hash));
        CHECK_CUDA(cudaGraphAddKernelNode(&prev, g, &m->hash_node[slot][i], 1, &find));
    }
    const cudaMemcpy3DParms copy = areas_copy(m, slot, m->batch);
    cudaGraphNode_t copied;
    CHECK_CUDA(cudaGraphAddMemcpyNode(&copied, g, &prev, 1, &copy));
    CHECK_CUDA(cudaGraphInstantiate(&m->exec[slot], g, 0));
    return cudaSuccess;
}

/* A full batch through the slot's graph: a parameter update per sweep (on
 * the host) and one launch. */
static cudaError_t enqueue_graph(cuda_momentum *m, unsigned slot)
{
    if (m->exec[slot] == nullptr) {
        cudaError_t err = build_graph(m, slot);
        if (err != cudaSuccess)
            return err;
    }
    unsigned cap = m->bucket_cap;
    for (unsigned i = 0; i < m->batch; i++) {
        void *args[] = {&m->job[slot][i], &m->store, &m->bcount, &cap};
        const cudaKernelNodeParams hash = {(void *)mom_hash_bucket, dim3(LODE_MOM_NBASES / TPB), dim3(TPB), 0,
                                           args, nullptr};
        CHECK_CUDA(cudaGraphExecKernelNodeSetParams(m->exec[slot], m->hash_node[slot][i], &hash));
    }
    return cudaGraphLaunch(m->exec[slot], m->stream);
}

extern "C" unsigned cuda_momentum_batch(const cuda_momentum *m)
{
    return m->batch;
}

extern "C" cudaError_t cuda_momentum_enqueue(cuda_momentum *m, const momentum_consts *c, unsigned n)
{
    if (m->queued - m->finished >= cuda_momentum_depth(m))
        return cudaErrorNotReady; /* finish one first */
    if (n == 0 || n > m->batch)
        return cudaErrorInvalidValue;
    const unsigned slot = m->queued % SLOTS;
    for (unsigned i = 0; i < n; i++)
        m->job[slot][i] = c[i];
    m->batch_n[slot] = n;
    if (n == m->batch && m->batch > 1 && m->graphs) {
        CHECK_CUDA(enqueue_graph(m, slot));
    } else {
        for (unsigned i = 0; i < n; i++)
            CHECK_CUDA(enqueue_sweep(m, slot, i, &c[i]));
        if (m->method == CUDA_MOMENTUM_BUCKET) {
            const cudaMemcpy3DParms copy = areas_copy(m, slot, n);
            CHECK_CUDA(cudaMemcpy3DAsync(&copy, m->stream));
        }
    }
    CHECK_CUDA(cudaEventRecord(m->done[slot], m->stream));
    m->queued++;
    return cudaSuccess;
}

extern "C" unsigned cuda_momentum_depth(const cuda_momentum *m)
{
    return m->method == CUDA_MOMENTUM_BUCKET ? SLOTS : 1;
}

extern "C" void cuda_momentum_discard(cuda_momentum *m)
{
    cudaStreamSynchronize(m->stream);
    m->finished = m->queued;
}

extern "C" cudaError_t cuda_momentum_wait(cuda_momentum *m, unsigned *n)
{
    if (m->queued == m->finished)
        return cudaErrorNotReady; /* nothing queued */
    const unsigned slot = m->finished++ % SLOTS;
    CHECK_CUDA(cudaEventSynchronize(m->done[slot]));
    if (m->profile) { /* batches of one sweep */
        float ms[3];
        for (int i = 0; i < 3; i++)
            CHECK_CUDA(cudaEventElapsedTime(&ms[i], m->ev[slot][i], m->ev[slot][i + 1]));
        for (int i = 0; i < 3; i++)
            m->stage_ms[i] += ms[i];
        m->sweeps++;
    }
    *n = m->batch_n[slot];
    return cudaSuccess;
}

extern "C" cudaError_t cuda_momentum_result(cuda_momentum *m, unsigned i, momentum_entry **list, size_t *count)
{
    const unsigned slot = (m->finished - 1) % SLOTS;
    if (m->finished == 0 || i >= m->batch_n[slot])
        return cudaErrorInvalidValue;
    const char *host = m->host[slot] + i * HOST_AREA_BYTES;
    const uint32_t *flags = (const uint32_t *)host;
    const size_t n = flags[0];
    if (m->method == CUDA_MOMENTUM_BUCKET && (flags[1] != 0 || n > HOST_CAP)) {
        /* A bucket or a shared list overflowed, or more pairs than the
         * first copy held (the device list may already be a later
         * sweep's): redo the sweep exactly with the filter method (its
         * engine, made on the first redo, runs one sweep at a time). */
        m->redos++;
        if (m->fallback == nullptr)
            CHECK_CUDA(cuda_momentum_new(CUDA_MOMENTUM_FILTER, m->table_bits, m->stream, &m->fallback));
        unsigned one;
        CHECK_CUDA(cuda_momentum_enqueue(m->fallback, &m->job[slot][i], 1));
        CHECK_CUDA(cuda_momentum_wait(m->fallback, &one));
        return cuda_momentum_result(m->fallback, 0, list, count);
    }
    if (n <= HOST_CAP) {
        *list = (momentum_entry *)(host + HEADER_BYTES);
        *count = n;
        return cudaSuccess;
    }
    /* More candidates than the first copy held (not expected): copy all
     * (batches of one sweep, one in flight for these methods: the list is
     * this sweep's). */
    if (n > m->more_cap) {
        momentum_entry *grown = (momentum_entry *)realloc(m->more, n * sizeof *grown);
        if (grown == nullptr)
            return cudaErrorMemoryAllocation;
        m->more = grown;
        m->more_cap = n;
    }
    CHECK_CUDA(cudaMemcpyAsync(m->more, m->list[m->final_list], n * sizeof(momentum_entry),
                               cudaMemcpyDeviceToHost, m->stream));
    CHECK_CUDA(cudaStreamSynchronize(m->stream));
    *list = m->more;
    *count = n;
    return cudaSuccess;
}
