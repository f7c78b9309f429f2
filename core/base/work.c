#include "core/base/work.h"

#include <stdlib.h>

#include "core/base/status.h"

int lode_hits_push(lode_hits *hits, lode_hit hit)
{
    if (hits->count == hits->capacity) {
        size_t capacity = hits->capacity ? 2 * hits->capacity : 64;
        lode_hit *items = realloc(hits->items, capacity * sizeof *items);
        if (items == NULL)
            return -1;
        hits->items = items;
        hits->capacity = capacity;
    }
    hits->items[hits->count++] = hit;
    return 0;
}

int lode_hits_push_nonces(lode_hits *hits, const uint32_t *nonces, uint32_t n, uint64_t start,
                          uint64_t count, bool (*keep)(const void *ctx, uint32_t nonce),
                          const void *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        /* 32-bit difference: a launch may end at nonce 0xFFFFFFFF. */
        if ((uint32_t)(nonces[i] - (uint32_t)start) >= count)
            return LODE_ERR_DEVICE;
        if (keep != NULL && !keep(ctx, nonces[i]))
            continue;
        if (lode_hits_push(hits, (lode_hit){.index = nonces[i]}) != 0)
            return LODE_ERR_NO_MEMORY;
    }
    return LODE_OK;
}

int lode_hits_push_offsets(lode_hits *hits, uint64_t base, uint32_t count, const uint32_t *offsets, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (offsets[i] >= count)
            return LODE_ERR_DEVICE;
        if (lode_hits_push(hits, (lode_hit){.index = base + offsets[i]}) != 0)
            return LODE_ERR_NO_MEMORY;
    }
    return LODE_OK;
}

int lode_hit_compare(const void *a, const void *b)
{
    const lode_hit *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
    if (x->pair[0] != y->pair[0])
        return x->pair[0] < y->pair[0] ? -1 : 1;
    return x->pair[1] < y->pair[1] ? -1 : x->pair[1] > y->pair[1];
}

uint64_t lode_work_hashes(const lode_work *work, uint64_t count)
{
    const lode_algo_info *algo = lode_algo_get(work->algo);
    bool headers = algo != NULL && algo->kind != LODE_WORK_TF;
    return headers && work->header.version_count > 1 ? count * work->header.version_count : count;
}

void lode_hits_clear(lode_hits *hits) { hits->count = 0; }

void lode_hits_free(lode_hits *hits)
{
    free(hits->items);
    *hits = (lode_hits){0};
}
