/* Mersenne trial factoring kernels and their engine (tf_cuda.h has the
 * pipeline; core/base/tf_ref.h the math).
 *
 * Index bits: bit j of a launch stands for n = n0 + j. A sieve prime r
 * divides q(n) exactly when n = root (mod r), root = -q(0) / q_step mod r;
 * "start" is the first such bit of the launch, (root - n0) mod r. */
#include "backend-cuda/tf_cuda.h"
#include "core/backend_support/kernels/tf_mont.h"
#include "core/backend_support/kernels/tf_sieve.h"
#include "core/backend_support/tf_tables.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"
extern "C" {
#include "core/base/log.h"
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr unsigned kSieveThreads = 256;
constexpr unsigned kPrepThreads = 128;
constexpr unsigned kExpThreads = 256;
/* The exponentiation's grid in blocks an SM (LODE_TF_EXP_BLOCKS_PER_SM's
 * default). Where an SM holds 2 048 threads (sm_80, sm_90) it is also the
 * launch bound of the one-candidate kernels for q < 2^78 and q < 2^96: at 32
 * registers all 8 are resident at once, where at the 42-46 ptxas picks alone
 * 5 are and the other 3 run as a partial second wave (H200: +1.25% and +1.4%;
 * 20 and 8 bytes spilled, the q < 2^78 kernel's all outside the squaring
 * loop). The q < 2^92 kernel gains 0.2% bound for 2% more board power, so it
 * keeps its registers (docs/PERFORMANCE.md). Other chips hold fewer threads,
 * and two or four candidates a thread (LODE_TF_INTERLEAVE) spill at 32: no
 * bound (0) for those. The sm_90 PTX carries the bound to chips that compile
 * it at run time (sm_100 takes it, unmeasured; those that cannot hold 8
 * blocks ignore it). */
constexpr unsigned kExpBlocksPerSm = 8;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define TF_EXP_MIN_BLOCKS kExpBlocksPerSm
#else
#define TF_EXP_MIN_BLOCKS 0
#endif
constexpr unsigned kDepth = 2;
constexpr int kInterleave = 1; /* candidates per thread at once (2 and 4 measured slower) */
/* Factor bounds of the exponentiation's instantiations (QBITS, see
 * mont_sqr): below 2^92 values stay lazy (< 4q), below 2^78 also a2^2 fits
 * one word; 96 is the fully reduced kernel. */
constexpr int kLazyBits = 92, kNarrowBits = 78, kFullBits = 96;

/* What varies between the device launches of one exponent and bit size:
 * the kernels read it from device memory (the host copies a batch's
 * descriptors once), so a device launch's graph never changes and queuing
 * it needs no parameter updates on the host. */
struct launch_desc {
    uint64_t n0;          /* the launch's first index */
    uint32_t count;       /* indices n0 .. n0 + count - 1 */
    uint32_t class_index; /* c of k = c + 4620 n */
    /* The report masks of the job (lode_tf_report_mask_lo, _hi). */
    uint64_t mask_lo;
    uint32_t mask_hi;
};

/* ---- the sieve ---------------------------------------------------------- */

/* A prime's constants for tf_sieve_prepare (sieve_prime) and for a
 * segment's middle primes (segment_prime). Both loops load the next
 * prime's while they clear this one's bits, so the global loads overlap the
 * atomics instead of stalling every prime; past the end, all zero. */
struct sieve_prime {
    uint32_t r, inv, pmod;
};
__device__ __forceinline__ sieve_prime sieve_prime_at(const uint32_t *__restrict__ prime,
                                                      const uint32_t *__restrict__ inv,
                                                      const uint32_t *__restrict__ pmod, unsigned i, unsigned n)
{
    return i < n ? sieve_prime{prime[i], inv[i], pmod[i]} : sieve_prime{0, 0, 0};
}

struct segment_prime {
    uint32_t r, smod, minv, start;
};
__device__ __forceinline__ segment_prime segment_prime_at(const uint32_t *__restrict__ prime,
                                                          const uint32_t *__restrict__ smod,
                                                          const uint32_t *__restrict__ minv,
                                                          const uint32_t *__restrict__ start, unsigned i,
                                                          unsigned n)
{
    return i < n ? segment_prime{prime[i], smod[i], minv[i], start[i]} : segment_prime{0, 0, 0, 0};
}

/* Per prime: its first bit in the launch (primes below the segment size,
 * for tf_sieve_segments), or (larger primes) clear every multiple in the
 * launch's global bitmap. A small grid of small blocks walks all primes:
 * its blocks fit beside a running exponentiation (40 registers x 1536
 * threads leave room for one 128-thread block per SM), so this stage runs
 * under the previous launch's multiplies instead of after them; its cost
 * is L2 atomic throughput, not SM time. */
__global__ void __launch_bounds__(kPrepThreads)
tf_sieve_prepare(const uint32_t *__restrict__ prime, const uint32_t *__restrict__ inv,
                 const uint32_t *__restrict__ pmod, unsigned n_small, unsigned n_all,
                 const launch_desc *__restrict__ launch, uint32_t *__restrict__ start,
                 uint32_t *__restrict__ bits, uint32_t *__restrict__ counts)
{
    const uint32_t class_index = launch->class_index, count = launch->count;
    const uint64_t n0 = launch->n0;
    const unsigned stride = gridDim.x * blockDim.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) /* the launch's survivors and factors: the kernels after this one count them */
        counts[0] = counts[1] = 0;
    for (sieve_prime cur = sieve_prime_at(prime, inv, pmod, i, n_all); i < n_all;) {
        const sieve_prime next = sieve_prime_at(prime, inv, pmod, i + stride, n_all);
        const uint32_t r = cur.r;
        const uint32_t s = tf_sieve_first(r, cur.pmod, cur.inv, class_index, n0);
        if (i < n_small)
            start[i] = s;
        else
            for (uint32_t o = s; o < count; o += r)
                atomicAnd(&bits[o >> 5], ~(1u << (o & 31)));
        i += stride, cur = next;
    }
}

/* One block per segment of SEG_BITS (2^16..2^18): small primes by pattern,
 * middle primes by shared atomics, AND the global bits, then append the
 * survivors' offsets to cand (a block-wide prefix sum and one atomicAdd). */
template <unsigned SEG_BITS>
__global__ void __launch_bounds__(kSieveThreads)
tf_sieve_segments(const uint32_t *__restrict__ prime, const uint32_t *__restrict__ start,
                  const uint32_t *__restrict__ smod, const uint32_t *__restrict__ minv, unsigned n_small,
                  const launch_desc *__restrict__ launch, const uint32_t *__restrict__ bits,
                  uint32_t *__restrict__ cand, uint32_t *__restrict__ cand_count)
{
    constexpr unsigned kSegmentBits = SEG_BITS, kSegmentWords = SEG_BITS / 32;
    constexpr unsigned kWordsPerThread = kSegmentWords / kSieveThreads;
    __shared__ uint32_t sm[kSegmentWords];
    __shared__ uint32_t warp_total[kSieveThreads / 32];
    __shared__ uint32_t block_base;
    const unsigned t = threadIdx.x, b = blockIdx.x;
    const uint32_t seg0 = b * kSegmentBits, count = launch->count;
    if (seg0 >= count) /* a graph's grid is sized for a full launch */
        return;
    const uint32_t seg_bits = count - seg0 < kSegmentBits ? count - seg0 : kSegmentBits;

    /* Small primes: thread t owns words t, t + T, ...; for each prime the
     * bit position within the next word moves by a constant. */
    uint32_t w[kWordsPerThread];
#pragma unroll
    for (unsigned j = 0; j < kWordsPerThread; j++)
        w[j] = 0xFFFFFFFFu;
#pragma unroll
    for (unsigned i = 0; i < TF_PATTERN_PRIMES; i++) {
        const uint32_t r = tf_pattern_prime(i);
        const uint64_t pat = tf_pattern_bits(r);
        const uint32_t d = (32u * kSieveThreads) % r;
        uint32_t o = start[i] + r - (seg0 % r); /* first multiple in the segment, in [0, 2r) */
        o = o >= r ? o - r : o;
        uint32_t at = o + r - (32u * t) % r; /* its position relative to word t, in [0, 2r) */
        at = at >= r ? at - r : at;
#pragma unroll
        for (unsigned j = 0; j < kWordsPerThread; j++) {
            w[j] &= ~(uint32_t)(pat << at);
            at = at >= d ? at - d : at + r - d;
        }
    }
#pragma unroll
    for (unsigned j = 0; j < kWordsPerThread; j++)
        sm[t + j * kSieveThreads] = w[j];
    __syncthreads();

    /* Middle primes (61 < r < kSegmentBits): a thread per prime, loaded
     * one ahead (segment_prime_at). */
    unsigned i = TF_PATTERN_PRIMES + t;
    for (segment_prime cur = segment_prime_at(prime, smod, minv, start, i, n_small); i < n_small;) {
        const segment_prime next = segment_prime_at(prime, smod, minv, start, i + kSieveThreads, n_small);
        const uint32_t r = cur.r, st = cur.start;
        uint32_t x = b * cur.smod; /* b * kSegmentBits mod r, reduced below */
        uint32_t rem = x - __umulhi(x, cur.minv) * r;
        rem = rem >= r ? rem - r : rem;
        for (uint32_t o = st >= rem ? st - rem : st + r - rem; o < seg_bits; o += r)
            atomicAnd(&sm[o >> 5], ~(1u << (o & 31)));
        i += kSieveThreads, cur = next;
    }
    __syncthreads();

    /* Survivors: AND the large primes' bits (words t, t + T, ...: coalesced
     * reads, conflict-free banks) and keep the result in shared memory. */
    unsigned n = 0;
#pragma unroll
    for (unsigned j = 0; j < kWordsPerThread; j++) {
        const unsigned wi = t + j * kSieveThreads;
        uint32_t v = sm[wi] & bits[seg0 / 32 + wi];
        const uint32_t first = wi * 32;
        if (first >= seg_bits)
            v = 0;
        else if (seg_bits - first < 32)
            v &= (1u << (seg_bits - first)) - 1;
        sm[wi] = v;
        n += __popc(v);
    }
    const unsigned lane = t & 31, warp = t / 32;
#pragma unroll
    for (unsigned d = 16; d > 0; d /= 2)
        n += __shfl_xor_sync(0xFFFFFFFFu, n, d);
    if (lane == 0)
        warp_total[warp] = n;
    __syncthreads();
    if (t == 0) {
        uint32_t sum = 0;
        for (unsigned i = 0; i < kSieveThreads / 32; i++) {
            uint32_t v = warp_total[i];
            warp_total[i] = sum;
            sum += v;
        }
        block_base = atomicAdd(cand_count, sum);
    }
    __syncthreads();
    /* Each round every lane with survivors left writes one, at consecutive
     * places across the warp (the exponentiation takes them in any order):
     * whole lines instead of a sector per lane. */
    uint32_t pos = block_base + warp_total[warp];
    const unsigned below = (1u << lane) - 1;
    unsigned j = 0;
    uint32_t v = sm[t];
    for (;;) {
        while (v == 0 && j + 1 < kWordsPerThread)
            v = sm[t + ++j * kSieveThreads];
        const unsigned active = lode_ballot(v);
        if (active == 0)
            break;
        if (v != 0) {
            const unsigned bit = __ffs(v) - 1;
            v &= v - 1;
            cand[pos + __popc(active & below)] = seg0 + (t + j * kSieveThreads) * 32 + bit;
        }
        pos += __popc(active);
    }
}

/* ---- exponentiation: 3x32-bit Montgomery, R = 2^96 ---------------------- */

/* a^2 / R mod q (core/backend_support/kernels/tf_mont.h has the account and
 * the bounds). QBITS is the bound on q: <= 92 is lazy (a < 4q gives r < 2q,
 * left so), <= 78 also drops the high word of a2^2; 96 reduces r below q. */
template <int QBITS>
__device__ __forceinline__ u96 mont_sqr(u96 a, u96 q, uint32_t qinv)
{
    constexpr bool LAZY = QBITS <= kLazyBits;
    u96 r;
    if constexpr (QBITS <= kNarrowBits) /* a < 4q < 2^80: a2 < 2^16, a2^2 + 1 < 2^32 */
        r = tf_mont_sqr_ptx_narrow(a, q, qinv);
    else
        r = tf_mont_sqr_ptx(a, q, qinv);
    if (!LAZY) /* r < 2q: reduce below q */
        u96_sub_if_ge_ptx(&r, q);
    return r;
}

typedef unsigned __int128 u128;

__device__ __forceinline__ u128 to128(u96 a) { return (u128)a.w2 << 64 | (u128)a.w1 << 32 | a.w0; }
__device__ __forceinline__ u96 from128(u128 a) { return u96{(uint32_t)a, (uint32_t)(a >> 32), (uint32_t)(a >> 64)}; }

/* x - e q for the estimate e <= floor(x / q), then reduced below q; x - e q
 * must be below 2^96 (the callers keep it below 3q < 2^96). */
__device__ __forceinline__ u128 reduce_from_estimate(u128 x, uint64_t e, u128 q)
{
    u128 r = (x - (u128)e * q) & (((u128)1 << 96) - 1);
    while (r >= q)
        r -= q;
    return r;
}

/* one = R mod q and start = 2^y R mod q (y < 32). For 2^64 <= q < 2^94 the
 * quotients fit 32 bits and a double estimate is off by at most one, so
 * two multiply-subtracts do; other q take the slow exact division. */
__device__ void mont_init(u128 q, uint32_t y, u128 *one, u128 *start)
{
    if ((q >> 64) != 0 && (q >> 94) == 0) {
        const double qd = (double)(uint64_t)(q >> 32) * 4294967296.0 + (double)(uint32_t)q;
        const double inv = 1.0 / qd; /* one division; the estimates below stay within one of the truth */
        double e = floor(0x1p96 * inv);
        uint64_t e1 = e >= 1.0 ? (uint64_t)e - 1 : 0; /* never above the true quotient */
        u128 r = reduce_from_estimate((u128)1 << 96, e1, q);
        const u128 x = r << y; /* < 2^126 */
        const double xd = (double)(uint64_t)(x >> 64) * 0x1p64 + (double)(uint64_t)x;
        e = floor(xd * inv);
        e1 = e >= 1.0 ? (uint64_t)e - 1 : 0;
        *one = r;
        *start = reduce_from_estimate(x, e1, q);
        return;
    }
    const u128 r = (((u128)1 << 96) % q);
    *one = r;
    *start = (r << y) % q; /* r < 2^95, y < 32: no overflow */
}

/* Each thread runs N candidates in lockstep: the Montgomery steps are long
 * dependent chains, and N independent ones let the scheduler interleave
 * them. The bits of p are the same for every thread (no divergence).
 * LAZY (q < 2^92): a doubling is a plain shift, v < 2q after a squaring and
 * v < 4q < 2^94 after a doubling, which mont_sqr takes; the last step may be
 * a doubling, so v is reduced below q before the compare. QBITS: q < 2^QBITS
 * (78, 92 lazy; 96 full). */
template <int QBITS, int N>
__global__ void __launch_bounds__(kExpThreads, N == 1 && QBITS != kLazyBits ? TF_EXP_MIN_BLOCKS : 0)
tf_exponentiate(const uint32_t *__restrict__ cand, const uint32_t *__restrict__ cand_count, uint32_t p,
                const launch_desc *__restrict__ launch, uint32_t *__restrict__ found,
                uint32_t *__restrict__ found_count)
{
    const uint32_t class_index = launch->class_index;
    const uint64_t n0 = launch->n0;
    const uint64_t mask_lo = launch->mask_lo;
    const uint32_t mask_hi = launch->mask_hi;
    constexpr bool LAZY = QBITS <= kLazyBits;
    const uint32_t total = *cand_count;
    const unsigned nbits = 32 - __clz(p);
    const uint32_t y = p >> (nbits - 5); /* the top 5 bits: start at 2^y */
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t base = blockIdx.x * blockDim.x + threadIdx.x; base < total; base += N * stride) {
        u96 q[N], v[N];
        u128 one[N];
        uint32_t qinv[N], off[N];
        bool valid[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint32_t idx = base + j * stride;
            off[j] = cand[idx < total ? idx : base];
            const uint64_t k = class_index + 4620ull * (n0 + off[j]);
            valid[j] = idx < total && k != 0; /* k = 0: q = 1 */
            const u128 q128 = (u128)k * (2ull * p) + 1;
            q[j] = from128(q128);
            uint32_t x = q[j].w0 * 3u ^ 2u; /* q^-1 mod 2^5, Newton to 2^40 */
            x *= 2u - q[j].w0 * x;
            x *= 2u - q[j].w0 * x;
            x *= 2u - q[j].w0 * x;
            qinv[j] = 0u - x;
            u128 start;
            mont_init(q128, y, &one[j], &start);
            v[j] = from128(start);
        }
        for (int bit = (int)nbits - 6; bit >= 0; bit--) {
            const uint32_t b = (p >> bit) & 1u;
#pragma unroll
            for (int j = 0; j < N; j++) {
                v[j] = mont_sqr<QBITS>(v[j], q[j], qinv[j]);
                if (LAZY)
                    v[j] = u96_shl_ptx(v[j], b);
                else if (b)
                    v[j] = u96_double_mod_ptx(v[j], q[j]);
            }
        }
#pragma unroll
        for (int j = 0; j < N; j++) {
            u128 r = to128(v[j]);
            const u128 q128 = to128(q[j]);
            while (LAZY && r >= q128)
                r -= q128;
            const u128 diff = r ^ one[j];
            if (valid[j] && ((uint64_t)diff & mask_lo) == 0 && ((uint32_t)(diff >> 64) & mask_hi) == 0) {
                uint32_t slot = atomicAdd(found_count, 1u);
                if (slot < LODE_TF_FOUND_CAP)
                    found[slot] = off[j];
            }
        }
    }
}

/* ---- the per-exponent tables, built on the device -------------------------- */

/* Entry i of the tables of exponent p from the sorted prime list (the
 * formulas of tf_sieve_tables_build; tf_sieve_plan_of gives count and skip):
 * the host then never builds or copies the 5 x count words per exponent. */
__global__ void tf_build_tables(const uint32_t *__restrict__ primes, unsigned count, unsigned skip, uint32_t p,
                                uint32_t seg, uint32_t *__restrict__ prime, uint32_t *__restrict__ inv,
                                uint32_t *__restrict__ pmod, uint32_t *__restrict__ smod,
                                uint32_t *__restrict__ minv)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const uint32_t r = primes[i < skip ? i : i + 1];
    /* inv: (2 p 4620)^-1 mod r by extended Euclid (t stays within +-r). */
    int64_t t = 0, nt = 1;
    uint32_t a = r, b = (uint32_t)(2ull * p * 4620u % r);
    while (b != 0) {
        const uint32_t q = a / b, rem = a - q * b;
        const int64_t tmp = t - (int64_t)q * nt;
        t = nt, nt = tmp, a = b, b = rem;
    }
    prime[i] = r;
    inv[i] = (uint32_t)(t < 0 ? t + r : t);
    pmod[i] = p % r;
    smod[i] = seg % r;
    minv[i] = 0xFFFFFFFFu / r;
}

/* ---- the engine ------------------------------------------------------------ */

/* A device launch's results: counts[0] survivors of the sieve, counts[1]
 * factors, then found[LODE_TF_FOUND_CAP]. Each launch of a batch has its
 * own area on the device; the batch's areas come back in one copy. */
constexpr size_t kResultWords = 2 + LODE_TF_FOUND_CAP;

/* The buffers of one device launch. Consecutive launches alternate between
 * kSets of them, so one launch's sieve (atomics) runs beside the other's
 * exponentiation (multiplies); the sieve kernels have the higher priority,
 * so their blocks go first whenever an SM frees up and the next candidate
 * list is ready before the multiplies run dry. A set's work is ordered on
 * its stream; queued call by call, the exponentiation is forked to
 * exp_stream and joined back. */
struct set_buffers {
    cudaStream_t stream;     /* the set's order (graphs run here); sieve kernels, high priority */
    cudaStream_t exp_stream; /* call by call: exponentiation, low priority */
    cudaEvent_t sieved, finished;
    uint32_t *start;   /* the middle primes' first bits in the launch */
    uint32_t *bits;    /* one bit per index of the launch */
    uint32_t *cand;    /* survivors' offsets */
};
constexpr unsigned kSets = 2;

/* A launch of the driver: a batch of up to `batch` device launches over
 * consecutive indices, with one event at its end, so the host wakes once
 * per batch. kDepth of them are in flight.
 * With graphs, device launch i of a slot's batch is graph[i], built once
 * per exponent and bit size with every parameter fixed (the kernels read
 * what changes from desc[i]): queuing it is one event wait and one graph
 * launch, no parameter updates. */
struct batch_slot {
    uint32_t *areas; /* device: batch x kResultWords */
    uint32_t *host;  /* pinned: batch x kResultWords */
    uint32_t *found; /* malloc'd: batch x LODE_TF_FOUND_CAP, offsets from n0 */
    launch_desc *desc;   /* device: batch descriptors */
    launch_desc *h_desc; /* pinned: the same, written by the host before the batch */
    cudaEvent_t done, join;
    uint64_t n0;
    uint32_t count;
    unsigned launches, first_set;
    cudaGraph_t *graph;     /* [batch]: device launch i, in set i % kSets */
    cudaGraphExec_t *exec;  /* [batch] */
};

} /* namespace */

struct cuda_tf {
    cudaStream_t stream;
    unsigned want_primes;
    unsigned launch_bits;
    unsigned batch; /* device launches per batch */
    bool graphs;
    const uint32_t *primes; /* host: the first want_primes odd primes from 13 (shared) */
    uint32_t *d_primes; /* the same on the device (the tables are built from it) */
    /* device, per exponent: usable primes and their constants */
    uint32_t *d_prime, *d_inv, *d_pmod, *d_smod, *d_minv;
    unsigned seg_log; /* log2 of the bits one sieve block holds: 16..18 */
    unsigned n_small, n_all;
    uint32_t exponent; /* whose tables are loaded (0: none) */
    bool check_tables;
    lode_tf_job job;
    int exp_blocks;
    int prep_blocks; /* tf_sieve_prepare: one block per SM */
    int prio_high, prio_low;
    set_buffers set[kSets];
    unsigned next_set;
    batch_slot slot[kDepth];
    unsigned head, queued;
    /* LODE_TF_PROFILE=1: events between the stages of each launch (queued
     * call by call, one at a time), summed and printed when the engine is
     * freed (for measurements). */
    bool profile;
    unsigned interleave; /* candidates per thread at once: 1 (default), 2 or 4 */
    cudaEvent_t ev[kSets][4];
    bool ev_pending[kSets];
    double stage_ms[3];
    uint64_t launches, indices, survivors;
};

static uint32_t full_launch(const cuda_tf *tf) { return 1u << tf->launch_bits; }

static void drop_graphs(const cuda_tf *tf, batch_slot *sl)
{
    for (unsigned i = 0; i < tf->batch && sl->exec != nullptr; i++) {
        if (sl->exec[i] != nullptr)
            cudaGraphExecDestroy(sl->exec[i]);
        if (sl->graph[i] != nullptr)
            cudaGraphDestroy(sl->graph[i]);
        sl->exec[i] = nullptr;
        sl->graph[i] = nullptr;
    }
}

/* Waits for everything the engine queued, on every stream. */
static cudaError_t sync_all(cuda_tf *tf)
{
    cudaError_t first = cudaSuccess;
    for (unsigned s = 0; s < kSets; s++)
        for (cudaStream_t st : {tf->set[s].stream, tf->set[s].exp_stream}) {
            const cudaError_t err = st != NULL ? cudaStreamSynchronize(st) : cudaSuccess;
            first = first == cudaSuccess ? err : first;
        }
    return first;
}

extern "C" cudaError_t cuda_tf_new(cudaStream_t stream, cuda_tf **out)
{
    *out = NULL;
    cuda_tf *tf = (cuda_tf *)calloc(1, sizeof *tf);
    if (tf == NULL)
        return cudaErrorMemoryAllocation;
    tf->stream = stream;
    tf->want_primes = lode_setting_unsigned_in(LODE_SETTING_TF_SIEVE_PRIMES, CUDA_TF_DEFAULT_SIEVE_PRIMES,
                                   TF_PATTERN_PRIMES + 1, CUDA_TF_MAX_SIEVE_PRIMES);
    /* Device launches of 2^28 where the GPU has the room (two sets' candidate
     * lists are 2 GiB): half the graph launches of 2^27 and, measured on an
     * H200, 4% faster (half the exponentiation's tails at launch ends). */
    size_t free_bytes = 0, total_bytes = 0;
    const unsigned default_bits =
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && total_bytes >= ((size_t)16 << 30) ? 28 : 27;
    tf->launch_bits = lode_setting_unsigned_in(LODE_SETTING_TF_LAUNCH_BITS, default_bits, 20, 28);
    /* A batch's offsets are 32-bit: at most 2^31 indices. */
    tf->batch = lode_setting_unsigned_in(LODE_SETTING_TF_BATCH, 16, 1, 64);
    if (tf->batch > (1u << (31 - tf->launch_bits)))
        tf->batch = 1u << (31 - tf->launch_bits);
    tf->graphs = !lode_setting_flag(LODE_SETTING_CUDA_NO_GRAPHS);
    tf->check_tables = lode_setting_flag(LODE_SETTING_TF_CHECK_TABLES);
    cudaError_t err = cudaErrorMemoryAllocation;
    const size_t launch = full_launch(tf);
    int dev = 0, sms = 0;
    tf->primes = tf_sieve_primes(tf->want_primes);
    if (tf->primes == NULL)
        goto failed;
    if ((err = cudaGetDevice(&dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (err = cudaDeviceGetStreamPriorityRange(&tf->prio_low, &tf->prio_high)) != cudaSuccess)
        goto failed;
    tf->exp_blocks = sms * (int)lode_setting_unsigned_in(LODE_SETTING_TF_EXP_BLOCKS_PER_SM, kExpBlocksPerSm, 1, 64);
    tf->prep_blocks = sms;
    tf->seg_log = lode_setting_unsigned_in(LODE_SETTING_TF_SEGMENT_BITS, 18, 16, 18);
    tf->profile = lode_setting_flag(LODE_SETTING_TF_PROFILE);
    if (tf->profile) /* a launch's events are read before its set is used again */
        tf->batch = 1;
    tf->interleave = lode_setting_unsigned_in(LODE_SETTING_TF_INTERLEAVE, kInterleave, 1, 4);
    {
        const size_t n = tf->want_primes;
        uint32_t **tables[] = {&tf->d_primes, &tf->d_prime, &tf->d_inv, &tf->d_pmod, &tf->d_smod, &tf->d_minv};
        for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
            if ((err = cudaMalloc((void **)tables[i], n * sizeof(uint32_t))) != cudaSuccess)
                goto failed;
        /* On the stream the tables are built on, and waited for: a plain
         * cudaMemcpy from pageable memory may return before its last
         * chunk lands, and the non-blocking stream does not wait for it
         * (the tables' build then read zeros from the second 2 MiB on:
         * a zero "prime" made the preparation loop forever). */
        if ((err = cudaMemcpyAsync(tf->d_primes, tf->primes, n * sizeof(uint32_t), cudaMemcpyHostToDevice,
                                   tf->stream)) != cudaSuccess ||
            (err = cudaStreamSynchronize(tf->stream)) != cudaSuccess)
            goto failed;
    }
    for (unsigned s = 0; s < kSets; s++) {
        set_buffers *b = &tf->set[s];
        if ((err = cudaStreamCreateWithPriority(&b->stream, cudaStreamNonBlocking, tf->prio_high)) != cudaSuccess ||
            (err = cudaStreamCreateWithPriority(&b->exp_stream, cudaStreamNonBlocking, tf->prio_low)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&b->sieved, cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&b->finished, cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->start, tf->want_primes * sizeof(uint32_t))) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->bits, launch / 8)) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->cand, launch * sizeof(uint32_t))) != cudaSuccess)
            goto failed;
        for (int i = 0; i < 4 && tf->profile; i++)
            if ((err = cudaEventCreate(&tf->ev[s][i])) != cudaSuccess)
                goto failed;
    }
    for (unsigned k = 0; k < kDepth; k++) {
        batch_slot *sl = &tf->slot[k];
        if ((err = cudaMalloc((void **)&sl->areas, tf->batch * kResultWords * sizeof(uint32_t))) != cudaSuccess ||
            (err = cudaMallocHost((void **)&sl->host, tf->batch * kResultWords * sizeof(uint32_t))) != cudaSuccess ||
            (err = cudaMalloc((void **)&sl->desc, tf->batch * sizeof(launch_desc))) != cudaSuccess ||
            (err = cudaMallocHost((void **)&sl->h_desc, tf->batch * sizeof(launch_desc))) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&sl->done, cudaEventBlockingSync | cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&sl->join, cudaEventDisableTiming)) != cudaSuccess)
            goto failed;
        sl->graph = (cudaGraph_t *)calloc(tf->batch, sizeof *sl->graph);
        sl->exec = (cudaGraphExec_t *)calloc(tf->batch, sizeof *sl->exec);
        if (sl->graph == NULL || sl->exec == NULL) {
            err = cudaErrorMemoryAllocation;
            goto failed;
        }
        if ((sl->found = (uint32_t *)malloc(tf->batch * LODE_TF_FOUND_CAP * sizeof(uint32_t))) == NULL) {
            err = cudaErrorMemoryAllocation;
            goto failed;
        }
    }
    *out = tf;
    return cudaSuccess;
failed:
    cuda_tf_free(tf);
    return err;
}

extern "C" void cuda_tf_free(cuda_tf *tf)
{
    if (tf == NULL)
        return;
    sync_all(tf);
    if (tf->profile && tf->launches > 0)
        fprintf(stderr,
                "tf: %llu launches, %.4g indices each, %.2f%% survive the sieve (%u primes); ms per launch: "
                "large primes %.3f, segments %.3f, exponentiation %.3f\n",
                (unsigned long long)tf->launches, (double)tf->indices / tf->launches,
                100.0 * tf->survivors / tf->indices, tf->n_all, tf->stage_ms[0] / tf->launches,
                tf->stage_ms[1] / tf->launches, tf->stage_ms[2] / tf->launches);
    for (unsigned s = 0; s < kSets; s++)
        for (int i = 0; i < 4; i++)
            if (tf->ev[s][i] != NULL)
                cudaEventDestroy(tf->ev[s][i]);
    for (uint32_t *p : {tf->d_primes, tf->d_prime, tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv})
        cudaFree(p);
    for (unsigned s = 0; s < kSets; s++) {
        set_buffers *b = &tf->set[s];
        cudaFree(b->start);
        cudaFree(b->bits);
        cudaFree(b->cand);
        for (cudaEvent_t e : {b->sieved, b->finished})
            if (e != NULL)
                cudaEventDestroy(e);
        for (cudaStream_t st : {b->stream, b->exp_stream})
            if (st != NULL)
                cudaStreamDestroy(st);
    }
    for (unsigned k = 0; k < kDepth; k++) {
        batch_slot *sl = &tf->slot[k];
        drop_graphs(tf, sl);
        free(sl->graph);
        free(sl->exec);
        cudaFree(sl->areas);
        cudaFreeHost(sl->host);
        cudaFree(sl->desc);
        cudaFreeHost(sl->h_desc);
        free(sl->found);
        for (cudaEvent_t e : {sl->done, sl->join})
            if (e != NULL)
                cudaEventDestroy(e);
    }
    free(tf);
}

extern "C" uint64_t cuda_tf_launch_size(const cuda_tf *tf) { return (uint64_t)tf->batch << tf->launch_bits; }
extern "C" uint64_t cuda_tf_device_launch_size(const cuda_tf *tf) { return full_launch(tf); }
extern "C" unsigned cuda_tf_depth(const cuda_tf *tf) { (void)tf; return kDepth; }

/* Copies device table i (tf_sieve_tables_verify's order) to out. */
static int read_table(void *ctx, int i, uint32_t *out, unsigned count)
{
    const cuda_tf *tf = (const cuda_tf *)ctx;
    const uint32_t *dev[] = {tf->d_prime, tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv};
    cudaError_t err = cudaMemcpy(out, dev[i], count * sizeof *out, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        return LODE_OK;
    lode_log(LODE_LOG_ERROR, "tf: reading the sieve tables back: %s", cudaGetErrorString(err));
    return LODE_ERR_DEVICE;
}

/* LODE_TF_CHECK_TABLES=1 (tests): the device's tables must equal the
 * host's entry for entry. */
static cudaError_t check_tables(cuda_tf *tf, uint32_t p, const tf_sieve_plan *plan)
{
    char why[128] = "";
    int rc = tf_sieve_tables_verify(tf->primes, tf->want_primes, p, 1u << tf->seg_log, plan, read_table, tf, why,
                                    sizeof why);
    if (rc == LODE_OK)
        return cudaSuccess;
    if (rc == LODE_ERR_NO_MEMORY)
        return cudaErrorMemoryAllocation;
    if (why[0] != '\0')
        lode_log(LODE_LOG_ERROR, "tf: M%u: the GPU's sieve tables differ from the host's: %s", p, why);
    return cudaErrorInvalidValue;
}

/* The usable primes of exponent p (r < 2p + 1, so that no prime can equal a
 * candidate q = 2kp + 1 >= 2p + 1, and r != p, which never divides q) and
 * their constants, built on the device. */
static cudaError_t load_exponent(cuda_tf *tf, uint32_t p)
{
    cudaError_t err = sync_all(tf); /* no launch may still read the tables */
    if (err != cudaSuccess)
        return err;
    const tf_sieve_plan plan = tf_sieve_plan_of(tf->primes, tf->want_primes, p, 1u << tf->seg_log);
    if (plan.count > 0)
        tf_build_tables<<<(plan.count + 255) / 256, 256, 0, tf->stream>>>(
            tf->d_primes, plan.count, plan.skip, p, 1u << tf->seg_log, tf->d_prime, tf->d_inv, tf->d_pmod,
            tf->d_smod, tf->d_minv);
    if ((err = cudaGetLastError()) != cudaSuccess || (err = cudaStreamSynchronize(tf->stream)) != cudaSuccess)
        return err;
    tf->n_all = plan.count;
    tf->n_small = plan.n_small;
    if (tf->check_tables && (err = check_tables(tf, p, &plan)) != cudaSuccess)
        return err;
    tf->exponent = p;
    return cudaSuccess;
}

/* The exponentiation kernel of the job's bit size and the interleave. */
template <int N>
static const void *exp_kernel_n(const lode_tf_job *j)
{
    if (j->bit_max <= kNarrowBits)
        return (const void *)tf_exponentiate<kNarrowBits, N>;
    if (j->bit_max <= kLazyBits)
        return (const void *)tf_exponentiate<kLazyBits, N>;
    return (const void *)tf_exponentiate<kFullBits, N>;
}

static const void *exp_kernel(const cuda_tf *tf)
{
    switch (tf->interleave) {
    case 4: return exp_kernel_n<4>(&tf->job);
    case 2: return exp_kernel_n<2>(&tf->job);
    default: return exp_kernel_n<1>(&tf->job);
    }
}

static const void *segments_kernel(const cuda_tf *tf)
{
    switch (tf->seg_log) {
    case 16: return (const void *)tf_sieve_segments<1u << 16>;
    case 17: return (const void *)tf_sieve_segments<1u << 17>;
    default: return (const void *)tf_sieve_segments<1u << 18>;
    }
}

extern "C" cudaError_t cuda_tf_set_job(cuda_tf *tf, const lode_tf_job *job)
{
    if (job->exponent != tf->exponent) {
        tf->exponent = 0;
        cudaError_t err = load_exponent(tf, job->exponent);
        if (err != cudaSuccess)
            return err;
    }
    const void *exp_before = exp_kernel(tf);
    const bool new_exponent = job->exponent != tf->job.exponent;
    tf->job = *job;
    /* A class is a descriptor field; the graphs hold the exponent's table
     * sizes and the bit size's kernel, so those need new graphs. */
    if (exp_kernel(tf) != exp_before || new_exponent) {
        cudaError_t err = sync_all(tf);
        if (err != cudaSuccess)
            return err;
        for (unsigned k = 0; k < kDepth; k++)
            drop_graphs(tf, &tf->slot[k]);
    }
    return cudaSuccess;
}

/* The arguments of one device launch's three kernels (pointers into it
 * stay valid while the struct lives). */
struct launch_args {
    const uint32_t *prime, *inv, *pmod, *smod, *minv;
    unsigned n_small, n_all;
    uint32_t p;
    const launch_desc *desc;
    uint32_t *start, *bits, *cand, *counts, *found, *found_count;
    void *prepare[9], *segments[9], *exponentiate[6];
};

static void fill_args(const cuda_tf *tf, const set_buffers *b, const launch_desc *desc, uint32_t *area,
                      launch_args *a)
{
    *a = launch_args{tf->d_prime, tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv, tf->n_small, tf->n_all,
                     tf->exponent, desc, b->start, b->bits, b->cand, area, area + 2, area + 1, {}, {}, {}};
    void *prepare[] = {&a->prime, &a->inv, &a->pmod, &a->n_small, &a->n_all, &a->desc, &a->start, &a->bits,
                       &a->counts};
    void *segments[] = {&a->prime, &a->start, &a->smod, &a->minv, &a->n_small, &a->desc, &a->bits, &a->cand,
                        &a->counts};
    void *exponentiate[] = {&a->cand, &a->counts, &a->p, &a->desc, &a->found, &a->found_count};
    memcpy(a->prepare, prepare, sizeof prepare);
    memcpy(a->segments, segments, sizeof segments);
    memcpy(a->exponentiate, exponentiate, sizeof exponentiate);
}

static cudaKernelNodeParams prepare_params(const cuda_tf *tf, launch_args *a)
{
    return cudaKernelNodeParams{(void *)tf_sieve_prepare, dim3(tf->prep_blocks), dim3(kPrepThreads), 0,
                                a->prepare, nullptr};
}

/* count: the launch's indices (a graph's node is sized for a full launch). */
static cudaKernelNodeParams segments_params(const cuda_tf *tf, launch_args *a, uint32_t count)
{
    const uint32_t seg_bits = 1u << tf->seg_log;
    return cudaKernelNodeParams{(void *)segments_kernel(tf), dim3((count + seg_bits - 1) / seg_bits),
                                dim3(kSieveThreads), 0, a->segments, nullptr};
}

static cudaKernelNodeParams exp_params(const cuda_tf *tf, launch_args *a)
{
    return cudaKernelNodeParams{(void *)exp_kernel(tf), dim3(tf->exp_blocks), dim3(kExpThreads), 0,
                                a->exponentiate, nullptr};
}

static cudaError_t set_priority(cudaGraphNode_t node, int priority)
{
    cudaLaunchAttributeValue v;
    memset(&v, 0, sizeof v);
    v.priority = priority;
    return cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributePriority, &v);
}

static cudaMemsetParams memset_params(void *dst, unsigned value, unsigned element_size, size_t width)
{
    cudaMemsetParams p{};
    p.dst = dst;
    p.value = value;
    p.elementSize = element_size;
    p.width = width;
    p.height = 1;
    return p;
}

/* Builds the graph of device launch i of slot k (in set i % kSets): set
 * the bits, the two sieve kernels (the preparation clears the area's
 * counters), mark "sieved", the exponentiation; every parameter fixed.
 * The host's cost of a graph launch grows with its nodes: 4 for 6 nodes
 * cut the steady host CPU by a fifth, but the bits must stay a memset right
 * before the preparation (set back by the segments kernel instead, they
 * left the L2 before the preparation's atomics: 5.5% slower). */
static cudaError_t build_graph(cuda_tf *tf, unsigned k, unsigned i)
{
    batch_slot *sl = &tf->slot[k];
    set_buffers *b = &tf->set[i % kSets];
    uint32_t *area = sl->areas + i * kResultWords;
    const uint32_t full = full_launch(tf);
    launch_args a;
    fill_args(tf, b, sl->desc + i, area, &a);
    const cudaMemsetParams bits = memset_params(b->bits, 0xFF, 1, full / 8);
    const cudaKernelNodeParams prep = prepare_params(tf, &a), seg = segments_params(tf, &a, full),
                               exp = exp_params(tf, &a);
    cudaGraph_t g;
    cudaError_t err = cudaGraphCreate(&g, 0);
    if (err != cudaSuccess)
        return err;
    sl->graph[i] = g;
    cudaGraphNode_t clear, prepare, segments, exponentiate, sieved;
    if ((err = cudaGraphAddMemsetNode(&clear, g, nullptr, 0, &bits)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&prepare, g, &clear, 1, &prep)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&segments, g, &prepare, 1, &seg)) != cudaSuccess ||
        (err = cudaGraphAddEventRecordNode(&sieved, g, &segments, 1, b->sieved)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&exponentiate, g, &segments, 1, &exp)) != cudaSuccess ||
        (err = set_priority(prepare, tf->prio_high)) != cudaSuccess ||
        (err = set_priority(segments, tf->prio_high)) != cudaSuccess ||
        (err = set_priority(exponentiate, tf->prio_low)) != cudaSuccess ||
        (err = cudaGraphInstantiate(&sl->exec[i], g, 0)) != cudaSuccess)
        return err;
    return cudaSuccess;
}

/* A launch's sieve starts once the previous launch (in the other set) has
 * sieved: the sieves then run beside exponentiations. Without it, two
 * deep queues drift into step, sieve beside sieve and multiplies beside
 * multiplies (measured: 2% slower). */
static cudaError_t stagger(cuda_tf *tf, unsigned si)
{
    const unsigned previous = (si + kSets - 1) % kSets;
    return cudaStreamWaitEvent(tf->set[si].stream, tf->set[previous].sieved, 0);
}

/* A launch queued call by call (profiling, or graphs off). */
static cudaError_t launch_calls(cuda_tf *tf, unsigned si, const launch_desc *desc, uint32_t count, uint32_t *area)
{
    set_buffers *b = &tf->set[si];
    cudaStream_t st = b->stream, xs = b->exp_stream;
    launch_args a;
    fill_args(tf, b, desc, area, &a);
    const cudaKernelNodeParams prep = prepare_params(tf, &a), seg = segments_params(tf, &a, count),
                               exp = exp_params(tf, &a);
    cudaError_t err;
    if (tf->profile) { /* one launch at a time, so the stage times are its own */
        const unsigned other = (si + kSets - 1) % kSets;
        if ((err = cudaStreamWaitEvent(st, tf->set[other].finished, 0)) != cudaSuccess)
            return err;
    } else if ((err = stagger(tf, si)) != cudaSuccess) {
        return err;
    }
    const uint32_t seg_bits = 1u << tf->seg_log;
    const unsigned segments = (count + seg_bits - 1) / seg_bits;
    if ((err = cudaMemsetAsync(b->bits, 0xFF, (size_t)segments * seg_bits / 8, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][0], st);
    if ((err = cudaLaunchKernel(prep.func, prep.gridDim, prep.blockDim, prep.kernelParams, 0, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][1], st);
    if ((err = cudaLaunchKernel(seg.func, seg.gridDim, seg.blockDim, seg.kernelParams, 0, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][2], st);
    if ((err = cudaEventRecord(b->sieved, st)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(xs, b->sieved, 0)) != cudaSuccess ||
        (err = cudaLaunchKernel(exp.func, exp.gridDim, exp.blockDim, exp.kernelParams, 0, xs)) != cudaSuccess)
        return err;
    if (tf->profile) {
        cudaEventRecord(tf->ev[si][3], xs);
        tf->ev_pending[si] = true;
    }
    /* Join the exponentiation back into the set's stream: whatever comes
     * next on it follows this whole launch. */
    if ((err = cudaEventRecord(b->finished, xs)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(st, b->finished, 0)) != cudaSuccess)
        return err;
    return cudaSuccess;
}

/* A launch through its fixed graph: the stagger and one graph launch. */
static cudaError_t launch_graph(cuda_tf *tf, unsigned k, unsigned i)
{
    batch_slot *sl = &tf->slot[k];
    const unsigned si = i % kSets;
    cudaError_t err;
    if (sl->exec[i] == nullptr && (err = build_graph(tf, k, i)) != cudaSuccess) {
        drop_graphs(tf, sl);
        return err;
    }
    if ((err = stagger(tf, si)) != cudaSuccess)
        return err;
    return cudaGraphLaunch(sl->exec[i], tf->set[si].stream);
}

/* A batch of launches: the descriptors' copy goes first on the first
 * set's stream (the other set's first sieve waits for this one's, so it
 * follows the copy too), the results' copy and the event last. With
 * graphs, a batch's launch i is in set i % kSets; call by call, the sets
 * alternate across batches. */
static cudaError_t launch_batch(cuda_tf *tf, unsigned k)
{
    batch_slot *sl = &tf->slot[k];
    const bool graphs = tf->graphs && !tf->profile;
    if (graphs)
        tf->next_set = 0;
    cudaError_t err = cudaMemcpyAsync(sl->desc, sl->h_desc, sl->launches * sizeof(launch_desc),
                                      cudaMemcpyHostToDevice, tf->set[tf->next_set].stream);
    unsigned last = 0;
    for (unsigned i = 0; i < sl->launches && err == cudaSuccess; i++) {
        last = tf->next_set;
        tf->next_set = (tf->next_set + 1) % kSets;
        err = graphs ? launch_graph(tf, k, i)
                     : launch_calls(tf, last, sl->desc + i, sl->h_desc[i].count, sl->areas + i * kResultWords);
    }
    /* The batch's end: the last launch's stream waits for the other set's
     * stream (its launches may finish later), then the event. */
    if (err == cudaSuccess && sl->launches > 1) {
        const unsigned other = (last + kSets - 1) % kSets;
        if ((err = cudaEventRecord(sl->join, tf->set[other].stream)) == cudaSuccess)
            err = cudaStreamWaitEvent(tf->set[last].stream, sl->join, 0);
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(sl->host, sl->areas, sl->launches * kResultWords * sizeof(uint32_t),
                              cudaMemcpyDeviceToHost, tf->set[last].stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(sl->done, tf->set[last].stream);
    return err;
}

/* Adds a finished profiled launch's stage times. */
static void profile_collect(cuda_tf *tf, unsigned si, const uint32_t *host, uint32_t count)
{
    if (!tf->ev_pending[si])
        return;
    tf->ev_pending[si] = false;
    for (int i = 0; i < 3; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, tf->ev[si][i], tf->ev[si][i + 1]) == cudaSuccess)
            tf->stage_ms[i] += ms;
    }
    tf->launches++;
    tf->indices += count;
    tf->survivors += host[0];
}

extern "C" cudaError_t cuda_tf_enqueue(cuda_tf *tf, uint64_t n0, uint32_t count)
{
    if (tf->queued == kDepth)
        return cudaErrorNotReady;
    if (count == 0 || count > cuda_tf_launch_size(tf) || tf->exponent == 0)
        return cudaErrorInvalidValue;
    const unsigned k = (tf->head + tf->queued) % kDepth;
    batch_slot *sl = &tf->slot[k];
    const uint32_t full = full_launch(tf);
    sl->n0 = n0;
    sl->count = count;
    sl->launches = (count + full - 1) / full;
    sl->first_set = tf->next_set;
    /* The slot's previous batch is finished (cuda_tf_finish waited for it),
     * so nothing reads these any more. */
    for (unsigned i = 0; i < sl->launches; i++) {
        const uint32_t n = i + 1 < sl->launches ? full : count - i * full;
        sl->h_desc[i] = launch_desc{n0 + (uint64_t)i * full, n, tf->job.class_index,
                                    lode_tf_report_mask_lo(&tf->job), lode_tf_report_mask_hi(&tf->job)};
    }
    const cudaError_t err = launch_batch(tf, k);
    if (err != cudaSuccess)
        return err;
    tf->queued++;
    return cudaSuccess;
}

extern "C" cudaError_t cuda_tf_finish(cuda_tf *tf, uint64_t *n0, uint32_t *count, const uint32_t **found,
                                      uint32_t *found_count, bool *overflow)
{
    if (tf->queued == 0)
        return cudaErrorNotReady;
    batch_slot *sl = &tf->slot[tf->head];
    tf->head = (tf->head + 1) % kDepth;
    tf->queued--;
    cudaError_t err = cudaEventSynchronize(sl->done);
    if (err != cudaSuccess)
        return err;
    const uint32_t full = full_launch(tf);
    uint32_t n = 0;
    *overflow = false;
    for (unsigned i = 0; i < sl->launches; i++) {
        const uint32_t *r = sl->host + i * kResultWords;
        if (tf->profile) /* batches of one launch, in set first_set */
            profile_collect(tf, sl->first_set, r, sl->count);
        if (r[1] > LODE_TF_FOUND_CAP)
            *overflow = true;
        const uint32_t k = r[1] > LODE_TF_FOUND_CAP ? LODE_TF_FOUND_CAP : r[1];
        for (uint32_t j = 0; j < k; j++)
            sl->found[n++] = r[2 + j] + i * full;
    }
    *n0 = sl->n0;
    *count = sl->count;
    *found = sl->found;
    *found_count = n;
    return cudaSuccess;
}

extern "C" void cuda_tf_discard(cuda_tf *tf)
{
    sync_all(tf);
    for (unsigned s = 0; s < kSets; s++)
        tf->ev_pending[s] = false;
    tf->queued = 0;
}
