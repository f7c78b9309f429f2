/* The known-answer self-test a device handle passes before it gets work. */
#ifndef LODE_CORE_SELFTEST_H
#define LODE_CORE_SELFTEST_H

#include <stddef.h>

#include "core/dispatch/registry.h"

/* Runs the embedded vectors of h->algo through the handle's real scan path:
 * each vector's nonce must be a hit when the target equals its known hash
 * and must not be one when the target is one below it, and a window of
 * nonces around the first vector must yield that nonce alone. Returns 0, or
 * -1 with one line naming the failing vector in why. Leaves no work
 * installed: set_work must be called before the next scan. Its scans poll
 * *abort (NULL: never set; a stop): once it is set the test ends early
 * with -1 and why "interrupted", which says nothing about the device. */
int lode_selftest_handle(lode_handle *h, const atomic_int *abort, char *why, size_t why_len);

#endif
