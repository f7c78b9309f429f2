/* SHA-256d scan on AVX-512: 16 nonces per call, one per 32-bit lane.
 * Compiled with -mavx512f -mavx512vl.
 *
 * The same file as sha256d_avx2.c, line for line, with the helpers below on
 * AVX-512 F: vprord rotates in one instruction, and vpternlogd computes Ch,
 * Maj and three-way xors in one. */
#include "backend-cpu/sha256_cpu.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "backend-cpu/cpu_features.h"
#include "core/backend_support/sha256d_lanes.h"

#define LANES 16

typedef __m512i vec; /* one 32-bit word in each lane */


static inline vec broadcast(uint32_t x) { return _mm512_set1_epi32((int)x); }
static inline vec add(vec x, vec y) { return _mm512_add_epi32(x, y); }
/* vpternlogd immediates: the truth table of f(x, y, z) indexed by x:y:z. */
static inline vec xor3(vec x, vec y, vec z) { return _mm512_ternarylogic_epi32(x, y, z, 0x96); }
/* A macro so that the counts stay immediates without optimisation. */
#define ROTR(x, n) _mm512_ror_epi32(x, n)

static inline vec big_sigma0(vec x) { return xor3(ROTR(x, 2), ROTR(x, 13), ROTR(x, 22)); }
static inline vec big_sigma1(vec x) { return xor3(ROTR(x, 6), ROTR(x, 11), ROTR(x, 25)); }
static inline vec small_sigma0(vec x)
{
    return xor3(ROTR(x, 7), ROTR(x, 18), _mm512_srli_epi32(x, 3));
}
static inline vec small_sigma1(vec x)
{
    return xor3(ROTR(x, 17), ROTR(x, 19), _mm512_srli_epi32(x, 10));
}
/* e ? f : g */
static inline vec choose(vec e, vec f, vec g) { return _mm512_ternarylogic_epi32(e, f, g, 0xca); }
/* At least two of a, b, c. */
static inline vec majority(vec a, vec b, vec c) { return _mm512_ternarylogic_epi32(a, b, c, 0xe8); }

/* AVX-512 F has no byte shuffle: take bytes 3 and 1 from x rotated right by
 * 8, bytes 2 and 0 from x rotated left by 8. */
static inline vec byteswap(vec x)
{
    return choose(broadcast(0xff00ff00u), ROTR(x, 8), ROTR(x, 24));
}

/* Lane i set when x <= limit, as unsigned words. */
static inline uint32_t lanes_at_most(vec x, vec limit) { return _mm512_cmple_epu32_mask(x, limit); }

/* K[t] in every lane, loaded by vpbroadcastd: a set1 of the constant makes
 * GCC 12 build it from an immediate with two more vector instructions. */
static inline vec round_constant(unsigned t)
{
    return _mm512_broadcastd_epi32(_mm_loadu_si32(&sha256_k[t]));
}

static inline vec schedule_word(const vec w[], unsigned t)
{
    return add(add(small_sigma1(w[t - 2]), w[t - 7]), add(small_sigma0(w[t - 15]), w[t - 16]));
}

/* Working variables named as in FIPS 180-4. */
typedef struct lane_vars {
    vec a, b, c, d, e, f, g, h;
} lane_vars;

/* One round; kw is K[t] + W[t]. The renaming costs nothing once unrolled. */
static inline void sha256_round(lane_vars *v, vec kw)
{
    vec t1 = add(add(v->h, big_sigma1(v->e)), add(choose(v->e, v->f, v->g), kw));
    vec t2 = add(big_sigma0(v->a), majority(v->a, v->b, v->c));
    v->h = v->g;
    v->g = v->f;
    v->f = v->e;
    v->e = add(v->d, t1);
    v->d = v->c;
    v->c = v->b;
    v->b = v->a;
    v->a = add(t1, t2);
}

/* The first hash from round 4 on; digest receives its 8 output words. */
static inline void first_hash(const uint32_t pre[], const uint32_t midstate[8], vec w3,
                              vec digest[8])
{
    vec w[64]; /* W[t] from t = 16: W0..W15 are job words, nonce, padding */
    w[16] = broadcast(pre[PRE_W16]);
    w[17] = broadcast(pre[PRE_W17]);
    w[18] = add(broadcast(pre[PRE_W18_LESS_NONCE]), small_sigma0(w3));
    w[19] = add(broadcast(pre[PRE_W19_LESS_NONCE]), w3);
    /* W5..W14 are zero, which leaves one or two terms in W20..W29. */
    w[20] = add(small_sigma1(w[18]), broadcast(HEADER_PAD_W4));
    w[21] = small_sigma1(w[19]);
    w[22] = add(small_sigma1(w[20]), broadcast(HEADER_PAD_W15));
    w[23] = add(small_sigma1(w[21]), w[16]);
#pragma GCC unroll 6
    for (unsigned t = 24; t < 30; t++)
        w[t] = add(small_sigma1(w[t - 2]), w[t - 7]);
    w[30] = add(add(small_sigma1(w[28]), w[23]), broadcast(pre[PRE_W30_PART]));
    w[31] = add(add(small_sigma1(w[29]), w[24]), broadcast(pre[PRE_W31_PART]));
    w[32] = add(add(small_sigma1(w[30]), w[25]), broadcast(pre[PRE_W32_PART]));
#pragma GCC unroll 31
    for (unsigned t = 33; t < 64; t++)
        w[t] = schedule_word(w, t);

    lane_vars v = {
        .a = add(broadcast(pre[PRE_A4_LESS_W3]), w3),
        .b = broadcast(pre[PRE_A3]),
        .c = broadcast(pre[PRE_B3]),
        .d = broadcast(pre[PRE_C3]),
        .e = add(broadcast(pre[PRE_E4_LESS_W3]), w3),
        .f = broadcast(pre[PRE_E3]),
        .g = broadcast(pre[PRE_F3]),
        .h = broadcast(pre[PRE_G3]),
    };
    sha256_round(&v, broadcast(sha256_k[4] + HEADER_PAD_W4));
#pragma GCC unroll 10
    for (unsigned t = 5; t < 15; t++)
        sha256_round(&v, round_constant(t));
    sha256_round(&v, broadcast(sha256_k[15] + HEADER_PAD_W15));
#pragma GCC unroll 48
    for (unsigned t = 16; t < 64; t++)
        sha256_round(&v, add(round_constant(t), w[t]));

    digest[0] = add(broadcast(midstate[0]), v.a);
    digest[1] = add(broadcast(midstate[1]), v.b);
    digest[2] = add(broadcast(midstate[2]), v.c);
    digest[3] = add(broadcast(midstate[3]), v.d);
    digest[4] = add(broadcast(midstate[4]), v.e);
    digest[5] = add(broadcast(midstate[5]), v.f);
    digest[6] = add(broadcast(midstate[6]), v.g);
    digest[7] = add(broadcast(midstate[7]), v.h);
}

/* H7 of the outer hash of first-hash digests. */
static inline vec outer_hash_h7(const uint32_t pre[], const vec digest[8])
{
    vec w[61]; /* W[t] up to the last one the early exit needs */
    for (unsigned t = 0; t < 8; t++)
        w[t] = digest[t];
    /* W9..W14 are zero; W8 and W15 are padding. */
    w[16] = add(small_sigma0(w[1]), w[0]);
    w[17] = add(add(broadcast(pre[PRE_OUTER_W17_PART]), small_sigma0(w[2])), w[1]);
#pragma GCC unroll 4
    for (unsigned t = 18; t < 22; t++)
        w[t] = add(add(small_sigma1(w[t - 2]), small_sigma0(w[t - 15])), w[t - 16]);
    w[22] = add(add(small_sigma1(w[20]), broadcast(OUTER_PAD_W15)), add(small_sigma0(w[7]), w[6]));
    w[23] = add(add(small_sigma1(w[21]), w[16]), add(broadcast(pre[PRE_OUTER_W23_PART]), w[7]));
    w[24] = add(add(small_sigma1(w[22]), w[17]), broadcast(OUTER_PAD_W8));
#pragma GCC unroll 5
    for (unsigned t = 25; t < 30; t++)
        w[t] = add(small_sigma1(w[t - 2]), w[t - 7]);
    w[30] = add(add(small_sigma1(w[28]), w[23]), broadcast(pre[PRE_OUTER_W30_PART]));
    w[31] = add(add(small_sigma1(w[29]), w[24]),
                add(small_sigma0(w[16]), broadcast(OUTER_PAD_W15)));
#pragma GCC unroll 29
    for (unsigned t = 32; t < 61; t++)
        w[t] = schedule_word(w, t);

    /* State after round 0: W0 enters a and e, the rest is the IV shifted. */
    const uint32_t *iv = sha256_iv;
    lane_vars v = {
        .a = add(broadcast(pre[PRE_OUTER_A1_LESS_W0]), w[0]),
        .b = broadcast(iv[0]),
        .c = broadcast(iv[1]),
        .d = broadcast(iv[2]),
        .e = add(broadcast(pre[PRE_OUTER_E1_LESS_W0]), w[0]),
        .f = broadcast(iv[4]),
        .g = broadcast(iv[5]),
        .h = broadcast(iv[6]),
    };
#pragma GCC unroll 7
    for (unsigned t = 1; t < 8; t++)
        sha256_round(&v, add(round_constant(t), w[t]));
    sha256_round(&v, broadcast(sha256_k[8] + OUTER_PAD_W8));
#pragma GCC unroll 6
    for (unsigned t = 9; t < 15; t++)
        sha256_round(&v, round_constant(t));
    sha256_round(&v, broadcast(sha256_k[15] + OUTER_PAD_W15));
#pragma GCC unroll 45
    for (unsigned t = 16; t < 61; t++)
        sha256_round(&v, add(round_constant(t), w[t]));
    /* e after 61 rounds becomes h after 64. */
    return add(broadcast(iv[7]), v.e);
}

static uint32_t avx512_candidates(const sha256d_job *job, uint32_t nonce0)
{
    const vec lane_index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    vec nonce = add(broadcast(nonce0), lane_index);
    vec digest[8];
    first_hash(job->pre, job->midstate, byteswap(nonce), digest);
    return lanes_at_most(byteswap(outer_hash_h7(job->pre, digest)), broadcast(job->target_top));
}

const cpu_sha256d_path cpu_sha256d_avx512 = {
    .name = "avx512",
    .features = CPU_FEATURE_AVX512 | CPU_FEATURE_AVX2, /* -mavx512f implies AVX2 too */
    .lanes = LANES,
    .prepare = sha256d_prepare_lanes,
    .candidates = avx512_candidates,
};

#endif
