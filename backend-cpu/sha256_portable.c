/* Portable SHA-256: the block function every build has, the exact SHA-256d
 * digest that confirms a candidate, and the plain-C nonce scan.
 *
 * The scan is the scalar model of the SIMD lane paths (sha256d_avx2.c,
 * sha256d_avx512.c): same precomputation, same job->pre layout, same early
 * exit. */
#include "backend-cpu/sha256_cpu.h"
#include "backend-cpu/sha256d_lanes.h"

#include <string.h>

#include "backend-cpu/cpu_features.h"

const uint32_t cpu_sha256_iv[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

_Alignas(64) const uint32_t cpu_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }
static inline uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
static inline uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
static inline uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
static inline uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }
static inline uint32_t choose(uint32_t e, uint32_t f, uint32_t g) { return ((f ^ g) & e) ^ g; }
/* b ^ c equals the previous round's a ^ b, which the compiler reuses. */
static inline uint32_t majority(uint32_t a, uint32_t b, uint32_t c)
{
    return ((a ^ b) & (b ^ c)) ^ b;
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)(x >> 24);
    p[1] = (uint8_t)(x >> 16);
    p[2] = (uint8_t)(x >> 8);
    p[3] = (uint8_t)x;
}

static inline uint32_t byteswap32(uint32_t x)
{
    return x >> 24 | (x >> 8 & 0xff00) | (x << 8 & 0xff0000) | x << 24;
}

static inline uint32_t schedule_word(const uint32_t w[], unsigned t)
{
    return small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];
}

/* Working variables named as in FIPS 180-4. */
typedef struct sha256_vars {
    uint32_t a, b, c, d, e, f, g, h;
} sha256_vars;

/* One round; kw is K[t] + W[t]. The renaming costs nothing once inlined. */
static inline void sha256_round(sha256_vars *v, uint32_t kw)
{
    uint32_t t1 = v->h + big_sigma1(v->e) + choose(v->e, v->f, v->g) + kw;
    uint32_t t2 = big_sigma0(v->a) + majority(v->a, v->b, v->c);
    v->h = v->g;
    v->g = v->f;
    v->f = v->e;
    v->e = v->d + t1;
    v->d = v->c;
    v->c = v->b;
    v->b = v->a;
    v->a = t1 + t2;
}

static inline sha256_vars vars_from_state(const uint32_t s[8])
{
    return (sha256_vars){s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]};
}

void cpu_sha256_compress_portable(uint32_t state[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (unsigned t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (unsigned t = 16; t < 64; t++)
        w[t] = schedule_word(w, t);

    sha256_vars v = vars_from_state(state);
    for (unsigned t = 0; t < 64; t++)
        sha256_round(&v, cpu_sha256_k[t] + w[t]);

    state[0] += v.a;
    state[1] += v.b;
    state[2] += v.c;
    state[3] += v.d;
    state[4] += v.e;
    state[5] += v.f;
    state[6] += v.g;
    state[7] += v.h;
}

cpu_sha256_compress_fn cpu_sha256_compress_best(uint32_t features)
{
#if defined(__x86_64__)
    const uint32_t shani = CPU_FEATURE_SHANI | CPU_FEATURE_SSE41 | CPU_FEATURE_SSSE3;
    if ((features & shani) == shani)
        return cpu_sha256_compress_shani;
#else
    (void)features;
#endif
    return cpu_sha256_compress_portable;
}

void cpu_sha256d_job_init(cpu_sha256d_job *job, const uint8_t header[80], uint32_t target_top)
{
    memcpy(job->midstate, cpu_sha256_iv, sizeof job->midstate);
    cpu_sha256_compress_portable(job->midstate, header);
    for (unsigned i = 0; i < 3; i++)
        job->tail[i] = (uint32_t)header[64 + 4 * i] << 24 | (uint32_t)header[65 + 4 * i] << 16 |
                       (uint32_t)header[66 + 4 * i] << 8 | header[67 + 4 * i];
    job->target_top = target_top;
}

void cpu_sha256d_digest(const cpu_sha256d_job *job, uint32_t nonce, uint8_t digest[32])
{
    /* Second block of the header: bytes 64..79, then padding for 640 bits. */
    uint8_t block[64] = {0};
    for (unsigned i = 0; i < 3; i++)
        store_be32(block + 4 * i, job->tail[i]);
    store_be32(block + 12, byteswap32(nonce)); /* the header stores it little-endian */
    block[16] = 0x80;
    store_be32(block + 60, 640);

    uint32_t state[8];
    memcpy(state, job->midstate, sizeof state);
    cpu_sha256_compress_portable(state, block);

    /* Outer hash: the 32-byte digest, padded for 256 bits. */
    memset(block, 0, sizeof block);
    for (unsigned i = 0; i < 8; i++)
        store_be32(block + 4 * i, state[i]);
    block[32] = 0x80;
    store_be32(block + 60, 256);

    memcpy(state, cpu_sha256_iv, sizeof state);
    cpu_sha256_compress_portable(state, block);
    for (unsigned i = 0; i < 8; i++)
        store_be32(digest + 4 * i, state[i]);
}

bool cpu_sha256d_meets_target(const cpu_sha256d_job *job, uint32_t nonce, const lode_u256 *target)
{
    uint8_t digest[32];
    cpu_sha256d_digest(job, nonce, digest);
    return lode_hash_meets_target(digest, target);
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



void cpu_sha256d_prepare_lanes(cpu_sha256d_job *job)
{
    uint32_t *pre = job->pre;
    const uint32_t *w = job->tail;

    sha256_vars v = vars_from_state(job->midstate);
    for (unsigned t = 0; t < 3; t++)
        sha256_round(&v, cpu_sha256_k[t] + w[t]);
    pre[PRE_A3] = v.a;
    pre[PRE_B3] = v.b;
    pre[PRE_C3] = v.c;
    pre[PRE_E3] = v.e;
    pre[PRE_F3] = v.f;
    pre[PRE_G3] = v.g;
    /* Round 3 with W3 = 0. */
    sha256_round(&v, cpu_sha256_k[3]);
    pre[PRE_A4_LESS_W3] = v.a;
    pre[PRE_E4_LESS_W3] = v.e;

    uint32_t w16 = small_sigma0(w[1]) + w[0];
    uint32_t w17 = small_sigma1(HEADER_PAD_W15) + small_sigma0(w[2]) + w[1];
    pre[PRE_W16] = w16;
    pre[PRE_W17] = w17;
    pre[PRE_W18_LESS_NONCE] = small_sigma1(w16) + w[2];
    pre[PRE_W19_LESS_NONCE] = small_sigma1(w17) + small_sigma0(HEADER_PAD_W4);
    pre[PRE_W30_PART] = small_sigma0(HEADER_PAD_W15);
    pre[PRE_W31_PART] = small_sigma0(w16) + HEADER_PAD_W15;
    pre[PRE_W32_PART] = small_sigma0(w17) + w16;

    v = vars_from_state(cpu_sha256_iv);
    sha256_round(&v, cpu_sha256_k[0]);
    pre[PRE_OUTER_A1_LESS_W0] = v.a;
    pre[PRE_OUTER_E1_LESS_W0] = v.e;
    pre[PRE_OUTER_W17_PART] = small_sigma1(OUTER_PAD_W15);
    pre[PRE_OUTER_W23_PART] = small_sigma0(OUTER_PAD_W8);
    pre[PRE_OUTER_W30_PART] = small_sigma0(OUTER_PAD_W15);
}

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
    sha256_round(&v, cpu_sha256_k[4] + HEADER_PAD_W4);
    for (unsigned t = 5; t < 15; t++)
        sha256_round(&v, cpu_sha256_k[t]);
    sha256_round(&v, cpu_sha256_k[15] + HEADER_PAD_W15);
    for (unsigned t = 16; t < 64; t++)
        sha256_round(&v, cpu_sha256_k[t] + w[t]);

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
    const uint32_t *iv = cpu_sha256_iv;
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
        sha256_round(&v, cpu_sha256_k[t] + w[t]);
    sha256_round(&v, cpu_sha256_k[8] + OUTER_PAD_W8);
    for (unsigned t = 9; t < 15; t++)
        sha256_round(&v, cpu_sha256_k[t]);
    sha256_round(&v, cpu_sha256_k[15] + OUTER_PAD_W15);
    for (unsigned t = 16; t < 61; t++)
        sha256_round(&v, cpu_sha256_k[t] + w[t]);
    /* e after 61 rounds becomes h after 64. */
    return cpu_sha256_iv[7] + v.e;
}

static uint32_t portable_candidates(const cpu_sha256d_job *job, uint32_t nonce0)
{
    uint32_t digest[8];
    first_hash(job->pre, job->midstate, byteswap32(nonce0), digest);
    return byteswap32(outer_hash_h7(job->pre, digest)) <= job->target_top;
}

const cpu_sha256d_path cpu_sha256d_portable = {
    .name = "portable",
    .features = 0,
    .lanes = 1,
    .prepare = cpu_sha256d_prepare_lanes,
    .candidates = portable_candidates,
};
