/* Internals shared by the scrypt paths (scrypt_*.c); not part of the
 * backend's interface.
 *
 * Every path runs the same scalar PBKDF2-HMAC-SHA256 before and after its
 * own ROMix: cpu_scrypt_pbkdf2_start() gives one lane's 128-byte block B and
 * HMAC states, cpu_scrypt_pbkdf2_finish() turns the mixed block into the
 * 32-byte hash. */
#ifndef LODE_CPU_SCRYPT_INTERNAL_H
#define LODE_CPU_SCRYPT_INTERNAL_H

#include <stdint.h>

#include "backend-cpu/scrypt_cpu.h"

/* Words of the 128-byte block ROMix works on (two Salsa20 blocks of 16). */
#define CPU_SCRYPT_BLOCK_WORDS 32u

/* job->pre layout: SHA-256 state after header bytes 0..63 in words 0..7,
 * the rest zero. */
#define CPU_SCRYPT_PRE_MIDSTATE 0

/* HMAC-SHA256 keyed with one lane's header: the SHA-256 states after the
 * ipad and the opad block, reused by both PBKDF2 calls of that lane. */
typedef struct cpu_scrypt_hmac {
    uint32_t inner[8];
    uint32_t outer[8];
} cpu_scrypt_hmac;

/* For the header with this nonce: keys hmac, and sets x to
 * B = PBKDF2-HMAC-SHA256(header, header, 1, 128) as 32 little-endian words. */
void cpu_scrypt_pbkdf2_start(const cpu_scrypt_job *job, uint32_t nonce, cpu_scrypt_hmac *hmac,
                             uint32_t x[CPU_SCRYPT_BLOCK_WORDS]);

/* out = PBKDF2-HMAC-SHA256(header, x as little-endian bytes, 1, 32). */
void cpu_scrypt_pbkdf2_finish(const cpu_scrypt_job *job, const cpu_scrypt_hmac *hmac,
                              const uint32_t x[CPU_SCRYPT_BLOCK_WORDS], uint8_t out[32]);

#define CPU_SCRYPT_ROW_BYTES 16u /* one diagonal row (below) of one hash: 4 words */

/* The SIMD paths keep each 16-word Salsa20 block as four 4-word rows in
 * "diagonal" order: row r, element c holds word 4 * ((r + c) % 4) + c, so
 * rows are (0 5 10 15) (4 9 14 3) (8 13 2 7) (12 1 6 11). Every Salsa20
 * quarter-round step then combines whole rows, and a half-round ends with
 * lane rotations of three rows. Word 16 (ROMix's index) lands first in
 * row 4. These convert both 16-word halves of a block. */
void cpu_scrypt_to_diagonal(const uint32_t x[CPU_SCRYPT_BLOCK_WORDS],
                            uint32_t diag[CPU_SCRYPT_BLOCK_WORDS]);
void cpu_scrypt_from_diagonal(const uint32_t diag[CPU_SCRYPT_BLOCK_WORDS],
                              uint32_t x[CPU_SCRYPT_BLOCK_WORDS]);

#endif
