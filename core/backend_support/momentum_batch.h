/* A Momentum launch's candidates on the host, shared by the GPU backends.
 *
 * A GPU launch runs a batch of sweeps (one per header nonce) and leaves
 * each sweep's candidates in buffers the next launch overwrites. The
 * engine's fetch copies them here, one sweep after the other, so the next
 * launch can be queued before the host pairs them; collect then turns each
 * sweep's candidates into pairs and hits. */
#ifndef LODE_BACKEND_SUPPORT_MOMENTUM_BATCH_H
#define LODE_BACKEND_SUPPORT_MOMENTUM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend_support/momentum_common.h"
#include "core/base/u256.h"
#include "core/base/work.h"

typedef struct momentum_batch {
    momentum_entry *cands; /* every sweep's candidates, one after the other */
    size_t cap;            /* entries cands holds */
    size_t *sweep_at;      /* sweep j's are cands[sweep_at[j] .. sweep_at[j + 1]) */
    unsigned max_sweeps;
    unsigned sweeps;       /* sweeps fetched since momentum_batch_begin */
    momentum_pairs pairs;
} momentum_batch;

/* Room for up to max_sweeps sweeps a launch. LODE_OK or LODE_ERR_NO_MEMORY. */
int momentum_batch_init(momentum_batch *b, unsigned max_sweeps);
void momentum_batch_free(momentum_batch *b);

/* Empties the batch before a launch's sweeps are fetched. */
void momentum_batch_begin(momentum_batch *b);

/* Appends the next sweep's n candidates (the buffer grows to twice what it
 * must hold, so it settles after a few launches). LODE_OK,
 * LODE_ERR_NO_MEMORY, or LODE_ERR_DEVICE past max_sweeps. */
int momentum_batch_add(momentum_batch *b, const momentum_entry *list, size_t n);

/* Pairs each sweep's candidates and appends the hits of sweep j as those
 * of header nonce start + j. Returns the first error, or LODE_OK. */
int momentum_batch_push_hits(momentum_batch *b, const uint8_t header80[80], uint64_t start,
                             const lode_u256 *target, lode_hits *hits);

#endif
