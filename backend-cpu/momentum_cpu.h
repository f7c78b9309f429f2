/* Momentum on the host: the CPU backend's exact birthday search, and the
 * host-side pieces every backend shares (per-job SHA-512 constants, exact
 * pair recovery from a list of (birthday, nonce) candidates, block hashes
 * and the target test of the pairs found). */
#ifndef LODE_CPU_MOMENTUM_CPU_H
#define LODE_CPU_MOMENTUM_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/u256.h"
#include "core/work.h"

#define MOMENTUM_NONCES (UINT32_C(1) << 26)
#define MOMENTUM_BASES (MOMENTUM_NONCES / 8) /* SHA-512 hashes per sweep */

/* The SHA-512 message of nonce base n is 16 words W0..W15 (big-endian):
 * W0 = bswap32(n) << 32 | w0_low, W1..W4 from midHash (W4 carries the 0x80
 * pad byte), W5..W14 = 0, W15 = 288 (the bit length). */
typedef struct momentum_consts {
    uint64_t w0_low;
    uint64_t w1, w2, w3, w4;
} momentum_consts;

void momentum_consts_init(momentum_consts *c, const uint8_t mid[32]);
/* midHash of the job's header with its nonce field set to index. */
void momentum_midhash(const uint8_t header80[80], uint32_t index, uint8_t mid[32]);

/* The eight birthdays of nonces base .. base+7 (portable C, the CPU path;
 * not the reference). */
void momentum_birthdays8(const momentum_consts *c, uint32_t base, uint64_t out[8]);

/* The birthdays of `lanes` consecutive groups of 8 nonces (bases base,
 * base + 8, ...): out[8 l + j] is birthday j of base + 8 l. */
typedef void (*momentum_sha512_fn)(const momentum_consts *c, uint32_t base, uint64_t *out);
/* The widest SHA-512 path this CPU runs (momentum_sha512_simd.c: "avx512",
 * 8 lanes; "avx2", 4; "portable", 1), or the one named by want or by
 * LODE_MOMENTUM_CPU_SHA when want is NULL (the best below it that runs). */
momentum_sha512_fn momentum_sha512_pick(const char *want, unsigned *lanes, const char **name);

/* A candidate: a nonce and its full 50-bit birthday. */
typedef struct momentum_entry {
    uint64_t birthday;
    uint32_t nonce;
    uint32_t pad;
} momentum_entry;

typedef struct momentum_pair {
    uint32_t a, b; /* a < b */
    uint64_t birthday;
} momentum_pair;

typedef struct momentum_pairs {
    momentum_pair *items;
    size_t count, capacity;
} momentum_pairs;

int momentum_pairs_push(momentum_pairs *p, uint32_t a, uint32_t b, uint64_t birthday);
void momentum_pairs_free(momentum_pairs *p);

/* Sorts the candidates by (birthday, nonce) and appends every pair a < b of
 * equal birthdays (all pairs of a group of three or more). Candidates may
 * be a superset of the colliding nonces (a filter's survivors): exact. */
int momentum_pairs_from_entries(momentum_entry *list, size_t n, momentum_pairs *pairs);

/* Appends a hit {index, {a, b}} for every pair whose 88-byte header's block
 * hash meets the target. */
int momentum_push_hits(const uint8_t header80[80], uint32_t index, const lode_u256 *target,
                       const momentum_pairs *pairs, lode_hits *hits);

/* ---- the CPU backend's search (C only: CUDA sources include this header
 * for the shared types above) ---- */
#ifndef __cplusplus
#include <stdatomic.h>

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

#endif
