/* SHA-256d nonce search for the CUDA and OpenCL kernels, written once: one
 * nonce at a time per thread (work-item), several per thread in a
 * grid-stride loop, the whole message schedule in registers.
 *
 * First hash, second block: W0..W2 come from the header, W3 is the nonce,
 * W4..W15 are padding. The host runs rounds 0..2 and the nonce-free part of
 * round 3 once per job (core/backend_support/sha256d_lanes.h), so a thread
 * starts at round 4 with two additions, and the padding words are literals
 * that the compiler folds into the round constants.
 *
 * Outer hash: its IV and padding are literals, so the compiler folds round
 * 0 and the constant schedule terms itself. Only H7 is needed for the early
 * reject, and H7 = IV7 + (e after round 60): rounds 61..63 are never run
 * and the a-side of rounds 57..60 is dead code the compiler drops.
 * Candidates (top word <= the target's) are re-hashed exactly on the host.
 *
 * Additions, two ways (the variants "imad" and "iadd3"): with fma, x + y
 * is written x * one + y, where one == 1 is only known at run time
 * (p[LODE_SHA256D_P_ONE]); the compiler cannot see through it, so on NVIDIA
 * the addition is an IMAD on the FMA pipe instead of an IADD3 on the
 * integer pipe, which the rotates (SHF) and LOP3s already fill. Without fma,
 * plain additions let the compiler fuse three terms per IADD3. fma is a
 * literal at every entry point, so each instance compiles to one of the two.
 *
 * p: the parameter block LODE_SHA256D_P_* of
 * core/backend_support/kernel_params.h, filled by the host per job and
 * passed by value (both languages then keep it in the constant bank that
 * instructions read as operands: no loads in the loop; a __constant buffer
 * cost NVIDIA's OpenCL 23 loads per nonce). */
#ifndef LODE_KERNELS_SHA256D_H
#define LODE_KERNELS_SHA256D_H

#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/hits.h"
#include "core/backend_support/kernels/sha256.h"

LODE_DEVICE u32 sha256d_add(u32 x, u32 y, u32 one, bool fma) { return fma ? x * one + y : x + y; }

/* The working variables of round t (sha256.h's naming). */
#define LODE_SHA256D_V(i) v[((i)-t) & 7]

/* sha256_round() given kw = K[t] + W[t], with the additions routed by fma. */
LODE_DEVICE void sha256d_round_kw(u32 *v, int t, u32 kw, u32 one, bool fma)
{
    const u32 t1 =
        sha256d_add(sha256d_add(sha256d_add(LODE_SHA256D_V(7), kw, one, fma),
                                sha256_ch(LODE_SHA256D_V(4), LODE_SHA256D_V(5), LODE_SHA256D_V(6)), one, fma),
                    sha256_bsig1(LODE_SHA256D_V(4)), one, fma);
    LODE_SHA256D_V(3) = sha256d_add(LODE_SHA256D_V(3), t1, one, fma);
    LODE_SHA256D_V(7) =
        sha256d_add(sha256d_add(t1, sha256_maj(LODE_SHA256D_V(0), LODE_SHA256D_V(1), LODE_SHA256D_V(2)), one, fma),
                    sha256_bsig0(LODE_SHA256D_V(0)), one, fma);
}

/* A round of message word w (K[t] added here). */
LODE_DEVICE void sha256d_round_w(u32 *v, int t, u32 w, u32 one, bool fma)
{
    sha256d_round_kw(v, t, w + sha256_k[t], one, fma);
}

/* A round whose message word is a literal: K[t] + W[t] folds into one
 * constant. */
LODE_DEVICE void sha256d_round_c(u32 *v, int t, u32 w_lit, u32 one, bool fma)
{
    const u32 t1 =
        sha256d_add(sha256d_add(LODE_SHA256D_V(7), sha256_ch(LODE_SHA256D_V(4), LODE_SHA256D_V(5), LODE_SHA256D_V(6)),
                                one, fma),
                    sha256_bsig1(LODE_SHA256D_V(4)), one, fma) +
        (sha256_k[t] + w_lit);
    LODE_SHA256D_V(3) = sha256d_add(LODE_SHA256D_V(3), t1, one, fma);
    LODE_SHA256D_V(7) =
        sha256d_add(sha256d_add(t1, sha256_maj(LODE_SHA256D_V(0), LODE_SHA256D_V(1), LODE_SHA256D_V(2)), one, fma),
                    sha256_bsig0(LODE_SHA256D_V(0)), one, fma);
}

#undef LODE_SHA256D_V

/* sigma1(x2) + sum + sigma0(x15): a schedule word whose two plain terms the
 * caller has already summed (or found to be literals). */
LODE_DEVICE u32 sha256d_sched(u32 x2, u32 sum, u32 x15, u32 one, bool fma)
{
    return sha256d_add(sha256d_add(sum, sha256_ssig0(x15), one, fma), sha256_ssig1(x2), one, fma);
}
LODE_DEVICE u32 sha256d_sched2(u32 x2, u32 sum, u32 one, bool fma)
{
    return sha256d_add(sum, sha256_ssig1(x2), one, fma);
}

/* First hash, rounds 4..15 from the job's precomputed state (the rounds
 * whose message words are the nonce's W3 and the padding literals). */
LODE_DEVICE void sha256d_inner_head(const u32 *p, u32 w3, u32 *v, u32 one, bool fma)
{
    /* Round 4's naming: a = v[4], b = v[5], ... e = v[0], ... h = v[3]. */
    v[4] = sha256d_add(p[LODE_SHA256D_P(PRE_A4_LESS_W3)], w3, one, fma);
    v[5] = p[LODE_SHA256D_P(PRE_A3)];
    v[6] = p[LODE_SHA256D_P(PRE_B3)];
    v[7] = p[LODE_SHA256D_P(PRE_C3)];
    v[0] = sha256d_add(p[LODE_SHA256D_P(PRE_E4_LESS_W3)], w3, one, fma);
    v[1] = p[LODE_SHA256D_P(PRE_E3)];
    v[2] = p[LODE_SHA256D_P(PRE_F3)];
    v[3] = p[LODE_SHA256D_P(PRE_G3)];
    /* W4 = 0x80000000, W5..W14 = 0, W15 = 640 (80 bytes in bits). */
    sha256d_round_c(v, 4, 0x80000000u, one, fma);
#pragma unroll
    for (int t = 5; t < 15; t++)
        sha256d_round_c(v, t, 0, one, fma);
    sha256d_round_c(v, 15, 640, one, fma);
}

/* First hash, schedule words W16..W32 (those with literal or precomputed
 * terms; the rest follow the plain recurrence). They depend on the second
 * block alone, not on the midstate. */
LODE_DEVICE void sha256d_inner_schedule_head(const u32 *p, u32 w3, u32 *w, u32 one, bool fma)
{
    w[16] = p[LODE_SHA256D_P(PRE_W16)];
    w[17] = p[LODE_SHA256D_P(PRE_W17)];
    w[18] = sha256d_add(p[LODE_SHA256D_P(PRE_W18_LESS_NONCE)], sha256_ssig0(w3), one, fma);
    w[19] = sha256d_add(p[LODE_SHA256D_P(PRE_W19_LESS_NONCE)], w3, one, fma);
    /* Terms from W4..W15 are literals up to W30. */
    w[20] = sha256d_sched2(w[18], 0x80000000u, one, fma);
    w[21] = sha256_ssig1(w[19]);
    w[22] = sha256d_sched2(w[20], 640u, one, fma);
    w[23] = sha256d_sched2(w[21], w[16], one, fma);
    w[24] = sha256d_sched2(w[22], w[17], one, fma);
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = sha256d_sched2(w[t - 2], w[t - 7], one, fma);
    w[30] = sha256d_sched2(w[28], w[23] + LODE_SHA256_SSIG0_LIT(640u), one, fma);
    w[31] = sha256d_sched2(w[29], sha256d_add(w[24], p[LODE_SHA256D_P(PRE_W31_PART)], one, fma), one, fma);
    w[32] = sha256d_sched2(w[30], sha256d_add(w[25], p[LODE_SHA256D_P(PRE_W32_PART)], one, fma), one, fma);
}

/* Outer hash of the first hash's state v (after its 64 rounds): H7 of the
 * SHA-256d digest. */
LODE_DEVICE u32 sha256d_outer_h7(const u32 *p, const u32 *v, u32 one, bool fma)
{
    /* W0..W7 the digest, W8 = 0x80000000, W9..W14 = 0, W15 = 256. */
    u32 w[64];
#pragma unroll
    for (int i = 0; i < 8; i++)
        w[i] = sha256d_add(p[LODE_SHA256D_P_MID + i], v[i], one, fma);
    u32 u[8];
    sha256_set_iv(u);
#pragma unroll
    for (int t = 0; t < 8; t++)
        sha256d_round_w(u, t, w[t], one, fma);
    sha256d_round_c(u, 8, 0x80000000u, one, fma);
#pragma unroll
    for (int t = 9; t < 15; t++)
        sha256d_round_c(u, t, 0, one, fma);
    sha256d_round_c(u, 15, 256, one, fma);
    w[16] = sha256d_add(sha256_ssig0(w[1]), w[0], one, fma);
    w[17] = sha256d_add(sha256d_add(w[1], sha256_ssig0(w[2]), one, fma), LODE_SHA256_SSIG1_LIT(256u), one, fma);
    w[18] = sha256d_sched(w[16], w[2], w[3], one, fma);
    w[19] = sha256d_sched(w[17], w[3], w[4], one, fma);
    w[20] = sha256d_sched(w[18], w[4], w[5], one, fma);
    w[21] = sha256d_sched(w[19], w[5], w[6], one, fma);
    w[22] = sha256d_sched(w[20], sha256d_add(w[6], 256u, one, fma), w[7], one, fma);
    w[23] = sha256d_sched2(w[21], sha256d_add(w[16], w[7], one, fma) + LODE_SHA256_SSIG0_LIT(0x80000000u), one, fma);
    w[24] = sha256d_sched2(w[22], sha256d_add(w[17], 0x80000000u, one, fma), one, fma);
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = sha256d_sched2(w[t - 2], w[t - 7], one, fma);
    w[30] = sha256d_sched2(w[28], sha256d_add(w[23], LODE_SHA256_SSIG0_LIT(256u), one, fma), one, fma);
    w[31] = sha256d_sched(w[29], sha256d_add(w[24], 256u, one, fma), w[16], one, fma);
#pragma unroll
    for (int t = 16; t < 61; t++) {
        if (t >= 32)
            w[t] = sha256d_sched(w[t - 2], sha256d_add(w[t - 7], w[t - 16], one, fma), w[t - 15], one, fma);
        sha256d_round_w(u, t, w[t], one, fma);
    }
    /* e after 61 rounds is h after 64: u[(4 - 61) & 7]. */
    return LODE_SHA256_IV7 + u[7];
}

/* H7 of the SHA-256d digest of the job's header with this nonce. */
LODE_DEVICE u32 sha256d_h7(const u32 *p, u32 nonce, u32 one, bool fma)
{
    const u32 w3 = lode_bswap32(nonce); /* the header stores the nonce little-endian */
    u32 v[8], w[64];
    sha256d_inner_head(p, w3, v, one, fma);
    sha256d_inner_schedule_head(p, w3, w, one, fma);
#pragma unroll
    for (int t = 16; t < 64; t++) {
        if (t >= 33)
            w[t] = sha256d_sched(w[t - 2], sha256d_add(w[t - 7], w[t - 16], one, fma), w[t - 15], one, fma);
        sha256d_round_w(v, t, w[t], one, fma);
    }
    return sha256d_outer_h7(p, v, one, fma);
}

/* The search loop of a thread: nonces start + off for off = first, first +
 * stride, ... below count. count <= 2^31 per launch (the launchers refuse
 * more), so off + stride cannot wrap past 2^32. */
LODE_DEVICE void sha256d_scan(const u32 *p, u32 start, u32 count, u32 first, u32 stride, LODE_HITS_BUF hits,
                              bool fma)
{
    const u32 one = p[LODE_SHA256D_P_ONE];
#pragma unroll 1
    for (u32 off = first; off < count; off += stride) {
        const u32 nonce = start + off;
        if (lode_bswap32(sha256d_h7(p, nonce, one, fma)) <= p[LODE_SHA256D_P_TARGET_TOP])
            lode_report_hit(hits, nonce);
    }
}

/* The version-rolled search (LODE_SHA256D_VERSIONS headers that differ
 * only in their version, bytes 0..3): p holds one parameter block per
 * version, block k at p + k * LODE_SHA256D_PARAM_WORDS. The versions have
 * different midstates but the same second block, so a nonce's first-hash
 * schedule W16..W63 is computed once, with K[t] added, and serves them all;
 * the rounds and the outer hash stay per version. The versions run in a
 * rolled loop: unrolled eight times, the code outgrows the instruction
 * cache (docs/PERFORMANCE.md). A nonce is reported once if any version's
 * H7 passes; the host re-hashes every version of it exactly. */
LODE_DEVICE void sha256d_scan_versions(const u32 *p, u32 start, u32 count, u32 first, u32 stride,
                                       LODE_HITS_BUF hits, bool fma)
{
    const u32 one = p[LODE_SHA256D_P_ONE];
    const u32 target_top = p[LODE_SHA256D_P_TARGET_TOP];
#pragma unroll 1
    for (u32 off = first; off < count; off += stride) {
        const u32 nonce = start + off;
        const u32 w3 = lode_bswap32(nonce);
        u32 w[64];
        sha256d_inner_schedule_head(p, w3, w, one, fma); /* the same in every block */
#pragma unroll
        for (int t = 33; t < 64; t++)
            w[t] = sha256d_sched(w[t - 2], sha256d_add(w[t - 7], w[t - 16], one, fma), w[t - 15], one, fma);
#pragma unroll
        for (int t = 16; t < 64; t++)
            w[t] += sha256_k[t];
        bool found = false;
#ifdef LODE_KERNEL_AMD
/* With the selects below, clang's loop vectorizer runs four versions at
 * once: 256 VGPRs and spills. */
#pragma clang loop vectorize(disable)
#endif
#pragma unroll 1
        for (int k = 0; k < LODE_SHA256D_VERSIONS; k++) {
#ifdef LODE_KERNEL_AMD
            /* p[] indexed by the run-time k forces AMD's compiler to copy the
             * whole by-value block to scratch (768 bytes a lane); selects on
             * the uniform k keep it in scalar registers. */
            u32 pk[LODE_SHA256D_PARAM_WORDS];
#pragma unroll
            for (int i = 0; i < LODE_SHA256D_PARAM_WORDS; i++) {
                pk[i] = p[i];
#pragma unroll
                for (int j = 1; j < LODE_SHA256D_VERSIONS; j++)
                    pk[i] = k == j ? p[j * LODE_SHA256D_PARAM_WORDS + i] : pk[i];
            }
#else
            const u32 *pk = p + k * LODE_SHA256D_PARAM_WORDS;
#endif
            u32 v[8];
            sha256d_inner_head(pk, w3, v, one, fma);
#pragma unroll
            for (int t = 16; t < 64; t++)
                sha256d_round_kw(v, t, w[t], one, fma);
            found |= lode_bswap32(sha256d_outer_h7(pk, v, one, fma)) <= target_top;
        }
        if (found)
            lode_report_hit(hits, nonce);
    }
}

#endif
