/* SHA-256 on the x86 SHA extensions: the block function and the SHA-256d
 * scan. Compiled with -msha -msse4.1 -mssse3.
 *
 * sha256rnds2 can start every cycle but takes about four to finish, and each
 * one needs the previous one's state, so the scan runs SCAN_LANES nonces in
 * lockstep to keep the SHA unit busy. */
#include "backend-cpu/sha256_cpu.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "backend-cpu/cpu_features.h"

/* Measured on Zen 4: two lanes leave the unit idle half the time, and more
 * than four spill the lanes' states out of the 16 XMM registers. */
#define SCAN_LANES 4


/* K[t..t+3] added to four message words. */
static inline __m128i add_round_constants(__m128i words, unsigned t)
{
    return _mm_add_epi32(words, _mm_load_si128((const __m128i *)&sha256_k[t]));
}

/* The state as sha256rnds2 takes it, lowest word first: {F, E, B, A} and
 * {H, G, D, C}. */
typedef struct shani_state {
    __m128i abef, cdgh;
} shani_state;

static inline shani_state pack_state(const uint32_t s[8])
{
    __m128i abcd = _mm_loadu_si128((const __m128i *)&s[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i *)&s[4]);
    __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);
    return (shani_state){
        .abef = _mm_alignr_epi8(badc, hgfe, 8),
        .cdgh = _mm_blend_epi16(hgfe, badc, 0xf0),
    };
}

/* The eight state words in FIPS order as two vectors {A, B, C, D} and
 * {E, F, G, H}. */
static inline void unpack_state(shani_state st, __m128i *abcd, __m128i *efgh)
{
    __m128i abef = _mm_shuffle_epi32(st.abef, 0x1b);
    __m128i cdgh = _mm_shuffle_epi32(st.cdgh, 0x1b);
    *abcd = _mm_unpacklo_epi64(abef, cdgh);
    *efgh = _mm_unpackhi_epi64(abef, cdgh);
}

static inline shani_state add_states(shani_state x, shani_state y)
{
    return (shani_state){_mm_add_epi32(x.abef, y.abef), _mm_add_epi32(x.cdgh, y.cdgh)};
}

/* Two rounds; the low two words of wk hold K[t] + W[t], K[t+1] + W[t+1]. */
static inline void rounds2(shani_state *st, __m128i wk)
{
    __m128i abef = _mm_sha256rnds2_epu32(st->cdgh, st->abef, wk);
    st->cdgh = st->abef;
    st->abef = abef;
}

/* Four rounds; wk holds K[t..t+3] + W[t..t+3]. */
static inline void rounds4(shani_state *st, __m128i wk)
{
    rounds2(st, wk);
    rounds2(st, _mm_shuffle_epi32(wk, 0x0e));
}

/* W[t..t+3] from sigma0_part = W[t-16..t-13] + sigma0(W[t-15..t-12]) (what
 * sha256msg1 gives) and the eight words before them, w2 = W[t-8..t-5] and
 * w3 = W[t-4..t-1]. */
static inline __m128i schedule_step(__m128i sigma0_part, __m128i w2, __m128i w3)
{
    return _mm_sha256msg2_epu32(_mm_add_epi32(sigma0_part, _mm_alignr_epi8(w3, w2, 4)), w3);
}

/* W[t..t+3] from W[t-16..t-1], four words per vector. */
static inline __m128i next_words(__m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
    return schedule_step(_mm_sha256msg1_epu32(w0, w1), w2, w3);
}

void cpu_sha256_compress_shani(uint32_t state[8], const uint8_t block[64])
{
    const __m128i be_words = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    __m128i w[16]; /* W[4i..4i+3] in w[i] */
    for (unsigned i = 0; i < 4; i++)
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)&block[16 * i]), be_words);

    const shani_state start = pack_state(state);
    shani_state st = start;
#pragma GCC unroll 16
    for (unsigned i = 0; i < 16; i++) {
        if (i >= 4)
            w[i] = next_words(w[i - 4], w[i - 3], w[i - 2], w[i - 1]);
        rounds4(&st, add_round_constants(w[i], 4 * i));
    }

    __m128i abcd, efgh;
    unpack_state(add_states(st, start), &abcd, &efgh);
    _mm_storeu_si128((__m128i *)&state[0], abcd);
    _mm_storeu_si128((__m128i *)&state[4], efgh);
}

/* The SHA-256d scan.
 *
 * First hash, second block: W0..W2 come from the job, W3 is the nonce and
 * W4..W15 are padding. Rounds 0, 1 run once per job, and the schedule of
 * W16..W31 uses precomputed parts wherever a sha256msg1 or sha256msg2 would
 * only see constants: on Zen 4 a sha256msg2 can start only every two or
 * three cycles, so the message instructions limit the scan as much as the
 * rounds do.
 *
 * Outer hash: only H7 is compared, and H7 = IV7 + e after 61 rounds, so it
 * stops after the sha256rnds2 of rounds 60, 61, when f holds that e; of the
 * last schedule group it needs only W60.
 *
 * The lanes run in lockstep, four rounds at a time. Each lane computes its
 * schedule four groups ahead of its rounds, which keeps the message
 * instructions' latency off the rounds' dependency chain. */

/* job->pre layout: 4-word groups loaded as vectors. */
enum {
    PRE_ROUND2_ABEF = 0, /* first hash, second block: state after rounds 0, 1 */
    PRE_ROUND2_CDGH = 4,
    PRE_MIDSTATE_ABEF = 8,
    PRE_MIDSTATE_CDGH = 12,
    PRE_W0_W2 = 16,          /* {W0, W1, W2, 0}: W3 is the nonce */
    PRE_W16_W19_SIGMA1 = 20, /* the sigma1 terms of W16..W19, free of W3 */
    PRE_W28_W31_SIGMA0 = 24, /* sha256msg1 of W12..W16, free of W3 */
    PRE_WORDS = 28
};
_Static_assert(PRE_WORDS <= sizeof(((sha256d_job *)0)->pre) / sizeof(uint32_t),
               "job->pre is too small");

static inline __m128i load_pre(const sha256d_job *job, unsigned index)
{
    return _mm_loadu_si128((const __m128i *)&job->pre[index]);
}

static inline void store_pre(sha256d_job *job, unsigned index, __m128i words)
{
    _mm_storeu_si128((__m128i *)&job->pre[index], words);
}

/* Padding words: 0x80000000 then zeros (W4..W7 of the header's second
 * block, W8..W11 of the outer block), and the two blocks' W12..W15 with
 * their bit lengths. */
static inline __m128i padding_start(void) { return _mm_setr_epi32((int)0x80000000u, 0, 0, 0); }
static inline __m128i header_w12_w15(void) { return _mm_setr_epi32(0, 0, 0, 640); }
static inline __m128i outer_w12_w15(void) { return _mm_setr_epi32(0, 0, 0, 256); }

static void shani_prepare(sha256d_job *job)
{
    const shani_state mid = pack_state(job->midstate);
    const uint32_t *tail = job->tail;
    const __m128i w0_w2 = _mm_setr_epi32((int)tail[0], (int)tail[1], (int)tail[2], 0);
    shani_state st = mid;
    rounds2(&st, add_round_constants(w0_w2, 0));
    store_pre(job, PRE_ROUND2_ABEF, st.abef);
    store_pre(job, PRE_ROUND2_CDGH, st.cdgh);
    store_pre(job, PRE_MIDSTATE_ABEF, mid.abef);
    store_pre(job, PRE_MIDSTATE_CDGH, mid.cdgh);
    store_pre(job, PRE_W0_W2, w0_w2);

    /* Computed with W3 = 0: the sigma1 terms that sha256msg2 adds to
     * W16..W19 come from W14, W15 and W16, W17, none of which involves W3;
     * likewise sha256msg1 of W12..W16 for W28..W31. */
    const __m128i sigma0_part = _mm_sha256msg1_epu32(w0_w2, padding_start());
    const __m128i w16_w19 = _mm_sha256msg2_epu32(sigma0_part, header_w12_w15());
    store_pre(job, PRE_W16_W19_SIGMA1, _mm_sub_epi32(w16_w19, sigma0_part));
    store_pre(job, PRE_W28_W31_SIGMA0, _mm_sha256msg1_epu32(header_w12_w15(), w16_w19));
}

/* W[4i..4i+3] of the header's second block for i >= 4, from w[0..i-1]. */
static inline __m128i header_words(const __m128i w[16], unsigned i, __m128i w16_w19_sigma1,
                                   __m128i w28_w31_sigma0)
{
    switch (i) {
    case 4: /* W9..W12 are zero and the sigma1 terms are known */
        return _mm_add_epi32(_mm_sha256msg1_epu32(w[0], w[1]), w16_w19_sigma1);
    case 5: /* sha256msg1 of W4..W8 */
        return schedule_step(padding_start(), w[3], w[4]);
    case 6: /* sha256msg1 of W8..W12 */
        return schedule_step(_mm_setzero_si128(), w[4], w[5]);
    case 7:
        return schedule_step(w28_w31_sigma0, w[5], w[6]);
    default:
        return next_words(w[i - 4], w[i - 3], w[i - 2], w[i - 1]);
    }
}

/* W[4i..4i+3] of the outer hash's block for i >= 4, from w[0..i-1]. */
static inline __m128i outer_words(const __m128i w[16], unsigned i)
{
    if (i == 6) /* sha256msg1 of W8..W12 */
        return schedule_step(padding_start(), w[4], w[5]);
    return next_words(w[i - 4], w[i - 3], w[i - 2], w[i - 1]);
}

static inline __m128i xor3(__m128i x, __m128i y, __m128i z)
{
    return _mm_xor_si128(_mm_xor_si128(x, y), z);
}

/* W60 in word 0, other words undefined: sigma1(W58) on the vector ALUs
 * costs less than a sha256msg2 for the three words nobody reads. Each
 * 64-bit half holding W58 twice rotates it as a 64-bit shift. */
static inline __m128i outer_w60(const __m128i w[16])
{
    __m128i w58 = _mm_shuffle_epi32(w[14], 0xaa);
    __m128i sigma1 =
        xor3(_mm_srli_epi64(w58, 17), _mm_srli_epi64(w58, 19), _mm_srli_epi32(w58, 10));
    __m128i sigma0_part = _mm_sha256msg1_epu32(w[11], w[12]);
    __m128i partial = _mm_add_epi32(sigma0_part, _mm_alignr_epi8(w[14], w[13], 4));
    return _mm_add_epi32(partial, sigma1);
}

static uint32_t shani_candidates(const sha256d_job *job, uint32_t nonce0)
{
    shani_state st[SCAN_LANES];
    __m128i w[SCAN_LANES][16]; /* W[4i..4i+3] in w[lane][i] */

    const shani_state round2 = {load_pre(job, PRE_ROUND2_ABEF), load_pre(job, PRE_ROUND2_CDGH)};
    const __m128i w0_w2 = load_pre(job, PRE_W0_W2);
    const __m128i w16_w19_sigma1 = load_pre(job, PRE_W16_W19_SIGMA1);
    const __m128i w28_w31_sigma0 = load_pre(job, PRE_W28_W31_SIGMA0);
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        uint32_t w3 = __builtin_bswap32(nonce0 + lane); /* the header stores it little-endian */
        w[lane][0] = _mm_insert_epi32(w0_w2, (int)w3, 3);
        w[lane][1] = padding_start();
        w[lane][2] = _mm_setzero_si128();
        w[lane][3] = header_w12_w15();
        /* Rounds 0, 1 were done by prepare: run 2, 3 from the high words. */
        st[lane] = round2;
        rounds2(&st[lane], _mm_shuffle_epi32(add_round_constants(w[lane][0], 0), 0x0e));
        w[lane][4] = header_words(w[lane], 4, w16_w19_sigma1, w28_w31_sigma0);
    }
#pragma GCC unroll 15
    for (unsigned i = 1; i < 16; i++) {
        for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
            rounds4(&st[lane], add_round_constants(w[lane][i], 4 * i));
            if (i + 4 < 16) /* four groups ahead */
                w[lane][i + 4] = header_words(w[lane], i + 4, w16_w19_sigma1, w28_w31_sigma0);
        }
    }

    const shani_state midstate = {load_pre(job, PRE_MIDSTATE_ABEF),
                                  load_pre(job, PRE_MIDSTATE_CDGH)};
    const shani_state iv = pack_state(sha256_iv);
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        unpack_state(add_states(st[lane], midstate), &w[lane][0], &w[lane][1]);
        w[lane][2] = padding_start();
        w[lane][3] = outer_w12_w15();
        st[lane] = iv;
    }
#pragma GCC unroll 15
    for (unsigned i = 0; i < 15; i++) {
        for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
            rounds4(&st[lane], add_round_constants(w[lane][i], 4 * i));
            if (i + 4 < 15) /* four groups ahead; W60 comes last */
                w[lane][i + 4] = outer_words(w[lane], i + 4);
        }
    }

    uint32_t mask = 0;
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        rounds2(&st[lane], add_round_constants(outer_w60(w[lane]), 60));
        uint32_t e61 = (uint32_t)_mm_cvtsi128_si32(st[lane].abef); /* word 0 is F */
        uint32_t h7 = sha256_iv[7] + e61;
        mask |= (uint32_t)(__builtin_bswap32(h7) <= job->target_top) << lane;
    }
    return mask;
}

const cpu_sha256d_path cpu_sha256d_shani = {
    .name = "shani",
    .features = CPU_FEATURE_SHANI | CPU_FEATURE_SSE41 | CPU_FEATURE_SSSE3,
    .lanes = SCAN_LANES,
    .prepare = shani_prepare,
    .candidates = shani_candidates,
};

#endif
