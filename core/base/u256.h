/* 256-bit unsigned integers for targets and proof-of-work hashes.
 *
 * A PoW hash is compared as the little-endian integer of its 32 digest bytes
 * (Bitcoin's convention), so w[0] holds digest bytes 0..3 and w[7] the most
 * significant bytes 28..31. */
#ifndef LODE_CORE_U256_H
#define LODE_CORE_U256_H

#include <stdbool.h>
#include <stdint.h>

typedef struct lode_u256 {
    uint32_t w[8]; /* w[0] least significant */
} lode_u256;

lode_u256 lode_u256_from_le_bytes(const uint8_t bytes[32]);
void lode_u256_to_le_bytes(const lode_u256 *v, uint8_t bytes[32]);
/* -1, 0 or 1 as a is below, equal to or above b. */
int lode_u256_cmp(const lode_u256 *a, const lode_u256 *b);
bool lode_u256_is_zero(const lode_u256 *v);
/* The proof-of-work rule: the digest, read as a little-endian integer, is at
 * or below the target. */
bool lode_hash_meets_target(const uint8_t hash[32], const lode_u256 *target);

#endif
