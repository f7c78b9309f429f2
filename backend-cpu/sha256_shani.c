/* SHA-256 on the x86 SHA extensions: the block function and the SHA-256d
 * scan. Compiled with -msha -msse4.1 -mssse3.
 *
 * sha256rnds2 can start every cycle but takes several to finish, and each
 * one needs the previous one's state, so the scan runs SCAN_LANES nonces in
 * lockstep to keep the SHA unit busy. */
#include "backend-cpu/sha256_cpu.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include "backend-cpu/cpu_features.h"

/* Four nonces hide the rnds2 latency (about 4 cycles on Zen 4); two leave
 * the unit half idle. */
#define SCAN_LANES 4

static _Alignas(16) const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* K[t..t+3] added to four message words. */
static inline __m128i add_round_constants(__m128i words, unsigned t)
{
    return _mm_add_epi32(words, _mm_load_si128((const __m128i *)&round_constants[t]));
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

/* K[t] + W[t] for the 64 rounds of a block from its 16 message words,
 * four per vector: wk[i] holds rounds 4i..4i+3. */
static inline void expand_block(__m128i wk[16], __m128i w0, __m128i w1, __m128i w2, __m128i w3)
{
    __m128i w[4] = {w0, w1, w2, w3}; /* the last 16 words, W[t..t+3] in w[(t / 4) % 4] */
#pragma GCC unroll 16
    for (unsigned i = 0; i < 16; i++) {
        if (i >= 4) {
            __m128i *oldest = &w[i % 4];
            __m128i partial = _mm_add_epi32(_mm_sha256msg1_epu32(*oldest, w[(i + 1) % 4]),
                                            _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
            *oldest = _mm_sha256msg2_epu32(partial, w[(i + 3) % 4]);
        }
        wk[i] = add_round_constants(w[i % 4], 4 * i);
    }
}

void cpu_sha256_compress_shani(uint32_t state[8], const uint8_t block[64])
{
    const __m128i be_words = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    __m128i w[4];
    for (unsigned i = 0; i < 4; i++)
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)&block[16 * i]), be_words);
    __m128i wk[16];
    expand_block(wk, w[0], w[1], w[2], w[3]);

    const shani_state start = pack_state(state);
    shani_state st = start;
#pragma GCC unroll 16
    for (unsigned i = 0; i < 16; i++)
        rounds4(&st, wk[i]);

    __m128i abcd, efgh;
    unpack_state(add_states(st, start), &abcd, &efgh);
    _mm_storeu_si128((__m128i *)&state[0], abcd);
    _mm_storeu_si128((__m128i *)&state[4], efgh);
}

/* job->pre layout: 4-word groups loaded as vectors. */
enum {
    PRE_ROUND2_ABEF = 0,  /* first hash, second block: state after rounds 0, 1 */
    PRE_ROUND2_CDGH = 4,
    PRE_MIDSTATE_ABEF = 8,
    PRE_MIDSTATE_CDGH = 12,
    PRE_W0_W2 = 16,       /* {W0, W1, W2, 0}: W3 is the nonce */
    PRE_WORDS = 20
};
_Static_assert(PRE_WORDS <= sizeof(((cpu_sha256d_job *)0)->pre) / sizeof(uint32_t), "pre overflows");

static inline __m128i load_pre(const cpu_sha256d_job *job, unsigned index)
{
    return _mm_loadu_si128((const __m128i *)&job->pre[index]);
}

static inline void store_pre(cpu_sha256d_job *job, unsigned index, __m128i words)
{
    _mm_storeu_si128((__m128i *)&job->pre[index], words);
}

static void shani_prepare(cpu_sha256d_job *job)
{
    const shani_state mid = pack_state(job->midstate);
    const __m128i w0_w2 = _mm_setr_epi32((int)job->tail[0], (int)job->tail[1], (int)job->tail[2], 0);
    shani_state st = mid;
    rounds2(&st, add_round_constants(w0_w2, 0));
    store_pre(job, PRE_ROUND2_ABEF, st.abef);
    store_pre(job, PRE_ROUND2_CDGH, st.cdgh);
    store_pre(job, PRE_MIDSTATE_ABEF, mid.abef);
    store_pre(job, PRE_MIDSTATE_CDGH, mid.cdgh);
    store_pre(job, PRE_W0_W2, w0_w2);
}

/* The message schedules are expanded ahead of the rounds (see
 * expand_block) so that the rounds keep only the lanes' states in registers:
 * a state spilled to the stack would add a store-load delay to every round. */
static uint32_t shani_candidates(const cpu_sha256d_job *job, uint32_t nonce0)
{
    shani_state st[SCAN_LANES];
    __m128i wk[SCAN_LANES][16];

    /* First hash, second block: W4..W15 are padding for 640 bits. */
    const __m128i padding_start = _mm_setr_epi32((int)0x80000000u, 0, 0, 0);
    const __m128i header_w12_w15 = _mm_setr_epi32(0, 0, 0, 640);
    const shani_state round2 = {load_pre(job, PRE_ROUND2_ABEF), load_pre(job, PRE_ROUND2_CDGH)};
    const __m128i w0_w2 = load_pre(job, PRE_W0_W2);
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        uint32_t w3 = __builtin_bswap32(nonce0 + lane); /* the header stores it little-endian */
        __m128i w0_w3 = _mm_insert_epi32(w0_w2, (int)w3, 3);
        expand_block(wk[lane], w0_w3, padding_start, _mm_setzero_si128(), header_w12_w15);
        /* Rounds 0, 1 were done by prepare: run 2, 3 from the high words. */
        st[lane] = round2;
        rounds2(&st[lane], _mm_shuffle_epi32(wk[lane][0], 0x0e));
    }
#pragma GCC unroll 15
    for (unsigned i = 1; i < 16; i++)
        for (unsigned lane = 0; lane < SCAN_LANES; lane++)
            rounds4(&st[lane], wk[lane][i]);

    /* Outer hash of the 32-byte digest: W8..W15 are padding for 256 bits. */
    const shani_state midstate = {load_pre(job, PRE_MIDSTATE_ABEF), load_pre(job, PRE_MIDSTATE_CDGH)};
    const shani_state iv = pack_state(cpu_sha256_iv);
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        __m128i abcd, efgh;
        unpack_state(add_states(st[lane], midstate), &abcd, &efgh);
        expand_block(wk[lane], abcd, efgh, padding_start, _mm_setr_epi32(0, 0, 0, 256));
        st[lane] = iv;
    }
    /* Only H7 = IV7 + (e after 61 rounds) is compared: stop after rounds 60
     * and 61, when f holds that e. */
#pragma GCC unroll 15
    for (unsigned i = 0; i < 15; i++)
        for (unsigned lane = 0; lane < SCAN_LANES; lane++)
            rounds4(&st[lane], wk[lane][i]);

    uint32_t mask = 0;
    for (unsigned lane = 0; lane < SCAN_LANES; lane++) {
        rounds2(&st[lane], wk[lane][15]);
        uint32_t e61 = (uint32_t)_mm_cvtsi128_si32(st[lane].abef); /* word 0 is F */
        uint32_t h7 = cpu_sha256_iv[7] + e61;
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
