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

/* Register sets in flight: 8 hashes, 1 MiB of scratchpad. Three sets give
 * the rounds more independent work but need 1.5 MiB of L2 per core. */
#define SETS 2
#define HASHES_PER_REG 4
#define LANES (SETS * HASHES_PER_REG)
#define ROWS 8 /* diagonal rows of a 128-byte block */

/* Fully unrolled, so that the per-set arrays below live in registers. */
#define FOR_EACH_SET _Pragma("GCC unroll 8") for (unsigned s = 0; s < SETS; s++)

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
static inline void block_mix(__m512i *dst, const __m512i *src)
{
    __m512i a[SETS], b[SETS], c[SETS], d[SETS];
    FOR_EACH_SET {
        const __m512i *x = src + s * SET_STRIDE;
        __m512i *y = dst + s * SET_STRIDE;
        a[s] = _mm512_xor_si512(_mm512_load_si512(x + 0), _mm512_load_si512(x + 4));
        b[s] = _mm512_xor_si512(_mm512_load_si512(x + 1), _mm512_load_si512(x + 5));
        c[s] = _mm512_xor_si512(_mm512_load_si512(x + 2), _mm512_load_si512(x + 6));
        d[s] = _mm512_xor_si512(_mm512_load_si512(x + 3), _mm512_load_si512(x + 7));
        _mm512_store_si512(y + 0, a[s]);
        _mm512_store_si512(y + 1, b[s]);
        _mm512_store_si512(y + 2, c[s]);
        _mm512_store_si512(y + 3, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        const __m512i *x = src + s * SET_STRIDE;
        __m512i *y = dst + s * SET_STRIDE;
        a[s] = _mm512_add_epi32(a[s], _mm512_load_si512(y + 0));
        b[s] = _mm512_add_epi32(b[s], _mm512_load_si512(y + 1));
        c[s] = _mm512_add_epi32(c[s], _mm512_load_si512(y + 2));
        d[s] = _mm512_add_epi32(d[s], _mm512_load_si512(y + 3));
        _mm512_store_si512(y + 0, a[s]);
        _mm512_store_si512(y + 1, b[s]);
        _mm512_store_si512(y + 2, c[s]);
        _mm512_store_si512(y + 3, d[s]);
        a[s] = _mm512_xor_si512(a[s], _mm512_load_si512(x + 4));
        b[s] = _mm512_xor_si512(b[s], _mm512_load_si512(x + 5));
        c[s] = _mm512_xor_si512(c[s], _mm512_load_si512(x + 6));
        d[s] = _mm512_xor_si512(d[s], _mm512_load_si512(x + 7));
        _mm512_store_si512(y + 4, a[s]);
        _mm512_store_si512(y + 5, b[s]);
        _mm512_store_si512(y + 6, c[s]);
        _mm512_store_si512(y + 7, d[s]);
    }
    REREAD_MEMORY();
    salsa8_rounds(a, b, c, d);
    FOR_EACH_SET {
        __m512i *y = dst + s * SET_STRIDE;
        _mm512_store_si512(y + 4, _mm512_add_epi32(a[s], _mm512_load_si512(y + 4)));
        _mm512_store_si512(y + 5, _mm512_add_epi32(b[s], _mm512_load_si512(y + 5)));
        _mm512_store_si512(y + 6, _mm512_add_epi32(c[s], _mm512_load_si512(y + 6)));
        _mm512_store_si512(y + 7, _mm512_add_epi32(d[s], _mm512_load_si512(y + 7)));
    }
}

/* A row built from four pad entries: 128-bit lane l from v[l]. */
static inline __m512i load_row_quad(const __m512i *const v[HASHES_PER_REG], unsigned row)
{
    __m512i quad = _mm512_load_si512(v[0] + row);
    quad = _mm512_mask_blend_epi32(0x00f0, quad, _mm512_load_si512(v[1] + row));
    quad = _mm512_mask_blend_epi32(0x0f00, quad, _mm512_load_si512(v[2] + row));
    return _mm512_mask_blend_epi32(0xf000, quad, _mm512_load_si512(v[3] + row));
}

/* Element 0 of the given 128-bit lane of a row in memory: word 16 of that
 * hash's block when the row is row 4, i.e. ROMix's j before masking. */
static inline unsigned row_element0(const __m512i *row, unsigned lane)
{
    uint32_t word;
    memcpy(&word, (const char *)row + CPU_SCRYPT_ROW_BYTES * lane, sizeof word);
    return word;
}

/* ROMix of every set's block (see SET_ENTRIES); pad is set 0's entry 0. The
 * first loop writes each BlockMix output straight into the next entry. */
static void romix(__m512i *pad)
{
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++)
        block_mix(pad + (i + 1) * ROWS, pad + i * ROWS);

    __m512i *x = pad + CPU_SCRYPT_N * ROWS;
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        FOR_EACH_SET {
            __m512i *xs = x + s * SET_STRIDE;
            const __m512i *v = pad + s * SET_STRIDE;
            const __m512i *vj[HASHES_PER_REG];
            for (unsigned lane = 0; lane < HASHES_PER_REG; lane++)
                vj[lane] = v + ROWS * (row_element0(xs + 4, lane) & (CPU_SCRYPT_N - 1));
            for (unsigned k = 0; k < ROWS; k++)
                _mm512_store_si512(xs + k,
                                   _mm512_xor_si512(_mm512_load_si512(xs + k), load_row_quad(vj, k)));
        }
        block_mix(x, x);
    }
}

/* Where a lane's part of row k sits in its set's block, in bytes. */
static inline size_t lane_row_offset(unsigned lane, unsigned k)
{
    return sizeof(__m512i) * k + CPU_SCRYPT_ROW_BYTES * (lane % HASHES_PER_REG);
}

static void hash_avx512(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                        void *scratch)
{
    __m512i *pad = scratch;
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

const cpu_scrypt_path cpu_scrypt_avx512 = {
    .name = "avx512",
    .features = CPU_FEATURE_AVX512,
    .lanes = LANES,
    .scratch_bytes = SETS * SET_STRIDE * sizeof(__m512i),
    .hash = hash_avx512,
};

#endif
