/* Portable SHA-256 on the CPU: the choice of block function and the plain-C
 * nonce scan. The block function, the exact SHA-256d digest that confirms a
 * candidate and the per-job precomputation are the GPU backends' too
 * (core/backend_support/sha256d_job.h).
 *
 * The scan is the scalar model of the SIMD lane paths (sha256d_avx2.c,
 * sha256d_avx512.c): same precomputation, same job->pre layout, same early
 * exit. */
#include "backend-cpu/sha256_cpu.h"

#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "core/backend_support/sha256_rounds.h"
#include "core/backend_support/sha256d_lanes.h"

cpu_sha256_compress_fn cpu_sha256_compress_best(uint32_t features)
{
#if defined(__x86_64__)
    const uint32_t shani = CPU_FEATURE_SHANI | CPU_FEATURE_SSE41 | CPU_FEATURE_SSSE3;
    if ((features & shani) == shani)
        return cpu_sha256_compress_shani;
#else
    (void)features;
#endif
    return sha256_compress_portable;
}

/* The SHA-256d scan.
 *
 * First hash, second block: W0..W2 come from the job, W3 is the nonce and
 * W4..W15 are padding, so rounds 0..2 run once per job, and round 3 adds W3
 * to two precomputed sums. The early schedule words are precomputed except
 * for their nonce terms.
 *
 * Outer hash: only H7 is compared, and H7 = IV7 + e after 61 rounds, so it
 * stops after round 60 (0-based); the a-side of rounds 57..60 is dead code
 * the compiler drops. Its constant schedule terms are precomputed too.
 *
 * job->pre layout: sha256d_lanes.h, shared with the AVX2 and AVX-512 paths. */

/* The first hash from round 4 on; digest receives its 8 output words. */
static inline void first_hash(const uint32_t pre[], const uint32_t midstate[8], uint32_t w3,
                              uint32_t digest[8])
{
    uint32_t w[64]; /* W[t] from t = 16: W0..W15 are job words, nonce, padding */
    w[16] = pre[PRE_W16];
    w[17] = pre[PRE_W17];
    w[18] = pre[PRE_W18_LESS_NONCE] + small_sigma0(w3);
    w[19] = pre[PRE_W19_LESS_NONCE] + w3;
    /* W5..W14 are zero, which leaves one or two terms in W20..W29. */
    w[20] = small_sigma1(w[18]) + HEADER_PAD_W4;
    w[21] = small_sigma1(w[19]);
    w[22] = small_sigma1(w[20]) + HEADER_PAD_W15;
    w[23] = small_sigma1(w[21]) + w[16];
    for (unsigned t = 24; t < 30; t++)
        w[t] = small_sigma1(w[t - 2]) + w[t - 7];
    w[30] = small_sigma1(w[28]) + w[23] + pre[PRE_W30_PART];
    w[31] = small_sigma1(w[29]) + w[24] + pre[PRE_W31_PART];
    w[32] = small_sigma1(w[30]) + w[25] + pre[PRE_W32_PART];
    for (unsigned t = 33; t < 64; t++)
        w[t] = schedule_word(w, t);

    sha256_vars v = {
        .a = pre[PRE_A4_LESS_W3] + w3,
        .b = pre[PRE_A3],
        .c = pre[PRE_B3],
        .d = pre[PRE_C3],
        .e = pre[PRE_E4_LESS_W3] + w3,
        .f = pre[PRE_E3],
        .g = pre[PRE_F3],
        .h = pre[PRE_G3],
    };
    sha256_round(&v, sha256_k[4] + HEADER_PAD_W4);
    for (unsigned t = 5; t < 15; t++)
        sha256_round(&v, sha256_k[t]);
    sha256_round(&v, sha256_k[15] + HEADER_PAD_W15);
    for (unsigned t = 16; t < 64; t++)
        sha256_round(&v, sha256_k[t] + w[t]);

    digest[0] = midstate[0] + v.a;
    digest[1] = midstate[1] + v.b;
    digest[2] = midstate[2] + v.c;
    digest[3] = midstate[3] + v.d;
    digest[4] = midstate[4] + v.e;
    digest[5] = midstate[5] + v.f;
    digest[6] = midstate[6] + v.g;
    digest[7] = midstate[7] + v.h;
}

/* H7 of the outer hash of a first-hash digest. */
static inline uint32_t outer_hash_h7(const uint32_t pre[], const uint32_t digest[8])
{
    uint32_t w[61]; /* W[t] up to the last one the early exit needs */
    memcpy(w, digest, 8 * sizeof w[0]);
    /* W9..W14 are zero; W8 and W15 are padding. */
    w[16] = small_sigma0(w[1]) + w[0];
    w[17] = pre[PRE_OUTER_W17_PART] + small_sigma0(w[2]) + w[1];
    for (unsigned t = 18; t < 22; t++)
        w[t] = small_sigma1(w[t - 2]) + small_sigma0(w[t - 15]) + w[t - 16];
    w[22] = small_sigma1(w[20]) + OUTER_PAD_W15 + small_sigma0(w[7]) + w[6];
    w[23] = small_sigma1(w[21]) + w[16] + pre[PRE_OUTER_W23_PART] + w[7];
    w[24] = small_sigma1(w[22]) + w[17] + OUTER_PAD_W8;
    for (unsigned t = 25; t < 30; t++)
        w[t] = small_sigma1(w[t - 2]) + w[t - 7];
    w[30] = small_sigma1(w[28]) + w[23] + pre[PRE_OUTER_W30_PART];
    w[31] = small_sigma1(w[29]) + w[24] + small_sigma0(w[16]) + OUTER_PAD_W15;
    for (unsigned t = 32; t < 61; t++)
        w[t] = schedule_word(w, t);

    /* State after round 0: W0 enters a and e, the rest is the IV shifted. */
    const uint32_t *iv = sha256_iv;
    sha256_vars v = {
        .a = pre[PRE_OUTER_A1_LESS_W0] + w[0],
        .b = iv[0],
        .c = iv[1],
        .d = iv[2],
        .e = pre[PRE_OUTER_E1_LESS_W0] + w[0],
        .f = iv[4],
        .g = iv[5],
        .h = iv[6],
    };
    for (unsigned t = 1; t < 8; t++)
        sha256_round(&v, sha256_k[t] + w[t]);
    sha256_round(&v, sha256_k[8] + OUTER_PAD_W8);
    for (unsigned t = 9; t < 15; t++)
        sha256_round(&v, sha256_k[t]);
    sha256_round(&v, sha256_k[15] + OUTER_PAD_W15);
    for (unsigned t = 16; t < 61; t++)
        sha256_round(&v, sha256_k[t] + w[t]);
    /* e after 61 rounds becomes h after 64. */
    return sha256_iv[7] + v.e;
}

static uint32_t portable_candidates(const sha256d_job *job, uint32_t nonce0)
{
    uint32_t digest[8];
    first_hash(job->pre, job->midstate, byteswap32(nonce0), digest);
    return byteswap32(outer_hash_h7(job->pre, digest)) <= job->target_top;
}

const cpu_sha256d_path cpu_sha256d_portable = {
    .name = "portable",
    .features = 0,
    .lanes = 1,
    .prepare = sha256d_prepare_lanes,
    .candidates = portable_candidates,
};
