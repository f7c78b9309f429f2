/* Salsa20/8 and scrypt's BlockMix (r = 1) for the CUDA and OpenCL kernels,
 * one hash in one thread (kernels/lode_kernel.h maps the language). The
 * layouts that spread a hash over four lanes (CUDA romix, OpenCL
 * romix_quad) exchange words between the rounds and keep their own round
 * loops, on salsa_qr. */
#ifndef LODE_KERNELS_SALSA_H
#define LODE_KERNELS_SALSA_H

#include "core/backend_support/kernels/lode_kernel.h"

/* x ^ rotl(a + b, n): one step of a quarter-round. */
LODE_DEVICE u32 salsa_qr(u32 x, u32 a, u32 b, unsigned n) { return x ^ lode_rotl32(a + b, n); }

/* The quarter-round on words a, b, c, d of x (constant indices once
 * inlined). */
LODE_DEVICE void salsa_quarter(u32 *x, int a, int b, int c, int d)
{
    x[b] = salsa_qr(x[b], x[a], x[d], 7);
    x[c] = salsa_qr(x[c], x[b], x[a], 9);
    x[d] = salsa_qr(x[d], x[c], x[b], 13);
    x[a] = salsa_qr(x[a], x[d], x[c], 18);
}

/* b = Salsa20/8(b) + b on 16 words. */
LODE_DEVICE void salsa8(u32 *b)
{
    u32 x[16];
#pragma unroll
    for (int i = 0; i < 16; i++)
        x[i] = b[i];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        salsa_quarter(x, 0, 4, 8, 12); /* columns */
        salsa_quarter(x, 5, 9, 13, 1);
        salsa_quarter(x, 10, 14, 2, 6);
        salsa_quarter(x, 15, 3, 7, 11);
        salsa_quarter(x, 0, 1, 2, 3); /* rows */
        salsa_quarter(x, 5, 6, 7, 4);
        salsa_quarter(x, 10, 11, 8, 9);
        salsa_quarter(x, 15, 12, 13, 14);
    }
#pragma unroll
    for (int i = 0; i < 16; i++)
        b[i] += x[i];
}

/* BlockMix for r = 1 on X = x0 || x1 (16 words each). */
LODE_DEVICE void salsa_block_mix(u32 *x0, u32 *x1)
{
#pragma unroll
    for (int i = 0; i < 16; i++)
        x0[i] ^= x1[i];
    salsa8(x0);
#pragma unroll
    for (int i = 0; i < 16; i++)
        x1[i] ^= x0[i];
    salsa8(x1);
}

#endif
