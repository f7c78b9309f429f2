/* Known-answer vectors embedded at build time from the JSON files in tests/vectors
 * (cmake/EmbedVectors.cmake): the same files the test suite reads, so the
 * start-up self-test and the tests can never disagree on the answers. */
#ifndef LODE_CORE_VECTORS_H
#define LODE_CORE_VECTORS_H

#include <stddef.h>

#include "core/base/algo.h"

typedef struct lode_pow_vector {
    const char *name;
    const char *header_hex;   /* 80 bytes (Momentum: the 88-byte header with its pair) */
    const char *pow_hash_hex; /* display order (digest bytes reversed) */
} lode_pow_vector;

/* The PoW vectors of an algorithm (count 0 if it has none). */
const lode_pow_vector *lode_pow_vectors(lode_algo algo, size_t *count);

#endif
