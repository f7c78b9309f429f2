#include "core/work.h"

#include <stdlib.h>

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

void lode_hits_clear(lode_hits *hits) { hits->count = 0; }

void lode_hits_free(lode_hits *hits)
{
    free(hits->items);
    *hits = (lode_hits){0};
}
