/* Host-side Momentum pieces shared by the CPU, CUDA and OpenCL backends
 * (momentum_common.h). */
#include "core/backend_support/momentum_common.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/sha256_ref.h"
#include "core/base/status.h"

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

void momentum_consts_init(momentum_consts *c, const uint8_t mid[32])
{
    c->w0_low = (uint64_t)mid[0] << 24 | (uint64_t)mid[1] << 16 | (uint64_t)mid[2] << 8 | mid[3];
    c->w1 = be64(mid + 4);
    c->w2 = be64(mid + 12);
    c->w3 = be64(mid + 20);
    c->w4 = ((uint64_t)mid[28] << 24 | (uint64_t)mid[29] << 16 | (uint64_t)mid[30] << 8 | mid[31]) << 32 |
            UINT64_C(0x80000000);
}

void momentum_midhash(const uint8_t header80[80], uint32_t index, uint8_t mid[32])
{
    uint8_t h[80];
    memcpy(h, header80, 76);
    for (int i = 0; i < 4; i++)
        h[76 + i] = (uint8_t)(index >> (8 * i));
    /* Once per sweep of 2^23 SHA-512s: the plain SHA-256 is fast enough. */
    lode_ref_sha256d(h, 80, mid);
}

int momentum_pairs_push(momentum_pairs *p, uint32_t a, uint32_t b, uint64_t birthday)
{
    if (p->count == p->capacity) {
        size_t cap = p->capacity ? 2 * p->capacity : 16;
        momentum_pair *grown = realloc(p->items, cap * sizeof *grown);
        if (grown == NULL)
            return LODE_ERR_NO_MEMORY;
        p->items = grown;
        p->capacity = cap;
    }
    p->items[p->count++] = (momentum_pair){.a = a < b ? a : b, .b = a < b ? b : a, .birthday = birthday};
    return LODE_OK;
}

void momentum_pairs_free(momentum_pairs *p)
{
    free(p->items);
    *p = (momentum_pairs){0};
}

static int by_entry(const void *x, const void *y)
{
    const momentum_entry *a = x, *b = y;
    if (a->birthday != b->birthday)
        return a->birthday < b->birthday ? -1 : 1;
    return a->nonce < b->nonce ? -1 : a->nonce > b->nonce;
}

int momentum_pairs_from_entries(momentum_entry *list, size_t n, momentum_pairs *pairs)
{
    if (n > 1)
        qsort(list, n, sizeof *list, by_entry);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && list[j].birthday == list[i].birthday)
            j++;
        for (size_t x = i; x < j; x++)
            for (size_t y = x + 1; y < j; y++)
                if (list[x].nonce != list[y].nonce &&
                    momentum_pairs_push(pairs, list[x].nonce, list[y].nonce, list[x].birthday) != 0)
                    return LODE_ERR_NO_MEMORY;
        i = j;
    }
    return LODE_OK;
}

int momentum_push_hits(const uint8_t header80[80], uint32_t index, const lode_u256 *target,
                       const momentum_pairs *pairs, lode_hits *hits)
{
    uint8_t h[88], hash[32];
    memcpy(h, header80, 76);
    for (int i = 0; i < 4; i++)
        h[76 + i] = (uint8_t)(index >> (8 * i));
    for (size_t k = 0; k < pairs->count; k++) {
        const momentum_pair *p = &pairs->items[k];
        for (int i = 0; i < 4; i++) {
            h[80 + i] = (uint8_t)(p->a >> (8 * i));
            h[84 + i] = (uint8_t)(p->b >> (8 * i));
        }
        lode_ref_sha256d(h, 88, hash);
        if (lode_hash_meets_target(hash, target) &&
            lode_hits_push(hits, (lode_hit){.index = index, .pair = {p->a, p->b}}) != 0)
            return LODE_ERR_NO_MEMORY;
    }
    return LODE_OK;
}
