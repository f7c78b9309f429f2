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

#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

typedef __m128i pad_entry[ROWS];

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

/* Finishes scryptBlockMix of every set. On entry x[s] holds (B0 ^ B1, B1)
 * and a..d the rows of B0 ^ B1; on return x[s] holds (Y0, Y1) with
 * Y0 = Salsa(B0 ^ B1) and Y1 = Salsa(Y0 ^ B1). x doubles as the
 * feed-forward copy of each Salsa input. */
static inline void block_mix_finish(__m128i x[SETS][ROWS], __m128i a[SETS], __m128i b[SETS],
                                    __m128i c[SETS], __m128i d[SETS])
{
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        a[s] = x[s][0] = _mm_add_epi32(a[s], x[s][0]);
        b[s] = x[s][1] = _mm_add_epi32(b[s], x[s][1]);
        c[s] = x[s][2] = _mm_add_epi32(c[s], x[s][2]);
        d[s] = x[s][3] = _mm_add_epi32(d[s], x[s][3]);
        a[s] = x[s][4] = _mm_xor_si128(a[s], x[s][4]);
        b[s] = x[s][5] = _mm_xor_si128(b[s], x[s][5]);
        c[s] = x[s][6] = _mm_xor_si128(c[s], x[s][6]);
        d[s] = x[s][7] = _mm_xor_si128(d[s], x[s][7]);
    }
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        x[s][4] = _mm_add_epi32(a[s], x[s][4]);
        x[s][5] = _mm_add_epi32(b[s], x[s][5]);
        x[s][6] = _mm_add_epi32(c[s], x[s][6]);
        x[s][7] = _mm_add_epi32(d[s], x[s][7]);
    }
}

/* ROMix on the blocks x of every set; set s's scratchpad is
 * pad[s * N .. s * N + N - 1]. */
static void romix(__m128i x[SETS][ROWS], pad_entry *pad)
{
    __m128i a[SETS], b[SETS], c[SETS], d[SETS];

    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m128i *v = pad[s * CPU_SCRYPT_N + i];
            for (unsigned k = 0; k < ROWS; k++)
                _mm_store_si128(v + k, x[s][k]);
            a[s] = x[s][0] = _mm_xor_si128(x[s][0], x[s][4]);
            b[s] = x[s][1] = _mm_xor_si128(x[s][1], x[s][5]);
            c[s] = x[s][2] = _mm_xor_si128(x[s][2], x[s][6]);
            d[s] = x[s][3] = _mm_xor_si128(x[s][3], x[s][7]);
        }
        block_mix_finish(x, a, b, c, d);
    }

    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            /* j = word 16 of the block: element 0 of row 4. */
            unsigned j = (unsigned)_mm_cvtsi128_si32(x[s][4]) & (CPU_SCRYPT_N - 1);
            const __m128i *v = pad[s * CPU_SCRYPT_N + j];
            for (unsigned k = 0; k < 4; k++) {
                x[s][4 + k] = _mm_xor_si128(x[s][4 + k], _mm_load_si128(v + 4 + k));
                x[s][k] = _mm_xor_si128(_mm_xor_si128(x[s][k], _mm_load_si128(v + k)), x[s][4 + k]);
            }
            a[s] = x[s][0];
            b[s] = x[s][1];
            c[s] = x[s][2];
            d[s] = x[s][3];
        }
        block_mix_finish(x, a, b, c, d);
    }
}

static void hash_sse2(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                      void *scratch)
{
    cpu_scrypt_hmac hmac[LANES];
    __m128i x[SETS][ROWS];

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        cpu_scrypt_pbkdf2_start(job, nonce0 + lane, &hmac[lane], words);
        cpu_scrypt_to_diagonal(words, diag);
        memcpy(x[lane], diag, sizeof diag);
    }

    romix(x, scratch);

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        memcpy(diag, x[lane], sizeof diag);
        cpu_scrypt_from_diagonal(diag, words);
        cpu_scrypt_pbkdf2_finish(job, &hmac[lane], words, out[lane]);
    }
}

const cpu_scrypt_path cpu_scrypt_sse2 = {
    .name = "sse2",
    .features = CPU_FEATURE_SSE2,
    .lanes = LANES,
    .scratch_bytes = LANES * CPU_SCRYPT_PAD_BYTES,
    .hash = hash_sse2,
};

#endif
