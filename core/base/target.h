/* Target arithmetic: compact nBits, pool difficulty, display hex. */
#ifndef LODE_CORE_TARGET_H
#define LODE_CORE_TARGET_H

#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/u256.h"

/* Compact nBits -> target (Bitcoin's SetCompact). Returns 0, or -1 if the
 * encoding is negative or overflows 256 bits. */
int lode_target_from_nbits(uint32_t nbits, lode_u256 *target);
/* Target -> the canonical compact encoding (Bitcoin's GetCompact). */
uint32_t lode_target_to_nbits(const lode_u256 *target);
/* Pool difficulty -> share target in the algorithm's pool convention (the
 * diff-1 target 0x00000000ffff00.. for SHA-256d, 65536x that for scrypt).
 * Returns 0, or -1 unless diff is finite and > 0. A difficulty below the
 * diff-1 target's reach saturates at the all-ones target. */
int lode_target_from_difficulty(double diff, lode_algo algo, lode_u256 *target);
/* The inverse, as a double (for display and share accounting). */
double lode_target_to_difficulty(const lode_u256 *target, lode_algo algo);
/* The chance that a uniformly random hash meets the target, (target + 1) /
 * 2^256, as a double: the hits a scan of N indices should give on average
 * is N times this. */
double lode_target_chance(const lode_u256 *target);
/* 64 hex digits, most significant first (getblocktemplate's form). */
int lode_target_parse_hex(const char *hex, lode_u256 *target);
void lode_target_format_hex(const lode_u256 *target, char out[65]);

#endif
