/* The plain Momentum reference (ProtoShares / BitShares-PTS): midHash,
 * birthdays, the protocol's verification and the block hash, on the reference SHA-256 and SHA-512.
 * The test suite, the self-test and the re-check of every reported pair use
 * it; no backend's fast path shares code with it. */
#ifndef LODE_CORE_MOMENTUM_REF_H
#define LODE_CORE_MOMENTUM_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nonces 0 .. 2^26-1 make up one birthday space (MAX_MOMENTUM_NONCE). */
#define LODE_MOMENTUM_NONCES (UINT32_C(1) << 26)
/* Birthdays are the top 50 bits of a 64-bit SHA-512 word. */
#define LODE_MOMENTUM_BIRTHDAY_BITS 50

/* midHash = SHA-256d of the 80-byte header (raw digest bytes). */
void lode_ref_momentum_midhash(const uint8_t header80[80], uint8_t mid[32]);
/* The 50-bit birthday of a nonce: word nonce % 8 (little-endian) of
 * SHA-512(le32(nonce - nonce % 8) || midHash), shifted right by 14. */
uint64_t lode_ref_momentum_birthday(const uint8_t mid[32], uint32_t nonce);
/* momentum_verify exactly as the protocol has it: a != b, both <= 2^26
 * (sic: the node accepts 2^26 itself), equal birthdays. */
bool lode_ref_momentum_verify(const uint8_t mid[32], uint32_t a, uint32_t b);
/* The 88-byte header: header80, then nBirthdayA and nBirthdayB (LE32). */
void lode_ref_momentum_header88(const uint8_t header80[80], uint32_t a, uint32_t b,
                                uint8_t header88[88]);
/* GetHash(): SHA-256d of all 88 bytes if the pair verifies, else all ones
 * (internal byte order). Returns whether the pair verified. */
bool lode_ref_momentum_block_hash(const uint8_t header88[88], uint8_t hash[32]);

typedef struct lode_momentum_pair {
    uint32_t a, b; /* a < b */
} lode_momentum_pair;
/* The complete search, the oracle of `lode check`: every pair of nonces
 * a < b in [0, 2^26) whose birthdays are equal, sorted by (a, b), in a
 * malloc'd array (*pairs, free() it; NULL when *count is 0). A birthday
 * shared by k >= 3 nonces gives every one of its k(k-1)/2 pairs, as the
 * backends report them. Uses up to `threads` threads (0 = 1) and about
 * 513 MiB. Returns 0, or -1 (*pairs NULL, *count 0) if memory or a thread
 * could not be had. */
int lode_ref_momentum_pairs(const uint8_t mid[32], unsigned threads, lode_momentum_pair **pairs,
                            size_t *count);

#endif
