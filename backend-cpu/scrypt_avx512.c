/* scrypt path for AVX-512 (F + VL): four hashes per ZMM register (one per
 * 128-bit lane, each 64-byte Salsa20 block as four diagonal rows, see
 * scrypt_internal.h) and SETS independent register sets interleaved step by
 * step. Same structure as scrypt_avx2.c; vprold makes each quarter-round
 * step three instructions instead of five.
 *
 * Each group of four hashes owns a 512 KiB scratchpad whose entry i holds
 * the eight rows of the four blocks as they sit in the registers; the second
 * loop reads each hash's lane of a row from its own entry. */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "backend-cpu/scrypt_internal.h"

#define SETS 2 /* register sets in flight: 8 hashes, 1 MiB of scratchpad */
#define HASHES_PER_REG 4
#define LANES (SETS * HASHES_PER_REG)
#define ROWS 8 /* diagonal rows of a 128-byte block */

#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

typedef __m512i pad_entry[ROWS];

/* dst ^ rotl32(s1 + s2, n) on every 32-bit element. A macro, not a
 * function as in the AVX2 path: vprold's count must be an immediate even in
 * unoptimised builds. */
#define XOR_ROTL_SUM(dst, s1, s2, n) \
    _mm512_xor_si512((dst), _mm512_rol_epi32(_mm512_add_epi32((s1), (s2)), (n)))

/* Salsa20/8 rounds (no feed-forward) on the diagonal rows a, b, c, d of
 * every set. Each half-round is the column or row step of the four
 * quarter-rounds at once; rotating b, c, d by one, two and three lanes turns
 * the columns into rows and back. */
static inline void salsa8_rounds(__m512i a[SETS], __m512i b[SETS], __m512i c[SETS],
                                 __m512i d[SETS])
{
    for (unsigned double_round = 0; double_round < 4; double_round++) {
        FOR_EACH_SET b[s] = XOR_ROTL_SUM(b[s], a[s], d[s], 7);
        FOR_EACH_SET c[s] = XOR_ROTL_SUM(c[s], b[s], a[s], 9);
        FOR_EACH_SET d[s] = XOR_ROTL_SUM(d[s], c[s], b[s], 13);
        FOR_EACH_SET a[s] = XOR_ROTL_SUM(a[s], d[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm512_shuffle_epi32(b[s], (_MM_PERM_ENUM)0x93);
            c[s] = _mm512_shuffle_epi32(c[s], (_MM_PERM_ENUM)0x4e);
            d[s] = _mm512_shuffle_epi32(d[s], (_MM_PERM_ENUM)0x39);
        }
        FOR_EACH_SET d[s] = XOR_ROTL_SUM(d[s], a[s], b[s], 7);
        FOR_EACH_SET c[s] = XOR_ROTL_SUM(c[s], d[s], a[s], 9);
        FOR_EACH_SET b[s] = XOR_ROTL_SUM(b[s], c[s], d[s], 13);
        FOR_EACH_SET a[s] = XOR_ROTL_SUM(a[s], b[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm512_shuffle_epi32(b[s], (_MM_PERM_ENUM)0x39);
            c[s] = _mm512_shuffle_epi32(c[s], (_MM_PERM_ENUM)0x4e);
            d[s] = _mm512_shuffle_epi32(d[s], (_MM_PERM_ENUM)0x93);
        }
    }
}

/* Finishes scryptBlockMix of every set. On entry x[s] holds (B0 ^ B1, B1)
 * and a..d the rows of B0 ^ B1; on return x[s] holds (Y0, Y1) with
 * Y0 = Salsa(B0 ^ B1) and Y1 = Salsa(Y0 ^ B1). x doubles as the
 * feed-forward copy of each Salsa input. */
static inline void block_mix_finish(__m512i x[SETS][ROWS], __m512i a[SETS], __m512i b[SETS],
                                    __m512i c[SETS], __m512i d[SETS])
{
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        a[s] = x[s][0] = _mm512_add_epi32(a[s], x[s][0]);
        b[s] = x[s][1] = _mm512_add_epi32(b[s], x[s][1]);
        c[s] = x[s][2] = _mm512_add_epi32(c[s], x[s][2]);
        d[s] = x[s][3] = _mm512_add_epi32(d[s], x[s][3]);
        a[s] = x[s][4] = _mm512_xor_si512(a[s], x[s][4]);
        b[s] = x[s][5] = _mm512_xor_si512(b[s], x[s][5]);
        c[s] = x[s][6] = _mm512_xor_si512(c[s], x[s][6]);
        d[s] = x[s][7] = _mm512_xor_si512(d[s], x[s][7]);
    }
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        x[s][4] = _mm512_add_epi32(a[s], x[s][4]);
        x[s][5] = _mm512_add_epi32(b[s], x[s][5]);
        x[s][6] = _mm512_add_epi32(c[s], x[s][6]);
        x[s][7] = _mm512_add_epi32(d[s], x[s][7]);
    }
}

/* One row built from four pad entries: 128-bit lane l from v[l]. */
static inline __m512i load_row_quad(const __m512i *v0, const __m512i *v1, const __m512i *v2,
                                    const __m512i *v3)
{
    __m512i row = _mm512_load_si512(v0);
    row = _mm512_mask_blend_epi32(0x00f0, row, _mm512_load_si512(v1));
    row = _mm512_mask_blend_epi32(0x0f00, row, _mm512_load_si512(v2));
    return _mm512_mask_blend_epi32(0xf000, row, _mm512_load_si512(v3));
}

/* ROMix on the blocks x of every set; set s's scratchpad is
 * pad[s * N .. s * N + N - 1]. */
static void romix(__m512i x[SETS][ROWS], pad_entry *pad)
{
    __m512i a[SETS], b[SETS], c[SETS], d[SETS];

    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m512i *v = pad[s * CPU_SCRYPT_N + i];
            for (unsigned k = 0; k < ROWS; k++)
                _mm512_store_si512(v + k, x[s][k]);
            a[s] = x[s][0] = _mm512_xor_si512(x[s][0], x[s][4]);
            b[s] = x[s][1] = _mm512_xor_si512(x[s][1], x[s][5]);
            c[s] = x[s][2] = _mm512_xor_si512(x[s][2], x[s][6]);
            d[s] = x[s][3] = _mm512_xor_si512(x[s][3], x[s][7]);
        }
        block_mix_finish(x, a, b, c, d);
    }

    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            /* j = word 16 of each hash's block: element 0 of its lane of row 4. */
            __m512i row4 = x[s][4];
            unsigned j0 = (unsigned)_mm_cvtsi128_si32(_mm512_castsi512_si128(row4));
            unsigned j1 = (unsigned)_mm_cvtsi128_si32(_mm512_extracti32x4_epi32(row4, 1));
            unsigned j2 = (unsigned)_mm_cvtsi128_si32(_mm512_extracti32x4_epi32(row4, 2));
            unsigned j3 = (unsigned)_mm_cvtsi128_si32(_mm512_extracti32x4_epi32(row4, 3));
            const __m512i *v0 = pad[s * CPU_SCRYPT_N + (j0 & (CPU_SCRYPT_N - 1))];
            const __m512i *v1 = pad[s * CPU_SCRYPT_N + (j1 & (CPU_SCRYPT_N - 1))];
            const __m512i *v2 = pad[s * CPU_SCRYPT_N + (j2 & (CPU_SCRYPT_N - 1))];
            const __m512i *v3 = pad[s * CPU_SCRYPT_N + (j3 & (CPU_SCRYPT_N - 1))];
            for (unsigned k = 0; k < 4; k++) {
                x[s][4 + k] = _mm512_xor_si512(
                    x[s][4 + k], load_row_quad(v0 + 4 + k, v1 + 4 + k, v2 + 4 + k, v3 + 4 + k));
                x[s][k] = _mm512_xor_si512(
                    _mm512_xor_si512(x[s][k], load_row_quad(v0 + k, v1 + k, v2 + k, v3 + k)),
                    x[s][4 + k]);
            }
            a[s] = x[s][0];
            b[s] = x[s][1];
            c[s] = x[s][2];
            d[s] = x[s][3];
        }
        block_mix_finish(x, a, b, c, d);
    }
}

static void hash_avx512(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                        void *scratch)
{
    cpu_scrypt_hmac hmac[LANES];
    __m512i x[SETS][ROWS];

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        cpu_scrypt_pbkdf2_start(job, nonce0 + lane, &hmac[lane], words);
        cpu_scrypt_to_diagonal(words, diag);
        for (unsigned k = 0; k < ROWS; k++)
            memcpy((char *)&x[lane / HASHES_PER_REG][k] + 16 * (lane % HASHES_PER_REG),
                   diag + 4 * k, 16);
    }

    romix(x, scratch);

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        for (unsigned k = 0; k < ROWS; k++)
            memcpy(diag + 4 * k,
                   (const char *)&x[lane / HASHES_PER_REG][k] + 16 * (lane % HASHES_PER_REG), 16);
        cpu_scrypt_from_diagonal(diag, words);
        cpu_scrypt_pbkdf2_finish(job, &hmac[lane], words, out[lane]);
    }
}

const cpu_scrypt_path cpu_scrypt_avx512 = {
    .name = "avx512",
    .features = CPU_FEATURE_AVX512,
    .lanes = LANES,
    .scratch_bytes = LANES * CPU_SCRYPT_PAD_BYTES,
    .hash = hash_avx512,
};

#endif
