/* Known factors of Mersenne numbers, embedded at build time from
 * tests/vectors/mersenne-factors.json (cmake/EmbedTfVectors.cmake). */
#ifndef LODE_CORE_TF_VECTORS_H
#define LODE_CORE_TF_VECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lode_tf_vector {
    uint32_t exponent;
    unsigned bit_min, bit_max; /* the factor lies in [2^bit_min, 2^bit_max) */
    uint64_t k;                /* factor = 2 k exponent + 1 */
    const char *factor;        /* decimal */
    bool in_short_selftest;    /* mfaktc's start-up self-test set */
} lode_tf_vector;

extern const lode_tf_vector lode_tf_vectors[];
extern const size_t lode_tf_vector_count;

#endif
