/* `lode --benchmark`: mine a synthetic job on every selected device and
 * report per-device and total hashrates, cpuminer style. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/log.h"
#include "core/base/target.h"
#include "core/cli/cli.h"
#include "core/dispatch/dispatch.h"

#define REPORT_SECONDS 5.0

typedef struct bench_job_source {
    lode_miner *miner;
    lode_work work;
    uint32_t jobs;
} bench_job_source;

/* A fresh header for each job, as a pool's new extranonce would give:
 * the merkle root changes, everything else stays plausible. */
static void next_job(bench_job_source *s)
{
    s->jobs++;
    for (int i = 0; i < 4; i++)
        s->work.header.header[36 + i] = (uint8_t)(s->jobs >> (8 * i));
    lode_miner_set_job(s->miner, &s->work, 0, UINT64_C(1) << 32);
}

static void on_exhausted(void *user, uint64_t seq)
{
    (void)seq;
    next_job(user);
}

static void on_found(void *user, const lode_found *found)
{
    (void)user;
    lode_log(LODE_LOG_DEBUG, "benchmark share at nonce %llu", (unsigned long long)found->hit.index);
}

int cmd_benchmark(const cli_options *o)
{
    if (!o->algo_given)
        return cli_usage_error("--benchmark needs --algo (%s)", lode_algo_names());
    if (lode_algo_get(o->algo)->kind == LODE_WORK_TRIAL_FACTOR)
        return cli_usage_error("--benchmark hashes block headers, not tf (trial factoring: lode tf --help)");
    lode_device_ref *devices;
    size_t count;
    char err[512];
    if (lode_registry_select(o->devices, o->algo, &devices, &count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    if (cli_check_variant(o, o->algo, devices, count) != 0) {
        free(devices);
        return EXIT_USAGE;
    }

    bench_job_source source = {.work = {.algo = o->algo}};
    srand((unsigned)time(NULL));
    for (int i = 0; i < 76; i++)
        source.work.header.header[i] = (uint8_t)rand();
    source.work.header.header[0] = 0x02; /* version 2 */
    lode_target_from_difficulty(1.0, o->algo, &source.work.header.target);

    lode_miner_config config = {
        .algo = o->algo,
        .devices = devices,
        .device_count = count,
        .threads = o->threads,
        .variant = o->variant,
        .callbacks = {.user = &source, .found = on_found, .exhausted = on_exhausted},
    };
    lode_miner *m = lode_miner_start(&config, err, sizeof err);
    free(devices);
    if (m == NULL) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    source.miner = m;
    int ready = cli_wait_ready(m);
    if (ready <= 0) {
        if (ready == 0)
            lode_log(LODE_LOG_ERROR, "no device passed its self-test");
        lode_miner_free(m);
        return ready == 0 ? EXIT_RUNTIME : EXIT_INTERRUPTED;
    }
    size_t n = lode_miner_device_count(m);
    for (size_t d = 0; d < n; d++) {
        lode_device_stats st;
        lode_miner_device_stats(m, d, &st);
        lode_log(LODE_LOG_INFO, "%s: %s, %u worker(s) passed the self-test%s",
                 lode_miner_device(m, d)->id, lode_miner_device(m, d)->info.name, st.workers_ready,
                 st.workers_failed ? " (some were refused)" : "");
    }
    lode_log(LODE_LOG_INFO, "benchmarking %s%s%s; Ctrl-C stops", lode_algo_get(o->algo)->name,
             o->variant ? " with variant " : "", o->variant ? o->variant : "");

    cli_rate_report report;
    if (cli_rate_report_init(&report, m, cli_rate_unit(o->algo), REPORT_SECONDS) != 0) {
        lode_miner_free(m);
        lode_log(LODE_LOG_ERROR, "out of memory");
        return EXIT_RUNTIME;
    }
    next_job(&source);
    double start = cli_now();
    int status = 0;
    while (!cli_interrupted()) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        if (o->time_limit > 0 && cli_now() - start >= o->time_limit)
            break;
        cli_rate_report_tick(&report);
        if (cli_workers_ready(m) == 0) {
            lode_log(LODE_LOG_ERROR, "every device has failed; nothing is hashing");
            status = EXIT_RUNTIME;
            break;
        }
    }
    if (status == 0 && cli_interrupted())
        status = EXIT_INTERRUPTED;
    lode_miner_request_stop(m);
    uint64_t hw_errors;
    double total = cli_rate_report_summary(&report, &hw_errors);
    /* Whole units for H/s; three significant digits below 100 (a Momentum
     * sweep takes seconds: 0.123 sweeps/s, not 0). */
    printf(total >= 100 ? "%s total %.0f %s\n" : "%s total %.3g %s\n", lode_algo_get(o->algo)->name,
           total, cli_rate_unit(o->algo));
    cli_rate_report_free(&report);
    lode_miner_free(m);
    if (hw_errors && status == 0)
        status = EXIT_RUNTIME;
    return status;
}
