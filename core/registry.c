#include "core/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/algo.h"
#include "core/status.h"
#include "core/tf_ref.h"

/* The one place that knows which backends were compiled in. */
extern const lode_backend_ops lode_backend_cpu;
#ifdef LODE_HAVE_CUDA
extern const lode_backend_ops lode_backend_cuda;
#endif
#ifdef LODE_HAVE_OPENCL
extern const lode_backend_ops lode_backend_opencl;
#endif

static const lode_backend_ops *const backends[] = {
#ifdef LODE_HAVE_CUDA
    &lode_backend_cuda,
#endif
#ifdef LODE_HAVE_OPENCL
    &lode_backend_opencl,
#endif
    &lode_backend_cpu,
};

size_t lode_backend_count(void) { return sizeof backends / sizeof backends[0]; }

const lode_backend_ops *lode_backend_at(size_t i)
{
    return i < lode_backend_count() ? backends[i] : NULL;
}

int lode_registry_enumerate(lode_device_ref **devices, size_t *count)
{
    *devices = NULL;
    *count = 0;
    size_t capacity = 0;
    for (size_t b = 0; b < lode_backend_count(); b++) {
        const lode_backend_ops *ops = backends[b];
        char why[LODE_WHY_LEN];
        if (ops->probe(why) != 0)
            continue;
        int n = ops->device_count();
        for (int i = 0; i < n; i++) {
            lode_device_info info;
            if (ops->device_info(i, &info) != 0)
                continue;
            if (*count == capacity) {
                capacity = capacity ? 2 * capacity : 8;
                lode_device_ref *grown = realloc(*devices, capacity * sizeof *grown);
                if (grown == NULL) {
                    free(*devices);
                    *devices = NULL;
                    *count = 0;
                    return -1;
                }
                *devices = grown;
            }
            lode_device_ref *ref = &(*devices)[(*count)++];
            ref->backend = ops;
            ref->index = i;
            ref->info = info;
            snprintf(ref->id, sizeof ref->id, "%s:%d", ops->name, i);
        }
    }
    return 0;
}

static bool runs_algo(const lode_device_ref *ref, lode_algo algo)
{
    return (ref->info.algo_mask >> algo) & 1u;
}

static const lode_backend_ops *backend_named(const char *name, size_t len)
{
    for (size_t b = 0; b < lode_backend_count(); b++)
        if (strlen(backends[b]->name) == len && strncmp(backends[b]->name, name, len) == 0)
            return backends[b];
    return NULL;
}

int lode_registry_select(const char *spec, lode_algo algo, lode_device_ref **devices,
                         size_t *count, char *err, size_t err_len)
{
    lode_device_ref *all;
    size_t n_all;
    *devices = NULL;
    *count = 0;
    if (lode_registry_enumerate(&all, &n_all) != 0) {
        snprintf(err, err_len, "out of memory while listing devices");
        return -1;
    }
    bool *chosen = calloc(n_all ? n_all : 1, sizeof *chosen);
    if (chosen == NULL) {
        free(all);
        snprintf(err, err_len, "out of memory while listing devices");
        return -1;
    }
    const lode_algo_info *info = lode_algo_get(algo);
    int rc = 0;
    if (spec == NULL || *spec == '\0') {
        for (size_t i = 0; i < n_all; i++)
            chosen[i] = runs_algo(&all[i], algo) &&
                        (!all[i].info.on_host_cpu || all[i].backend == &lode_backend_cpu);
    } else {
        const char *p = spec;
        while (rc == 0) {
            size_t len = strcspn(p, ",");
            const char *colon = memchr(p, ':', len);
            size_t name_len = colon ? (size_t)(colon - p) : len;
            const lode_backend_ops *ops = backend_named(p, name_len);
            if (len == 0 || ops == NULL) {
                snprintf(err, err_len, "unknown device '%.*s' (see lode --list-devices)", (int)len, p);
                rc = -1;
                break;
            }
            char why[LODE_WHY_LEN];
            if (ops->probe(why) != 0) {
                snprintf(err, err_len, "device '%.*s': the %s backend is unavailable: %s", (int)len,
                         p, ops->name, why);
                rc = -1;
                break;
            }
            bool matched = false;
            for (size_t i = 0; i < n_all; i++) {
                if (all[i].backend != ops)
                    continue;
                if (colon && strlen(all[i].id) == len && strncmp(all[i].id, p, len) == 0)
                    matched = true, chosen[i] = true;
                else if (!colon && runs_algo(&all[i], algo))
                    matched = true, chosen[i] = true;
            }
            if (!matched) {
                snprintf(err, err_len, "no device '%.*s' (see lode --list-devices)", (int)len, p);
                rc = -1;
                break;
            }
            if (p[len] == '\0')
                break;
            p += len + 1;
        }
        for (size_t i = 0; rc == 0 && i < n_all; i++)
            if (chosen[i] && !runs_algo(&all[i], algo)) {
                snprintf(err, err_len, "device %s does not run %s", all[i].id, info->name);
                rc = -1;
            }
    }
    if (rc == 0) {
        size_t k = 0;
        for (size_t i = 0; i < n_all; i++)
            if (chosen[i])
                all[k++] = all[i];
        if (k == 0) {
            snprintf(err, err_len, "no device runs %s (see lode --list-devices)", info->name);
            rc = -1;
        } else {
            *devices = all;
            *count = k;
        }
    }
    if (rc != 0)
        free(all);
    free(chosen);
    return rc;
}

int lode_device_variants(const lode_device_ref *ref, lode_algo algo, const char **names, int max)
{
    if (max < 1)
        return 0;
    if (ref->backend->variants == NULL) {
        names[0] = NULL;
        return 1;
    }
    return ref->backend->variants(ref->index, algo, names, max);
}

int lode_handle_open(lode_handle *h, const lode_device_ref *ref, const lode_open_params *params)
{
    h->ref = ref;
    h->algo = params->algo;
    h->dev = NULL;
    if (!runs_algo(ref, params->algo))
        return LODE_ERR_UNSUPPORTED;
    return ref->backend->open(ref->index, params, &h->dev);
}

/* The contract checks of core/backend.h, made here once for every backend. */
int lode_handle_set_work(lode_handle *h, const lode_work *work)
{
    if (work->algo != h->algo)
        return LODE_ERR_INVALID;
    if (lode_algo_get(h->algo)->kind == LODE_WORK_TRIAL_FACTOR && !lode_tf_job_valid(&work->factor))
        return LODE_ERR_INVALID;
    return h->ref->backend->set_work(h->dev, work);
}

int lode_handle_scan(lode_handle *h, const lode_range *range, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    *done = 0;
    /* Nonces (a collision search's header nonces too) are 32 bits. */
    if (lode_algo_get(h->algo)->kind != LODE_WORK_TRIAL_FACTOR &&
        (range->start > UINT32_MAX || range->count > (UINT64_C(1) << 32) - range->start))
        return LODE_ERR_INVALID;
    if (range->count == 0)
        return LODE_OK;
    return h->ref->backend->scan(h->dev, range, hits, done, abort);
}

int lode_handle_tune(lode_handle *h, double target_ms)
{
    if (h->ref->backend->tune == NULL)
        return LODE_OK;
    return h->ref->backend->tune(h->dev, target_ms);
}

uint64_t lode_handle_preferred_chunk(lode_handle *h, double target_ms)
{
    if (h->ref->backend->preferred_chunk == NULL)
        return 0;
    return h->ref->backend->preferred_chunk(h->dev, target_ms);
}

void lode_handle_close(lode_handle *h)
{
    if (h->dev != NULL)
        h->ref->backend->close(h->dev);
    h->dev = NULL;
}
