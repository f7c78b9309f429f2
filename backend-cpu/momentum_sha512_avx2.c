/* Momentum's SHA-512, 4 lanes of AVX2 (rotations are two shifts and an
 * OR); built with -mavx2, run only where the CPU has it. */
#include <immintrin.h>

#include "backend-cpu/momentum_sha512_lanes.h"

#define A2_ROTR(x, n) _mm256_or_si256(_mm256_srli_epi64((x), (n)), _mm256_slli_epi64((x), 64 - (n)))
#define A2_XOR3(x, y, z) _mm256_xor_si256(_mm256_xor_si256((x), (y)), (z))

void momentum_birthdays_avx2(const momentum_consts *c, uint32_t base, uint64_t *out)
{
    __m256i w[16];
    w[0] = _mm256_set_epi64x((long long)momentum_lane_w0(c, base + 24), (long long)momentum_lane_w0(c, base + 16),
                             (long long)momentum_lane_w0(c, base + 8), (long long)momentum_lane_w0(c, base));
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
    momentum_lanes_finish(st, 4, out);
}
