/* SHA-256d on the CPU: the lane paths of sha256_*.c and sha256d_*.c, a
 * top-word prefilter and the exact check of each candidate. */
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/cpu_internal.h"
#include "backend-cpu/sha256_cpu.h"
#include "core/base/status.h"

/* Paths best first: the order in which a path is chosen when the CPU has
 * its features (measured: docs/PERFORMANCE.md). */
static const cpu_sha256d_path *const sha256d_paths[] = {
#if defined(__x86_64__)
    &cpu_sha256d_avx512,
    &cpu_sha256d_shani,
    &cpu_sha256d_avx2,
#endif
    &cpu_sha256d_portable,
};

typedef struct sha256d_state {
    const cpu_sha256d_path *path;
    sha256d_job job;
    lode_u256 target;
} sha256d_state;

static int sha256d_variants(const char **names, int max)
{
    int n = 0;
    for (size_t i = 0; i < COUNT(sha256d_paths) && n < max; i++)
        if (cpu_usable(sha256d_paths[i]->features))
            names[n++] = sha256d_paths[i]->name;
    return n;
}

/* The named path, or the best usable one when name is NULL. */
static const cpu_sha256d_path *pick_sha256d(const char *name)
{
    for (size_t i = 0; i < COUNT(sha256d_paths); i++)
        if (cpu_usable(sha256d_paths[i]->features) && (name == NULL || strcmp(name, sha256d_paths[i]->name) == 0))
            return sha256d_paths[i];
    return NULL;
}

static bool sha256d_supports(const char *variant) { return pick_sha256d(variant) != NULL; }

static int sha256d_open(const char *variant, void **state)
{
    sha256d_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    s->path = pick_sha256d(variant);
    *state = s;
    return LODE_OK;
}

static void sha256d_close(void *state) { free(state); }

static int sha256d_set_work(void *state, const lode_work *work)
{
    sha256d_state *s = state;
    s->target = work->header.target;
    sha256d_job_init(&s->job, work->header.header, s->target.w[7]);
    if (s->path->prepare != NULL)
        s->path->prepare(&s->job);
    return LODE_OK;
}

static int sha256d_scan(void *state, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    sha256d_state *s = state;
    const cpu_sha256d_path *path = s->path;
    const uint64_t end = r->start + r->count;
    const uint64_t poll = (uint64_t)POLL_CALLS * path->lanes;
    uint64_t n = r->start;
    while (n < end) {
        uint64_t stop = end - n > poll ? n + poll : end;
        for (; n < stop; n += path->lanes) {
            uint32_t mask = path->candidates(&s->job, (uint32_t)n);
            if (stop - n < path->lanes) /* lanes past the range end are not ours */
                mask &= (1u << (stop - n)) - 1;
            while (mask != 0) {
                uint32_t nonce = (uint32_t)n + (uint32_t)__builtin_ctz(mask);
                mask &= mask - 1;
                if (sha256d_meets_target(&s->job, nonce, &s->target) &&
                    lode_hits_push(hits, (lode_hit){.index = nonce}) != 0)
                    return LODE_ERR_NO_MEMORY;
            }
        }
        n = stop;
        *done = n - r->start;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}

/* A first guess only; the dispatcher measures and adjusts. */
static uint64_t sha256d_preferred_chunk(double target_ms)
{
    double n = 5000.0 * target_ms;
    return n < 1 ? 1 : (uint64_t)n;
}

const cpu_algo_ops cpu_sha256d_ops = {
    .variants = sha256d_variants,
    .supports = sha256d_supports,
    .open = sha256d_open,
    .close = sha256d_close,
    .set_work = sha256d_set_work,
    .scan = sha256d_scan,
    .preferred_chunk = sha256d_preferred_chunk,
};
