/* The CPU backend: the lode_backend_ops of the host processor.
 *
 * A device is a processor package; its workers (one per physical core by
 * default) each hold their own handle, bound to their core, with scratch
 * memory on that core's node. The SIMD path is chosen once per handle: the
 * variant asked for, or the best the CPU supports. */
#include "backend-cpu/cpu_backend.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "backend-cpu/cpu_topology.h"
#include "backend-cpu/momentum_cpu.h"
#include "backend-cpu/scrypt_cpu.h"
#include "backend-cpu/sha256_cpu.h"
#include "backend-cpu/tf_cpu.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/backend.h"
#include "core/base/status.h"
#include "core/base/text.h"

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

static const cpu_scrypt_path *const scrypt_paths[] = {
#if defined(__x86_64__)
    &cpu_scrypt_avx512,
    &cpu_scrypt_avx2,
    &cpu_scrypt_sse2,
#endif
    &cpu_scrypt_portable,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool usable(uint32_t needs) { return (cpu_features_detect() & needs) == needs; }

struct lode_device {
    lode_algo algo;
    const cpu_sha256d_path *sha256d;
    const cpu_scrypt_path *scrypt;
    sha256d_job sha256d_job;
    cpu_scrypt_job scrypt_job;
    lode_u256 target;
    void *scratch;
    size_t scratch_bytes;
    cpu_momentum *momentum; /* Momentum: one sweep's buckets */
    cpu_tf *tf;             /* Mersenne trial factoring: sieve and primes */
    momentum_pairs pairs;
    uint8_t header[80];
};

static int cpu_probe(char why[LODE_WHY_LEN])
{
    why[0] = '\0';
    return 0;
}

static int cpu_device_count(void) { return cpu_topology_device_count(); }

static int cpu_device_info(int index, lode_device_info *out)
{
    if (index < 0 || index >= cpu_topology_device_count())
        return LODE_ERR_INVALID;
    memset(out, 0, sizeof *out);
    cpu_topology_device_name(index, out->name, sizeof out->name);
    out->workers = cpu_topology_core_count(index);
    out->max_workers = cpu_topology_pu_count(index);
    out->memory_bytes = cpu_topology_memory(index);
    out->algo_mask = 1u << LODE_ALGO_SHA256D | 1u << LODE_ALGO_SCRYPT | 1u << LODE_ALGO_MOMENTUM |
                     1u << LODE_ALGO_TF;
    out->on_host_cpu = true;
    return LODE_OK;
}

/* Does this CPU run Momentum's SHA-512 path `name`? */
static bool momentum_runs(const char *name)
{
    unsigned lanes;
    const char *got;
    momentum_sha512_pick(name, &lanes, &got);
    return strcmp(got, name) == 0;
}

static int cpu_variants(int index, lode_algo algo, const char **names, int max)
{
    (void)index;
    int n = 0;
    if (algo == LODE_ALGO_SHA256D) {
        for (size_t i = 0; i < COUNT(sha256d_paths) && n < max; i++)
            if (usable(sha256d_paths[i]->features))
                names[n++] = sha256d_paths[i]->name;
    } else if (algo == LODE_ALGO_SCRYPT) {
        for (size_t i = 0; i < COUNT(scrypt_paths) && n < max; i++)
            if (usable(scrypt_paths[i]->features))
                names[n++] = scrypt_paths[i]->name;
    } else if (algo == LODE_ALGO_MOMENTUM) {
        /* Named by the SHA-512 path each runs (the bucketed search is the
         * same): the ones this CPU runs, widest first. */
        static const char *const sha512_paths[] = {"avx512", "avx2", "portable"};
        for (size_t i = 0; i < COUNT(sha512_paths) && n < max; i++)
            if (momentum_runs(sha512_paths[i]))
                names[n++] = sha512_paths[i];
    } else if (algo == LODE_ALGO_TF && max > 0) {
        names[n++] = "montgomery"; /* bit sieve + 128-bit Montgomery exponentiation */
    }
    return n;
}

static bool wanted(const char *asked, const char *name, uint32_t needs)
{
    return usable(needs) && (asked == NULL || strcmp(asked, name) == 0);
}

/* The named path, or the best usable one when name is NULL. */
static const cpu_sha256d_path *pick_sha256d(const char *name)
{
    for (size_t i = 0; i < COUNT(sha256d_paths); i++)
        if (wanted(name, sha256d_paths[i]->name, sha256d_paths[i]->features))
            return sha256d_paths[i];
    return NULL;
}

static const cpu_scrypt_path *pick_scrypt(const char *name)
{
    for (size_t i = 0; i < COUNT(scrypt_paths); i++)
        if (wanted(name, scrypt_paths[i]->name, scrypt_paths[i]->features))
            return scrypt_paths[i];
    return NULL;
}

static int cpu_open(int index, const lode_open_params *params, lode_device **out)
{
    if (index < 0 || index >= cpu_topology_device_count())
        return LODE_ERR_INVALID;
    lode_device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return LODE_ERR_NO_MEMORY;
    d->algo = params->algo;
    if (params->algo == LODE_ALGO_SHA256D)
        d->sha256d = pick_sha256d(params->variant);
    else if (params->algo == LODE_ALGO_SCRYPT)
        d->scrypt = pick_scrypt(params->variant);
    bool momentum = params->algo == LODE_ALGO_MOMENTUM && (params->variant == NULL || momentum_runs(params->variant));
    bool tf = params->algo == LODE_ALGO_TF &&
              (params->variant == NULL || strcmp(params->variant, "montgomery") == 0);
    if (d->sha256d == NULL && d->scrypt == NULL && !momentum && !tf) {
        free(d);
        return LODE_ERR_UNSUPPORTED;
    }
    /* Bind before allocating so the scratchpads land on this core's node. */
    cpu_topology_bind_thread(index, params->worker);
    if ((momentum && (d->momentum = cpu_momentum_new(0, params->variant)) == NULL) ||
        (tf && (d->tf = cpu_tf_new(0)) == NULL)) {
        free(d);
        return LODE_ERR_NO_MEMORY;
    }
    if (d->scrypt != NULL) {
        d->scratch_bytes = d->scrypt->scratch_bytes;
        d->scratch = cpu_topology_alloc_local(d->scratch_bytes);
        if (d->scratch == NULL) {
            free(d);
            return LODE_ERR_NO_MEMORY;
        }
        /* The forced portable variant also keeps PBKDF2 portable, so a test
         * of it exercises no SIMD code at all. */
        bool portable = d->scrypt == &cpu_scrypt_portable;
        d->scrypt_job.compress = cpu_sha256_compress_best(portable ? 0 : cpu_features_detect());
    }
    *out = d;
    return LODE_OK;
}

static void cpu_close(lode_device *d)
{
    cpu_topology_free_local(d->scratch, d->scratch_bytes);
    cpu_momentum_free(d->momentum);
    cpu_tf_free(d->tf);
    momentum_pairs_free(&d->pairs);
    free(d);
}

static int cpu_set_work(lode_device *d, const lode_work *work)
{
    if (d->tf != NULL)
        return cpu_tf_set_work(d->tf, &work->factor);
    const uint8_t *header = work->header.header;
    d->target = work->header.target;
    memcpy(d->header, header, 80);
    if (d->momentum != NULL)
        return LODE_OK;
    if (d->sha256d != NULL) {
        sha256d_job_init(&d->sha256d_job, header, d->target.w[7]);
        if (d->sha256d->prepare != NULL)
            d->sha256d->prepare(&d->sha256d_job);
    } else {
        memcpy(d->scrypt_job.header, header, 80);
        cpu_scrypt_prepare(&d->scrypt_job);
    }
    return LODE_OK;
}

/* Calls of a path between two looks at the abort flag: well under a
 * millisecond of work on any path. */
#define POLL_CALLS 1024u

static int scan_sha256d(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                        const atomic_int *abort)
{
    const cpu_sha256d_path *path = d->sha256d;
    const uint64_t end = r->start + r->count;
    const uint64_t poll = (uint64_t)POLL_CALLS * path->lanes;
    uint64_t n = r->start;
    while (n < end) {
        uint64_t stop = end - n > poll ? n + poll : end;
        for (; n < stop; n += path->lanes) {
            uint32_t mask = path->candidates(&d->sha256d_job, (uint32_t)n);
            if (stop - n < path->lanes) /* lanes past the range end are not ours */
                mask &= (1u << (stop - n)) - 1;
            while (mask != 0) {
                uint32_t nonce = (uint32_t)n + (uint32_t)__builtin_ctz(mask);
                mask &= mask - 1;
                if (sha256d_meets_target(&d->sha256d_job, nonce, &d->target) &&
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

static int scan_scrypt(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                       const atomic_int *abort)
{
    const cpu_scrypt_path *path = d->scrypt;
    uint8_t out[CPU_SCRYPT_MAX_LANES][32];
    const uint64_t end = r->start + r->count;
    for (uint64_t n = r->start; n < end; n += path->lanes) {
        path->hash(&d->scrypt_job, (uint32_t)n, out, d->scratch);
        unsigned valid = end - n < path->lanes ? (unsigned)(end - n) : path->lanes;
        for (unsigned i = 0; i < valid; i++)
            if (lode_hash_meets_target(out[i], &d->target) &&
                lode_hits_push(hits, (lode_hit){.index = n + i}) != 0)
                return LODE_ERR_NO_MEMORY;
        *done = n + valid - r->start;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}

/* Momentum: each index is a header nonce, one full 2^26 sweep. */
static int scan_momentum(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                         const atomic_int *abort)
{
    for (uint64_t n = r->start; n < r->start + r->count; n++) {
        uint8_t mid[32];
        momentum_midhash(d->header, (uint32_t)n, mid);
        d->pairs.count = 0;
        int rc = cpu_momentum_sweep(d->momentum, mid, &d->pairs, abort);
        if (rc == 1)
            break; /* aborted: this index is not done */
        if (rc == LODE_OK)
            rc = momentum_push_hits(d->header, (uint32_t)n, &d->target, &d->pairs, hits);
        if (rc != LODE_OK)
            return rc;
        *done = n + 1 - r->start;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}

static int cpu_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                    const atomic_int *abort)
{
    *done = 0;
    if (d->tf != NULL)
        return cpu_tf_scan(d->tf, r->start, r->count, hits, done, abort);
    if (d->momentum != NULL)
        return scan_momentum(d, r, hits, done, abort);
    return d->sha256d != NULL ? scan_sha256d(d, r, hits, done, abort)
                              : scan_scrypt(d, r, hits, done, abort);
}

static uint64_t cpu_preferred_chunk(lode_device *d, double target_ms)
{
    /* A first guess only; the dispatcher measures and adjusts. */
    if (d->momentum != NULL)
        return 1; /* one sweep takes seconds */
    if (d->tf != NULL)
        return (uint64_t)(200.0 * target_ms) + 1; /* indices (k) per ms, about */
    double per_ms = d->sha256d != NULL ? 5000.0 : 10.0;
    double n = per_ms * target_ms;
    return n < 1 ? 1 : (uint64_t)n;
}

/* The package's temperature (coretemp, k10temp), power (RAPL) and clock
 * (cpufreq, /proc/cpuinfo) from sysfs. */
static int cpu_read_sensors(int index, lode_sensors *out)
{
    if (index < 0 || index >= cpu_topology_device_count())
        return LODE_ERR_INVALID;
    lode_sysfs_cpu_read(cpu_topology_package_id(index), out);
    return LODE_OK;
}

/* The instruction sets found, the path each algorithm would use (best
 * first, as --list-devices lists the variants) and the topology library. */
static void cpu_describe(char *buf, size_t len)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } features[] = {{CPU_FEATURE_SSE2, "sse2"},   {CPU_FEATURE_SSSE3, "ssse3"},
                    {CPU_FEATURE_SSE41, "sse4.1"}, {CPU_FEATURE_SHANI, "sha"},
                    {CPU_FEATURE_AVX2, "avx2"},   {CPU_FEATURE_AVX512, "avx512f+vl"}};
    size_t used = 0;
    lode_appendf(buf, len, &used, "  instruction sets:");
    uint32_t have = cpu_features_detect();
    for (size_t i = 0; i < COUNT(features); i++)
        if (have & features[i].bit)
            lode_appendf(buf, len, &used, " %s", features[i].name);
    lode_appendf(buf, len, &used, "%s\n", have ? "" : " none of the SIMD sets lode uses");
    for (int a = 0; a < LODE_ALGO_COUNT; a++) {
        const char *names[16];
        int k = cpu_variants(0, (lode_algo)a, names, 16);
        lode_appendf(buf, len, &used, "  %s paths:", lode_algo_get((lode_algo)a)->name);
        for (int v = 0; v < k; v++)
            lode_appendf(buf, len, &used, " %s", names[v]);
        lode_appendf(buf, len, &used, "%s\n", k > 1 ? " (best first; the first is used)" : "");
    }
    char topo[256];
    cpu_topology_describe(topo, sizeof topo);
    lode_appendf(buf, len, &used, "  topology: %s\n", topo);
}

const lode_backend_ops lode_backend_cpu = {
    .name = "cpu",
    .probe = cpu_probe,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .open = cpu_open,
    .close = cpu_close,
    .set_work = cpu_set_work,
    .scan = cpu_scan,
    .variants = cpu_variants,
    .preferred_chunk = cpu_preferred_chunk,
    .read_sensors = cpu_read_sensors,
    .describe = cpu_describe,
};
