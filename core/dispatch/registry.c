#include "core/dispatch/registry.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend-cpu/cpu_backend.h"
#include "core/base/algo.h"
#include "core/base/log.h"
#include "core/base/sensors.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"
#include "core/dispatch/fault_backend.h"
#ifdef LODE_HAVE_CUDA
#include "backend-cuda/cuda_backend.h"
#endif
#ifdef LODE_HAVE_OPENCL
#include "backend-opencl/ocl_backend.h"
#endif

/* The one place that knows which backends were compiled in, preferred
 * first: a GPU that several list is kept by the first. */
static const lode_backend_ops *const compiled_in[] = {
#ifdef LODE_HAVE_CUDA
    &lode_backend_cuda,
#endif
#ifdef LODE_HAVE_OPENCL
    &lode_backend_opencl,
#endif
    &lode_backend_cpu,
};

/* How messages name a backend ("every OpenCL device is also a CUDA device"). */
static const struct {
    const lode_backend_ops *ops;
    const char *title;
} titles[] = {
#ifdef LODE_HAVE_CUDA
    {&lode_backend_cuda, "CUDA"},
#endif
#ifdef LODE_HAVE_OPENCL
    {&lode_backend_opencl, "OpenCL"},
#endif
    {&lode_backend_cpu, "CPU"},
};

/* With LODE_TEST_FAULT set (tests only), the fault-injecting devices
 * follow (core/dispatch/fault_backend.h). */
static const lode_backend_ops *const with_fault[] = {
#ifdef LODE_HAVE_CUDA
    &lode_backend_cuda,
#endif
#ifdef LODE_HAVE_OPENCL
    &lode_backend_opencl,
#endif
    &lode_backend_cpu,
    &lode_backend_fault,
};

static const lode_backend_ops *const *test_backends; /* lode_registry_use_backends */
static size_t n_test_backends;

void lode_registry_use_backends(const lode_backend_ops *const *list, size_t n)
{
    test_backends = list;
    n_test_backends = list ? n : 0;
}

/* The backends in use, and their count in *n. */
static const lode_backend_ops *const *active(size_t *n)
{
    if (test_backends != NULL) {
        *n = n_test_backends;
        return test_backends;
    }
    if (lode_setting_text(LODE_SETTING_TEST_FAULT) != NULL) {
        *n = sizeof with_fault / sizeof with_fault[0];
        return with_fault;
    }
    *n = sizeof compiled_in / sizeof compiled_in[0];
    return compiled_in;
}

static const char *title_of(const lode_backend_ops *ops)
{
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
        if (titles[i].ops == ops)
            return titles[i].title;
    return ops->name;
}

size_t lode_backend_count(void)
{
    size_t n;
    active(&n);
    return n;
}

const char *lode_backend_name(size_t i)
{
    size_t n;
    const lode_backend_ops *const *backends = active(&n);
    return i < n ? backends[i]->name : NULL;
}

/* LODE_OPENCL_SHOW_ALL=1 (core/base/settings.h): OpenCL lists its aliases
 * of CUDA's GPUs too. Only OpenCL sees devices another backend lists. */
static bool shows_all(const lode_backend_ops *ops)
{
    return strcmp(ops->name, "opencl") == 0 && lode_setting_flag(LODE_SETTING_OPENCL_SHOW_ALL);
}

/* "0000:41:00.0" -> "41:00.0"; an id without a domain as it is. */
static const char *without_domain(const char *bus_id)
{
    const char *colon = strchr(bus_id, ':');
    return colon != NULL && strchr(colon + 1, ':') != NULL ? colon + 1 : bus_id;
}

/* Same PCI device? Where one id has no domain (a driver that does not say
 * it), bus:device.function alone is compared. */
static bool same_bus_id(const char *x, const char *y)
{
    if (x[0] == '\0' || y[0] == '\0')
        return false;
    if (without_domain(x) == x || without_domain(y) == y)
        return strcasecmp(without_domain(x), without_domain(y)) == 0;
    return strcasecmp(x, y) == 0;
}

#define ALL_BACKENDS UINT64_MAX

/* The first n backends, as an enumerate mask. */
static uint64_t backends_before(size_t n) { return n >= 64 ? ALL_BACKENDS : (UINT64_C(1) << n) - 1; }

/* Every device of the usable backends in `needed` (bit b: backend b),
 * aliases of an earlier backend's devices left out unless the backend
 * shows all (a backend's ids depend only on the backends before it, and
 * on none where it shows all, so a caller that names some backends need
 * not load the others' drivers). hidden[b], when given, counts backend b's
 * hidden devices and alias_of[b] names the backend that lists the first of
 * them. */
static int enumerate(lode_device_ref **devices, size_t *count, size_t *hidden,
                     const lode_backend_ops **alias_of, uint64_t needed)
{
    *devices = NULL;
    *count = 0;
    size_t capacity = 0, n_backends;
    const lode_backend_ops *const *backends = active(&n_backends);
    for (size_t b = 0; b < n_backends; b++) {
        const lode_backend_ops *ops = backends[b];
        char why[LODE_WHY_LEN];
        if ((b < 64 && !((needed >> b) & 1u)) || ops->probe(why) != 0)
            continue;
        const bool show_all = shows_all(ops);
        const size_t earlier = *count; /* devices of the backends before this one */
        int n = ops->device_count(), n_hidden = 0;
        for (int i = 0; i < n; i++) {
            lode_device_info info;
            if (ops->device_info(i, &info) != 0)
                continue;
            const lode_device_ref *twin = NULL;
            for (size_t k = 0; k < earlier && twin == NULL && !show_all; k++)
                if (same_bus_id(info.bus_id, (*devices)[k].info.bus_id))
                    twin = &(*devices)[k];
            if (twin != NULL) {
                if (hidden != NULL && hidden[b]++ == 0)
                    alias_of[b] = twin->backend;
                n_hidden++;
                continue;
            }
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
            /* Hidden devices leave no gap: the ids number what is listed. */
            snprintf(ref->id, sizeof ref->id, "%s:%d", ops->name, i - n_hidden);
        }
    }
    return 0;
}

int lode_registry_enumerate(lode_device_ref **devices, size_t *count)
{
    return enumerate(devices, count, NULL, NULL, ALL_BACKENDS);
}

int lode_backend_probe(size_t i, char why[LODE_WHY_LEN])
{
    size_t n_backends;
    const lode_backend_ops *const *backends = active(&n_backends);
    if (i >= n_backends) {
        snprintf(why, LODE_WHY_LEN, "no such backend");
        return -1;
    }
    const lode_backend_ops *ops = backends[i];
    if (ops->probe(why) != 0)
        return -1;
    if (i == 0 || shows_all(ops))
        return 0; /* no earlier backend to alias, or its aliases listed too */
    size_t *hidden = calloc(n_backends, sizeof *hidden);
    const lode_backend_ops **alias_of = calloc(n_backends, sizeof *alias_of);
    lode_device_ref *devices = NULL;
    size_t count = 0, listed = 0;
    int rc = 0;
    /* Out of memory: usable as far as we know. */
    if (hidden != NULL && alias_of != NULL && enumerate(&devices, &count, hidden, alias_of, backends_before(i + 1)) == 0) {
        for (size_t k = 0; k < count; k++)
            listed += devices[k].backend == ops;
        if (listed == 0 && hidden[i] > 0) {
            snprintf(why, LODE_WHY_LEN,
                     "every %s device is also a %s device and listed as such (LODE_OPENCL_SHOW_ALL=1 "
                     "lists both)", title_of(ops), title_of(alias_of[i]));
            rc = -1;
        }
    }
    free(devices);
    free(hidden);
    free(alias_of);
    return rc;
}

/* algo LODE_ALGO_COUNT: any (lode_registry_select_all). */
static bool runs_algo(const lode_device_ref *ref, lode_algo algo)
{
    return algo == LODE_ALGO_COUNT || ((ref->info.algo_mask >> algo) & 1u);
}

/* Index of the backend with this name, or -1. */
static int backend_named(const char *name, size_t len)
{
    size_t n_backends;
    const lode_backend_ops *const *backends = active(&n_backends);
    for (size_t b = 0; b < n_backends; b++)
        if (strlen(backends[b]->name) == len && strncmp(backends[b]->name, name, len) == 0)
            return (int)b;
    return -1;
}

static int select_devices(const char *spec, lode_algo algo, lode_device_ref **devices, size_t *count,
                          char *err, size_t err_len);

/* The backends a device list needs enumerated: those it names and, for a
 * named backend that hides aliases, every backend before it (all for an
 * empty list or an unknown name). */
static uint64_t backends_named(const char *spec)
{
    if (spec == NULL || *spec == '\0')
        return ALL_BACKENDS;
    size_t n_backends;
    const lode_backend_ops *const *backends = active(&n_backends);
    uint64_t needed = 0;
    for (const char *p = spec;; p += strcspn(p, ",") + 1) {
        const size_t len = strcspn(p, ","), name_len = strcspn(p, ",:");
        const int b = backend_named(p, name_len < len ? name_len : len);
        if (b < 0 || b >= 64)
            return ALL_BACKENDS;
        needed |= UINT64_C(1) << b;
        if (!shows_all(backends[b]))
            needed |= backends_before((size_t)b);
        if (p[len] == '\0')
            return needed;
    }
}

int lode_registry_select(const char *spec, lode_algo algo, lode_device_ref **devices,
                         size_t *count, char *err, size_t err_len)
{
    return select_devices(spec, algo, devices, count, err, err_len);
}

int lode_registry_select_gpus(const char *spec, lode_algo algo, lode_device_ref **devices, size_t *count,
                              bool *host_left_out, char *err, size_t err_len)
{
    if (host_left_out != NULL)
        *host_left_out = false;
    int rc = select_devices(spec, algo, devices, count, err, err_len);
    if (rc != 0 || (spec != NULL && *spec != '\0'))
        return rc;
    size_t gpus = 0;
    for (size_t i = 0; i < *count; i++)
        gpus += !(*devices)[i].info.on_host_cpu;
    if (gpus == 0 || gpus == *count)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < *count; i++)
        if (!(*devices)[i].info.on_host_cpu)
            (*devices)[k++] = (*devices)[i];
    *count = k;
    if (host_left_out != NULL)
        *host_left_out = true;
    return 0;
}

int lode_registry_select_all(const char *spec, lode_device_ref **devices, size_t *count, char *err,
                             size_t err_len)
{
    return select_devices(spec, LODE_ALGO_COUNT, devices, count, err, err_len);
}

/* Marks in chosen the devices that the entry p (len bytes of the list)
 * names: "backend" (those that run algo) or "backend:N" (that one). */
static int choose_named(const char *p, size_t len, lode_algo algo, const lode_device_ref *all, size_t n_all,
                        bool *chosen, char *err, size_t err_len)
{
    const char *colon = memchr(p, ':', len);
    size_t name_len = colon ? (size_t)(colon - p) : len;
    int b = backend_named(p, name_len);
    if (len == 0 || b < 0) {
        snprintf(err, err_len, "unknown device '%.*s' (see lode --list-devices)", (int)len, p);
        return -1;
    }
    size_t n_backends;
    const lode_backend_ops *ops = active(&n_backends)[b];
    char why[LODE_WHY_LEN];
    if (lode_backend_probe((size_t)b, why) != 0) {
        snprintf(err, err_len, "device '%.*s': the %s backend is unavailable: %s", (int)len,
                 p, ops->name, why);
        return -1;
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
        return -1;
    }
    return 0;
}

static int select_devices(const char *spec, lode_algo algo, lode_device_ref **devices, size_t *count,
                          char *err, size_t err_len)
{
    lode_device_ref *all;
    size_t n_all;
    *devices = NULL;
    *count = 0;
    if (enumerate(&all, &n_all, NULL, NULL, backends_named(spec)) != 0) {
        snprintf(err, err_len, "out of memory while listing devices");
        return -1;
    }
    bool *chosen = calloc(n_all ? n_all : 1, sizeof *chosen);
    if (chosen == NULL) {
        free(all);
        snprintf(err, err_len, "out of memory while listing devices");
        return -1;
    }
    const bool any = algo == LODE_ALGO_COUNT;
    const char *algo_name = any ? "anything" : lode_algo_get(algo)->name;
    int rc = 0;
    if (spec == NULL || *spec == '\0') {
        /* For one algorithm, the CPU backend alone computes on the host's
         * cores; for any, every implementation is worth checking. */
        for (size_t i = 0; i < n_all; i++)
            chosen[i] = runs_algo(&all[i], algo) &&
                        (any || !all[i].info.on_host_cpu || all[i].backend == &lode_backend_cpu);
    } else {
        const char *p = spec;
        while (rc == 0) {
            size_t len = strcspn(p, ",");
            rc = choose_named(p, len, algo, all, n_all, chosen, err, err_len);
            if (p[len] == '\0')
                break;
            p += len + 1;
        }
        for (size_t i = 0; rc == 0 && i < n_all; i++)
            if (chosen[i] && !runs_algo(&all[i], algo)) {
                snprintf(err, err_len, "device %s does not run %s", all[i].id, algo_name);
                rc = -1;
            }
    }
    if (rc == 0) {
        size_t k = 0;
        for (size_t i = 0; i < n_all; i++)
            if (chosen[i])
                all[k++] = all[i];
        if (k == 0) {
            snprintf(err, err_len, "no device runs %s (see lode --list-devices)", algo_name);
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

const char *lode_device_backend_name(const lode_device_ref *ref) { return ref->backend->name; }

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

/* The fake sensor source of the tests: the line of ref's id in the file,
 * read again on every call so that a test can change a reading while lode
 * runs. */
static void read_fake_sensors(const char *path, const lode_device_ref *ref, lode_sensors *out)
{
    static atomic_int warned;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (atomic_exchange(&warned, 1) == 0)
            lode_log(LODE_LOG_WARN, "LODE_TEST_SENSORS: cannot read %s: %s (no sensors)", path,
                     strerror(errno));
        return;
    }
    char line[512];
    const size_t id_len = strlen(ref->id);
    while (fgets(line, sizeof line, f) != NULL) {
        const char *p = line + strspn(line, " \t");
        /* The whole id: "cpu:1" is not the line of "cpu:10". */
        if (strncmp(p, ref->id, id_len) != 0 || (p[id_len] != '\0' && strchr(" \t\r\n", p[id_len]) == NULL))
            continue;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        memset(out, 0, sizeof *out);
        if (lode_sensors_parse(p + id_len, out) != 0 && atomic_exchange(&warned, 1) == 0)
            lode_log(LODE_LOG_WARN, "LODE_TEST_SENSORS: %s: words not understood in the line of %s",
                     path, ref->id);
    }
    fclose(f);
}

int lode_device_read_sensors(const lode_device_ref *ref, lode_sensors *out)
{
    memset(out, 0, sizeof *out);
    const char *fake = lode_setting_text(LODE_SETTING_TEST_SENSORS);
    if (fake != NULL)
        read_fake_sensors(fake, ref, out);
    else if (ref->backend->read_sensors == NULL || ref->backend->read_sensors(ref->index, out) != LODE_OK)
        memset(out, 0, sizeof *out);
    return LODE_OK;
}

void lode_backend_describe(size_t i, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    size_t n_backends;
    const lode_backend_ops *const *backends = active(&n_backends);
    if (i < n_backends && backends[i]->describe != NULL)
        backends[i]->describe(buf, len);
    buf[len - 1] = '\0';
}

int lode_handle_open(lode_handle *h, const lode_device_ref *ref, const lode_open_params *params)
{
    *h = (lode_handle){.ref = ref, .algo = params->algo};
    if (!runs_algo(ref, params->algo))
        return LODE_ERR_UNSUPPORTED;
    lode_open_params named = *params;
    if (named.id == NULL && ref->id[0] != '\0')
        named.id = ref->id; /* messages name the device as the user does */
    return ref->backend->open(ref->index, &named, &h->dev);
}

/* The contract checks of core/base/backend.h, made here once for every backend. */
int lode_handle_set_work(lode_handle *h, const lode_work *work)
{
    if (work->algo != h->algo)
        return LODE_ERR_INVALID;
    const bool tf = lode_algo_get(h->algo)->kind == LODE_WORK_TF;
    if (tf && !lode_tf_job_valid(&work->factor))
        return LODE_ERR_INVALID;
    const uint32_t versions = tf ? 0 : work->header.version_count;
    if (versions > LODE_VERSIONS_MAX || (versions > 0 && h->algo != LODE_ALGO_SHA256D))
        return LODE_ERR_INVALID;
    h->per_version = versions > 0 && !(h->ref->backend->rolls_versions && versions == LODE_VERSIONS_MAX);
    if (h->per_version) {
        h->rolled = *work; /* installed version by version in each scan */
        return LODE_OK;
    }
    return h->ref->backend->set_work(h->dev, work);
}

/* The fallback for a version-rolled job: the range once per version, each
 * version installed as a plain job and its hits labelled. The range counts
 * as done only as far as every version got; hits beyond that are dropped,
 * as that part is scanned again. */
static int scan_per_version(lode_handle *h, const lode_range *range, lode_hits *hits, uint64_t *done,
                            const atomic_int *abort)
{
    const lode_header_job *job = &h->rolled.header;
    const size_t first = hits->count;
    uint64_t all = range->count;
    int rc = LODE_OK;
    for (uint32_t i = 0; i < job->version_count; i++) {
        lode_work one = h->rolled;
        one.header.version_count = 0;
        for (int b = 0; b < 4; b++)
            one.header.header[b] = (uint8_t)(job->versions[i] >> (8 * b));
        const size_t before = hits->count;
        uint64_t got = 0;
        rc = h->ref->backend->set_work(h->dev, &one);
        if (rc == LODE_OK)
            rc = h->ref->backend->scan(h->dev, range, hits, &got, abort);
        for (size_t k = before; k < hits->count; k++)
            hits->items[k].version = job->versions[i];
        if (got < all)
            all = got;
        if (rc != LODE_OK || got < range->count) {
            if (i + 1 < job->version_count)
                all = 0; /* the later versions scanned nothing */
            break;
        }
    }
    size_t kept = first;
    for (size_t k = first; k < hits->count; k++)
        if (hits->items[k].index - range->start < all)
            hits->items[kept++] = hits->items[k];
    hits->count = kept;
    *done = all;
    return rc;
}

int lode_handle_scan(lode_handle *h, const lode_range *range, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    *done = 0;
    /* Nonces (a collision search's header nonces too) are 32 bits. */
    if (lode_algo_get(h->algo)->kind != LODE_WORK_TF &&
        (range->start > UINT32_MAX || range->count > (UINT64_C(1) << 32) - range->start))
        return LODE_ERR_INVALID;
    if (range->count == 0)
        return LODE_OK;
    if (h->per_version)
        return scan_per_version(h, range, hits, done, abort);
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
