/* cpuid/xgetbv feature detection. An instruction set counts only when the
 * CPU has it and, for AVX state, the OS saves its registers (XCR0). */
#include "backend-cpu/cpu_features.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <stdatomic.h>

/* XCR0 bits: register state the OS saves on a context switch. */
#define XCR0_SSE (1u << 1)
#define XCR0_AVX (1u << 2)       /* upper halves of YMM0..15 */
#define XCR0_OPMASK (1u << 5)    /* k0..k7 */
#define XCR0_ZMM_HI256 (1u << 6) /* upper halves of ZMM0..15 */
#define XCR0_HI16_ZMM (1u << 7)  /* ZMM16..31 */

#define XCR0_YMM_STATE (XCR0_SSE | XCR0_AVX)
#define XCR0_ZMM_STATE (XCR0_YMM_STATE | XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM)

/* xgetbv by hand: the intrinsic would need -mxsave for this whole file. */
static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

static uint32_t detect_uncached(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return 0;

    uint32_t features = 0;
    if (edx & bit_SSE2)
        features |= CPU_FEATURE_SSE2;
    if (ecx & bit_SSSE3)
        features |= CPU_FEATURE_SSSE3;
    if (ecx & bit_SSE4_1)
        features |= CPU_FEATURE_SSE41;

    /* xgetbv faults unless the OS enabled it (OSXSAVE). */
    uint64_t xcr0 = (ecx & bit_OSXSAVE) ? read_xcr0() : 0;
    int os_saves_ymm = (xcr0 & XCR0_YMM_STATE) == XCR0_YMM_STATE;
    int os_saves_zmm = (xcr0 & XCR0_ZMM_STATE) == XCR0_ZMM_STATE;
    int has_avx = (ecx & bit_AVX) != 0;

    if (__get_cpuid_max(0, 0) < 7)
        return features;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (ebx & bit_SHA)
        features |= CPU_FEATURE_SHANI;
    if (has_avx && os_saves_ymm && (ebx & bit_AVX2))
        features |= CPU_FEATURE_AVX2;
    if (os_saves_zmm && (ebx & bit_AVX512F) && (ebx & bit_AVX512VL))
        features |= CPU_FEATURE_AVX512;
    return features;
}

/* The detected bits plus this flag, so that 0 means "not detected yet". */
#define FEATURES_KNOWN (1u << 31)

uint32_t cpu_features_detect(void)
{
    static _Atomic uint32_t cached;
    uint32_t known = atomic_load_explicit(&cached, memory_order_relaxed);
    if (!known) {
        /* Racing first calls compute the same value; either store wins. */
        known = detect_uncached() | FEATURES_KNOWN;
        atomic_store_explicit(&cached, known, memory_order_relaxed);
    }
    return known & ~FEATURES_KNOWN;
}

#else

uint32_t cpu_features_detect(void) { return 0; }

#endif
