/* scrypt path for SSE2: one hash per XMM register (each 64-byte Salsa20
 * block as four diagonal rows, see scrypt_internal.h) and SETS hashes
 * interleaved step by step, so that the serial add-shift-xor chain of one
 * hash overlaps the work of the others. Same structure as scrypt_avx2.c.
 *
 * Each hash owns a 128 KiB scratchpad whose entry i holds its eight rows as
 * they sit in the registers. */
#if defined(__x86_64__)

#include <emmintrin.h>
#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "backend-cpu/scrypt_internal.h"

#define SETS 3 /* register sets in flight: 3 hashes, 384 KiB of scratchpad */
#define LANES SETS
#define ROWS 8 /* diagonal rows of a 128-byte block */

/* Fully unrolled, so that the per-set arrays below live in registers. */
#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

/* dst ^ rotl32(s1 + s2, n) on every 32-bit element. */
static inline __m128i xor_rotl_sum(__m128i dst, __m128i s1, __m128i s2, int n)
{
    __m128i sum = _mm_add_epi32(s1, s2);
    dst = _mm_xor_si128(dst, _mm_slli_epi32(sum, n));
    return _mm_xor_si128(dst, _mm_srli_epi32(sum, 32 - n));
}

/* Salsa20/8 rounds (no feed-forward) on the diagonal rows a, b, c, d of
 * every set. Each half-round is the column or row step of the four
 * quarter-rounds at once; rotating b, c, d by one, two and three lanes turns
 * the columns into rows and back. */
static inline void salsa8_rounds(__m128i a[SETS], __m128i b[SETS], __m128i c[SETS],
                                 __m128i d[SETS])
{
    for (unsigned double_round = 0; double_round < 4; double_round++) {
        FOR_EACH_SET b[s] = xor_rotl_sum(b[s], a[s], d[s], 7);
        FOR_EACH_SET c[s] = xor_rotl_sum(c[s], b[s], a[s], 9);
        FOR_EACH_SET d[s] = xor_rotl_sum(d[s], c[s], b[s], 13);
        FOR_EACH_SET a[s] = xor_rotl_sum(a[s], d[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm_shuffle_epi32(b[s], 0x93);
            c[s] = _mm_shuffle_epi32(c[s], 0x4e);
            d[s] = _mm_shuffle_epi32(d[s], 0x39);
        }
        FOR_EACH_SET d[s] = xor_rotl_sum(d[s], a[s], b[s], 7);
        FOR_EACH_SET c[s] = xor_rotl_sum(c[s], d[s], a[s], 9);
        FOR_EACH_SET b[s] = xor_rotl_sum(b[s], c[s], d[s], 13);
        FOR_EACH_SET a[s] = xor_rotl_sum(a[s], b[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm_shuffle_epi32(b[s], 0x39);
            c[s] = _mm_shuffle_epi32(c[s], 0x4e);
            d[s] = _mm_shuffle_epi32(d[s], 0x93);
        }
    }
}

/* Scratch layout: per set, N + 1 pad entries; entries 0..N-1 are V, and
 * the block being mixed is entry 0 before ROMix and entry N after. */
#define SET_ENTRIES (CPU_SCRYPT_N + 1)
#define SET_STRIDE (SET_ENTRIES * ROWS) /* rows from a set's entry to the next set's */

/* A compiler barrier: values written to memory before it are re-read after
 * it. Placed before the rounds so that the compiler does not pin the
 * feed-forward copies (already in L1) in registers the rounds need. */
#define REREAD_MEMORY() __asm__ volatile("" ::: "memory")

/* scryptBlockMix of every set's block, set s at offset s * SET_STRIDE:
 * dst = (Y0, Y1) with Y0 = Salsa(B0 ^ B1), Y1 = Salsa(Y0 ^ B1) for
 * src = (B0, B1); dst may equal src. Each Salsa input is first written to
 * its place in dst, where the feed-forward reads it back. */
static inline void block_mix(__m128i *dst, const __m128i *src)
{
    __m128i a[SETS], b[SETS], c[SETS], d[SETS];
    FOR_EACH_SET {
        const __m128i *x = src + s * SET_STRIDE;
        __m128i *y = dst + s * SET_STRIDE;
        a[s] = _mm_xor_si128(_mm_load_si128(x + 0), _mm_load_si128(x + 4));
        b[s] = _mm_xor_si128(_mm_load_si128(x + 1), _mm_load_si128(x + 5));
        c[s] = _mm_xor_si128(_mm_load_si128(x + 2), _mm_load_si128(x + 6));
        d[s] = _mm_xor_si128(_mm_load_si128(x + 3), _mm_load_si128(x + 7));
        _mm_store_si128(y + 0, a[s]);
        _mm_store_si128(y + 1, b[s]);
        _mm_store_si128(y + 2, c[s]);
        _mm_store_si128(y + 3, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        const __m128i *x = src + s * SET_STRIDE;
        __m128i *y = dst + s * SET_STRIDE;
        a[s] = _mm_add_epi32(a[s], _mm_load_si128(y + 0));
        b[s] = _mm_add_epi32(b[s], _mm_load_si128(y + 1));
        c[s] = _mm_add_epi32(c[s], _mm_load_si128(y + 2));
        d[s] = _mm_add_epi32(d[s], _mm_load_si128(y + 3));
        _mm_store_si128(y + 0, a[s]);
        _mm_store_si128(y + 1, b[s]);
        _mm_store_si128(y + 2, c[s]);
        _mm_store_si128(y + 3, d[s]);
        a[s] = _mm_xor_si128(a[s], _mm_load_si128(x + 4));
        b[s] = _mm_xor_si128(b[s], _mm_load_si128(x + 5));
        c[s] = _mm_xor_si128(c[s], _mm_load_si128(x + 6));
        d[s] = _mm_xor_si128(d[s], _mm_load_si128(x + 7));
        _mm_store_si128(y + 4, a[s]);
        _mm_store_si128(y + 5, b[s]);
        _mm_store_si128(y + 6, c[s]);
        _mm_store_si128(y + 7, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        __m128i *y = dst + s * SET_STRIDE;
        _mm_store_si128(y + 4, _mm_add_epi32(a[s], _mm_load_si128(y + 4)));
        _mm_store_si128(y + 5, _mm_add_epi32(b[s], _mm_load_si128(y + 5)));
        _mm_store_si128(y + 6, _mm_add_epi32(c[s], _mm_load_si128(y + 6)));
        _mm_store_si128(y + 7, _mm_add_epi32(d[s], _mm_load_si128(y + 7)));
    }
}

/* Element 0 of a row in memory: word 16 of the block when the row is
 * row 4, i.e. ROMix's j before masking. */
static inline unsigned row_element0(const __m128i *row)
{
    uint32_t word;
    memcpy(&word, row, sizeof word);
    return word;
}

/* ROMix of every set's block (see SET_ENTRIES); pad is set 0's entry 0. The
 * first loop writes each BlockMix output straight into the next entry. */
static void romix(__m128i *pad)
{
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++)
        block_mix(pad + (i + 1) * ROWS, pad + i * ROWS);

    __m128i *x = pad + CPU_SCRYPT_N * ROWS;
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m128i *xs = x + s * SET_STRIDE;
            const __m128i *v = pad + s * SET_STRIDE;
            const __m128i *vj = v + ROWS * (row_element0(xs + 4) & (CPU_SCRYPT_N - 1));
            for (unsigned k = 0; k < ROWS; k++)
                _mm_store_si128(xs + k,
                                _mm_xor_si128(_mm_load_si128(xs + k), _mm_load_si128(vj + k)));
        }
        block_mix(x, x);
    }
}

static void hash_sse2(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                      void *scratch)
{
    __m128i *pad = scratch;
    cpu_scrypt_hmac hmac[LANES];

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        cpu_scrypt_pbkdf2_start(job, nonce0 + lane, &hmac[lane], words);
        cpu_scrypt_to_diagonal(words, diag);
        memcpy(pad + lane * SET_STRIDE, diag, sizeof diag); /* entry 0 */
    }

    romix(pad);

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        memcpy(diag, pad + lane * SET_STRIDE + CPU_SCRYPT_N * ROWS, sizeof diag); /* entry N */
        cpu_scrypt_from_diagonal(diag, words);
        cpu_scrypt_pbkdf2_finish(job, &hmac[lane], words, out[lane]);
    }
}

const cpu_scrypt_path cpu_scrypt_sse2 = {
    .name = "sse2",
    .features = CPU_FEATURE_SSE2,
    .lanes = LANES,
    .scratch_bytes = SETS * SET_STRIDE * sizeof(__m128i),
    .hash = hash_sse2,
};

#endif
