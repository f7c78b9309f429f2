/* The plain reference SHA-512 (FIPS 180-4): portable C, no SIMD, no tricks,
 * sharing no code with any backend's fast path. Momentum's birthdays are
 * SHA-512 words, so this is the oracle of the Momentum self-test, tests and
 * re-check of every reported pair. Do not optimise it. */
#ifndef LODE_CORE_SHA512_REF_H
#define LODE_CORE_SHA512_REF_H

#include <stddef.h>
#include <stdint.h>

/* SHA-512 of len bytes. */
void lode_ref_sha512(const void *data, size_t len, uint8_t digest[64]);

/* The 80 round constants and the initial state (also used by the backends'
 * host-side precomputation, never by their hot loops). */
extern const uint64_t lode_ref_sha512_k[80];
extern const uint64_t lode_ref_sha512_iv[8];

#endif
