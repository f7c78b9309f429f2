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

#define LANES 16

typedef __m512i vec; /* one 32-bit word in each lane */

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline vec broadcast(uint32_t x) { return _mm512_set1_epi32((int)x); }
static inline uint32_t lane0(vec x)
{
    return (uint32_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(x));
}
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
    return _mm512_broadcastd_epi32(_mm_loadu_si32(&round_constants[t]));
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

static inline lane_vars broadcast_state(const uint32_t s[8])
{
    return (lane_vars){broadcast(s[0]), broadcast(s[1]), broadcast(s[2]), broadcast(s[3]),
                       broadcast(s[4]), broadcast(s[5]), broadcast(s[6]), broadcast(s[7])};
}

/* job->pre layout, as in sha256_portable.c. */
enum {
    PRE_A3, /* a, b, c, e, f, g after rounds 0..2 */
    PRE_B3,
    PRE_C3,
    PRE_E3,
    PRE_F3,
    PRE_G3,
    PRE_A4_LESS_W3, /* a after round 3, minus W3 */
    PRE_E4_LESS_W3, /* e after round 3, minus W3 */
    PRE_W16,
    PRE_W17,
    PRE_W18_LESS_NONCE, /* W18 - sigma0(W3) */
    PRE_W19_LESS_NONCE, /* W19 - W3 */
    PRE_W30_PART,       /* sigma0(W15) */
    PRE_W31_PART,       /* sigma0(W16) + W15 */
    PRE_W32_PART,       /* sigma0(W17) + W16 */
    PRE_OUTER_A1_LESS_W0, /* outer hash: a after round 0, minus W0 */
    PRE_OUTER_E1_LESS_W0, /* outer hash: e after round 0, minus W0 */
    PRE_OUTER_W17_PART,   /* sigma1(W15) */
    PRE_OUTER_W23_PART,   /* sigma0(W8) */
    PRE_OUTER_W30_PART,   /* sigma0(W15) */
    PRE_WORDS
};
_Static_assert(PRE_WORDS <= sizeof(((cpu_sha256d_job *)0)->pre) / sizeof(uint32_t),
               "job->pre is too small");

#define HEADER_PAD_W4 0x80000000u
#define HEADER_PAD_W15 640u
#define OUTER_PAD_W8 0x80000000u
#define OUTER_PAD_W15 256u

/* Runs in every lane on broadcast inputs and keeps lane 0. */
static void avx512_prepare(cpu_sha256d_job *job)
{
    uint32_t *pre = job->pre;
    const uint32_t *w = job->tail;

    lane_vars v = broadcast_state(job->midstate);
    for (unsigned t = 0; t < 3; t++)
        sha256_round(&v, broadcast(round_constants[t] + w[t]));
    pre[PRE_A3] = lane0(v.a);
    pre[PRE_B3] = lane0(v.b);
    pre[PRE_C3] = lane0(v.c);
    pre[PRE_E3] = lane0(v.e);
    pre[PRE_F3] = lane0(v.f);
    pre[PRE_G3] = lane0(v.g);
    /* Round 3 with W3 = 0. */
    sha256_round(&v, broadcast(round_constants[3]));
    pre[PRE_A4_LESS_W3] = lane0(v.a);
    pre[PRE_E4_LESS_W3] = lane0(v.e);

    vec w16 = add(small_sigma0(broadcast(w[1])), broadcast(w[0]));
    vec w17 = add(add(small_sigma1(broadcast(HEADER_PAD_W15)), small_sigma0(broadcast(w[2]))),
                  broadcast(w[1]));
    pre[PRE_W16] = lane0(w16);
    pre[PRE_W17] = lane0(w17);
    pre[PRE_W18_LESS_NONCE] = lane0(add(small_sigma1(w16), broadcast(w[2])));
    pre[PRE_W19_LESS_NONCE] = lane0(add(small_sigma1(w17), small_sigma0(broadcast(HEADER_PAD_W4))));
    pre[PRE_W30_PART] = lane0(small_sigma0(broadcast(HEADER_PAD_W15)));
    pre[PRE_W31_PART] = lane0(add(small_sigma0(w16), broadcast(HEADER_PAD_W15)));
    pre[PRE_W32_PART] = lane0(add(small_sigma0(w17), w16));

    v = broadcast_state(cpu_sha256_iv);
    sha256_round(&v, broadcast(round_constants[0]));
    pre[PRE_OUTER_A1_LESS_W0] = lane0(v.a);
    pre[PRE_OUTER_E1_LESS_W0] = lane0(v.e);
    pre[PRE_OUTER_W17_PART] = lane0(small_sigma1(broadcast(OUTER_PAD_W15)));
    pre[PRE_OUTER_W23_PART] = lane0(small_sigma0(broadcast(OUTER_PAD_W8)));
    pre[PRE_OUTER_W30_PART] = lane0(small_sigma0(broadcast(OUTER_PAD_W15)));
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
    sha256_round(&v, broadcast(round_constants[4] + HEADER_PAD_W4));
#pragma GCC unroll 10
    for (unsigned t = 5; t < 15; t++)
        sha256_round(&v, round_constant(t));
    sha256_round(&v, broadcast(round_constants[15] + HEADER_PAD_W15));
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
    const uint32_t *iv = cpu_sha256_iv;
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
    sha256_round(&v, broadcast(round_constants[8] + OUTER_PAD_W8));
#pragma GCC unroll 6
    for (unsigned t = 9; t < 15; t++)
        sha256_round(&v, round_constant(t));
    sha256_round(&v, broadcast(round_constants[15] + OUTER_PAD_W15));
#pragma GCC unroll 45
    for (unsigned t = 16; t < 61; t++)
        sha256_round(&v, add(round_constant(t), w[t]));
    /* e after 61 rounds becomes h after 64. */
    return add(broadcast(iv[7]), v.e);
}

static uint32_t avx512_candidates(const cpu_sha256d_job *job, uint32_t nonce0)
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
    .prepare = avx512_prepare,
    .candidates = avx512_candidates,
};

#endif
