/* lode check's driver: the rows of every device, a thread per device, and
 * the wait for them, which a stop cuts short (a device stuck in its driver
 * is left behind, named, rather than waited for). */
#include "core/dispatch/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/status.h"
#include "core/dispatch/check_internal.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/stop_join.h"

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* The rows, device by device, then algorithm, then variant; runs[d] gets
 * its device's. */
static void make_rows(const lode_check_config *cfg, lode_check *out, device_run *runs)
{
    for (size_t d = 0; d < cfg->device_count; d++) {
        const lode_device_ref *dev = &cfg->devices[d];
        runs[d].rows = out->rows + out->row_count;
        for (size_t a = 0; a < cfg->algo_count; a++) {
            lode_algo algo = cfg->algos[a];
            if (!(dev->info.algo_mask & (1u << algo)))
                continue;
            const char *names[MAX_VARIANTS];
            int n = lode_device_variants(dev, algo, names, MAX_VARIANTS);
            for (int v = 0; v < n; v++) {
                const char *name = names[v] ? names[v] : "";
                if (cfg->variant != NULL && strcmp(cfg->variant, name) != 0)
                    continue;
                lode_check_row *row = &out->rows[out->row_count++];
                row->device = dev;
                row->algo = algo;
                row->max_temp_c = NAN;
                snprintf(row->variant, sizeof row->variant, "%s", name);
            }
        }
        runs[d].row_count = (size_t)(out->rows + out->row_count - runs[d].rows);
    }
}

/* A thread per device with rows (those that get none run here), then the
 * wait. Returns how many device threads a stop left behind. */
static unsigned run_devices(const lode_check_config *cfg, const atomic_int *stop, device_run *runs,
                            lode_stop_join *join)
{
    unsigned busy = 0;
    for (size_t d = 0; d < cfg->device_count; d++)
        busy += runs[d].row_count > 0;
    unsigned threads = cfg->reference_threads ? cfg->reference_threads : online_cpus();
    double t0 = lode_clock_s();
    for (size_t d = 0; d < cfg->device_count; d++) {
        device_run *run = &runs[d];
        *run = (device_run){.cfg = cfg, .stop = stop, .rows = run->rows, .row_count = run->row_count, .t0 = t0,
                            .reference_threads = threads / busy ? threads / busy : 1, .join = join};
        if (run->row_count > 0)
            run->started = pthread_create(&run->thread, NULL, lode_check_device_thread, run) == 0;
    }
    for (size_t d = 0; d < cfg->device_count; d++)
        if (!runs[d].started && runs[d].row_count > 0) /* no thread: its rows here */
            lode_check_device_thread(&runs[d]);
    unsigned left = lode_stop_join_wait(join, busy, stop, LODE_STOP_GRACE_MS);
    for (size_t d = 0; d < cfg->device_count; d++) {
        if (!runs[d].started)
            continue;
        if (atomic_load(&runs[d].finished))
            pthread_join(runs[d].thread, NULL);
        else {
            lode_log(LODE_LOG_WARN, "%s: still in a device call %d s after the stop: abandoned, lode "
                     "stops without it", runs[d].rows[0].device->id, LODE_STOP_GRACE_MS / 1000);
            pthread_detach(runs[d].thread);
        }
    }
    return left;
}

int lode_check_run(const lode_check_config *cfg, const atomic_int *stop, lode_check *out, char *err,
                   size_t err_len)
{
    static const atomic_int never = 0;
    memset(out, 0, sizeof *out);
    if (stop == NULL)
        stop = &never;
    size_t cap = cfg->device_count * cfg->algo_count * MAX_VARIANTS;
    out->rows = calloc(cap ? cap : 1, sizeof *out->rows);
    device_run *runs = calloc(cfg->device_count ? cfg->device_count : 1, sizeof *runs);
    lode_stop_join *join = lode_stop_join_new();
    if (out->rows == NULL || runs == NULL || join == NULL) {
        free(runs);
        lode_stop_join_free(join);
        lode_check_free(out);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    make_rows(cfg, out, runs);
    if (out->row_count == 0) {
        free(runs);
        lode_stop_join_free(join);
        lode_check_free(out);
        snprintf(err, err_len, "no selected device runs %s%s%s", cfg->algo_count == 1 ? "that algorithm" : "those algorithms",
                 cfg->variant ? " with variant " : "", cfg->variant ? cfg->variant : "");
        return -1;
    }
    double t0 = lode_clock_s();
    out->abandoned = run_devices(cfg, stop, runs, join);
    out->seconds = lode_clock_s() - t0;
    if (out->abandoned > 0) {
        /* The threads left behind keep their rows, runs and join: the
         * report reads a copy (a snapshot of rows that are still written). */
        lode_check_row *copy = malloc(out->row_count * sizeof *copy);
        if (copy != NULL)
            memcpy(copy, out->rows, out->row_count * sizeof *copy);
        out->rows = copy;
        if (copy == NULL)
            out->row_count = 0;
        return 0;
    }
    free(runs);
    lode_stop_join_free(join);
    return 0;
}

void lode_check_free(lode_check *c)
{
    free(c->rows);
    c->rows = NULL;
    c->row_count = 0;
}

bool lode_check_passed(const lode_check *c)
{
    for (size_t i = 0; i < c->row_count; i++)
        if (!c->rows[i].ran || c->rows[i].error != LODE_OK || c->rows[i].differences != 0)
            return false;
    return c->abandoned == 0 && c->row_count > 0;
}
