/* Momentum (see backend-cuda/momentum.cu for the method): SHA-512 of
 * each nonce base, birthdays counted in 2-bit saturating counters with
 * atomic_or, a keep pass, then filter rounds over the survivors in a small
 * table. Survivors are appended through one global atomic per work-group.
 * LODE_MOM_NBASES (2^23; smaller only in tests) and the entry layout
 * (ulong2: birthday, nonce) come from kernel_params.h. */
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/sha512.h"

static inline void count_bd(__global uint *table, ulong bd, ulong mixer, uint shift)
{
    const ulong idx = (bd * mixer) >> shift;
    const uint bit = 1u << ((uint)(idx & 15) * 2);
    const uint old = atomic_or(&table[idx >> 4], bit);
    if ((old & (bit * 3)) == bit)
        atomic_or(&table[idx >> 4], bit << 1);
}

static inline bool counted_twice(__global const uint *table, ulong bd, ulong mixer, uint shift)
{
    const ulong idx = (bd * mixer) >> shift;
    return (table[idx >> 4] >> ((uint)(idx & 15) * 2 + 1)) & 1;
}

/* Every work-item of the group calls it (it has barriers). Entries are
 * written with vstore2: a ulong2 assignment, as Oclgrind compiles it, first
 * stores an undefined vector, which its checks report. */
static inline void append(bool keep, ulong bd, uint nonce, __global ulong2 *out, __global uint *count,
                          __local uint *l_count, __local uint *l_base)
{
    if (get_local_id(0) == 0)
        *l_count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = keep ? atomic_inc(l_count) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0 && *l_count > 0)
        *l_base = atomic_add(count, *l_count);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (keep)
        vstore2((ulong2)(bd, (ulong)nonce), *l_base + mine, (__global ulong *)out);
}

__kernel void mom_clear(__global uint4 *p)
{
    p[get_global_id(0)] = (uint4)(0, 0, 0, 0);
}

__kernel void mom_hash(ulong w0_low, ulong w1, ulong w2, ulong w3, ulong w4, __global ulong *B,
                       __global uint *table, ulong mixer, uint shift)
{
    const uint t = (uint)get_global_id(0);
    ulong bd[8];
    momentum_birthdays8(w0_low, w1, w2, w3, w4, t * 8, bd); /* sha512.h */
#pragma unroll
    for (int j = 0; j < 8; j++)
        B[(size_t)j * LODE_MOM_NBASES + t] = bd[j];
#pragma unroll
    for (int j = 0; j < 8; j++)
        count_bd(table, bd[j], mixer, shift);
}

__kernel void mom_keep_all(__global const ulong *B, __global const uint *table, ulong mixer, uint shift,
                           __global ulong2 *out, __global uint *count)
{
    __local uint l_count, l_base;
    const uint i = (uint)get_global_id(0);
    const ulong bd = B[i];
    append(counted_twice(table, bd, mixer, shift), bd, (i % LODE_MOM_NBASES) * 8 + i / LODE_MOM_NBASES, out, count,
           &l_count, &l_base);
}

/* Round r reads counts[r - 1] survivors and appends to counts[r]. */
__kernel void mom_count_list(__global const ulong2 *in, __global const uint *counts, uint r,
                             __global uint *table, ulong mixer, uint shift)
{
    const uint n = counts[r - 1];
    for (uint i = (uint)get_global_id(0); i < n; i += (uint)get_global_size(0))
        count_bd(table, in[i].x, mixer, shift);
}

__kernel void mom_keep_list(__global const ulong2 *in, __global uint *counts, uint r,
                            __global const uint *table, ulong mixer, uint shift, __global ulong2 *out)
{
    __local uint l_count, l_base;
    const uint n = counts[r - 1];
    const uint ls = (uint)get_local_size(0);
    for (uint i0 = (uint)get_group_id(0) * ls; i0 < n; i0 += (uint)get_global_size(0)) {
        const uint i = i0 + (uint)get_local_id(0);
        const bool in_range = i < n;
        const ulong2 v = in_range ? in[i] : (ulong2)(0, 0);
        append(in_range && counted_twice(table, v.x, mixer, shift), v.x, (uint)v.y, out, &counts[r],
               &l_count, &l_base);
    }
}

/* ---- bucket method (the default; see backend-cuda/momentum.cu): birthdays
 * appended to 2^14 buckets by their top 14 bits as (36 low bits << 26 |
 * nonce); one work-group per bucket filters them in local memory and
 * pairs the survivors exactly.
 *
 * A sweep's results go to its area of the results buffer (ocl_momentum.c
 * reads a launch's areas back at once): one ulong2 of flags (uint 0: entries
 * out, uint 1: nonzero when the sweep must be redone), then out_cap
 * entries. The buffers clean themselves, so a sweep is just its two
 * kernels: mom_hash_bucket zeroes the area's flags (the last read of them
 * is queued before it, the kernel after it writes them) and mom_bucket_find
 * zeroes its bucket's counter once every work-item has read it. */
#define BK_TAB_BITS 17
#define BK_TAB_WORDS (1u << (BK_TAB_BITS - 4))
#define BK_SURV 1024u

__kernel void mom_hash_bucket(ulong w0_low, ulong w1, ulong w2, ulong w3, ulong w4, __global ulong *store,
                              __global uint *bcount, uint cap, __global ulong2 *results, uint area, uint out_cap)
{
    const uint t = (uint)get_global_id(0);
    if (t == 0)
        results[(size_t)area * (1 + out_cap)] = (ulong2)(0, 0);
    ulong bd[8];
    momentum_birthdays8(w0_low, w1, w2, w3, w4, t * 8, bd); /* sha512.h */
    uint slot[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        slot[j] = atomic_inc(&bcount[bd[j] >> LODE_MOM_BK_RBITS]);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (slot[j] < cap)
            store[(size_t)(bd[j] >> LODE_MOM_BK_RBITS) * cap + slot[j]] =
                (bd[j] & ((1UL << LODE_MOM_BK_RBITS) - 1)) << 26 | (ulong)(t * 8 + j);
}

static inline void lcount(__local uint *tab, uint idx)
{
    const uint bit = 1u << ((idx & 15) * 2);
    const uint old = atomic_or(&tab[idx >> 4], bit);
    if ((old & (bit * 3)) == bit)
        atomic_or(&tab[idx >> 4], bit << 1);
}

static inline bool ltwice(__local const uint *tab, uint idx)
{
    return (tab[idx >> 4] >> ((idx & 15) * 2 + 1)) & 1;
}

static inline void lclear(__local uint4 *tab)
{
    for (uint i = (uint)get_local_id(0); i < BK_TAB_WORDS / 4; i += (uint)get_local_size(0))
        tab[i] = (uint4)(0, 0, 0, 0);
}

/* One work-group per bucket. flags[0]: entries out; flags[1]: nonzero when
 * a bucket, a local list or the area's list overflowed (the sweep must be
 * redone). */
__kernel void mom_bucket_find(__global const ulong *store, __global uint *bcount, uint cap,
                              __global ulong2 *results, uint area, uint out_cap)
{
    __local uint4 tab4[BK_TAB_WORDS / 4];
    __local ulong surv[BK_SURV];
    __local uint nsurv;
    __local uint *tab = (__local uint *)tab4;
    __global uint *flags = (__global uint *)(results + (size_t)area * (1 + out_cap));
    __global ulong2 *out = results + (size_t)area * (1 + out_cap) + 1;
    const uint b = (uint)get_group_id(0), n = bcount[b];
    const uint lid = (uint)get_local_id(0), ls = (uint)get_local_size(0);
    barrier(CLK_GLOBAL_MEM_FENCE); /* every work-item has read the counter */
    if (lid == 0)
        bcount[b] = 0; /* clean for the next sweep */
    if (n > cap) {
        if (lid == 0)
            atomic_or(&flags[1], 1u);
        return;
    }
    __global const ulong *e = store + (size_t)b * cap;
    lclear(tab4);
    if (lid == 0)
        nsurv = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint mask = (1u << BK_TAB_BITS) - 1;
    for (uint i = lid; i < n; i += ls)
        lcount(tab, (uint)(e[i] >> 26) & mask);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < n; i += ls) {
        const ulong v = e[i];
        if (ltwice(tab, (uint)(v >> 26) & mask)) {
            const uint k = atomic_inc(&nsurv);
            if (k < BK_SURV)
                surv[k] = v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint k = nsurv;
    if (k > BK_SURV) {
        if (lid == 0)
            atomic_or(&flags[1], 2u);
        return;
    }
    lclear(tab4);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < k; i += ls)
        lcount(tab, (uint)(surv[i] >> (26 + BK_TAB_BITS)) & mask);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < k; i += ls) {
        const ulong v = surv[i];
        if (!ltwice(tab, (uint)(v >> (26 + BK_TAB_BITS)) & mask))
            continue;
        const ulong r = v >> 26;
        bool hit = false;
        for (uint j = 0; j < k && !hit; j++)
            hit = j != i && (surv[j] >> 26) == r;
        if (hit) {
            const uint o = atomic_inc(&flags[0]);
            if (o < out_cap)
                vstore2((ulong2)((ulong)b << LODE_MOM_BK_RBITS | r, v & ((1UL << 26) - 1)), o, (__global ulong *)out);
            else
                atomic_or(&flags[1], 4u);
        }
    }
}
