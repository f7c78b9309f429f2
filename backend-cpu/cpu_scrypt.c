/* scrypt on the CPU: the Salsa20/8 lane paths of scrypt_*.c, each hash's
 * scratchpad on the worker's node. */
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/cpu_internal.h"
#include "backend-cpu/cpu_topology.h"
#include "backend-cpu/scrypt_cpu.h"
#include "core/base/status.h"
#include "core/base/u256.h"

static const cpu_scrypt_path *const scrypt_paths[] = {
#if defined(__x86_64__)
    &cpu_scrypt_avx512,
    &cpu_scrypt_avx2,
    &cpu_scrypt_sse2,
#endif
    &cpu_scrypt_portable,
};

typedef struct scrypt_state {
    const cpu_scrypt_path *path;
    cpu_scrypt_job job;
    lode_u256 target;
    void *scratch;
    size_t scratch_bytes;
} scrypt_state;

static int scrypt_variants(const char **names, int max)
{
    int n = 0;
    for (size_t i = 0; i < COUNT(scrypt_paths) && n < max; i++)
        if (cpu_usable(scrypt_paths[i]->features))
            names[n++] = scrypt_paths[i]->name;
    return n;
}

/* The named path, or the best usable one when name is NULL. */
static const cpu_scrypt_path *pick_scrypt(const char *name)
{
    for (size_t i = 0; i < COUNT(scrypt_paths); i++)
        if (cpu_usable(scrypt_paths[i]->features) && (name == NULL || strcmp(name, scrypt_paths[i]->name) == 0))
            return scrypt_paths[i];
    return NULL;
}

static bool scrypt_supports(const char *variant) { return pick_scrypt(variant) != NULL; }

static int scrypt_open(const char *variant, void **state)
{
    scrypt_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    s->path = pick_scrypt(variant);
    s->scratch_bytes = s->path->scratch_bytes;
    s->scratch = cpu_topology_alloc_local(s->scratch_bytes);
    if (s->scratch == NULL) {
        free(s);
        return LODE_ERR_NO_MEMORY;
    }
    /* The forced portable variant also keeps PBKDF2 portable, so a test
     * of it exercises no SIMD code at all. */
    bool portable = s->path == &cpu_scrypt_portable;
    s->job.compress = cpu_sha256_compress_best(portable ? 0 : cpu_features_detect());
    *state = s;
    return LODE_OK;
}

static void scrypt_close(void *state)
{
    scrypt_state *s = state;
    cpu_topology_free_local(s->scratch, s->scratch_bytes);
    free(s);
}

static int scrypt_set_work(void *state, const lode_work *work)
{
    scrypt_state *s = state;
    s->target = work->header.target;
    memcpy(s->job.header, work->header.header, 80);
    cpu_scrypt_prepare(&s->job);
    return LODE_OK;
}

static int scrypt_scan(void *state, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    scrypt_state *s = state;
    const cpu_scrypt_path *path = s->path;
    uint8_t out[CPU_SCRYPT_MAX_LANES][32];
    const uint64_t end = r->start + r->count;
    for (uint64_t n = r->start; n < end; n += path->lanes) {
        path->hash(&s->job, (uint32_t)n, out, s->scratch);
        unsigned valid = end - n < path->lanes ? (unsigned)(end - n) : path->lanes;
        for (unsigned i = 0; i < valid; i++)
            if (lode_hash_meets_target(out[i], &s->target) &&
                lode_hits_push(hits, (lode_hit){.index = n + i}) != 0)
                return LODE_ERR_NO_MEMORY;
        *done = n + valid - r->start;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}

/* A first guess only; the dispatcher measures and adjusts. */
static uint64_t scrypt_preferred_chunk(double target_ms)
{
    double n = 10.0 * target_ms;
    return n < 1 ? 1 : (uint64_t)n;
}

const cpu_algo_ops cpu_scrypt_ops = {
    .variants = scrypt_variants,
    .supports = scrypt_supports,
    .open = scrypt_open,
    .close = scrypt_close,
    .set_work = scrypt_set_work,
    .scan = scrypt_scan,
    .preferred_chunk = scrypt_preferred_chunk,
};
