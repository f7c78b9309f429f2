/* Momentum on the CPU: the backend's exact birthday search and its SHA-512
 * paths. The host-side pieces every backend shares (per-job constants, pair
 * recovery, block hashes and the target test) are in
 * core/backend_support/momentum_common.h. */
#ifndef LODE_CPU_MOMENTUM_CPU_H
#define LODE_CPU_MOMENTUM_CPU_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/backend_support/momentum_common.h"

/* The eight birthdays of nonces base .. base+7 (portable C, the CPU path;
 * not the reference). */
void momentum_birthdays8(const momentum_consts *c, uint32_t base, uint64_t out[8]);

/* The birthdays of `lanes` consecutive groups of 8 nonces (bases base,
 * base + 8, ...): out[8 l + j] is birthday j of base + 8 l. */
typedef void (*momentum_sha512_fn)(const momentum_consts *c, uint32_t base, uint64_t *out);
/* The widest SHA-512 path this CPU runs ("avx512", 8 lanes,
 * momentum_sha512_avx512.c; "avx2", 4, momentum_sha512_avx2.c; "portable",
 * 1, momentum_birthdays8), or the one named by want or by
 * LODE_MOMENTUM_CPU_SHA when want is NULL (the best below it that runs). */
momentum_sha512_fn momentum_sha512_pick(const char *want, unsigned *lanes, const char **name);

/* ---- the CPU backend's search ---- */
typedef struct cpu_momentum cpu_momentum;

/* Scratch for one sweep (about 570 MB); bucket_capacity 0 = the default
 * (tests pass a small one to exercise the overflow path); sha512 names the
 * SHA-512 path (momentum_sha512_pick's want: NULL = the best). */
cpu_momentum *cpu_momentum_new(uint32_t bucket_capacity, const char *sha512);
void cpu_momentum_free(cpu_momentum *m);
/* Every colliding pair of the 2^26 nonces of midHash mid, appended to
 * pairs. Returns LODE_OK, LODE_ERR_NO_MEMORY, or 1 if *abort was raised
 * (pairs is then incomplete). */
int cpu_momentum_sweep(cpu_momentum *m, const uint8_t mid[32], momentum_pairs *pairs,
                       const atomic_int *abort);

#endif
