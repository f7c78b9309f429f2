/* The CPU backend: the lode_backend_ops of the host processor.
 *
 * A device is a processor package; its workers (one per physical core by
 * default) each hold their own handle, bound to their core, with scratch
 * memory on that core's node. The SIMD path is chosen once per handle: the
 * variant asked for, or the best the CPU supports. Each algorithm is a
 * table of operations in cpu_<name>.c, chosen when a handle opens. */
#include "backend-cpu/cpu_backend.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/cpu_features.h"
#include "backend-cpu/cpu_internal.h"
#include "backend-cpu/cpu_topology.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/backend.h"
#include "core/base/status.h"
#include "core/base/text.h"

/* The algorithms' operations, by lode_algo (cpu_<name>.c). */
static const cpu_algo_ops *const algo_ops[LODE_ALGO_COUNT] = {
#define LODE_ALGO(ID, name, ...) [LODE_ALGO_##ID] = &cpu_##name##_ops,
#include "core/base/algos.def"
#undef LODE_ALGO
};

/* A worker's handle: its algorithm's operations and state. */
struct lode_device {
    const cpu_algo_ops *ops;
    void *state;
};

static const cpu_algo_ops *ops_of(lode_algo algo)
{
    return (unsigned)algo < LODE_ALGO_COUNT ? algo_ops[algo] : NULL;
}

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
    for (int a = 0; a < LODE_ALGO_COUNT; a++)
        if (algo_ops[a] != NULL)
            out->algo_mask |= 1u << a;
    out->on_host_cpu = true;
    return LODE_OK;
}

static int cpu_variants(int index, lode_algo algo, const char **names, int max)
{
    (void)index;
    const cpu_algo_ops *ops = ops_of(algo);
    return ops != NULL ? ops->variants(names, max) : 0;
}

static int cpu_open(int index, const lode_open_params *params, lode_device **out)
{
    if (index < 0 || index >= cpu_topology_device_count())
        return LODE_ERR_INVALID;
    const cpu_algo_ops *ops = ops_of(params->algo);
    if (ops == NULL || !ops->supports(params->variant))
        return LODE_ERR_UNSUPPORTED;
    lode_device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return LODE_ERR_NO_MEMORY;
    d->ops = ops;
    /* Bind before allocating so the scratchpads land on this core's node. */
    cpu_topology_bind_thread(index, params->worker);
    int rc = ops->open(params->variant, &d->state);
    if (rc != LODE_OK) {
        free(d);
        return rc;
    }
    *out = d;
    return LODE_OK;
}

static void cpu_close(lode_device *d)
{
    d->ops->close(d->state);
    free(d);
}

static int cpu_set_work(lode_device *d, const lode_work *work) { return d->ops->set_work(d->state, work); }

static int cpu_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                    const atomic_int *abort)
{
    *done = 0;
    return d->ops->scan(d->state, r, hits, done, abort);
}

static uint64_t cpu_preferred_chunk(lode_device *d, double target_ms)
{
    return d->ops->preferred_chunk(target_ms);
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
