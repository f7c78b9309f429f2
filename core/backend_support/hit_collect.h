/* Hit collection of the GPU backends, written once: a finished launch's
 * hit buffer (the LODE_HITS_* layout of kernel_params.h) into the scan's
 * hits, and a Momentum batch's candidates into pairs and hits.
 *
 * label names the device in error messages ("cuda:0 (NVIDIA H200)"). */
#ifndef LODE_BACKEND_SUPPORT_HIT_COLLECT_H
#define LODE_BACKEND_SUPPORT_HIT_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backend_support/sha256d_job.h"
#include "core/base/u256.h"
#include "core/base/work.h"

/* What a nonce launch's hits are checked against. */
typedef struct lode_nonce_hit_check {
    const lode_u256 *target;
    /* A version-rolled SHA-256d job: each nonce is re-hashed under every
     * version. NULL otherwise. */
    const sha256d_version_set *versions;
    /* Without versions: keeps a candidate (the exact re-check of a top-word
     * prefilter), or NULL to keep every nonce (the kernel compared it all). */
    bool (*keep)(const void *ctx, uint32_t nonce);
    const void *ctx;
} lode_nonce_hit_check;

/* Appends the hits of one launch over nonces [start, start + count) from
 * its hit buffer (LODE_HITS_WORDS words). Returns LODE_OK,
 * LODE_ERR_HITS_OVERFLOW if the buffer overflowed (the launch must be
 * redone), LODE_ERR_DEVICE (logged) if a nonce lies outside the launch, or
 * LODE_ERR_NO_MEMORY. */
int lode_collect_nonce_hits(const char *label, const uint32_t *buffer, uint64_t start, uint64_t count,
                            const lode_nonce_hit_check *check, lode_hits *hits);

/* Appends the factors one trial-factoring launch over [n0, n0 + count)
 * found, as offsets from n0. Returns LODE_OK, LODE_ERR_DEVICE (logged) if
 * one lies outside the launch, or LODE_ERR_NO_MEMORY. */
int lode_collect_factor_offsets(const char *label, uint64_t n0, uint32_t count, const uint32_t *found,
                                uint32_t nfound, lode_hits *hits);

#endif
