/* The trial-factoring sieve's arithmetic for the CUDA and OpenCL kernels,
 * written once (each backend keeps its own launch shapes and memory
 * spaces). core/base/tf_ref.h has the math.
 *
 * Index n of a class stands for the factor candidate q(n) = 2 p k + 1 with
 * k = c + 4620 n; sieve prime r divides q(n) exactly when n is congruent to
 * a root mod r. */
#ifndef LODE_KERNELS_TF_SIEVE_H
#define LODE_KERNELS_TF_SIEVE_H

#include "core/backend_support/kernels/lode_kernel.h"

/* The first offset o >= 0 of a launch starting at index n0 with r | q(n0 + o):
 * pmod = p mod r, inv = 1 / (2 p 4620) mod r (the sieve tables). */
LODE_DEVICE u32 tf_sieve_first(u32 r, u32 pmod, u32 inv, u32 class_index, u64 n0)
{
    const u64 qb = ((u64)2 * pmod * class_index + 1) % r; /* q(0) mod r */
    const u64 root = (u64)((r - qb) % r) * inv % r;       /* q(0) + root q_step = 0 mod r */
    const u32 n0r = (u32)(n0 % r);
    return (u32)(root >= n0r ? root - n0r : root + r - n0r);
}

/* Bits 0, r, 2r, ... below 64: a small prime's pattern, shifted per word. */
LODE_DEVICE u64 tf_pattern_bits(u32 r)
{
    u64 m = 0;
    for (u32 b = 0; b < 64; b += r)
        m |= (u64)1 << b;
    return m;
}

#endif
