/* Known-factor self-tests of a trial-factoring device handle. */
#ifndef LODE_CORE_TF_SELFTEST_H
#define LODE_CORE_TF_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/tf_vectors.h"
#include "core/dispatch/registry.h"

/* Runs one vector through the handle's real scan path, as mfaktc's
 * self-test does: TF of M(p) over the vector's bit level, narrowed to the
 * class of the known k and to `window` indices around it (the known n sits
 * at a vector-dependent offset inside). The known factor must be reported,
 * and every reported index must be a factor by the reference. Returns 0,
 * or -1 with one line in why. */
int lode_tf_selftest_vector(lode_handle *h, const lode_tf_vector *v, uint64_t window, char *why,
                            size_t why_len);
/* How many vectors lode_tf_selftest_handle runs (short: the start-up set). */
size_t lode_tf_selftest_count(bool short_only);
/* Every vector (short = only mfaktc's short start-up set), until *abort is
 * set (NULL: never): then -1 with why "interrupted" (lode_selftest_handle). */
int lode_tf_selftest_handle(lode_handle *h, bool short_only, const atomic_int *abort, char *why, size_t why_len);

#endif
