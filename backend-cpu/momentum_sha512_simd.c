/* Momentum's SHA-512 on several nonce bases at once for the CPU search:
 * one 64-bit SIMD lane per hash. AVX2 gives 4 lanes (rotations are two
 * shifts and an OR), AVX-512F gives 8 (VPRORQ rotations; VPTERNLOGQ does
 * the three-input XORs, Ch and Maj in one instruction each). The functions
 * carry their own target attributes, so this file needs no ISA flags and the
 * caller picks a path at run time (momentum_sha512_lanes). */
#include "backend-cpu/momentum_cpu.h"
#include "core/base/settings.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/sha512_ref.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86_SIMD 1

/* Lane l hashes nonce base base + 8 l: its W0. */
static inline uint64_t w0_of(const momentum_consts *c, uint32_t base)
{
    return (uint64_t)__builtin_bswap32(base) << 32 | c->w0_low;
}

/* out[8 l + j]: birthday j of lane l, from the final state words. */
static inline void finish(const uint64_t *st, int lanes, uint64_t *out)
{
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < lanes; l++)
            out[8 * l + j] = __builtin_bswap64(st[j * lanes + l] + lode_ref_sha512_iv[j]) >> 14;
}

#define A2_ROTR(x, n) _mm256_or_si256(_mm256_srli_epi64((x), (n)), _mm256_slli_epi64((x), 64 - (n)))
#define A2_XOR3(x, y, z) _mm256_xor_si256(_mm256_xor_si256((x), (y)), (z))

__attribute__((target("avx2"))) static void birthdays_avx2(const momentum_consts *c, uint32_t base,
                                                           uint64_t *out)
{
    __m256i w[16];
    w[0] = _mm256_set_epi64x((long long)w0_of(c, base + 24), (long long)w0_of(c, base + 16),
                             (long long)w0_of(c, base + 8), (long long)w0_of(c, base));
    w[1] = _mm256_set1_epi64x((long long)c->w1);
    w[2] = _mm256_set1_epi64x((long long)c->w2);
    w[3] = _mm256_set1_epi64x((long long)c->w3);
    w[4] = _mm256_set1_epi64x((long long)c->w4);
    for (int t = 5; t < 15; t++)
        w[t] = _mm256_setzero_si256();
    w[15] = _mm256_set1_epi64x(288);
    __m256i s[8];
    for (int i = 0; i < 8; i++)
        s[i] = _mm256_set1_epi64x((long long)lode_ref_sha512_iv[i]);
    __m256i a = s[0], b = s[1], cc = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int t = 0; t < 80; t++) {
        if (t >= 16) {
            const __m256i x = w[(t + 1) & 15], y = w[(t + 14) & 15];
            const __m256i s0 = A2_XOR3(A2_ROTR(x, 1), A2_ROTR(x, 8), _mm256_srli_epi64(x, 7));
            const __m256i s1 = A2_XOR3(A2_ROTR(y, 19), A2_ROTR(y, 61), _mm256_srli_epi64(y, 6));
            w[t & 15] = _mm256_add_epi64(_mm256_add_epi64(w[t & 15], s0), _mm256_add_epi64(w[(t + 9) & 15], s1));
        }
        const __m256i ch = _mm256_xor_si256(g, _mm256_and_si256(e, _mm256_xor_si256(f, g)));
        const __m256i maj = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(cc, _mm256_or_si256(a, b)));
        const __m256i t1 = _mm256_add_epi64(
            _mm256_add_epi64(_mm256_add_epi64(h, A2_XOR3(A2_ROTR(e, 14), A2_ROTR(e, 18), A2_ROTR(e, 41))), ch),
            _mm256_add_epi64(_mm256_set1_epi64x((long long)lode_ref_sha512_k[t]), w[t & 15]));
        const __m256i t2 = _mm256_add_epi64(A2_XOR3(A2_ROTR(a, 28), A2_ROTR(a, 34), A2_ROTR(a, 39)), maj);
        h = g;
        g = f;
        f = e;
        e = _mm256_add_epi64(d, t1);
        d = cc;
        cc = b;
        b = a;
        a = _mm256_add_epi64(t1, t2);
    }
    uint64_t st[8 * 4];
    const __m256i fin[8] = {a, b, cc, d, e, f, g, h};
    for (int j = 0; j < 8; j++)
        _mm256_storeu_si256((__m256i *)&st[j * 4], fin[j]);
    finish(st, 4, out);
}

#define A5_XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96)

__attribute__((target("avx512f"))) static void birthdays_avx512(const momentum_consts *c, uint32_t base,
                                                                uint64_t *out)
{
    __m512i w[16];
    w[0] = _mm512_set_epi64((long long)w0_of(c, base + 56), (long long)w0_of(c, base + 48),
                            (long long)w0_of(c, base + 40), (long long)w0_of(c, base + 32),
                            (long long)w0_of(c, base + 24), (long long)w0_of(c, base + 16),
                            (long long)w0_of(c, base + 8), (long long)w0_of(c, base));
    w[1] = _mm512_set1_epi64((long long)c->w1);
    w[2] = _mm512_set1_epi64((long long)c->w2);
    w[3] = _mm512_set1_epi64((long long)c->w3);
    w[4] = _mm512_set1_epi64((long long)c->w4);
    for (int t = 5; t < 15; t++)
        w[t] = _mm512_setzero_si512();
    w[15] = _mm512_set1_epi64(288);
    __m512i a = _mm512_set1_epi64((long long)lode_ref_sha512_iv[0]);
    __m512i b = _mm512_set1_epi64((long long)lode_ref_sha512_iv[1]);
    __m512i cc = _mm512_set1_epi64((long long)lode_ref_sha512_iv[2]);
    __m512i d = _mm512_set1_epi64((long long)lode_ref_sha512_iv[3]);
    __m512i e = _mm512_set1_epi64((long long)lode_ref_sha512_iv[4]);
    __m512i f = _mm512_set1_epi64((long long)lode_ref_sha512_iv[5]);
    __m512i g = _mm512_set1_epi64((long long)lode_ref_sha512_iv[6]);
    __m512i h = _mm512_set1_epi64((long long)lode_ref_sha512_iv[7]);
    for (int t = 0; t < 80; t++) {
        if (t >= 16) {
            const __m512i x = w[(t + 1) & 15], y = w[(t + 14) & 15];
            const __m512i s0 = A5_XOR3(_mm512_ror_epi64(x, 1), _mm512_ror_epi64(x, 8), _mm512_srli_epi64(x, 7));
            const __m512i s1 = A5_XOR3(_mm512_ror_epi64(y, 19), _mm512_ror_epi64(y, 61), _mm512_srli_epi64(y, 6));
            w[t & 15] = _mm512_add_epi64(_mm512_add_epi64(w[t & 15], s0), _mm512_add_epi64(w[(t + 9) & 15], s1));
        }
        const __m512i ch = _mm512_ternarylogic_epi64(e, f, g, 0xCA);  /* e ? f : g */
        const __m512i maj = _mm512_ternarylogic_epi64(a, b, cc, 0xE8); /* majority */
        const __m512i t1 = _mm512_add_epi64(
            _mm512_add_epi64(_mm512_add_epi64(h, A5_XOR3(_mm512_ror_epi64(e, 14), _mm512_ror_epi64(e, 18),
                                                         _mm512_ror_epi64(e, 41))),
                             ch),
            _mm512_add_epi64(_mm512_set1_epi64((long long)lode_ref_sha512_k[t]), w[t & 15]));
        const __m512i t2 = _mm512_add_epi64(
            A5_XOR3(_mm512_ror_epi64(a, 28), _mm512_ror_epi64(a, 34), _mm512_ror_epi64(a, 39)), maj);
        h = g;
        g = f;
        f = e;
        e = _mm512_add_epi64(d, t1);
        d = cc;
        cc = b;
        b = a;
        a = _mm512_add_epi64(t1, t2);
    }
    uint64_t st[8 * 8];
    const __m512i fin[8] = {a, b, cc, d, e, f, g, h};
    for (int j = 0; j < 8; j++)
        _mm512_storeu_si512((void *)&st[j * 8], fin[j]);
    finish(st, 8, out);
}
#endif

static void birthdays_portable(const momentum_consts *c, uint32_t base, uint64_t *out)
{
    momentum_birthdays8(c, base, out);
}

momentum_sha512_fn momentum_sha512_pick(const char *want, unsigned *lanes, const char **name)
{
    /* want: NULL or "" = the best this CPU runs, else "avx512", "avx2" or
     * "portable" (falls back to the best below it that runs). */
    const int given = lode_setting_choice(LODE_SETTING_MOMENTUM_CPU_SHA);
    const char *env = want != NULL && want[0] != '\0' ? want
                      : given >= 0 ? lode_setting_info(LODE_SETTING_MOMENTUM_CPU_SHA)->words[given] : NULL;
#ifdef HAVE_X86_SIMD
    bool any = env == NULL || env[0] == '\0';
    __builtin_cpu_init();
    if ((any || strcmp(env, "avx512") == 0) && __builtin_cpu_supports("avx512f")) {
        *lanes = 8;
        *name = "avx512";
        return birthdays_avx512;
    }
    if ((any || strcmp(env, "avx512") == 0 || strcmp(env, "avx2") == 0) && __builtin_cpu_supports("avx2")) {
        *lanes = 4;
        *name = "avx2";
        return birthdays_avx2;
    }
#else
    (void)env;
#endif
    *lanes = 1;
    *name = "portable";
    return birthdays_portable;
}
