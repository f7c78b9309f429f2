/* Momentum's SHA-512, 8 lanes of AVX-512F (VPRORQ rotations; VPTERNLOGQ
 * does the three-input XORs, Ch and Maj in one instruction each); built
 * with -mavx512f, run only where the CPU has it. */
#include <immintrin.h>

#include "backend-cpu/momentum_sha512_lanes.h"

#define A5_XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96)

void momentum_birthdays_avx512(const momentum_consts *c, uint32_t base, uint64_t *out)
{
    __m512i w[16];
    w[0] = _mm512_set_epi64((long long)momentum_lane_w0(c, base + 56), (long long)momentum_lane_w0(c, base + 48),
                            (long long)momentum_lane_w0(c, base + 40), (long long)momentum_lane_w0(c, base + 32),
                            (long long)momentum_lane_w0(c, base + 24), (long long)momentum_lane_w0(c, base + 16),
                            (long long)momentum_lane_w0(c, base + 8), (long long)momentum_lane_w0(c, base));
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
    momentum_lanes_finish(st, 8, out);
}
