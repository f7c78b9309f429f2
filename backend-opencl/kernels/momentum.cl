/* Momentum (see backend-cuda/momentum_kernel.cu for the method): SHA-512 of
 * each nonce base, birthdays counted in 2-bit saturating counters with
 * atomic_or, a keep pass, then filter rounds over the survivors in a small
 * table. Survivors are appended through one global atomic per work-group.
 * NBASES (2^23) and the entry layout (ulong2: birthday, nonce) are fixed. */
#define NBASES (1u << 23)

__constant ulong mom_k[80] = {
    0x428a2f98d728ae22UL, 0x7137449123ef65cdUL, 0xb5c0fbcfec4d3b2fUL, 0xe9b5dba58189dbbcUL,
    0x3956c25bf348b538UL, 0x59f111f1b605d019UL, 0x923f82a4af194f9bUL, 0xab1c5ed5da6d8118UL,
    0xd807aa98a3030242UL, 0x12835b0145706fbeUL, 0x243185be4ee4b28cUL, 0x550c7dc3d5ffb4e2UL,
    0x72be5d74f27b896fUL, 0x80deb1fe3b1696b1UL, 0x9bdc06a725c71235UL, 0xc19bf174cf692694UL,
    0xe49b69c19ef14ad2UL, 0xefbe4786384f25e3UL, 0x0fc19dc68b8cd5b5UL, 0x240ca1cc77ac9c65UL,
    0x2de92c6f592b0275UL, 0x4a7484aa6ea6e483UL, 0x5cb0a9dcbd41fbd4UL, 0x76f988da831153b5UL,
    0x983e5152ee66dfabUL, 0xa831c66d2db43210UL, 0xb00327c898fb213fUL, 0xbf597fc7beef0ee4UL,
    0xc6e00bf33da88fc2UL, 0xd5a79147930aa725UL, 0x06ca6351e003826fUL, 0x142929670a0e6e70UL,
    0x27b70a8546d22ffcUL, 0x2e1b21385c26c926UL, 0x4d2c6dfc5ac42aedUL, 0x53380d139d95b3dfUL,
    0x650a73548baf63deUL, 0x766a0abb3c77b2a8UL, 0x81c2c92e47edaee6UL, 0x92722c851482353bUL,
    0xa2bfe8a14cf10364UL, 0xa81a664bbc423001UL, 0xc24b8b70d0f89791UL, 0xc76c51a30654be30UL,
    0xd192e819d6ef5218UL, 0xd69906245565a910UL, 0xf40e35855771202aUL, 0x106aa07032bbd1b8UL,
    0x19a4c116b8d2d0c8UL, 0x1e376c085141ab53UL, 0x2748774cdf8eeb99UL, 0x34b0bcb5e19b48a8UL,
    0x391c0cb3c5c95a63UL, 0x4ed8aa4ae3418acbUL, 0x5b9cca4f7763e373UL, 0x682e6ff3d6b2b8a3UL,
    0x748f82ee5defb2fcUL, 0x78a5636f43172f60UL, 0x84c87814a1f0ab72UL, 0x8cc702081a6439ecUL,
    0x90befffa23631e28UL, 0xa4506cebde82bde9UL, 0xbef9a3f7b2c67915UL, 0xc67178f2e372532bUL,
    0xca273eceea26619cUL, 0xd186b8c721c0c207UL, 0xeada7dd6cde0eb1eUL, 0xf57d4f7fee6ed178UL,
    0x06f067aa72176fbaUL, 0x0a637dc5a2c898a6UL, 0x113f9804bef90daeUL, 0x1b710b35131c471bUL,
    0x28db77f523047d84UL, 0x32caab7b40c72493UL, 0x3c9ebe0a15c9bebcUL, 0x431d67c49c100d4cUL,
    0x4cc5d4becb3e42b6UL, 0x597f299cfc657e2aUL, 0x5fcb6fab3ad6faecUL, 0x6c44198c4a475817UL,
};

#define ROTR(x, n) rotate((x), (ulong)(64 - (n)))

static inline ulong bswap64(ulong x)
{
    return as_ulong(as_uchar8(x).s76543210);
}

static inline void birthdays8(ulong w0_low, ulong w1, ulong w2, ulong w3, ulong w4, uint base, ulong *out)
{
    ulong w[16];
    w[0] = (ulong)(as_uint(as_uchar4(base).s3210)) << 32 | w0_low;
    w[1] = w1;
    w[2] = w2;
    w[3] = w3;
    w[4] = w4;
#pragma unroll
    for (int t = 5; t < 15; t++)
        w[t] = 0;
    w[15] = 288;
    const ulong iv0 = 0x6a09e667f3bcc908UL, iv1 = 0xbb67ae8584caa73bUL, iv2 = 0x3c6ef372fe94f82bUL,
                iv3 = 0xa54ff53a5f1d36f1UL, iv4 = 0x510e527fade682d1UL, iv5 = 0x9b05688c2b3e6c1fUL,
                iv6 = 0x1f83d9abfb41bd6bUL, iv7 = 0x5be0cd19137e2179UL;
    ulong a = iv0, b = iv1, c = iv2, d = iv3, e = iv4, f = iv5, g = iv6, h = iv7;
#pragma unroll
    for (int t = 0; t < 80; t++) {
        if (t >= 16) {
            const ulong x = w[(t + 1) & 15], y = w[(t + 14) & 15];
            w[t & 15] += (ROTR(x, 1) ^ ROTR(x, 8) ^ (x >> 7)) + w[(t + 9) & 15] +
                         (ROTR(y, 19) ^ ROTR(y, 61) ^ (y >> 6));
        }
        const ulong t1 = h + (ROTR(e, 14) ^ ROTR(e, 18) ^ ROTR(e, 41)) + bitselect(g, f, e) + mom_k[t] + w[t & 15];
        const ulong t2 = (ROTR(a, 28) ^ ROTR(a, 34) ^ ROTR(a, 39)) + ((a & b) | (c & (a | b)));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    out[0] = bswap64(a + iv0) >> 14;
    out[1] = bswap64(b + iv1) >> 14;
    out[2] = bswap64(c + iv2) >> 14;
    out[3] = bswap64(d + iv3) >> 14;
    out[4] = bswap64(e + iv4) >> 14;
    out[5] = bswap64(f + iv5) >> 14;
    out[6] = bswap64(g + iv6) >> 14;
    out[7] = bswap64(h + iv7) >> 14;
}

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

/* Every work-item of the group calls it (it has barriers). */
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
        out[*l_base + mine] = (ulong2)(bd, (ulong)nonce);
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
    birthdays8(w0_low, w1, w2, w3, w4, t * 8, bd);
#pragma unroll
    for (int j = 0; j < 8; j++)
        B[(size_t)j * NBASES + t] = bd[j];
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
    append(counted_twice(table, bd, mixer, shift), bd, (i & (NBASES - 1)) * 8 + (i >> 23), out, count,
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

/* ---- bucket method (the default; see momentum_kernel.cu): birthdays
 * appended to 2^14 buckets by their top 14 bits as (36 low bits << 26 |
 * nonce); one work-group per bucket filters them in local memory and
 * pairs the survivors exactly. */
#define BK_RBITS 36
#define BK_TAB_BITS 17
#define BK_TAB_WORDS (1u << (BK_TAB_BITS - 4))
#define BK_SURV 1024u
#define BK_OUT_CAP (1u << 20)

__kernel void mom_hash_bucket(ulong w0_low, ulong w1, ulong w2, ulong w3, ulong w4, __global ulong *store,
                              __global uint *bcount, uint cap)
{
    const uint t = (uint)get_global_id(0);
    ulong bd[8];
    birthdays8(w0_low, w1, w2, w3, w4, t * 8, bd);
    uint slot[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        slot[j] = atomic_inc(&bcount[bd[j] >> BK_RBITS]);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (slot[j] < cap)
            store[(size_t)(bd[j] >> BK_RBITS) * cap + slot[j]] =
                (bd[j] & ((1UL << BK_RBITS) - 1)) << 26 | (ulong)(t * 8 + j);
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
 * a bucket or a local list overflowed (the sweep must be redone). */
__kernel void mom_bucket_find(__global const ulong *store, __global const uint *bcount, uint cap,
                              __global ulong2 *out, __global uint *flags)
{
    __local uint4 tab4[BK_TAB_WORDS / 4];
    __local ulong surv[BK_SURV];
    __local uint nsurv;
    __local uint *tab = (__local uint *)tab4;
    const uint b = (uint)get_group_id(0), n = bcount[b];
    const uint lid = (uint)get_local_id(0), ls = (uint)get_local_size(0);
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
            if (o < BK_OUT_CAP)
                out[o] = (ulong2)((ulong)b << BK_RBITS | r, v & ((1UL << 26) - 1));
            else
                atomic_or(&flags[1], 4u);
        }
    }
}
