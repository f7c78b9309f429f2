/* A Momentum launch's candidates on the host (momentum_batch.h). */
#include "core/backend_support/momentum_batch.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/status.h"

int momentum_batch_init(momentum_batch *b, unsigned max_sweeps)
{
    memset(b, 0, sizeof *b);
    b->sweep_at = calloc((size_t)max_sweeps + 1, sizeof *b->sweep_at);
    b->max_sweeps = max_sweeps;
    return b->sweep_at != NULL ? LODE_OK : LODE_ERR_NO_MEMORY;
}

void momentum_batch_free(momentum_batch *b)
{
    free(b->cands);
    free(b->sweep_at);
    momentum_pairs_free(&b->pairs);
    memset(b, 0, sizeof *b);
}

void momentum_batch_begin(momentum_batch *b)
{
    b->sweeps = 0;
    b->sweep_at[0] = 0;
}

int momentum_batch_add(momentum_batch *b, const momentum_entry *list, size_t n)
{
    if (b->sweeps >= b->max_sweeps)
        return LODE_ERR_DEVICE;
    const size_t at = b->sweep_at[b->sweeps];
    if (at + n > b->cap) {
        const size_t cap = (at + n) * 2;
        momentum_entry *grown = realloc(b->cands, cap * sizeof *grown);
        if (grown == NULL)
            return LODE_ERR_NO_MEMORY;
        b->cands = grown;
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->cands + at, list, n * sizeof *b->cands);
    b->sweeps++;
    b->sweep_at[b->sweeps] = at + n;
    return LODE_OK;
}

int momentum_batch_push_hits(momentum_batch *b, const uint8_t header80[80], uint64_t start,
                             const lode_u256 *target, lode_hits *hits)
{
    for (unsigned j = 0; j < b->sweeps; j++) {
        b->pairs.count = 0;
        int rc = momentum_pairs_from_entries(b->cands + b->sweep_at[j], b->sweep_at[j + 1] - b->sweep_at[j],
                                             &b->pairs);
        if (rc == LODE_OK)
            rc = momentum_push_hits(header80, (uint32_t)(start + j), target, &b->pairs, hits);
        if (rc != LODE_OK)
            return rc;
    }
    return LODE_OK;
}
