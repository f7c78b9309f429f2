/* Momentum on the host, shared by the CPU, CUDA and OpenCL backends: the
 * per-job SHA-512 constants, exact pair recovery from a list of (birthday,
 * nonce) candidates, block hashes and the target test of the pairs found.
 * CUDA sources include it for the types. */
#ifndef LODE_BACKEND_SUPPORT_MOMENTUM_COMMON_H
#define LODE_BACKEND_SUPPORT_MOMENTUM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/u256.h"
#include "core/base/work.h"

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

#endif
