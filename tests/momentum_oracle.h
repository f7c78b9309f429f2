/* An independent full Momentum search for the tests: OpenSSL's SHA-512 over
 * all 2^23 nonce bases, a radix sort of the birthdays, and a pass that
 * collects the nonces of every repeated birthday. Shares no code with lode
 * (neither the reference nor any backend). Needs about 1.5 GB for a moment. */
#ifndef LODE_TESTS_MOMENTUM_ORACLE_H
#define LODE_TESTS_MOMENTUM_ORACLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct oracle_pair {
    uint32_t a, b; /* a < b */
    uint64_t birthday;
} oracle_pair;

/* Every colliding pair of midHash mid, sorted by (a, b), in a malloc'd
 * array (*pairs, free() it); returns the count, or (size_t)-1 if memory
 * ran out. */
size_t oracle_momentum_pairs(const uint8_t mid[32], oracle_pair **pairs);
/* The birthdays of nonces [0, n) (n a multiple of 8) into bd[n]; 0, or -1
 * if OpenSSL fails. */
int oracle_momentum_birthdays(const uint8_t mid[32], uint32_t n, uint64_t *bd);

#endif
