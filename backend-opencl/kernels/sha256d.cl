/* SHA-256d nonce search, one nonce at a time per
 * work-item in a grid-stride loop, the whole message schedule in registers.
 *
 * First hash, second block: W0..W2 come from the header, W3 is the nonce,
 * W4..W15 are padding. The host runs rounds 0..2 and the nonce-free part of
 * round 3 once per job, so a work-item starts at round 4 with two
 * additions, and the padding words are literals the compiler folds into the
 * round constants.
 *
 * Outer hash: its IV and padding are literals too. Only H7 is needed for
 * the early reject, and H7 = IV7 + (e after round 60): rounds 61..63 are
 * never run. Candidates (top word <= the target's) are re-hashed exactly on
 * the host.
 *
 * Parameters: __constant uint p[], the block LODE_SHA256D_P_* of
 * core/backend_support/kernel_params.h, filled by the host per job. */
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/kernels/hits.h"
#include "core/backend_support/kernels/sha256.h"

/* A round whose message word is a compile-time literal. */
#define ROUND_C(v, t, lit) sha256_round(v, t, sha256_k[t] + (lit))

static inline uint sha256d_h7(__constant uint *p, uint nonce)
{
    const uint w3 = lode_bswap32(nonce); /* the header stores the nonce little-endian */
    uint v[8];
    /* Round 4's naming: a = v[4], b = v[5], ... e = v[0], ... h = v[3]. */
    v[4] = p[LODE_SHA256D_P(PRE_A4_LESS_W3)] + w3;
    v[5] = p[LODE_SHA256D_P(PRE_A3)];
    v[6] = p[LODE_SHA256D_P(PRE_B3)];
    v[7] = p[LODE_SHA256D_P(PRE_C3)];
    v[0] = p[LODE_SHA256D_P(PRE_E4_LESS_W3)] + w3;
    v[1] = p[LODE_SHA256D_P(PRE_E3)];
    v[2] = p[LODE_SHA256D_P(PRE_F3)];
    v[3] = p[LODE_SHA256D_P(PRE_G3)];
    ROUND_C(v, 4, 0x80000000u);
#pragma unroll
    for (int t = 5; t < 15; t++)
        ROUND_C(v, t, 0u);
    ROUND_C(v, 15, 640u);

    uint w[64];
    w[16] = p[LODE_SHA256D_P(PRE_W16)];
    w[17] = p[LODE_SHA256D_P(PRE_W17)];
    w[18] = p[LODE_SHA256D_P(PRE_W18_LESS_NONCE)] + sha256_ssig0(w3);
    w[19] = p[LODE_SHA256D_P(PRE_W19_LESS_NONCE)] + w3;
    /* The W4..W15 terms are literals up to W30. */
    w[20] = sha256_ssig1(w[18]) + 0x80000000u;
    w[21] = sha256_ssig1(w[19]);
    w[22] = sha256_ssig1(w[20]) + 640u;
    w[23] = sha256_ssig1(w[21]) + w[16];
    w[24] = sha256_ssig1(w[22]) + w[17];
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = sha256_ssig1(w[t - 2]) + w[t - 7];
    w[30] = sha256_ssig1(w[28]) + w[23] + LODE_SHA256_SSIG0_LIT(640u);
    w[31] = sha256_ssig1(w[29]) + w[24] + p[LODE_SHA256D_P(PRE_W31_PART)];
    w[32] = sha256_ssig1(w[30]) + w[25] + p[LODE_SHA256D_P(PRE_W32_PART)];
#pragma unroll
    for (int t = 16; t < 64; t++) {
        if (t >= 33)
            w[t] = sha256_ssig1(w[t - 2]) + w[t - 7] + sha256_ssig0(w[t - 15]) + w[t - 16];
        sha256_round(v, t, sha256_k[t] + w[t]);
    }

    /* Outer hash of the 32-byte digest: W0..W7 the digest, W8 = 0x80000000,
     * W9..W14 = 0, W15 = 256. */
#pragma unroll
    for (int i = 0; i < 8; i++)
        w[i] = p[LODE_SHA256D_P_MID + i] + v[i];
    uint u[8];
    sha256_set_iv(u);
#pragma unroll
    for (int t = 0; t < 8; t++)
        sha256_round(u, t, sha256_k[t] + w[t]);
    ROUND_C(u, 8, 0x80000000u);
#pragma unroll
    for (int t = 9; t < 15; t++)
        ROUND_C(u, t, 0u);
    ROUND_C(u, 15, 256u);
    w[8] = 0x80000000u;
#pragma unroll
    for (int t = 9; t < 15; t++)
        w[t] = 0;
    w[15] = 256u;
#pragma unroll
    for (int t = 16; t < 61; t++) {
        /* Literal terms fold away once the loop is unrolled. */
        w[t] = sha256_ssig1(w[t - 2]) + w[t - 7] + sha256_ssig0(w[t - 15]) + w[t - 16];
        sha256_round(u, t, sha256_k[t] + w[t]);
    }
    /* e after round 60 is h after round 63: u[(4 - 61) & 7]. */
    return LODE_SHA256_IV7 + u[7];
}

__kernel void sha256d_search(__constant uint *p, uint start, uint count,
                             volatile __global uint *hits)
{
    const uint stride = (uint)get_global_size(0);
    const uint top = p[LODE_SHA256D_P_TARGET_TOP];
    /* count <= 2^31 per launch, so off + stride cannot wrap. */
    for (uint off = (uint)get_global_id(0); off < count; off += stride) {
        const uint nonce = start + off;
        if (lode_bswap32(sha256d_h7(p, nonce)) <= top)
            lode_report_hit(hits, nonce);
    }
}
