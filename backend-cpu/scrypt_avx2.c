/* scrypt path for AVX2: two hashes per YMM register (one per 128-bit half,
 * each 64-byte Salsa20 block as four diagonal rows, see scrypt_internal.h)
 * and SETS independent register sets interleaved step by step, so that the
 * serial add-shift-xor chain of one set overlaps the work of the others.
 *
 * Each pair of hashes owns a 256 KiB scratchpad whose entry i holds the
 * eight rows of both blocks as they sit in the registers; the second loop
 * reads each hash's half of a row from its own entry. */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "backend-cpu/scrypt_internal.h"

#define SETS 3 /* register sets in flight: 6 hashes, 768 KiB of scratchpad */
#define HASHES_PER_REG 2
#define LANES (SETS * HASHES_PER_REG)
#define ROWS 8 /* diagonal rows of a 128-byte block */

#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

typedef __m256i pad_entry[ROWS];

/* dst ^ rotl32(s1 + s2, n) on every 32-bit element. */
static inline __m256i xor_rotl_sum(__m256i dst, __m256i s1, __m256i s2, int n)
{
    __m256i sum = _mm256_add_epi32(s1, s2);
    dst = _mm256_xor_si256(dst, _mm256_slli_epi32(sum, n));
    return _mm256_xor_si256(dst, _mm256_srli_epi32(sum, 32 - n));
}

/* Salsa20/8 rounds (no feed-forward) on the diagonal rows a, b, c, d of
 * every set. Each half-round is the column or row step of the four
 * quarter-rounds at once; rotating b, c, d by one, two and three lanes turns
 * the columns into rows and back. */
static inline void salsa8_rounds(__m256i a[SETS], __m256i b[SETS], __m256i c[SETS],
                                 __m256i d[SETS])
{
    for (unsigned double_round = 0; double_round < 4; double_round++) {
        FOR_EACH_SET b[s] = xor_rotl_sum(b[s], a[s], d[s], 7);
        FOR_EACH_SET c[s] = xor_rotl_sum(c[s], b[s], a[s], 9);
        FOR_EACH_SET d[s] = xor_rotl_sum(d[s], c[s], b[s], 13);
        FOR_EACH_SET a[s] = xor_rotl_sum(a[s], d[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm256_shuffle_epi32(b[s], 0x93);
            c[s] = _mm256_shuffle_epi32(c[s], 0x4e);
            d[s] = _mm256_shuffle_epi32(d[s], 0x39);
        }
        FOR_EACH_SET d[s] = xor_rotl_sum(d[s], a[s], b[s], 7);
        FOR_EACH_SET c[s] = xor_rotl_sum(c[s], d[s], a[s], 9);
        FOR_EACH_SET b[s] = xor_rotl_sum(b[s], c[s], d[s], 13);
        FOR_EACH_SET a[s] = xor_rotl_sum(a[s], b[s], c[s], 18);
        FOR_EACH_SET {
            b[s] = _mm256_shuffle_epi32(b[s], 0x39);
            c[s] = _mm256_shuffle_epi32(c[s], 0x4e);
            d[s] = _mm256_shuffle_epi32(d[s], 0x93);
        }
    }
}

/* Finishes scryptBlockMix of every set, from block src[s] into block
 * dst[s] (the same block in the second loop). On entry a..d hold the rows of
 * B0 ^ B1, which dst[s][0..3] also holds, and src[s][4..7] holds B1; on
 * return dst[s] holds (Y0, Y1) with Y0 = Salsa(B0 ^ B1) and
 * Y1 = Salsa(Y0 ^ B1). Blocks stay in memory (L1): dst doubles as the
 * feed-forward copy of each Salsa input, and the registers are left to the
 * rounds. */
static inline void block_mix_finish(__m256i *const src[SETS], __m256i *const dst[SETS],
                                    __m256i a[SETS], __m256i b[SETS], __m256i c[SETS],
                                    __m256i d[SETS])
{
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        a[s] = _mm256_add_epi32(a[s], _mm256_load_si256(dst[s] + 0));
        b[s] = _mm256_add_epi32(b[s], _mm256_load_si256(dst[s] + 1));
        c[s] = _mm256_add_epi32(c[s], _mm256_load_si256(dst[s] + 2));
        d[s] = _mm256_add_epi32(d[s], _mm256_load_si256(dst[s] + 3));
        _mm256_store_si256(dst[s] + 0, a[s]);
        _mm256_store_si256(dst[s] + 1, b[s]);
        _mm256_store_si256(dst[s] + 2, c[s]);
        _mm256_store_si256(dst[s] + 3, d[s]);
        a[s] = _mm256_xor_si256(a[s], _mm256_load_si256(src[s] + 4));
        b[s] = _mm256_xor_si256(b[s], _mm256_load_si256(src[s] + 5));
        c[s] = _mm256_xor_si256(c[s], _mm256_load_si256(src[s] + 6));
        d[s] = _mm256_xor_si256(d[s], _mm256_load_si256(src[s] + 7));
        _mm256_store_si256(dst[s] + 4, a[s]);
        _mm256_store_si256(dst[s] + 5, b[s]);
        _mm256_store_si256(dst[s] + 6, c[s]);
        _mm256_store_si256(dst[s] + 7, d[s]);
    }
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        _mm256_store_si256(dst[s] + 4, _mm256_add_epi32(a[s], _mm256_load_si256(dst[s] + 4)));
        _mm256_store_si256(dst[s] + 5, _mm256_add_epi32(b[s], _mm256_load_si256(dst[s] + 5)));
        _mm256_store_si256(dst[s] + 6, _mm256_add_epi32(c[s], _mm256_load_si256(dst[s] + 6)));
        _mm256_store_si256(dst[s] + 7, _mm256_add_epi32(d[s], _mm256_load_si256(dst[s] + 7)));
    }
}

/* Row k of pad entry lo for the low hash and of entry hi for the high one. */
static inline __m256i load_row_pair(const __m256i *lo, const __m256i *hi)
{
    return _mm256_blend_epi32(_mm256_load_si256(lo), _mm256_load_si256(hi), 0xf0);
}

/* ROMix of every set. Set s's scratchpad is pad[s * (N + 1) ...]: entries
 * 0..N-1 are V, and the block itself is entry 0 on entry and entry N on
 * return; the first loop writes each BlockMix output straight into the next
 * entry. */
static void romix(pad_entry *pad)
{
    __m256i a[SETS], b[SETS], c[SETS], d[SETS];
    __m256i *src[SETS], *dst[SETS];

    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            src[s] = pad[s * (CPU_SCRYPT_N + 1) + i];
            dst[s] = src[s] + ROWS;
            a[s] = _mm256_xor_si256(_mm256_load_si256(src[s] + 0), _mm256_load_si256(src[s] + 4));
            b[s] = _mm256_xor_si256(_mm256_load_si256(src[s] + 1), _mm256_load_si256(src[s] + 5));
            c[s] = _mm256_xor_si256(_mm256_load_si256(src[s] + 2), _mm256_load_si256(src[s] + 6));
            d[s] = _mm256_xor_si256(_mm256_load_si256(src[s] + 3), _mm256_load_si256(src[s] + 7));
            _mm256_store_si256(dst[s] + 0, a[s]);
            _mm256_store_si256(dst[s] + 1, b[s]);
            _mm256_store_si256(dst[s] + 2, c[s]);
            _mm256_store_si256(dst[s] + 3, d[s]);
        }
        block_mix_finish(src, dst, a, b, c, d);
    }

    FOR_EACH_SET src[s] = dst[s] = pad[s * (CPU_SCRYPT_N + 1) + CPU_SCRYPT_N];
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m256i *x = dst[s];
            const __m256i *v = pad[s * (CPU_SCRYPT_N + 1)];
            /* j = word 16 of each hash's block: element 0 of its half of row 4. */
            __m256i row4 = _mm256_load_si256(x + 4);
            const __m256i *v_lo = v + ROWS * (_mm256_extract_epi32(row4, 0) & (CPU_SCRYPT_N - 1));
            const __m256i *v_hi = v + ROWS * (_mm256_extract_epi32(row4, 4) & (CPU_SCRYPT_N - 1));
            __m256i rows[4];
            for (unsigned k = 0; k < 4; k++) {
                __m256i b1 = _mm256_xor_si256(_mm256_load_si256(x + 4 + k),
                                              load_row_pair(v_lo + 4 + k, v_hi + 4 + k));
                _mm256_store_si256(x + 4 + k, b1);
                rows[k] = _mm256_xor_si256(
                    _mm256_xor_si256(_mm256_load_si256(x + k), load_row_pair(v_lo + k, v_hi + k)), b1);
                _mm256_store_si256(x + k, rows[k]);
            }
            a[s] = rows[0];
            b[s] = rows[1];
            c[s] = rows[2];
            d[s] = rows[3];
        }
        block_mix_finish(src, dst, a, b, c, d);
    }
}

/* Scratch layout: per set, N + 1 pad entries (see romix). */
#define SET_ENTRIES (CPU_SCRYPT_N + 1)

static void hash_avx2(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                      void *scratch)
{
    pad_entry *pad = scratch;
    cpu_scrypt_hmac hmac[LANES];

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        cpu_scrypt_pbkdf2_start(job, nonce0 + lane, &hmac[lane], words);
        cpu_scrypt_to_diagonal(words, diag);
        char *block = (char *)pad[lane / HASHES_PER_REG * SET_ENTRIES];
        for (unsigned k = 0; k < ROWS; k++)
            memcpy(block + 32 * k + 16 * (lane % HASHES_PER_REG), diag + 4 * k, 16);
    }

    romix(pad);

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        const char *block = (const char *)pad[lane / HASHES_PER_REG * SET_ENTRIES + CPU_SCRYPT_N];
        for (unsigned k = 0; k < ROWS; k++)
            memcpy(diag + 4 * k, block + 32 * k + 16 * (lane % HASHES_PER_REG), 16);
        cpu_scrypt_from_diagonal(diag, words);
        cpu_scrypt_pbkdf2_finish(job, &hmac[lane], words, out[lane]);
    }
}

const cpu_scrypt_path cpu_scrypt_avx2 = {
    .name = "avx2",
    .features = CPU_FEATURE_AVX2,
    .lanes = LANES,
    .scratch_bytes = SETS * SET_ENTRIES * sizeof(pad_entry),
    .hash = hash_avx2,
};

#endif
