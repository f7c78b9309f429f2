/* Mersenne trial factoring in OpenCL C 1.2 (backend-opencl/ocl_tf.h has
 * the pipeline; core/base/tf_ref.h the math; the multiply is
 * core/backend_support/kernels/tf_mont.h, shared with CUDA). The same three stages as the CUDA
 * backend, written for any OpenCL device: a global-bitmap pass for the
 * large sieve primes, local-memory segments for the small and middle ones
 * with a work-group prefix sum, and a 3 x 32-bit Montgomery exponentiation
 * that reads the candidate count on the device.
 *
 * Bit j of a launch stands for n = n0 + j; prime r divides q(n) exactly when
 * n = root (mod r). */

#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/tf_mont.h"
#include "core/backend_support/kernels/tf_sieve.h"

/* A work-group sieves LODE_TF_OCL_SEG_BITS in local memory. */
#define SEG_WORDS (LODE_TF_OCL_SEG_BITS / 32u)
#define WORDS_PER_ITEM (SEG_WORDS / LODE_TF_OCL_SIEVE_LOCAL)
/* A sub-launch's results in the results buffer (area a at a * AREA_WORDS):
 * candidates, factors, then the factors' offsets (ocl_tf.c reads areas back
 * whole). */
#define AREA_WORDS (2u + LODE_TF_FOUND_CAP)

/* Sets words [0, get_global_size) of p to v (OpenCL 1.1 has no fill). */
__kernel void tf_fill(__global uint *p, uint v)
{
    p[get_global_id(0)] = v;
}

/* x^-1 mod r for gcd(x, r) = 1 (extended Euclid, as tf_inverse_mod on the
 * host): r < 2^31, so every remainder and coefficient fits a signed long. */
static inline uint inverse_mod(uint x, uint r)
{
    long t = 0, nt = 1, a = r, b = x % r;
    while (b != 0) {
        const long q = a / b;
        long tmp = t - q * nt;
        t = nt;
        nt = tmp;
        tmp = a - q * b;
        a = b;
        b = tmp;
    }
    return (uint)(t < 0 ? t + (long)r : t);
}

/* The sieve tables of exponent p, one work-item per entry: the formulas of
 * tf_sieve_tables_build (core/backend_support/tf_tables.c); entry i is
 * primes[i < skip ? i : i + 1] (tf_sieve_plan_of: p itself is skipped). */
__kernel void tf_tables(__global const uint *primes, uint count, uint skip, uint p, uint seg,
                        __global uint *tables, uint stride)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    const uint r = primes[i < skip ? i : i + 1];
    tables[LODE_TF_TABLE_PRIME * stride + i] = r;
    tables[LODE_TF_TABLE_PMOD * stride + i] = p % r;
    tables[LODE_TF_TABLE_INV * stride + i] = inverse_mod((uint)((2ul * p * 4620u) % r), r);
    tables[LODE_TF_TABLE_SMOD * stride + i] = seg % r;
    tables[LODE_TF_TABLE_MINV * stride + i] = 0xFFFFFFFFu / r;
}

/* A lane's buffer (ocl_tf.c) holds the small primes' starts (stride words),
 * the sub-launch's global sieve bits at bits_at and the candidate list at
 * cand_at. */

/* A sub-launch's sieve preparation of prime i: its first bit in the launch;
 * a prime from n_small on clears its multiples in the global bitmap at
 * once. */
static inline void prepare_prime(__global const uint *tables, uint stride, uint n_small, uint class_index, ulong n0,
                          uint count, __global uint *start, __global volatile uint *bits, uint i)
{
    const uint r = tables[LODE_TF_TABLE_PRIME * stride + i];
    const uint s = tf_sieve_first(r, tables[LODE_TF_TABLE_PMOD * stride + i], tables[LODE_TF_TABLE_INV * stride + i],
                                  class_index, n0);
    if (i < n_small)
        start[i] = s;
    else
        for (uint o = s; o < count; o += r)
            atomic_and(&bits[o >> 5], ~(1u << (o & 31)));
}

/* Zeroes the counters of area: tf_segments and tf_exponentiate of its
 * sub-launch run after the kernel that calls this (in order on the queue),
 * the last read of the area before. */
static inline void clear_area(__global uint *results, uint area)
{
    results[area * AREA_WORDS] = 0;
    results[area * AREA_WORDS + 1] = 0;
}

/* The preparation alone: the first sub-launch on a lane of each batch
 * (the others' runs inside the previous exponentiation on the lane). */
__kernel void tf_prepare(__global const uint *tables, uint stride, uint n_small, uint n_all, uint class_index,
                         ulong n0, uint count, __global uint *lane_buf, uint bits_at, __global uint *results, uint area)
{
    if (get_global_id(0) == 0)
        clear_area(results, area);
    for (uint i = get_global_id(0); i < n_all; i += get_global_size(0))
        prepare_prime(tables, stride, n_small, class_index, n0, count, lane_buf, lane_buf + bits_at, i);
}

/* A middle prime's constants; the segment loop loads the next prime's while
 * it clears this one's bits, so the global loads overlap the atomics instead
 * of stalling every prime. Past the end, all zero. */
typedef struct {
    uint r, smod, minv, start;
} segment_prime;

static inline segment_prime segment_prime_at(__global const uint *prime, __global const uint *smod,
                                      __global const uint *minv, __global const uint *start, uint i, uint n)
{
    segment_prime sp = {0, 0, 0, 0};
    if (i < n) {
        sp.r = prime[i];
        sp.smod = smod[i];
        sp.minv = minv[i];
        sp.start = start[i];
    }
    return sp;
}

/* Inclusive prefix sum of n over the work-group (Hillis-Steele) in sums. */
static inline void group_prefix_sum(__local uint *sums, uint t, uint n)
{
    sums[t] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < LODE_TF_OCL_SIEVE_LOCAL; d *= 2) {
        uint add = t >= d ? sums[t - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[t] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The item's survivors (its words of sm, n bits set) as offsets into cand,
 * the work-group's from base; sums is the group's prefix sum of n. */
static inline void segment_write_candidates(__global uint *cand, uint base, __local const uint *sums,
                                     __local const uint *sm, uint t, uint n, uint seg0)
{
#ifdef LODE_NV_PTX
    /* A warp's survivors go to consecutive places, one per lane with some
     * left each round (the exponentiation takes them in any order): whole
     * lines instead of a sector per item. */
    const uint lane = t & 31, first = t & ~31u;
    uint pos = base + (first == 0 ? 0 : sums[first - 1]);
    const uint below = (1u << lane) - 1;
    uint j = 0, v = sm[t];
    (void)n;
    for (;;) {
        while (v == 0 && j + 1 < WORDS_PER_ITEM)
            v = sm[t + ++j * LODE_TF_OCL_SIEVE_LOCAL];
        const uint active = lode_ballot(v);
        if (active == 0)
            break;
        if (v != 0) {
            const uint bit = 31 - clz(v & -v);
            v &= v - 1;
            cand[pos + popcount(active & below)] = seg0 + (t + j * LODE_TF_OCL_SIEVE_LOCAL) * 32 + bit;
        }
        pos += popcount(active);
    }
#else
    uint pos = base + sums[t] - n;
    for (uint j = 0; j < WORDS_PER_ITEM; j++) {
        uint v = sm[t + j * LODE_TF_OCL_SIEVE_LOCAL];
        while (v != 0) {
            uint bit = 31 - clz(v & -v);
            v &= v - 1;
            cand[pos++] = seg0 + (t + j * LODE_TF_OCL_SIEVE_LOCAL) * 32 + bit;
        }
    }
#endif
}

#ifdef LODE_KERNEL_AMD
/* The pattern primes' words of the segment into sm, word by word with the
 * 13 offsets in registers. tf_segments' prime-by-prime order over 32 words
 * took AMD's compiler to 256 VGPRs and spills; this order, 69 and none.
 * The word loop stays rolled: fully unrolled, PoCL's optimiser (LLVM 15)
 * built a kernel that cleared every bit; rolled, AMD still needs 69 VGPRs. */
static inline void pattern_words(__local uint *sm, __global const uint *start, uint t, uint seg0)
{
    uint off[TF_PATTERN_PRIMES]; /* prime k's first bit, relative to the word */
#pragma unroll
    for (uint k = 0; k < TF_PATTERN_PRIMES; k++) {
        const uint r = tf_pattern_prime(k);
        uint o = start[k] + r - seg0 % r; /* first multiple in the segment, in [0, 2r) */
        o = o >= r ? o - r : o;
        o += r - (32u * t) % r;
        off[k] = o >= r ? o - r : o;
    }
    for (uint j = 0; j < WORDS_PER_ITEM; j++) {
        uint word = 0xFFFFFFFFu;
#pragma unroll
        for (uint k = 0; k < TF_PATTERN_PRIMES; k++) {
            const uint r = tf_pattern_prime(k), d = (32u * LODE_TF_OCL_SIEVE_LOCAL) % r;
            word &= ~(uint)(tf_pattern_bits(r) << off[k]);
            off[k] = off[k] >= d ? off[k] - d : off[k] + r - d;
        }
        sm[t + j * LODE_TF_OCL_SIEVE_LOCAL] = word;
    }
}
#endif

/* One work-group per segment: pattern primes, middle primes with local
 * atomics, AND the global bits, then the survivors' offsets appended to cand
 * (one atomic_add per work-group). Every segment sets its words of the
 * global bits back to all ones once read (a launch of fewer segments leaves
 * the others untouched), so the next launch on this buffer needs no fill.
 *
 * sm is not volatile: atomics need no volatile, and barriers order the
 * other items' uses. With volatile (and the loops below unrolled), trial
 * factoring ran 2% slower on NVIDIA. The pattern primes are unrolled over
 * the constant primes, as CUDA's (tf_sieve.h): no loads of the primes, each
 * pattern and step folded. On the H200 it times the same as the rolled loop
 * over the table; it keeps one form for both backends. The survivors' loop
 * is unrolled, so all the item's loads are in flight at once: rolled, each
 * round waited for the memory in turn, and the kernel took 20-30% longer
 * (backend-opencl/probes/tf_segments_probe.c). Each item reads back only
 * its own words of sm. */
__kernel __attribute__((reqd_work_group_size(LODE_TF_OCL_SIEVE_LOCAL, 1, 1)))
void tf_segments(__global const uint *tables, uint stride, uint n_small, uint count, __global uint *lane_buf,
                 uint bits_at, uint cand_at, __global uint *results, uint area)
{
    __global const uint *prime = tables + LODE_TF_TABLE_PRIME * stride, *smod = tables + LODE_TF_TABLE_SMOD * stride;
    __global const uint *minv = tables + LODE_TF_TABLE_MINV * stride, *start = lane_buf;
    __global uint *bits = lane_buf + bits_at, *cand = lane_buf + cand_at;
    __global volatile uint *cand_count = results + area * AREA_WORDS;
    __local uint sm[SEG_WORDS];
    __local uint sums[LODE_TF_OCL_SIEVE_LOCAL];
    __local uint base;
    const uint t = get_local_id(0), b = get_group_id(0);
    const uint seg0 = b * LODE_TF_OCL_SEG_BITS;
    const uint seg_bits = count - seg0 < LODE_TF_OCL_SEG_BITS ? count - seg0 : LODE_TF_OCL_SEG_BITS;

#ifdef LODE_KERNEL_AMD
    pattern_words(sm, start, t, seg0);
#else
    uint w[WORDS_PER_ITEM];
#pragma unroll
    for (uint j = 0; j < WORDS_PER_ITEM; j++)
        w[j] = 0xFFFFFFFFu;
#pragma unroll
    for (uint i = 0; i < TF_PATTERN_PRIMES; i++) {
        const uint r = tf_pattern_prime(i);
        const ulong pat = tf_pattern_bits(r);
        const uint d = (32u * LODE_TF_OCL_SIEVE_LOCAL) % r;
        uint o = start[i] + r - seg0 % r; /* first multiple in the segment, in [0, 2r) */
        o = o >= r ? o - r : o;
        uint at = o + r - (32u * t) % r; /* relative to word t */
        at = at >= r ? at - r : at;
#pragma unroll
        for (uint j = 0; j < WORDS_PER_ITEM; j++) {
            w[j] &= ~(uint)(pat << at);
            at = at >= d ? at - d : at + r - d;
        }
    }
#pragma unroll
    for (uint j = 0; j < WORDS_PER_ITEM; j++)
        sm[t + j * LODE_TF_OCL_SIEVE_LOCAL] = w[j];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Middle primes, an item per prime, loaded one ahead. */
    uint i = TF_PATTERN_PRIMES + t;
    for (segment_prime cur = segment_prime_at(prime, smod, minv, start, i, n_small); i < n_small;) {
        const segment_prime next = segment_prime_at(prime, smod, minv, start, i + LODE_TF_OCL_SIEVE_LOCAL, n_small);
        const uint r = cur.r, st = cur.start;
        const uint x = b * cur.smod; /* b * LODE_TF_OCL_SEG_BITS mod r, reduced below */
        uint rem = x - mul_hi(x, cur.minv) * r;
        rem = rem >= r ? rem - r : rem;
        for (uint o = st >= rem ? st - rem : st + r - rem; o < seg_bits; o += r)
            atomic_and(&sm[o >> 5], ~(1u << (o & 31)));
        i += LODE_TF_OCL_SIEVE_LOCAL;
        cur = next;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Survivors: words t, t + L, ... (coalesced reads of the large primes'
     * bits), kept in local memory; unrolled (see above). */
    uint n = 0;
#pragma unroll
    for (uint j = 0; j < WORDS_PER_ITEM; j++) {
        const uint wi = t + j * LODE_TF_OCL_SIEVE_LOCAL;
        uint v = sm[wi] & bits[seg0 / 32 + wi];
        bits[seg0 / 32 + wi] = 0xFFFFFFFFu; /* only this work-item reads this word */
        const uint first = wi * 32;
        if (first >= seg_bits)
            v = 0;
        else if (seg_bits - first < 32)
            v &= (1u << (seg_bits - first)) - 1;
        sm[wi] = v;
        n += popcount(v);
    }
    group_prefix_sum(sums, t, n);
    if (t == LODE_TF_OCL_SIEVE_LOCAL - 1)
        base = atomic_add(cand_count, sums[t]);
    barrier(CLK_LOCAL_MEM_FENCE);
    segment_write_candidates(cand, base, sums, sm, t, n, seg0);
}

/* ---- 3 x 32-bit Montgomery arithmetic, R = 2^96 (tf_mont.h) ---- */

/* The exponentiation after its start: for each bit of p below the top 5, a
 * squaring, and a doubling where the bit is set. qbits bounds q (q <
 * 2^qbits) and is a constant where this is called, so each bound gets its
 * own loop (as CUDA's template): below 2^92 lazy (a doubling is a plain
 * shift, v < 2q after a squaring and v < 4q < 2^94 after a doubling, which
 * the squaring takes; the result below 4q), below 2^78 also the narrow
 * squaring (a < 2^80); above, every step reduced below q. NVIDIA: the CUDA
 * kernel's PTX. */
static inline u96 exp_steps(u96 v, u96 q, uint qinv, uint p, uint nbits, const uint qbits)
{
    for (int bit = (int)nbits - 6; bit >= 0; bit--) {
        const uint b = (p >> bit) & 1u;
#ifdef LODE_NV_PTX
        if (qbits <= 78) {
            v = u96_shl_ptx(tf_mont_sqr_ptx_narrow(v, q, qinv), b);
        } else if (qbits <= 92) {
            v = u96_shl_ptx(tf_mont_sqr_ptx(v, q, qinv), b);
        } else {
            v = tf_mont_sqr_ptx(v, q, qinv);
            u96_sub_if_ge_ptx(&v, q);
            if (b)
                v = u96_double_mod_ptx(v, q);
        }
#else
        if (qbits <= 92) {
            v = tf_mont_sqr_c(v, q, qinv);
            if (b)
                v = u96_shl1(v);
        } else {
            v = u96_sub_if_ge(tf_mont_sqr_c(v, q, qinv), q);
            if (b)
                v = u96_double_mod(v, q);
        }
#endif
    }
    return v;
}

/* Tests every candidate of the list (its length read here, on the device):
 * factors' offsets go to the area's list through an atomic counter. A
 * candidate is reported when the bits of v and one under the masks agree:
 * all set, v == one (a factor); with a proof, the low t bits only, C(p, q,
 * t) (core/base/tf_ref.h).
 *
 * The last prep_groups work-groups prepare the lane's next sub-launch
 * instead (next_n0, next_count, next_area; nothing when next_count is 0):
 * tf_segments of this one has read the lane's starts and bits already, and
 * the candidates' items read only the candidate list, so the two share
 * nothing: one enqueue fewer per sub-launch than a kernel of its own
 * (NVIDIA's OpenCL spends host CPU on each). Groups of their own because
 * the preparation's global atomics stall the warps that issue them: spread
 * over the multiplying items (a prime every few candidates), they cost
 * trial factoring about 7% on the H200 (92.5% of CUDA's rate against
 * 99.7%); placed first instead of last, so dispatched before the
 * candidates' groups, 7% as well (docs/PERFORMANCE.md). */
__kernel void tf_exponentiate(__global uint *lane_buf, uint cand_at, __global uint *results, uint area, uint p,
                              uint class_index, ulong n0, uint bit_max, ulong mask_lo, uint mask_hi,
                              __global const uint *tables, uint stride, uint n_small, uint n_all, uint bits_at,
                              ulong next_n0, uint next_count, uint next_area, uint prep_groups)
{
    const uint cand_groups = get_num_groups(0) - prep_groups;
    /* Group in [cand_groups, cand_groups + prep_groups): the same as
     * get_group_id(0) >= cand_groups, but with that test NVIDIA's compiler
     * puts the preparation's code ahead of the candidates' loop, and trial
     * factoring ran 5% slower on the H200 (the same registers, 32, and the
     * same loops; docs/PERFORMANCE.md). */
    if (get_group_id(0) - cand_groups < prep_groups) {
        const uint id = (get_group_id(0) - cand_groups) * get_local_size(0) + get_local_id(0);
        if (next_count > 0 && id == 0)
            clear_area(results, next_area);
        for (uint i = next_count > 0 ? id : n_all; i < n_all; i += prep_groups * get_local_size(0))
            prepare_prime(tables, stride, n_small, class_index, next_n0, next_count, lane_buf, lane_buf + bits_at, i);
        return;
    }
    __global const uint *cand = lane_buf + cand_at;
    __global volatile uint *counts = results + area * AREA_WORDS;
    __global uint *found = results + area * AREA_WORDS + 2;
    const uint total = counts[0]; /* counts[1]: factors found */
    const uint nbits = 32 - clz(p);
    const uint y = p >> (nbits - 5); /* the top 5 bits: start at 2^y */
    const uint items = cand_groups * get_local_size(0);
    for (uint i = get_global_id(0); i < total; i += items) {
        const uint off = cand[i];
        const ulong k = class_index + 4620ul * (n0 + off);
        if (k == 0)
            continue; /* q = 1 */
        /* q = 2pk + 1 in three words: 2p < 2^33, k < 2^64. */
        const ulong p2 = 2ul * p;
        const ulong klo = k & 0xFFFFFFFFul, khi = k >> 32;
        ulong c0 = klo * (p2 & 0xFFFFFFFFul) + 1;
        ulong c1 = (c0 >> 32) + klo * (p2 >> 32) + (khi * (p2 & 0xFFFFFFFFul) & 0xFFFFFFFFul);
        ulong c2 = (c1 >> 32) + (khi * (p2 & 0xFFFFFFFFul) >> 32) + khi * (p2 >> 32);
        u96 q = {(uint)c0, (uint)c1, (uint)c2};
        uint x = q.w0 * 3u ^ 2u; /* q^-1 mod 2^5, Newton to 2^40 */
        x *= 2u - q.w0 * x;
        x *= 2u - q.w0 * x;
        x *= 2u - q.w0 * x;
        const uint qinv = 0u - x;
        u96 one = {0, 0, 0}, v;
#ifdef cl_khr_fp64
        if (q.w2 != 0 && q.w2 < (1u << 30)) {
            tf_mont_init_fp64(q, y, &one, &v);
        } else
#endif
        {
            /* one = 2^96 mod q by doublings from the largest power of two
             * below q; start = 2^y one mod q the same way. */
            const uint qbits = q.w2 ? 64 + 32 - clz(q.w2) : q.w1 ? 32 + 32 - clz(q.w1) : 32 - clz(q.w0);
            const uint e = qbits - 1;
            if (e < 32)
                one.w0 = 1u << e;
            else if (e < 64)
                one.w1 = 1u << (e - 32);
            else
                one.w2 = 1u << (e - 64);
            for (uint s = e; s < 96; s++)
                one = u96_double_mod(one, q);
            v = one;
            for (uint s = 0; s < y; s++)
                v = u96_double_mod(v, q);
        }
        v = bit_max <= 78   ? exp_steps(v, q, qinv, p, nbits, 78)
            : bit_max <= 92 ? exp_steps(v, q, qinv, p, nbits, 92)
                            : exp_steps(v, q, qinv, p, nbits, 96);
        v = tf_reduce_below_4q(v, q);
        const ulong diff_lo = ((ulong)(v.w1 ^ one.w1) << 32 | (v.w0 ^ one.w0)) & mask_lo;
        if (diff_lo == 0 && ((v.w2 ^ one.w2) & mask_hi) == 0) {
            uint slot = atomic_inc(&counts[1]);
            if (slot < LODE_TF_FOUND_CAP)
                found[slot] = off;
        }
    }
}
