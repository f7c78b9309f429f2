/* scrypt(N=1024, r=1, p=1) nonce search, three kernels
 * per batch of hash slots:
 *
 *   pbkdf2_in   one work-item per hash: HMAC pads and
 *               PBKDF2-HMAC-SHA256(header, header, 1, 128) -> X
 *   romix_*     the two Salsa20/8 BlockMix passes over the scratchpad
 *   pbkdf2_out  one work-item per hash: PBKDF2-HMAC-SHA256(header, X, 1, 32),
 *               the exact 256-bit target comparison, the hit buffer
 *
 * Between them a slot's state (X, then the HMAC inner and outer states:
 * 48 words) stays in device memory.
 *
 * Build options (-D) chosen by the host per device and variant:
 *   LOOKUP_GAP  1, 2 or 4: only every LOOKUP_GAP-th scratchpad entry is
 *               stored; the second pass recomputes the others
 *   XCHG        how the four work-items of a hash trade words (romix_quad):
 *               1 local memory and barriers (any OpenCL 1.2 device),
 *               2 NVIDIA inline PTX shfl.sync (needs LODE_NV_PTX),
 *               3 cl_khr_subgroup_shuffle,
 *               4 cl_intel_subgroups; 0 builds romix_single instead, one
 *               work-item per hash (CPUs: no exchange, no barrier); 5
 *               builds romix_thread, a work-item per hash staged through
 *               local memory (GPUs)
 *   HASHES      hashes per group of four work-items (1 or 2), interleaved
 *               so one's latency hides behind the other's work
 *
 * romix_quad layout. A hash's four work-items (local ids 4k..4k+3) each own
 * one diagonal of the 4x4 Salsa matrix of both 64-byte halves: item t holds
 * x[5t], x[5t+4], x[5t+8], x[5t+12] (indices mod 16) as a uint4, so the
 * column round is item-local; an exchange rotates the b/c/d words so the
 * row round is item-local too, and the same exchange rotates them back.
 * Scratchpad entry e of slot s is pad[(e * slots + s) * 8 + ...] in uint4s:
 * the four items' X0 parts, then their X1 parts, so each access is 16 bytes
 * per item, coalesced over 64-byte runs. */

#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/hits.h"
#include "core/backend_support/kernels/pbkdf2.h"
#include "core/backend_support/kernels/salsa.h"

#ifndef LOOKUP_GAP
#define LOOKUP_GAP 1
#endif
#ifndef XCHG
#define XCHG 1
#endif
#ifndef HASHES
#define HASHES 1
#endif

/* Job parameters: __constant uint p[], LODE_SCRYPT_P_*; a slot's state:
 * LODE_SCRYPT_STATE_* (kernel_params.h). */

/* ---- PBKDF2-HMAC-SHA256 ------------------------------------------------ */

/* The HMAC pad states of the hash of nonce_be (pbkdf2.h). */
static inline void hmac_pads(__constant uint *p, uint nonce_be, uint *ipad, uint *opad)
{
    uint key[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        key[i] = p[LODE_SCRYPT_P_MID + i];
    pbkdf2_hmac_pads(key, p[LODE_SCRYPT_P_HEADER + 16], p[LODE_SCRYPT_P_HEADER + 17],
                     p[LODE_SCRYPT_P_HEADER + 18], nonce_be, ipad, opad);
}

/* Slots past the range's end hash nonces beyond it: their results are
 * never compared, and romix needs whole work-groups. */
__kernel void pbkdf2_in(__constant uint *p, uint start, uint slots, __global uint *state)
{
    const uint slot = (uint)get_global_id(0);
    if (slot >= slots)
        return;
    const uint nonce_be = lode_bswap32(start + slot);
    uint ipad[8], opad[8];
    hmac_pads(p, nonce_be, ipad, opad);

    /* Inner hash over ipad || header || INT(i): the header's first block is
     * shared by the four output blocks. */
    uint inner[8], m[16];
#pragma unroll
    for (int i = 0; i < 8; i++)
        inner[i] = ipad[i];
#pragma unroll
    for (int i = 0; i < 16; i++)
        m[i] = p[LODE_SCRYPT_P_HEADER + i];
    sha256_compress(inner, m);

    __global uint *s = state + (size_t)slot * LODE_SCRYPT_STATE_WORDS;
    for (uint i = 1; i <= 4; i++) {
        uint d[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            d[k] = inner[k];
        m[0] = p[LODE_SCRYPT_P_HEADER + 16];
        m[1] = p[LODE_SCRYPT_P_HEADER + 17];
        m[2] = p[LODE_SCRYPT_P_HEADER + 18];
        m[3] = nonce_be;
        m[4] = i;
        m[5] = 0x80000000u;
#pragma unroll
        for (int k = 6; k < 15; k++)
            m[k] = 0;
        m[15] = (64 + 80 + 4) * 8;
        sha256_compress(d, m);
        pbkdf2_hmac_outer(opad, d);
        /* Salsa works on little-endian words of the derived bytes. */
#pragma unroll
        for (int k = 0; k < 8; k++)
            s[8 * (i - 1) + k] = lode_bswap32(d[k]);
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        s[LODE_SCRYPT_STATE_IPAD + k] = ipad[k];
        s[LODE_SCRYPT_STATE_OPAD + k] = opad[k];
    }
}

__kernel void pbkdf2_out(__constant uint *p, uint start, uint count, __global const uint *state,
                         volatile __global uint *hits)
{
    const uint slot = (uint)get_global_id(0);
    if (slot >= count)
        return;
    __global const uint *s = state + (size_t)slot * LODE_SCRYPT_STATE_WORDS;
    uint d[8], m[16];
#pragma unroll
    for (int k = 0; k < 8; k++)
        d[k] = s[LODE_SCRYPT_STATE_IPAD + k];
    for (int part = 0; part < 2; part++) { /* "half" is a type in OpenCL C */
#pragma unroll
        for (int k = 0; k < 16; k++)
            m[k] = lode_bswap32(s[16 * part + k]);
        sha256_compress(d, m);
    }
    m[0] = 1; /* INT(1) */
    m[1] = 0x80000000u;
#pragma unroll
    for (int k = 2; k < 15; k++)
        m[k] = 0;
    m[15] = (64 + 128 + 4) * 8;
    sha256_compress(d, m);
    uint opad[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        opad[k] = s[LODE_SCRYPT_STATE_OPAD + k];
    pbkdf2_hmac_outer(opad, d);

    /* The PoW hash is the digest read as a little-endian 256-bit integer:
     * its word k is lode_bswap32(d[k]); compare from the top word down. */
    int verdict = 0; /* -1 below, +1 above, 0 equal so far */
#pragma unroll
    for (int k = 7; k >= 0; k--) {
        const uint h = lode_bswap32(d[k]), t = p[LODE_SCRYPT_P_TARGET + k];
        if (verdict == 0 && h != t)
            verdict = h < t ? -1 : 1;
    }
    if (verdict <= 0)
        lode_report_hit(hits, start + slot);
}

/* ---- ROMix: one work-item per hash ------------------------------------- */

#if XCHG == 0 || XCHG == 5

/* BlockMix on X (32 words, X0 then X1) of one hash (salsa.h). */
static inline void block_mix_single(uint *x) { salsa_block_mix(x, x + 16); }

#endif

#if XCHG == 0

/* Entry e of slot s: pad[(e * slots + s) * 8 .. + 7], X in natural order. */
__kernel void romix_single(__global uint *state, __global uint4 *pad, uint slots)
{
    const uint slot = (uint)get_global_id(0);
    if (slot >= slots)
        return;
    __global uint *s = state + (size_t)slot * LODE_SCRYPT_STATE_WORDS;
    uint x[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        x[i] = s[i];
    __global uint4 *mine = pad + (size_t)slot * 8;
    const size_t stride = (size_t)slots * 8;

    for (uint i = 0; i < LODE_SCRYPT_N; i += LOOKUP_GAP) {
        __global uint4 *e = mine + (i / LOOKUP_GAP) * stride;
#pragma unroll
        for (int q = 0; q < 8; q++)
            e[q] = (uint4)(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
#pragma unroll
        for (int k = 0; k < LOOKUP_GAP; k++)
            block_mix_single(x);
    }
    for (uint i = 0; i < LODE_SCRYPT_N; i++) {
        /* Integerify: word 16 of X, the first word of X1. */
        const uint j = x[16] & (LODE_SCRYPT_N - 1);
        __global const uint4 *e = mine + (j / LOOKUP_GAP) * stride;
        uint y[32];
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const uint4 v = e[q];
            y[4 * q] = v.x, y[4 * q + 1] = v.y, y[4 * q + 2] = v.z, y[4 * q + 3] = v.w;
        }
        for (uint k = 0; k < j % LOOKUP_GAP; k++)
            block_mix_single(y);
#pragma unroll
        for (int k = 0; k < 32; k++)
            x[k] ^= y[k];
        block_mix_single(x);
    }
#pragma unroll
    for (int i = 0; i < 32; i++)
        s[i] = x[i];
}

#elif XCHG == 5

/* One work-item per hash with the scratchpad staged through local memory
 * (as the CUDA backend's romix_thread): Salsa20/8 needs no exchange, and
 * every global access is a coalesced 16-byte piece. Units of 32 work-items
 * share 32 rows of 144 bytes (128 + 16 of padding: no bank conflicts) in
 * `stage` (local size x 144 bytes). Entry e of slot s is
 * pad[(e * slots + s) * 8 ..+8], X in natural order; a unit's 32 entries e
 * are 4 KiB contiguous. Transfer step k moves the unit's hashes 4k..4k+3:
 * item l carries 16-byte piece l % 8 of hash 4k + l / 8. Lookup gap 1. */
#define ROW 9 /* uint4 per row */

static inline void to_row(__local uint4 *row, const uint *x)
{
#pragma unroll
    for (int q = 0; q < 8; q++)
        row[q] = (uint4)(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
}

__kernel void romix_thread(__global uint *state, __global uint4 *pad, uint slots,
                           __local uint4 *stage)
{
    const uint slot = (uint)get_global_id(0);
    const uint lid = (uint)get_local_id(0), lane = lid & 31;
    __local uint4 *rows = stage + (lid & ~31u) * ROW;
    __local uint4 *own = rows + lane * ROW;
    __local uint4 *carried = rows + (lane >> 3) * ROW + (lane & 7); /* step k: + 4k rows */
    __local const uint *posted = (__local const uint *)(rows + (lane >> 3) * ROW + 8);
    __global uint4 *lane_pad = pad + (size_t)(slot & ~31u) * 8 + lane; /* step k: + 32k */
    const size_t stride = (size_t)slots * 8;
    /* slots is a multiple of the local size: every item has a slot, and
     * all reach the barriers. */
    __global uint *s = state + (size_t)slot * LODE_SCRYPT_STATE_WORDS;
    uint x[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        x[i] = s[i];

    for (uint i = 0; i < LODE_SCRYPT_N; i++) {
        to_row(own, x);
        barrier(CLK_LOCAL_MEM_FENCE);
        __global uint4 *e = lane_pad + i * stride;
#pragma unroll
        for (int k = 0; k < 8; k++)
            e[32 * k] = carried[4 * ROW * k];
        barrier(CLK_LOCAL_MEM_FENCE); /* the rows are rewritten next step */
        block_mix_single(x);
    }
    for (uint i = 0; i < LODE_SCRYPT_N; i++) {
        /* Integerify (word 16 of X): each item posts its entry's offset in
         * its row's padding, where the items carrying that hash read it. */
        ((__local uint *)(own + 8))[0] = (x[16] & (LODE_SCRYPT_N - 1)) * slots;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint4 v[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[k] = lane_pad[(size_t)posted[4 * ROW * 4 * k] * 8 + 32 * k];
#pragma unroll
        for (int k = 0; k < 8; k++)
            carried[4 * ROW * k] = v[k];
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const uint4 w = own[q];
            x[4 * q] ^= w.x, x[4 * q + 1] ^= w.y, x[4 * q + 2] ^= w.z, x[4 * q + 3] ^= w.w;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        block_mix_single(x);
    }
#pragma unroll
    for (int i = 0; i < 32; i++)
        s[i] = x[i];
}

#else /* XCHG 1-4: four work-items per hash */

/* ---- the exchange between the four work-items of a hash ---------------- */

#if XCHG == 2
#ifndef LODE_NV_PTX
#error "XCHG 2 is inline PTX: build with -D LODE_NV_PTX=1"
#endif
/* NVIDIA: shfl.sync within segments of four lanes (lode_kernel.h), the
 * source given as 0..3 within the segment. The host launches whole warps
 * and no work-item leaves romix early, so the full-warp mask holds. */
static inline uint quad_fetch(uint x, uint src) { return lode_shfl4(x, src); }
#elif XCHG == 3
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
static inline uint quad_fetch(uint x, uint src)
{
    return sub_group_shuffle(x, (get_sub_group_local_id() & ~3u) | src);
}
#elif XCHG == 4
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
static inline uint quad_fetch(uint x, uint src)
{
    return intel_sub_group_shuffle(x, (get_sub_group_local_id() & ~3u) | src);
}
#endif

/* The exchange context: this item's place in its quad and, for XCHG 1, the
 * double-buffered local array (one barrier per exchange: the buffer written
 * next was last read before the previous barrier). */
typedef struct quad {
    uint t, next, across, prev;
    uint lid, base, ls, phase;
} quad;

#if XCHG == 1
#define XCHG_PARAM , __local uint *xbuf
#define XCHG_ARG , xbuf
#else
#define XCHG_PARAM
#define XCHG_ARG
#endif

/* b <- d of item t+1, c <- c of item t+2, d <- b of item t-1: columns to
 * rows, and after the row round the same move takes rows back. */
static inline void quad_rotate(uint *x1, uint *x2, uint *x3, quad *q XCHG_PARAM)
{
#if XCHG == 1
    __local uint *buf = xbuf + q->phase * (3 * HASHES) * q->ls;
    q->phase ^= 1u;
#pragma unroll
    for (int h = 0; h < HASHES; h++) {
        buf[(3 * h + 0) * q->ls + q->lid] = x1[h];
        buf[(3 * h + 1) * q->ls + q->lid] = x2[h];
        buf[(3 * h + 2) * q->ls + q->lid] = x3[h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int h = 0; h < HASHES; h++) {
        x1[h] = buf[(3 * h + 2) * q->ls + q->base + q->next];
        x2[h] = buf[(3 * h + 1) * q->ls + q->base + q->across];
        x3[h] = buf[(3 * h + 0) * q->ls + q->base + q->prev];
    }
#else
#pragma unroll
    for (int h = 0; h < HASHES; h++) {
        const uint nb = quad_fetch(x3[h], q->next);
        const uint nc = quad_fetch(x2[h], q->across);
        const uint nd = quad_fetch(x1[h], q->prev);
        x1[h] = nb, x2[h] = nc, x3[h] = nd;
    }
#endif
}

/* Integerify: word 16 of X is x[0] of X1, held by item 0 of the quad. */
static inline void quad_integerify(const uint4 *x1, uint *j, quad *q XCHG_PARAM)
{
#if XCHG == 1
    __local uint *buf = xbuf + q->phase * (3 * HASHES) * q->ls;
    q->phase ^= 1u;
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        buf[h * q->ls + q->lid] = x1[h].x;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        j[h] = buf[h * q->ls + q->base] & (LODE_SCRYPT_N - 1);
#else
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        j[h] = quad_fetch(x1[h].x, 0) & (LODE_SCRYPT_N - 1);
#endif
}

/* b[h] = Salsa20/8(b[h]) + b[h] for HASHES interleaved hashes, one diagonal
 * of each per item. */
static inline void salsa8_quad(uint4 *b, quad *q XCHG_PARAM)
{
    uint a[HASHES], x1[HASHES], x2[HASHES], x3[HASHES];
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        a[h] = b[h].x, x1[h] = b[h].y, x2[h] = b[h].z, x3[h] = b[h].w;
#if XCHG != 1
#pragma unroll
#endif
    for (int i = 0; i < 8; i++) { /* 4 double rounds: column, row */
#pragma unroll
        for (int h = 0; h < HASHES; h++) {
            x1[h] = salsa_qr(x1[h], a[h], x3[h], 7);
            x2[h] = salsa_qr(x2[h], x1[h], a[h], 9);
            x3[h] = salsa_qr(x3[h], x2[h], x1[h], 13);
            a[h] = salsa_qr(a[h], x3[h], x2[h], 18);
        }
        quad_rotate(x1, x2, x3, q XCHG_ARG);
    }
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        b[h] += (uint4)(a[h], x1[h], x2[h], x3[h]);
}

static inline void block_mix_quad(uint4 *x0, uint4 *x1, quad *q XCHG_PARAM)
{
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        x0[h] ^= x1[h];
    salsa8_quad(x0, q XCHG_ARG);
#pragma unroll
    for (int h = 0; h < HASHES; h++)
        x1[h] ^= x0[h];
    salsa8_quad(x1, q XCHG_ARG);
}

/* One quad runs HASHES hashes: slots quad * HASHES .. + HASHES - 1. The
 * host launches whole work-groups of valid slots (slots is a multiple of
 * local size / 4 * HASHES): no item may leave early, for the barriers and
 * the full-warp shuffles. XCHG 1 needs local memory of
 * 2 * 3 * HASHES * local size uints in xbuf. */
/* This work-item's place in its quad. */
static inline void quad_init(quad *q)
{
    q->lid = (uint)get_local_id(0);
    q->ls = (uint)get_local_size(0);
    q->t = q->lid & 3u;
    q->base = q->lid & ~3u;
    q->next = (q->t + 1) & 3u;
    q->prev = (q->t + 3) & 3u;
    q->across = q->t ^ 2u;
    q->phase = 0;
}

/* Item t's diagonal of each hash's state (words 5t, 5t + 4, ... mod 16 of
 * both halves), from pbkdf2_in's slots. */
static inline void quad_load_state(__global const uint *state, uint slot0, uint t, uint4 *x0, uint4 *x1)
{
#pragma unroll
    for (int h = 0; h < HASHES; h++) {
        __global const uint *xs = state + (size_t)(slot0 + h) * LODE_SCRYPT_STATE_WORDS;
        x0[h] = (uint4)(xs[(5 * t) & 15], xs[(5 * t + 4) & 15], xs[(5 * t + 8) & 15],
                        xs[(5 * t + 12) & 15]);
        x1[h] = (uint4)(xs[16 + ((5 * t) & 15)], xs[16 + ((5 * t + 4) & 15)],
                        xs[16 + ((5 * t + 8) & 15)], xs[16 + ((5 * t + 12) & 15)]);
    }
}

/* The diagonal back, for pbkdf2_out. */
static inline void quad_store_state(__global uint *state, uint slot0, uint t, const uint4 *x0, const uint4 *x1)
{
#pragma unroll
    for (int h = 0; h < HASHES; h++) {
        __global uint *xs = state + (size_t)(slot0 + h) * LODE_SCRYPT_STATE_WORDS;
        xs[(5 * t) & 15] = x0[h].x;
        xs[(5 * t + 4) & 15] = x0[h].y;
        xs[(5 * t + 8) & 15] = x0[h].z;
        xs[(5 * t + 12) & 15] = x0[h].w;
        xs[16 + ((5 * t) & 15)] = x1[h].x;
        xs[16 + ((5 * t + 4) & 15)] = x1[h].y;
        xs[16 + ((5 * t + 8) & 15)] = x1[h].z;
        xs[16 + ((5 * t + 12) & 15)] = x1[h].w;
    }
}

__kernel void romix_quad(__global uint *state, __global uint4 *pad, uint slots XCHG_PARAM)
{
    const uint gid = (uint)get_global_id(0);
    const uint slot0 = (gid >> 2) * HASHES;
    quad q;
    quad_init(&q);
    const uint t = q.t;

    uint4 x0[HASHES], x1[HASHES];
    quad_load_state(state, slot0, t, x0, x1);
    __global uint4 *mine = pad + (size_t)slot0 * 8 + t;
    const size_t stride = (size_t)slots * 8;

    for (uint i = 0; i < LODE_SCRYPT_N; i += LOOKUP_GAP) {
        __global uint4 *e = mine + (i / LOOKUP_GAP) * stride;
#pragma unroll
        for (int h = 0; h < HASHES; h++) {
            e[8 * h] = x0[h];
            e[8 * h + 4] = x1[h];
        }
#pragma unroll
        for (int k = 0; k < LOOKUP_GAP; k++)
            block_mix_quad(x0, x1, &q XCHG_ARG);
    }
    for (uint i = 0; i < LODE_SCRYPT_N; i++) {
        uint j[HASHES];
        quad_integerify(x1, j, &q XCHG_ARG);
        uint4 y0[HASHES], y1[HASHES];
#pragma unroll
        for (int h = 0; h < HASHES; h++) {
            __global const uint4 *e = mine + 8 * h + (j[h] / LOOKUP_GAP) * stride;
            y0[h] = e[0];
            y1[h] = e[4];
        }
#if LOOKUP_GAP > 1
        /* Recompute entry j from the stored one below it: every quad runs
         * LOOKUP_GAP - 1 steps and keeps those it needs, so the quads of a
         * group never diverge (the exchange needs all of them). */
#pragma unroll
        for (uint k = 0; k + 1 < LOOKUP_GAP; k++) {
            uint4 z0[HASHES], z1[HASHES];
#pragma unroll
            for (int h = 0; h < HASHES; h++)
                z0[h] = y0[h], z1[h] = y1[h];
            block_mix_quad(z0, z1, &q XCHG_ARG);
#pragma unroll
            for (int h = 0; h < HASHES; h++)
                if (k < j[h] % LOOKUP_GAP)
                    y0[h] = z0[h], y1[h] = z1[h];
        }
#endif
#pragma unroll
        for (int h = 0; h < HASHES; h++) {
            x0[h] ^= y0[h];
            x1[h] ^= y1[h];
        }
        block_mix_quad(x0, x1, &q XCHG_ARG);
    }
    quad_store_state(state, slot0, t, x0, x1);
}

#endif /* XCHG */
