/* The portability header of the GPU kernels: one source for CUDA (.cu,
 * nvcc) and OpenCL C 1.2 (.cl, compiled per device at run time).
 *
 * A shared primitive (kernels/sha256.h, sha512.h, salsa.h, tf_mont.h, tf_sieve.h) is
 * written once against the names below; each backend's kernels include it.
 * What differs between the two languages is mapped here, once:
 *
 *   qualifiers  LODE_DEVICE (an inlined device function), LODE_KERNEL (an
 *               entry point), LODE_CONSTANT (a table in constant memory whose
 *               elements the compiler may fold into instructions),
 *               LODE_GLOBAL / LODE_LOCAL (address spaces; empty in CUDA)
 *   types       u32, u64 (as in hashcat's inc_types.h)
 *   bit ops     lode_rotl32 / lode_rotr32 / lode_rotr64 (funnel shifts in
 *               CUDA, rotate() in OpenCL), lode_bswap32 / lode_bswap64
 *               (PRMT in CUDA), lode_bitselect (OpenCL's bitselect(); one
 *               LOP3 either way), lode_atomic_inc
 *   PTX         where PTX can be written (LODE_KERNEL_PTX: CUDA, and
 *               OpenCL on NVIDIA when the host defines LODE_NV_PTX, since
 *               NVIDIA's OpenCL compiler takes inline asm): lode_shfl4 (a
 *               shuffle within groups of four lanes) and lode_ballot (a
 *               full-warp vote on x != 0). Other OpenCL devices take other paths in
 *               the kernels (local memory, sub-groups), not these.
 *
 * OpenCL: backend-opencl/EmbedKernels.cmake replaces every
 * #include "core/backend_support/kernels/..." of a .cl file by the file
 * itself (recursively) when it embeds the kernels, so the run-time compile
 * needs no include path. Keep such includes on a line of their own. */
#ifndef LODE_KERNEL_H
#define LODE_KERNEL_H

#if defined(__CUDACC__)
#define LODE_KERNEL_CUDA 1
#elif defined(__OPENCL_C_VERSION__) || defined(__OPENCL_VERSION__)
#define LODE_KERNEL_OPENCL 1
#else
#error "lode_kernel.h is for CUDA and OpenCL C kernels"
#endif

#if defined(LODE_KERNEL_CUDA) || defined(LODE_NV_PTX)
#define LODE_KERNEL_PTX 1
#endif

/* AMD's OpenCL compiler (clang for amdgcn) takes its own paths where its
 * code was visibly worse (#42): the host passes LODE_VENDOR_ID, and
 * __AMDGCN__ covers the programs built without it. */
#if defined(LODE_KERNEL_OPENCL) && (defined(__AMDGCN__) || (defined(LODE_VENDOR_ID) && LODE_VENDOR_ID == 0x1002))
#ifndef LODE_KERNEL_AMD /* tests force it with -D LODE_KERNEL_AMD=1 on other devices */
#define LODE_KERNEL_AMD 1
#endif
#endif

#ifdef LODE_KERNEL_CUDA

#include <stdint.h>

typedef uint32_t u32;
typedef uint64_t u64;

#define LODE_DEVICE __device__ __forceinline__
#define LODE_KERNEL extern "C" __global__
#define LODE_CONSTANT __device__ __constant__ static const
#define LODE_GLOBAL
#define LODE_LOCAL

/* One SHF each: the funnel shift of a word with itself is a rotate. */
LODE_DEVICE u32 lode_rotr32(u32 x, unsigned n) { return __funnelshift_r(x, x, n); }
LODE_DEVICE u32 lode_rotl32(u32 x, unsigned n) { return __funnelshift_l(x, x, n); }
/* Two SHF on the halves (n a constant once inlined: the branch folds). */
LODE_DEVICE u64 lode_rotr64(u64 x, unsigned n)
{
    const u32 lo = (u32)x, hi = (u32)(x >> 32);
    if (n < 32)
        return (u64)__funnelshift_r(hi, lo, n) << 32 | __funnelshift_r(lo, hi, n);
    return (u64)__funnelshift_r(lo, hi, n & 31) << 32 | __funnelshift_r(hi, lo, n & 31);
}
LODE_DEVICE u32 lode_bswap32(u32 x) { return __byte_perm(x, 0, 0x0123); }
LODE_DEVICE u64 lode_bswap64(u64 x)
{
    return (u64)__byte_perm((u32)x, 0, 0x0123) << 32 | __byte_perm((u32)(x >> 32), 0, 0x0123);
}
/* OpenCL's bitselect(a, b, c): b where c is set, else a. */
LODE_DEVICE u32 lode_bitselect(u32 a, u32 b, u32 c) { return ((b ^ a) & c) ^ a; }
LODE_DEVICE u64 lode_bitselect64(u64 a, u64 b, u64 c) { return a ^ (c & (b ^ a)); }
LODE_DEVICE u32 lode_atomic_inc(u32 *p) { return atomicAdd(p, 1u); }

/* x of lane src (0..3) of this lane's group of four; every lane of the
 * warp must take part. */
LODE_DEVICE u32 lode_shfl4(u32 x, int src) { return __shfl_sync(0xffffffffu, x, src, 4); }
/* Bit l set where lane l of the (whole, converged) warp has x != 0. */
LODE_DEVICE u32 lode_ballot(u32 x) { return __ballot_sync(0xffffffffu, x != 0); }

#else /* OpenCL C */

typedef uint u32;
typedef ulong u64;

#ifdef LODE_KERNEL_AMD
/* clang keeps a large function called twice (the two variants of a kernel)
 * out of line; its pointer arguments then point at a private copy of the
 * kernel's by-value parameters, in scratch memory. */
#define LODE_DEVICE static inline __attribute__((always_inline))
#else
#define LODE_DEVICE static inline
#endif
#define LODE_KERNEL __kernel
#define LODE_CONSTANT __constant
#define LODE_GLOBAL __global
#define LODE_LOCAL __local

/* rotate() is a left rotate: one instruction where the hardware has one
 * (funnel shift on NVIDIA, alignbit on AMD). Macros, so that literal
 * arguments stay literals. */
#define lode_rotl32(x, n) rotate((uint)(x), (uint)(n))
#define lode_rotr32(x, n) rotate((uint)(x), (uint)(32 - (n)))
#define lode_rotr64(x, n) rotate((ulong)(x), (ulong)(64 - (n)))
/* Endian-neutral byte swaps; compilers turn the pattern into one permute. */
LODE_DEVICE uint lode_bswap32(uint x) { return (rotate(x, 8u) & 0x00ff00ffu) | (rotate(x, 24u) & 0xff00ff00u); }
LODE_DEVICE ulong lode_bswap64(ulong x) { return as_ulong(as_uchar8(x).s76543210); }
#define lode_bitselect(a, b, c) bitselect((uint)(a), (uint)(b), (uint)(c))
#define lode_bitselect64(a, b, c) bitselect((ulong)(a), (ulong)(b), (ulong)(c))
#define lode_atomic_inc(p) atomic_inc(p)

#ifdef LODE_KERNEL_PTX
/* shfl.sync within segments of four lanes (c = 0x1c1f: segment mask 0x1c,
 * clamp 0x1f), as CUDA's __shfl_sync(~0u, x, src, 4). */
LODE_DEVICE uint lode_shfl4(uint x, uint src)
{
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1c1f, 0xffffffff;" : "=r"(r) : "r"(x), "r"(src));
    return r;
}
LODE_DEVICE uint lode_ballot(uint x)
{
    uint r;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
                 : "=r"(r) : "r"(x));
    return r;
}
#endif

#endif /* OpenCL C */

#endif
