/* Mersenne trial factoring kernels and their launch wrappers (tf_kernels.h
 * has the pipeline, cuda_tf.c runs it; core/base/tf_ref.h has the math).
 *
 * Index bits: bit j of a launch stands for n = n0 + j. A sieve prime r
 * divides q(n) exactly when n = root (mod r), root = -q(0) / q_step mod r;
 * "start" is the first such bit of the launch, (root - n0) mod r. */
#include "backend-cuda/tf_kernels.h"
#include "core/backend_support/kernels/tf_mont.h"
#include "core/backend_support/kernels/tf_sieve.h"

#include <stddef.h>

namespace {

constexpr unsigned kSieveThreads = CUDA_TF_SIEVE_THREADS;
constexpr unsigned kPrepThreads = CUDA_TF_PREP_THREADS;
constexpr unsigned kExpThreads = CUDA_TF_EXP_THREADS;
/* CUDA_TF_EXP_BOUND_BLOCKS is the launch bound of the one-candidate kernels
 * for q < 2^78 and q < 2^96 where an SM holds 2 048 threads (sm_80, sm_90):
 * 32 registers, so that 8 blocks of 256 would fit. The grid is smaller
 * (CUDA_TF_EXP_BLOCKS_PER_SM, 5 an SM): its blocks stay resident for the
 * whole launch, and the room they leave lets the other set's sieve kernels
 * (tf_sieve_prepare, tf_sieve_segments) run beside them instead of after.
 * The spills the bound costs lie outside the q < 2^78 kernel's squaring
 * loop. The q < 2^92 kernel gains too little from the bound for the board
 * power it costs, so it keeps its registers (docs/PERFORMANCE.md has the
 * figures). Other chips hold fewer threads, and two or four candidates a
 * thread (LODE_TF_INTERLEAVE; 2 is the default below 2^92) spill at 32: no
 * bound (0) for those. The sm_90 PTX carries the bound to chips that
 * compile it at run time (sm_100 takes it, unmeasured; those that cannot
 * hold that many blocks ignore it). */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)
#define TF_EXP_MIN_BLOCKS CUDA_TF_EXP_BOUND_BLOCKS
#else
#define TF_EXP_MIN_BLOCKS 0
#endif
/* Factor bounds of the exponentiation's instantiations (QBITS, see
 * mont_sqr): below 2^92 values stay lazy (< 4q), below 2^78 also a2^2 fits
 * one word; 96 is the fully reduced kernel. */
constexpr int kLazyBits = 92, kNarrowBits = 78, kFullBits = 96;

/* cuda_tf_launch_desc (tf_kernels.h), under the name the kernels' symbols
 * have always carried. */
struct launch_desc {
    uint64_t n0;          /* the launch's first index */
    uint32_t count;       /* indices n0 .. n0 + count - 1 */
    uint32_t class_index; /* c of k = c + 4620 n */
    /* The report masks of the job (lode_tf_report_mask_lo, _hi). */
    uint64_t mask_lo;
    uint32_t mask_hi;
};
static_assert(sizeof(launch_desc) == sizeof(cuda_tf_launch_desc) &&
                  offsetof(launch_desc, count) == offsetof(cuda_tf_launch_desc, count) &&
                  offsetof(launch_desc, class_index) == offsetof(cuda_tf_launch_desc, class_index) &&
                  offsetof(launch_desc, mask_lo) == offsetof(cuda_tf_launch_desc, mask_lo) &&
                  offsetof(launch_desc, mask_hi) == offsetof(cuda_tf_launch_desc, mask_hi),
              "one descriptor layout");
static_assert(CUDA_TF_MIN_SIEVE_PRIMES == TF_PATTERN_PRIMES + 1, "the pattern primes and one more");

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
 * its blocks fit beside a running exponentiation (5 blocks of 256 at 32
 * registers leave room for one 128-thread block and a segment's block per
 * SM), so this stage runs under the previous launch's multiplies instead of
 * after them; its cost is L2 atomic throughput, not SM time. */
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

/* The segment's small primes: thread t owns words t, t + T, ... of sm;
 * for each prime the bit position within the next word moves by a
 * constant. */
template <unsigned kWordsPerThread>
__device__ __forceinline__ void segment_small_primes(const uint32_t *__restrict__ start, uint32_t seg0,
                                                     unsigned t, uint32_t *sm)
{
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
}

/* Middle primes (61 < r < the segment's bits): a thread per prime, loaded
 * one ahead (segment_prime_at). */
__device__ __forceinline__ void segment_middle_primes(const uint32_t *__restrict__ prime,
                                                      const uint32_t *__restrict__ start,
                                                      const uint32_t *__restrict__ smod,
                                                      const uint32_t *__restrict__ minv, unsigned n_small,
                                                      unsigned b, unsigned t, uint32_t seg_bits, uint32_t *sm)
{
    unsigned i = TF_PATTERN_PRIMES + t;
    for (segment_prime cur = segment_prime_at(prime, smod, minv, start, i, n_small); i < n_small;) {
        const segment_prime next = segment_prime_at(prime, smod, minv, start, i + kSieveThreads, n_small);
        const uint32_t r = cur.r, st = cur.start;
        uint32_t x = b * cur.smod; /* b * segment bits mod r, reduced below */
        uint32_t rem = x - __umulhi(x, cur.minv) * r;
        rem = rem >= r ? rem - r : rem;
        for (uint32_t o = st >= rem ? st - rem : st + r - rem; o < seg_bits; o += r)
            atomicAnd(&sm[o >> 5], ~(1u << (o & 31)));
        i += kSieveThreads, cur = next;
    }
}

/* Survivors: AND the large primes' bits (words t, t + T, ...: coalesced
 * reads, conflict-free banks) and keep the result in sm; returns the
 * thread's count of them. */
template <unsigned kWordsPerThread>
__device__ __forceinline__ unsigned segment_survivors(const uint32_t *__restrict__ bits, uint32_t seg0,
                                                      uint32_t seg_bits, unsigned t, uint32_t *sm)
{
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
    return n;
}

/* Each round every lane with survivors left writes one, at consecutive
 * places across the warp from pos (the exponentiation takes them in any
 * order): whole lines instead of a sector per lane. */
template <unsigned kWordsPerThread>
__device__ __forceinline__ void segment_append(const uint32_t *sm, uint32_t seg0, unsigned t, unsigned lane,
                                               uint32_t pos, uint32_t *__restrict__ cand)
{
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

    segment_small_primes<kWordsPerThread>(start, seg0, t, sm);
    __syncthreads();
    segment_middle_primes(prime, start, smod, minv, n_small, b, t, seg_bits, sm);
    __syncthreads();
    unsigned n = segment_survivors<kWordsPerThread>(bits, seg0, seg_bits, t, sm);
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
    segment_append<kWordsPerThread>(sm, seg0, t, lane, block_base + warp_total[warp], cand);
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

/* one = R mod q and start = 2^y R mod q (y < 32): for 2^64 <= q < 2^94
 * from double estimates (tf_mont_init_fp64), other q by the slow exact
 * division. */
__device__ __forceinline__ void mont_init(u96 q, uint32_t y, u96 *one, u96 *start)
{
    if (q.w2 != 0 && q.w2 < (1u << 30)) {
        tf_mont_init_fp64(q, y, one, start);
        return;
    }
    const u128 q128 = to128(q), r = ((u128)1 << 96) % q128;
    *one = from128(r);
    *start = from128((r << y) % q128); /* r < 2^95, y < 32: no overflow */
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
        u96 q[N], v[N], one[N];
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
            mont_init(q[j], y, &one[j], &v[j]);
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
            u96 r = v[j];
            if (LAZY)
                r = tf_reduce_below_4q(r, q[j]);
            const uint64_t diff_lo = ((uint64_t)(r.w1 ^ one[j].w1) << 32 | (r.w0 ^ one[j].w0)) & mask_lo;
            if (valid[j] && diff_lo == 0 && ((r.w2 ^ one[j].w2) & mask_hi) == 0) {
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

/* ---- launch wrappers ------------------------------------------------------- */

/* The exponentiation kernel of the job's bit size and the interleave. */
template <int N>
const void *exp_kernel_n(unsigned bit_max)
{
    if (bit_max <= kNarrowBits)
        return (const void *)tf_exponentiate<kNarrowBits, N>;
    if (bit_max <= kLazyBits)
        return (const void *)tf_exponentiate<kLazyBits, N>;
    return (const void *)tf_exponentiate<kFullBits, N>;
}

} /* namespace */

extern "C" const void *cuda_tf_prepare_kernel(void) { return (const void *)tf_sieve_prepare; }

extern "C" const void *cuda_tf_segments_kernel(unsigned seg_log)
{
    switch (seg_log) {
    case 16: return (const void *)tf_sieve_segments<1u << 16>;
    case 17: return (const void *)tf_sieve_segments<1u << 17>;
    default: return (const void *)tf_sieve_segments<1u << 18>;
    }
}

extern "C" const void *cuda_tf_exp_kernel(unsigned interleave, unsigned bit_max)
{
    if (interleave == 0)
        interleave = bit_max <= kLazyBits ? CUDA_TF_INTERLEAVE_LAZY : CUDA_TF_INTERLEAVE_FULL;
    switch (interleave) {
    case 4: return exp_kernel_n<4>(bit_max);
    case 2: return exp_kernel_n<2>(bit_max);
    default: return exp_kernel_n<1>(bit_max);
    }
}

extern "C" cudaError_t cuda_tf_build_tables(const uint32_t *primes, unsigned count, unsigned skip, uint32_t p,
                                            uint32_t seg, uint32_t *prime, uint32_t *inv, uint32_t *pmod,
                                            uint32_t *smod, uint32_t *minv, cudaStream_t stream)
{
    if (count > 0)
        tf_build_tables<<<(count + 255) / 256, 256, 0, stream>>>(primes, count, skip, p, seg, prime, inv, pmod,
                                                                  smod, minv);
    return cudaGetLastError();
}
