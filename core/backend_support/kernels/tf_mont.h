/* The trial-factoring multiply for the CUDA and OpenCL kernels: 3 x 32-bit
 * Montgomery squaring with R = 2^96 (the exponentiation is squarings and
 * doublings), written once. core/base/tf_ref.h has the math.
 *
 *   tf_mont_sqr_ptx, tf_mont_sqr_ptx_narrow  the squaring in PTX (CUDA, and
 *       OpenCL on NVIDIA): one IMAD.WIDE per product (see below)
 *   tf_mont_sqr_c   the same squaring in portable C (other OpenCL devices)
 *   u96_*           96-bit helpers: C, and PTX twins (*_ptx) for CUDA
 *   tf_mont_init_fp64  one = R mod q and the start 2^y R mod q from double
 *       estimates (2^64 <= q < 2^94; CUDA, and OpenCL with doubles)
 *
 * a^2 / R mod q for a < 2^95: (a^2 + m q) / R, m = -a^2 / q mod R < R, is
 * below a^2 / R + q. So a < q gives a result below 2q, and (q < 2^92) a < 4q
 * too: the lazy exponentiation leaves it so; the full one subtracts q once
 * more. */
#ifndef LODE_KERNELS_TF_MONT_H
#define LODE_KERNELS_TF_MONT_H

#include "core/backend_support/kernels/lode_kernel.h"

typedef struct u96 {
    u32 w0, w1, w2;
} u96;

/* A u96 value from its words. */
#ifdef __cplusplus
#define LODE_U96(w0, w1, w2) (u96{(w0), (w1), (w2)})
#else
#define LODE_U96(w0, w1, w2) ((u96){(w0), (w1), (w2)})
#endif

/* ---- portable C ---------------------------------------------------------- */

/* A 96-bit accumulator: lo (64 bits) and hi (32). */
#define TF_ACC(p)                                                                                   \
    do {                                                                                            \
        u64 p_ = (p);                                                                               \
        lo += p_;                                                                                   \
        hi += lo < p_;                                                                              \
    } while (0)
#define TF_SHIFT32()                                                                                \
    do {                                                                                            \
        lo = (lo >> 32) | ((u64)hi << 32);                                                          \
        hi = 0;                                                                                     \
    } while (0)

/* a - m if a >= m. */
LODE_DEVICE u96 u96_sub_if_ge(u96 a, u96 m)
{
    u64 d0 = (u64)a.w0 - m.w0;
    u64 d1 = (u64)a.w1 - m.w1 - (d0 >> 63);
    u64 d2 = (u64)a.w2 - m.w2 - (d1 >> 63);
    if ((d2 >> 63) == 0) {
        a.w0 = (u32)d0;
        a.w1 = (u32)d1;
        a.w2 = (u32)d2;
    }
    return a;
}

/* a^2 / R mod q (below 2q, not reduced), product scanning. */
LODE_DEVICE u96 tf_mont_sqr_c(u96 a, u96 q, u32 qinv)
{
    u64 lo = 0;
    u32 hi = 0;
    const u64 a01 = (u64)a.w0 * a.w1, a02 = (u64)a.w0 * a.w2, a12 = (u64)a.w1 * a.w2;
    /* column 0 */
    TF_ACC((u64)a.w0 * a.w0);
    u32 m0 = (u32)lo * qinv;
    TF_ACC((u64)m0 * q.w0);
    TF_SHIFT32();
    /* column 1 */
    TF_ACC(a01);
    TF_ACC(a01);
    TF_ACC((u64)m0 * q.w1);
    u32 m1 = (u32)lo * qinv;
    TF_ACC((u64)m1 * q.w0);
    TF_SHIFT32();
    /* column 2 */
    TF_ACC(a02);
    TF_ACC(a02);
    TF_ACC((u64)a.w1 * a.w1);
    TF_ACC((u64)m0 * q.w2);
    TF_ACC((u64)m1 * q.w1);
    u32 m2 = (u32)lo * qinv;
    TF_ACC((u64)m2 * q.w0);
    TF_SHIFT32();
    /* column 3 */
    TF_ACC(a12);
    TF_ACC(a12);
    TF_ACC((u64)m1 * q.w2);
    TF_ACC((u64)m2 * q.w1);
    u96 r;
    r.w0 = (u32)lo;
    TF_SHIFT32();
    /* column 4 */
    TF_ACC((u64)a.w2 * a.w2);
    TF_ACC((u64)m2 * q.w2);
    r.w1 = (u32)lo;
    r.w2 = (u32)(lo >> 32);
    return r;
}
#undef TF_ACC
#undef TF_SHIFT32

/* 2a, not reduced (a < 2^95). */
LODE_DEVICE u96 u96_shl1(u96 a)
{
    u96 s;
    s.w0 = a.w0 << 1;
    s.w1 = (a.w1 << 1) | (a.w0 >> 31);
    s.w2 = (a.w2 << 1) | (a.w1 >> 31);
    return s;
}

/* 2a reduced below m (a < m < 2^95). */
LODE_DEVICE u96 u96_double_mod(u96 a, u96 m) { return u96_sub_if_ge(u96_shl1(a), m); }

LODE_DEVICE bool u96_eq(u96 a, u96 b) { return a.w0 == b.w0 && a.w1 == b.w1 && a.w2 == b.w2; }


#ifdef LODE_KERNEL_PTX
/* ---- PTX (CUDA; OpenCL on NVIDIA) ------------------------------------------
 *
 * The squaring: one IMAD.WIDE per 32x32 product (the bottleneck is the
 * FMA-heavy pipe): the products on even words add into e0..e5 and those on
 * odd words into o1..o5, so every fused addend is an aligned register pair
 * and no moves are needed (a reduction word's q0, q2 products go to one
 * side, its q1 product to the other). The cross products come doubled: with
 * b1 = 2 a1 mod 2^32, b2 = 2 a2 + a1 / 2^31 and d2 = 2 a2 (all < 2^32 as
 * a < 2^95),
 * a^2 = a0^2 + a0 (b1 + 2^32 b2) 2^32 + a1^2 2^64 + a1 d2 2^96 + a2^2 2^128.
 * Carries: a^2 + m q < 2^190 + 2^191, so none leaves e5 or o5; a1^2 + 1,
 * a2^2 + 1 and a1 d2 + 1 are below 2^64, so those madc.hi end a chain.
 * A2SQ puts a2^2 plus the carry into e4, e5: LODE_TF_A2SQ_WIDE, or, for
 * a < 2^80 (q < 2^78 in the lazy exponentiation: a2 < 2^16, a2^2 + 1 <
 * 2^32), LODE_TF_A2SQ_NARROW, one wide product fewer. Operands: %0..%2 the
 * result, %3..%5 a, %6..%8 q, %9 qinv = -1 / q mod 2^32. */
#define LODE_TF_A2SQ_WIDE                                                                           \
    "madc.lo.cc.u32  e4, %5, %5, 0;\n\t"                                                            \
    "madc.hi.u32     e5, %5, %5, 0;\n\t"
#define LODE_TF_A2SQ_NARROW                                                                         \
    "madc.lo.cc.u32  e4, %5, %5, 0;\n\t"                                                            \
    "addc.u32        e5, 0, 0;\n\t"
#define LODE_TF_MONT_SQR_PTX(A2SQ)                                                                  \
    "{\n\t"                                                                                         \
    ".reg .u32 e0, e1, e2, e3, e4, e5, o1, o2, o3, o4, o5, b1, b2, d2, m, s;\n\t"                   \
    "shf.l.clamp.b32 b1, 0, %4, 1;\n\t"                                                             \
    "shf.l.clamp.b32 b2, %4, %5, 1;\n\t"                                                            \
    "shf.l.wrap.b32  d2, %5, %5, 1;\n\t"                                                            \
    /* word 0: m from a0^2; the even products */                                                    \
    "mul.lo.u32      e0, %3, %3;\n\t"                                                               \
    "mul.hi.u32      e1, %3, %3;\n\t"                                                               \
    "mul.lo.u32      m, e0, %9;\n\t"                                                                \
    "mad.lo.cc.u32   e0, m, %6, e0;\n\t"                                                            \
    "madc.hi.cc.u32  e1, m, %6, e1;\n\t"                                                            \
    "madc.lo.cc.u32  e2, %4, %4, 0;\n\t"                                                            \
    "madc.hi.u32     e3, %4, %4, 0;\n\t"                                                            \
    "mad.lo.cc.u32   e2, %3, b2, e2;\n\t"                                                           \
    "madc.hi.cc.u32  e3, %3, b2, e3;\n\t"                                                           \
    A2SQ /* e4, e5 = a2^2 + the carry */                                                            \
    "mad.lo.cc.u32   e2, m, %8, e2;\n\t"                                                            \
    "madc.hi.cc.u32  e3, m, %8, e3;\n\t"                                                            \
    "addc.cc.u32     e4, e4, 0;\n\t"                                                                \
    "addc.u32        e5, e5, 0;\n\t"                                                                \
    /* the odd products */                                                                          \
    "mul.lo.u32      o1, %3, b1;\n\t"                                                               \
    "mul.hi.u32      o2, %3, b1;\n\t"                                                               \
    "mad.lo.cc.u32   o1, m, %7, o1;\n\t"                                                            \
    "madc.hi.cc.u32  o2, m, %7, o2;\n\t"                                                            \
    "madc.lo.cc.u32  o3, %4, d2, 0;\n\t"                                                            \
    "madc.hi.u32     o4, %4, d2, 0;\n\t"                                                            \
    /* word 1 = e1 + o1 */                                                                          \
    "add.u32         s, e1, o1;\n\t"                                                                \
    "mul.lo.u32      m, s, %9;\n\t"                                                                 \
    "mad.lo.cc.u32   o1, m, %6, o1;\n\t"                                                            \
    "madc.hi.cc.u32  o2, m, %6, o2;\n\t"                                                            \
    "madc.lo.cc.u32  o3, m, %8, o3;\n\t"                                                            \
    "madc.hi.cc.u32  o4, m, %8, o4;\n\t"                                                            \
    "addc.u32        o5, 0, 0;\n\t"                                                                 \
    "mad.lo.cc.u32   e2, m, %7, e2;\n\t"                                                            \
    "madc.hi.cc.u32  e3, m, %7, e3;\n\t"                                                            \
    "addc.cc.u32     e4, e4, 0;\n\t"                                                                \
    "addc.u32        e5, e5, 0;\n\t"                                                                \
    /* word 2 = e2 + o2 + the carry of word 1 */                                                    \
    "add.cc.u32      s, e1, o1;\n\t"                                                                \
    "addc.u32        s, e2, o2;\n\t"                                                                \
    "mul.lo.u32      m, s, %9;\n\t"                                                                 \
    "mad.lo.cc.u32   e2, m, %6, e2;\n\t"                                                            \
    "madc.hi.cc.u32  e3, m, %6, e3;\n\t"                                                            \
    "madc.lo.cc.u32  e4, m, %8, e4;\n\t"                                                            \
    "madc.hi.u32     e5, m, %8, e5;\n\t"                                                            \
    "mad.lo.cc.u32   o3, m, %7, o3;\n\t"                                                            \
    "madc.hi.cc.u32  o4, m, %7, o4;\n\t"                                                            \
    "addc.u32        o5, o5, 0;\n\t"                                                                \
    /* words 3..5 of e + o (words 0..2 are zero) */                                                 \
    "add.cc.u32      s, e1, o1;\n\t"                                                                \
    "addc.cc.u32     s, e2, o2;\n\t"                                                                \
    "addc.cc.u32     %0, e3, o3;\n\t"                                                               \
    "addc.cc.u32     %1, e4, o4;\n\t"                                                               \
    "addc.u32        %2, e5, o5;\n\t"                                                               \
    "}"
#define LODE_TF_MONT_SQR_ASM(r, a, q, qinv, A2SQ)                                                   \
    asm(LODE_TF_MONT_SQR_PTX(A2SQ)                                                                  \
        : "=&r"(r.w0), "=&r"(r.w1), "=&r"(r.w2)                                                     \
        : "r"(a.w0), "r"(a.w1), "r"(a.w2), "r"(q.w0), "r"(q.w1), "r"(q.w2), "r"(qinv))

/* a^2 / R mod q, below 2q (a < 2^95). */
LODE_DEVICE u96 tf_mont_sqr_ptx(u96 a, u96 q, u32 qinv)
{
    u96 r;
    LODE_TF_MONT_SQR_ASM(r, a, q, qinv, LODE_TF_A2SQ_WIDE);
    return r;
}

/* The same for a < 2^80. */
LODE_DEVICE u96 tf_mont_sqr_ptx_narrow(u96 a, u96 q, u32 qinv)
{
    u96 r;
    LODE_TF_MONT_SQR_ASM(r, a, q, qinv, LODE_TF_A2SQ_NARROW);
    return r;
}

/* *r -= q if *r >= q (one subtract-with-borrow chain; in place, which keeps
 * the CUDA code of the squaring that calls it as it was measured). */
LODE_DEVICE void u96_sub_if_ge_ptx(u96 *r, u96 q)
{
    u32 d0, d1, d2, borrow;
    asm("sub.cc.u32 %0, %4, %7;\n\t"
        "subc.cc.u32 %1, %5, %8;\n\t"
        "subc.cc.u32 %2, %6, %9;\n\t"
        "subc.u32 %3, 0, 0;"
        : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(borrow)
        : "r"(r->w0), "r"(r->w1), "r"(r->w2), "r"(q.w0), "r"(q.w1), "r"(q.w2));
    if (borrow == 0)
        *r = LODE_U96(d0, d1, d2);
}

/* 2a, reduced below q (a < q). */
LODE_DEVICE u96 u96_double_mod_ptx(u96 a, u96 q)
{
    u32 s0, s1, s2, d0, d1, d2, borrow;
    asm("add.cc.u32 %0, %7, %7;\n\t"
        "addc.cc.u32 %1, %8, %8;\n\t"
        "addc.u32 %2, %9, %9;\n\t"
        "sub.cc.u32 %3, %0, %10;\n\t"
        "subc.cc.u32 %4, %1, %11;\n\t"
        "subc.cc.u32 %5, %2, %12;\n\t"
        "subc.u32 %6, 0, 0;"
        : "=&r"(s0), "=&r"(s1), "=&r"(s2), "=&r"(d0), "=&r"(d1), "=&r"(d2), "=r"(borrow)
        : "r"(a.w0), "r"(a.w1), "r"(a.w2), "r"(q.w0), "r"(q.w1), "r"(q.w2));
    return borrow ? LODE_U96(s0, s1, s2) : LODE_U96(d0, d1, d2);
}

/* 2^b a for b = 0 or 1, not reduced (a < 2^95): funnel shifts, no branch. */
LODE_DEVICE u96 u96_shl_ptx(u96 a, u32 b)
{
    u96 r;
    asm("shf.l.clamp.b32 %2, %4, %5, %6;\n\t"
        "shf.l.clamp.b32 %1, %3, %4, %6;\n\t"
        "shl.b32 %0, %3, %6;"
        : "=&r"(r.w0), "=&r"(r.w1), "=&r"(r.w2)
        : "r"(a.w0), "r"(a.w1), "r"(a.w2), "r"(b));
    return r;
}
#endif /* LODE_KERNEL_PTX */

/* v mod q for v < 4q (where the lazy exponentiation ends). */
LODE_DEVICE u96 tf_reduce_below_4q(u96 v, u96 q)
{
#ifdef LODE_KERNEL_PTX
    u96_sub_if_ge_ptx(&v, u96_shl1(q));
    u96_sub_if_ge_ptx(&v, q);
    return v;
#else
    return u96_sub_if_ge(u96_sub_if_ge(v, u96_shl1(q)), q);
#endif
}

/* ---- the start of the exponentiation ---------------------------------------
 *
 * one = 2^96 mod q and start = 2^y one mod q (y < 32) for 2^64 <= q < 2^94,
 * from double-precision quotient estimates: both quotients are below 2^32,
 * so each estimate is within one of the truth, e - 1 never exceeds it and
 * the remainder x - (e - 1) q stays below 3q: two conditional subtractions
 * leave it below q. In PTX (where it can be written) the products and
 * subtractions are carry chains, a few instructions each; in C, 64-bit
 * words. */
#if defined(LODE_KERNEL_CUDA) || defined(cl_khr_fp64)
#ifdef LODE_KERNEL_OPENCL
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The low 96 bits of x - e q, reduced below q: e <= floor(x / q) and
 * x - e q < 3q. x is (x0, x1, x2) plus 2^96 x3 (which wraps away). */
LODE_DEVICE u96 tf_reduce_estimate(u32 x0, u32 x1, u32 x2, u32 e, u96 q)
{
#ifdef LODE_KERNEL_PTX
    u96 r;
    asm("{\n\t"
        ".reg .u32 t0, t1, t2;\n\t"
        "mul.lo.u32      t0, %6, %7;\n\t"
        "mul.hi.u32      t1, %6, %7;\n\t"
        "mad.lo.cc.u32   t1, %6, %8, t1;\n\t"
        "madc.hi.u32     t2, %6, %8, 0;\n\t"
        "mad.lo.u32      t2, %6, %9, t2;\n\t"
        "sub.cc.u32      %0, %3, t0;\n\t"
        "subc.cc.u32     %1, %4, t1;\n\t"
        "subc.u32        %2, %5, t2;\n\t"
        "}"
        : "=&r"(r.w0), "=&r"(r.w1), "=&r"(r.w2)
        : "r"(x0), "r"(x1), "r"(x2), "r"(e), "r"(q.w0), "r"(q.w1), "r"(q.w2));
    u96_sub_if_ge_ptx(&r, q);
    u96_sub_if_ge_ptx(&r, q);
    return r;
#else
    u64 p0 = (u64)e * q.w0, p1 = (u64)e * q.w1 + (p0 >> 32), p2 = (u64)e * q.w2 + (p1 >> 32);
    u64 d0 = (u64)x0 - (u32)p0;
    u64 d1 = (u64)x1 - (u32)p1 - (d0 >> 63);
    u64 d2 = (u64)x2 - (u32)p2 - (d1 >> 63);
    return u96_sub_if_ge(u96_sub_if_ge(LODE_U96((u32)d0, (u32)d1, (u32)d2), q), q);
#endif
}

/* floor(d) - 1 as a quotient estimate in [0, 2^32). */
LODE_DEVICE u32 tf_estimate_below(double d)
{
    const double e = floor(d);
    return e >= 1.0 ? (u32)(fmin(e, 4294967296.0) - 1.0) : 0u;
}

LODE_DEVICE void tf_mont_init_fp64(u96 q, u32 y, u96 *one, u96 *start)
{
    /* q and x to doubles from their top 64 bits and the rest: the words
     * below add less than one to the quotients' estimates. */
    const double qd = (double)((u64)q.w2 << 32 | q.w1) * 0x1p32 + (double)q.w0;
    const double inv = 1.0 / qd;
    const u96 r = tf_reduce_estimate(0, 0, 0, tf_estimate_below(0x1p96 * inv), q); /* 2^96: x3 = 1 */
    u32 x0, x1, x2, x3;
#ifdef LODE_KERNEL_PTX
    asm("shf.l.clamp.b32 %3, %6, 0, %7;\n\t"
        "shf.l.clamp.b32 %2, %5, %6, %7;\n\t"
        "shf.l.clamp.b32 %1, %4, %5, %7;\n\t"
        "shl.b32         %0, %4, %7;"
        : "=&r"(x0), "=&r"(x1), "=&r"(x2), "=&r"(x3)
        : "r"(r.w0), "r"(r.w1), "r"(r.w2), "r"(y));
#else
    x0 = r.w0 << y;
    x1 = y ? (r.w1 << y) | (r.w0 >> (32 - y)) : r.w1;
    x2 = y ? (r.w2 << y) | (r.w1 >> (32 - y)) : r.w2;
    x3 = y ? r.w2 >> (32 - y) : 0;
#endif
    const double xd = (double)((u64)x3 << 32 | x2) * 0x1p64 + (double)((u64)x1 << 32 | x0);
    *one = r;
    *start = tf_reduce_estimate(x0, x1, x2, tf_estimate_below(xd * inv), q);
}
#endif

#endif
