/* Momentum on the CPU: each index is a header nonce, one full 2^26 sweep
 * of the bucketed search (momentum_cpu.c) on one of its SHA-512 paths. */
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/cpu_internal.h"
#include "backend-cpu/momentum_cpu.h"
#include "core/base/status.h"

typedef struct momentum_state {
    cpu_momentum *search; /* one sweep's buckets */
    momentum_pairs pairs;
    uint8_t header[80];
    lode_u256 target;
} momentum_state;

/* Does this CPU run Momentum's SHA-512 path `name`? */
static bool momentum_runs(const char *name)
{
    unsigned lanes;
    const char *got;
    momentum_sha512_pick(name, &lanes, &got);
    return strcmp(got, name) == 0;
}

/* Named by the SHA-512 path each runs (the bucketed search is the same):
 * the ones this CPU runs, widest first. */
static int momentum_variants(const char **names, int max)
{
    static const char *const sha512_paths[] = {"avx512", "avx2", "portable"};
    int n = 0;
    for (size_t i = 0; i < COUNT(sha512_paths) && n < max; i++)
        if (momentum_runs(sha512_paths[i]))
            names[n++] = sha512_paths[i];
    return n;
}

static bool momentum_supports(const char *variant) { return variant == NULL || momentum_runs(variant); }

static int momentum_open(const char *variant, void **state)
{
    momentum_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    if ((s->search = cpu_momentum_new(0, variant)) == NULL) {
        free(s);
        return LODE_ERR_NO_MEMORY;
    }
    *state = s;
    return LODE_OK;
}

static void momentum_close(void *state)
{
    momentum_state *s = state;
    cpu_momentum_free(s->search);
    momentum_pairs_free(&s->pairs);
    free(s);
}

static int momentum_set_work(void *state, const lode_work *work)
{
    momentum_state *s = state;
    s->target = work->header.target;
    memcpy(s->header, work->header.header, 80);
    return LODE_OK;
}

static int momentum_scan(void *state, const lode_range *r, lode_hits *hits, uint64_t *done,
                         const atomic_int *abort)
{
    momentum_state *s = state;
    for (uint64_t n = r->start; n < r->start + r->count; n++) {
        uint8_t mid[32];
        momentum_midhash(s->header, (uint32_t)n, mid);
        s->pairs.count = 0;
        int rc = cpu_momentum_sweep(s->search, mid, &s->pairs, abort);
        if (rc == 1)
            break; /* aborted: this index is not done */
        if (rc == LODE_OK)
            rc = momentum_push_hits(s->header, (uint32_t)n, &s->target, &s->pairs, hits);
        if (rc != LODE_OK)
            return rc;
        *done = n + 1 - r->start;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}

static uint64_t momentum_preferred_chunk(double target_ms)
{
    (void)target_ms;
    return 1; /* one sweep takes seconds */
}

const cpu_algo_ops cpu_momentum_ops = {
    .variants = momentum_variants,
    .supports = momentum_supports,
    .open = momentum_open,
    .close = momentum_close,
    .set_work = momentum_set_work,
    .scan = momentum_scan,
    .preferred_chunk = momentum_preferred_chunk,
};
