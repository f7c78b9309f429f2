/* x86-64 instruction-set detection for the CPU backend's SIMD paths.
 *
 * Each SIMD path lives in its own source file compiled with its own ISA flags
 * (see backend-cpu/CMakeLists.txt); the rest of the binary is plain x86-64.
 * cpu_features_detect() runs cpuid/xgetbv once, and a path is used only if
 * every feature bit it requires is set. */
#ifndef LODE_CPU_FEATURES_H
#define LODE_CPU_FEATURES_H

#include <stdint.h>

enum {
    CPU_FEATURE_SSE2 = 1u << 0,
    CPU_FEATURE_SSSE3 = 1u << 1,
    CPU_FEATURE_SSE41 = 1u << 2,
    CPU_FEATURE_SHANI = 1u << 3,  /* SHA extensions (SHA-256 rounds, message schedule) */
    CPU_FEATURE_AVX2 = 1u << 4,   /* with OS support for YMM state */
    CPU_FEATURE_AVX512 = 1u << 5, /* AVX-512 F + VL, with OS support for ZMM state */
};

/* Bitmask of CPU_FEATURE_* usable on this machine (cached after first call). */
uint32_t cpu_features_detect(void);

#endif
