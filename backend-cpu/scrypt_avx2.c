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

/* Fully unrolled, so that the per-set arrays below live in registers. */
#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

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
static inline void block_mix(__m256i *dst, const __m256i *src)
{
    __m256i a[SETS], b[SETS], c[SETS], d[SETS];
    FOR_EACH_SET {
        const __m256i *x = src + s * SET_STRIDE;
        __m256i *y = dst + s * SET_STRIDE;
        a[s] = _mm256_xor_si256(_mm256_load_si256(x + 0), _mm256_load_si256(x + 4));
        b[s] = _mm256_xor_si256(_mm256_load_si256(x + 1), _mm256_load_si256(x + 5));
        c[s] = _mm256_xor_si256(_mm256_load_si256(x + 2), _mm256_load_si256(x + 6));
        d[s] = _mm256_xor_si256(_mm256_load_si256(x + 3), _mm256_load_si256(x + 7));
        _mm256_store_si256(y + 0, a[s]);
        _mm256_store_si256(y + 1, b[s]);
        _mm256_store_si256(y + 2, c[s]);
        _mm256_store_si256(y + 3, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        const __m256i *x = src + s * SET_STRIDE;
        __m256i *y = dst + s * SET_STRIDE;
        a[s] = _mm256_add_epi32(a[s], _mm256_load_si256(y + 0));
        b[s] = _mm256_add_epi32(b[s], _mm256_load_si256(y + 1));
        c[s] = _mm256_add_epi32(c[s], _mm256_load_si256(y + 2));
        d[s] = _mm256_add_epi32(d[s], _mm256_load_si256(y + 3));
        _mm256_store_si256(y + 0, a[s]);
        _mm256_store_si256(y + 1, b[s]);
        _mm256_store_si256(y + 2, c[s]);
        _mm256_store_si256(y + 3, d[s]);
        a[s] = _mm256_xor_si256(a[s], _mm256_load_si256(x + 4));
        b[s] = _mm256_xor_si256(b[s], _mm256_load_si256(x + 5));
        c[s] = _mm256_xor_si256(c[s], _mm256_load_si256(x + 6));
        d[s] = _mm256_xor_si256(d[s], _mm256_load_si256(x + 7));
        _mm256_store_si256(y + 4, a[s]);
        _mm256_store_si256(y + 5, b[s]);
        _mm256_store_si256(y + 6, c[s]);
        _mm256_store_si256(y + 7, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        __m256i *y = dst + s * SET_STRIDE;
        _mm256_store_si256(y + 4, _mm256_add_epi32(a[s], _mm256_load_si256(y + 4)));
        _mm256_store_si256(y + 5, _mm256_add_epi32(b[s], _mm256_load_si256(y + 5)));
        _mm256_store_si256(y + 6, _mm256_add_epi32(c[s], _mm256_load_si256(y + 6)));
        _mm256_store_si256(y + 7, _mm256_add_epi32(d[s], _mm256_load_si256(y + 7)));
    }
}

/* A row built from two pad entries: 128-bit half l from v[l]. */
static inline __m256i load_row_pair(const __m256i *const v[HASHES_PER_REG], unsigned row)
{
    return _mm256_blend_epi32(_mm256_load_si256(v[0] + row), _mm256_load_si256(v[1] + row), 0xf0);
}

/* Element 0 of the given 128-bit half of a row in memory: word 16 of that
 * hash's block when the row is row 4, i.e. ROMix's j before masking. */
static inline unsigned row_element0(const __m256i *row, unsigned half)
{
    uint32_t word;
    memcpy(&word, (const char *)row + CPU_SCRYPT_ROW_BYTES * half, sizeof word);
    return word;
}

/* ROMix of every set's block (see SET_ENTRIES); pad is set 0's entry 0. The
 * first loop writes each BlockMix output straight into the next entry. */
static void romix(__m256i *pad)
{
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++)
        block_mix(pad + (i + 1) * ROWS, pad + i * ROWS);

    __m256i *x = pad + CPU_SCRYPT_N * ROWS;
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m256i *xs = x + s * SET_STRIDE;
            const __m256i *v = pad + s * SET_STRIDE;
            const __m256i *vj[HASHES_PER_REG];
            for (unsigned half = 0; half < HASHES_PER_REG; half++)
                vj[half] = v + ROWS * (row_element0(xs + 4, half) & (CPU_SCRYPT_N - 1));
            for (unsigned k = 0; k < ROWS; k++)
                _mm256_store_si256(xs + k,
                                   _mm256_xor_si256(_mm256_load_si256(xs + k), load_row_pair(vj, k)));
        }
        block_mix(x, x);
    }
}

/* Where a lane's part of row k sits in its set's block, in bytes. */
static inline size_t lane_row_offset(unsigned lane, unsigned k)
{
    return sizeof(__m256i) * k + CPU_SCRYPT_ROW_BYTES * (lane % HASHES_PER_REG);
}

static void hash_avx2(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                      void *scratch)
{
    __m256i *pad = scratch;
    cpu_scrypt_hmac hmac[LANES];

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        cpu_scrypt_pbkdf2_start(job, nonce0 + lane, &hmac[lane], words);
        cpu_scrypt_to_diagonal(words, diag);
        char *block = (char *)(pad + lane / HASHES_PER_REG * SET_STRIDE);
        for (unsigned k = 0; k < ROWS; k++)
            memcpy(block + lane_row_offset(lane, k), diag + 4 * k, CPU_SCRYPT_ROW_BYTES);
    }

    romix(pad);

    for (unsigned lane = 0; lane < LANES; lane++) {
        uint32_t words[CPU_SCRYPT_BLOCK_WORDS], diag[CPU_SCRYPT_BLOCK_WORDS];
        const char *block =
            (const char *)(pad + lane / HASHES_PER_REG * SET_STRIDE + CPU_SCRYPT_N * ROWS);
        for (unsigned k = 0; k < ROWS; k++)
            memcpy(diag + 4 * k, block + lane_row_offset(lane, k), CPU_SCRYPT_ROW_BYTES);
        cpu_scrypt_from_diagonal(diag, words);
        cpu_scrypt_pbkdf2_finish(job, &hmac[lane], words, out[lane]);
    }
}

const cpu_scrypt_path cpu_scrypt_avx2 = {
    .name = "avx2",
    .features = CPU_FEATURE_AVX2,
    .lanes = LANES,
    .scratch_bytes = SETS * SET_STRIDE * sizeof(__m256i),
    .hash = hash_avx2,
};

#endif
