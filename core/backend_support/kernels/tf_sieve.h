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

/* The small primes a segment clears by pattern (several multiples per
 * 32-bit word): 13 .. 61, the first table entries for every exponent
 * (p >= LODE_TF_MIN_EXPONENT is never among them). Constants, so the
 * unrolled pattern loop needs no loads of them and folds each prime's
 * pattern and steps. */
#define TF_PATTERN_PRIMES 13u
LODE_DEVICE u32 tf_pattern_prime(u32 i)
{
    switch (i) {
    case 0: return 13; case 1: return 17; case 2: return 19; case 3: return 23;
    case 4: return 29; case 5: return 31; case 6: return 37; case 7: return 41;
    case 8: return 43; case 9: return 47; case 10: return 53; case 11: return 59;
    default: return 61;
    }
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
