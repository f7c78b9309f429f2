/* SHA-512 building blocks for the CUDA and OpenCL kernels (FIPS 180-4),
 * written once (kernels/lode_kernel.h maps the language): 64-bit words,
 * which CUDA runs as pairs of 32-bit halves (a rotate is two funnel
 * shifts, a three-way XOR one LOP3 per half). */
#ifndef LODE_KERNELS_SHA512_H
#define LODE_KERNELS_SHA512_H

#include "core/backend_support/kernels/lode_kernel.h"

/* In CUDA a __constant__ table that is not const: its elements stay
 * constant-bank operands of the additions instead of 64-bit immediates
 * (the code the Momentum kernels were tuned with). */
#ifdef LODE_KERNEL_CUDA
#define LODE_SHA512_TABLE __constant__
#else
#define LODE_SHA512_TABLE __constant
#endif

LODE_SHA512_TABLE u64 sha512_k[80] = {
    0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull,
    0x3956c25bf348b538ull, 0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull,
    0xd807aa98a3030242ull, 0x12835b0145706fbeull, 0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull,
    0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull, 0xc19bf174cf692694ull,
    0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
    0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull,
    0x983e5152ee66dfabull, 0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull,
    0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull, 0x06ca6351e003826full, 0x142929670a0e6e70ull,
    0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull, 0x53380d139d95b3dfull,
    0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
    0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull,
    0xd192e819d6ef5218ull, 0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull,
    0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull, 0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull,
    0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull, 0x682e6ff3d6b2b8a3ull,
    0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
    0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull,
    0xca273eceea26619cull, 0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull,
    0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull, 0x113f9804bef90daeull, 0x1b710b35131c471bull,
    0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull, 0x431d67c49c100d4cull,
    0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull,
};

#define LODE_SHA512_IV0 0x6a09e667f3bcc908ull
#define LODE_SHA512_IV1 0xbb67ae8584caa73bull
#define LODE_SHA512_IV2 0x3c6ef372fe94f82bull
#define LODE_SHA512_IV3 0xa54ff53a5f1d36f1ull
#define LODE_SHA512_IV4 0x510e527fade682d1ull
#define LODE_SHA512_IV5 0x9b05688c2b3e6c1full
#define LODE_SHA512_IV6 0x1f83d9abfb41bd6bull
#define LODE_SHA512_IV7 0x5be0cd19137e2179ull

LODE_DEVICE u64 sha512_bsig0(u64 x) { return lode_rotr64(x, 28) ^ lode_rotr64(x, 34) ^ lode_rotr64(x, 39); }
LODE_DEVICE u64 sha512_bsig1(u64 x) { return lode_rotr64(x, 14) ^ lode_rotr64(x, 18) ^ lode_rotr64(x, 41); }
LODE_DEVICE u64 sha512_ssig0(u64 x) { return lode_rotr64(x, 1) ^ lode_rotr64(x, 8) ^ (x >> 7); }
LODE_DEVICE u64 sha512_ssig1(u64 x) { return lode_rotr64(x, 19) ^ lode_rotr64(x, 61) ^ (x >> 6); }
LODE_DEVICE u64 sha512_ch(u64 e, u64 f, u64 g) { return lode_bitselect64(g, f, e); }
LODE_DEVICE u64 sha512_maj(u64 a, u64 b, u64 c) { return (a & b) | (c & (a | b)); }

/* One compression of the single block w (16 big-endian words, overwritten
 * by the schedule) from the IV; the state words (not yet byte-swapped) go to
 * out[8]. */
LODE_DEVICE void sha512_block_from_iv(u64 *w, u64 *out)
{
    u64 a = LODE_SHA512_IV0, b = LODE_SHA512_IV1, c = LODE_SHA512_IV2, d = LODE_SHA512_IV3;
    u64 e = LODE_SHA512_IV4, f = LODE_SHA512_IV5, g = LODE_SHA512_IV6, h = LODE_SHA512_IV7;
#pragma unroll
    for (int t = 0; t < 80; t++) {
        if (t >= 16)
            w[t & 15] += sha512_ssig0(w[(t + 1) & 15]) + w[(t + 9) & 15] + sha512_ssig1(w[(t + 14) & 15]);
        const u64 t1 = h + sha512_bsig1(e) + sha512_ch(e, f, g) + sha512_k[t] + w[t & 15];
        const u64 t2 = sha512_bsig0(a) + sha512_maj(a, b, c);
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    out[0] = a + LODE_SHA512_IV0;
    out[1] = b + LODE_SHA512_IV1;
    out[2] = c + LODE_SHA512_IV2;
    out[3] = d + LODE_SHA512_IV3;
    out[4] = e + LODE_SHA512_IV4;
    out[5] = f + LODE_SHA512_IV5;
    out[6] = g + LODE_SHA512_IV6;
    out[7] = h + LODE_SHA512_IV7;
}

/* Momentum: the eight 50-bit birthdays of nonce base `base`, from the
 * SHA-512 of the 36-byte message (base, then the job's 32-byte midHash);
 * w0_low and w1..w4 are the job's constant message words
 * (momentum_consts, core/backend_support/momentum_common.h). */
LODE_DEVICE void momentum_birthdays8(u64 w0_low, u64 w1, u64 w2, u64 w3, u64 w4, u32 base, u64 *out)
{
    u64 w[16];
    w[0] = (u64)lode_bswap32(base) << 32 | w0_low;
    w[1] = w1;
    w[2] = w2;
    w[3] = w3;
    w[4] = w4;
#pragma unroll
    for (int t = 5; t < 15; t++)
        w[t] = 0;
    w[15] = 288; /* 36 bytes in bits */
    u64 h[8];
    sha512_block_from_iv(w, h);
#pragma unroll
    for (int j = 0; j < 8; j++)
        out[j] = lode_bswap64(h[j]) >> 14;
}

#endif
