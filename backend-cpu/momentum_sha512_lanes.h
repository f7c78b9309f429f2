/* Momentum's SHA-512 on several nonce bases at once for the CPU search,
 * one 64-bit SIMD lane per hash: what the per-ISA files share
 * (momentum_sha512_avx2.c, momentum_sha512_avx512.c; the caller picks a
 * path at run time, momentum_sha512_pick). */
#ifndef LODE_CPU_MOMENTUM_SHA512_LANES_H
#define LODE_CPU_MOMENTUM_SHA512_LANES_H

#include <stdint.h>

#include "backend-cpu/momentum_cpu.h"
#include "core/base/sha512_ref.h"

/* Lane l hashes nonce base base + 8 l: its W0. */
static inline uint64_t momentum_lane_w0(const momentum_consts *c, uint32_t base)
{
    return (uint64_t)__builtin_bswap32(base) << 32 | c->w0_low;
}

/* out[8 l + j]: birthday j of lane l, from the final state words
 * (st[j * lanes + l]). */
static inline void momentum_lanes_finish(const uint64_t *st, int lanes, uint64_t *out)
{
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < lanes; l++)
            out[8 * l + j] = __builtin_bswap64(st[j * lanes + l] + lode_ref_sha512_iv[j]) >> 14;
}

/* The x86 paths (their files are built with their ISA flags). */
void momentum_birthdays_avx2(const momentum_consts *c, uint32_t base, uint64_t *out);
void momentum_birthdays_avx512(const momentum_consts *c, uint32_t base, uint64_t *out);

#endif
