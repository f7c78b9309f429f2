/* `lode --benchmark`: mine a synthetic job on every selected device and
 * report per-device and total hashrates, cpuminer style. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cli/cli.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/target.h"

#define REPORT_SECONDS 5.0

typedef struct bench_job_source {
    lode_miner *miner;
    lode_work work;
    uint32_t jobs;
} bench_job_source;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* "12.34 MH/s" */
static void format_rate(double rate, char *out, size_t len)
{
    static const char *units[] = {"H/s", "kH/s", "MH/s", "GH/s", "TH/s"};
    int u = 0;
    while (rate >= 1000.0 && u < 4) {
        rate /= 1000.0;
        u++;
    }
    snprintf(out, len, "%.2f %s", rate, units[u]);
}

static uint64_t total_hashes(lode_miner *m, uint64_t *per_device)
{
    uint64_t total = 0;
    for (size_t d = 0; d < lode_miner_device_count(m); d++) {
        lode_device_stats st;
        lode_miner_device_stats(m, d, &st);
        per_device[d] = st.hashes;
        total += st.hashes;
    }
    return total;
}

int cmd_benchmark(const cli_options *o)
{
    if (!o->algo_given)
        return cli_usage_error("--benchmark needs --algo (%s)", lode_algo_names());
    lode_device_ref *devices;
    size_t count;
    char err[512];
    if (lode_registry_select(o->devices, o->algo, &devices, &count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);

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

    uint64_t *last = calloc(n, sizeof *last), *now = calloc(n, sizeof *now);
    if (last == NULL || now == NULL) {
        free(last);
        free(now);
        lode_miner_free(m);
        lode_log(LODE_LOG_ERROR, "out of memory");
        return EXIT_RUNTIME;
    }
    next_job(&source);
    double start = now_seconds(), last_report = start;
    char rate[32];
    while (!cli_interrupted()) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double t = now_seconds();
        if (o->time_limit > 0 && t - start >= o->time_limit)
            break;
        if (t - last_report < REPORT_SECONDS)
            continue;
        uint64_t sum = total_hashes(m, now), sum_last = 0;
        for (size_t d = 0; d < n; d++) {
            format_rate((double)(now[d] - last[d]) / (t - last_report), rate, sizeof rate);
            lode_log(LODE_LOG_INFO, "%s: %s", lode_miner_device(m, d)->id, rate);
            sum_last += last[d];
            last[d] = now[d];
        }
        format_rate((double)(sum - sum_last) / (t - last_report), rate, sizeof rate);
        lode_log(LODE_LOG_INFO, "total: %s", rate);
        last_report = t;
    }
    double elapsed = now_seconds() - start;
    lode_miner_request_stop(m);
    uint64_t sum = total_hashes(m, now);
    lode_log(LODE_LOG_INFO, "summary over %.1f s:", elapsed);
    int status = 0;
    for (size_t d = 0; d < n; d++) {
        lode_device_stats st;
        lode_miner_device_stats(m, d, &st);
        format_rate((double)st.hashes / elapsed, rate, sizeof rate);
        lode_log(LODE_LOG_INFO, "  %s: %s, %llu hashes, %llu shares, %llu hardware errors",
                 lode_miner_device(m, d)->id, rate, (unsigned long long)st.hashes,
                 (unsigned long long)st.hits, (unsigned long long)st.hw_errors);
        if (st.hw_errors)
            status = EXIT_RUNTIME;
    }
    format_rate((double)sum / elapsed, rate, sizeof rate);
    lode_log(LODE_LOG_INFO, "  total: %s", rate);
    printf("%s %s %.0f H/s\n", lode_algo_get(o->algo)->name, "total", (double)sum / elapsed);
    free(last);
    free(now);
    lode_miner_free(m);
    return status;
}
