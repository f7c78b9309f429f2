/* SHA-256 building blocks for the CUDA and OpenCL kernels (FIPS 180-4),
 * written once (kernels/lode_kernel.h maps the language).
 *
 * The working variables live in a u32[8] that is never shuffled: at round
 * t, a is v[(0 - t) & 7], b is v[(1 - t) & 7], ... h is v[(7 - t) & 7], so a
 * round writes only d and h. Every caller unrolls its round loops, which
 * turns each index into a constant and keeps the array in registers. */
#ifndef LODE_KERNELS_SHA256_H
#define LODE_KERNELS_SHA256_H

#include "core/backend_support/kernels/lode_kernel.h"

LODE_CONSTANT u32 sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define LODE_SHA256_IV0 0x6a09e667u
#define LODE_SHA256_IV1 0xbb67ae85u
#define LODE_SHA256_IV2 0x3c6ef372u
#define LODE_SHA256_IV3 0xa54ff53au
#define LODE_SHA256_IV4 0x510e527fu
#define LODE_SHA256_IV5 0x9b05688cu
#define LODE_SHA256_IV6 0x1f83d9abu
#define LODE_SHA256_IV7 0x5be0cd19u

LODE_DEVICE u32 sha256_bsig0(u32 x) { return lode_rotr32(x, 2) ^ lode_rotr32(x, 13) ^ lode_rotr32(x, 22); }
LODE_DEVICE u32 sha256_bsig1(u32 x) { return lode_rotr32(x, 6) ^ lode_rotr32(x, 11) ^ lode_rotr32(x, 25); }
LODE_DEVICE u32 sha256_ssig0(u32 x) { return lode_rotr32(x, 7) ^ lode_rotr32(x, 18) ^ (x >> 3); }
LODE_DEVICE u32 sha256_ssig1(u32 x) { return lode_rotr32(x, 17) ^ lode_rotr32(x, 19) ^ (x >> 10); }
/* The small sigmas of a literal, a constant expression in both languages. */
#define LODE_SHA256_ROTR_LIT(x, n) ((u32)(x) >> (n) | (u32)(x) << (32 - (n)))
#define LODE_SHA256_SSIG0_LIT(x) (LODE_SHA256_ROTR_LIT(x, 7) ^ LODE_SHA256_ROTR_LIT(x, 18) ^ ((u32)(x) >> 3))
#define LODE_SHA256_SSIG1_LIT(x) (LODE_SHA256_ROTR_LIT(x, 17) ^ LODE_SHA256_ROTR_LIT(x, 19) ^ ((u32)(x) >> 10))

/* Each is one LOP3 (BFI on AMD). */
LODE_DEVICE u32 sha256_ch(u32 e, u32 f, u32 g) { return lode_bitselect(g, f, e); }
#ifdef LODE_KERNEL_CUDA
LODE_DEVICE u32 sha256_maj(u32 a, u32 b, u32 c) { return (a & b) | (c & (a | b)); }
#else
LODE_DEVICE u32 sha256_maj(u32 a, u32 b, u32 c) { return lode_bitselect(a, b, a ^ c); }
#endif

/* Round t (only t mod 8 matters for the naming); kw = K[t] + W[t]. */
LODE_DEVICE void sha256_round(u32 *v, int t, u32 kw)
{
#define LODE_SHA256_V(i) v[((i) - t) & 7]
    const u32 t1 = LODE_SHA256_V(7) + sha256_bsig1(LODE_SHA256_V(4)) +
                   sha256_ch(LODE_SHA256_V(4), LODE_SHA256_V(5), LODE_SHA256_V(6)) + kw;
    LODE_SHA256_V(3) += t1;
    LODE_SHA256_V(7) = t1 + sha256_bsig0(LODE_SHA256_V(0)) +
                       sha256_maj(LODE_SHA256_V(0), LODE_SHA256_V(1), LODE_SHA256_V(2));
#undef LODE_SHA256_V
}

/* Compresses one block of big-endian message words m into state. */
LODE_DEVICE void sha256_compress(u32 *state, const u32 *m)
{
    u32 w[16], v[8];
#pragma unroll
    for (int i = 0; i < 16; i++)
        w[i] = m[i];
#pragma unroll
    for (int i = 0; i < 8; i++)
        v[i] = state[i];
#pragma unroll
    for (int t = 0; t < 64; t++) {
        if (t >= 16)
            w[t & 15] += sha256_ssig1(w[(t - 2) & 15]) + w[(t - 7) & 15] + sha256_ssig0(w[(t - 15) & 15]);
        sha256_round(v, t, sha256_k[t] + w[t & 15]);
    }
    /* After 64 rounds the naming is back at a = v[0]. */
#pragma unroll
    for (int i = 0; i < 8; i++)
        state[i] += v[i];
}

LODE_DEVICE void sha256_set_iv(u32 *s)
{
    s[0] = LODE_SHA256_IV0, s[1] = LODE_SHA256_IV1, s[2] = LODE_SHA256_IV2, s[3] = LODE_SHA256_IV3;
    s[4] = LODE_SHA256_IV4, s[5] = LODE_SHA256_IV5, s[6] = LODE_SHA256_IV6, s[7] = LODE_SHA256_IV7;
}

#endif
