/* How fast a new job reaches busy workers: the latency figure that used to
 * be a test threshold (a loaded machine broke it). Built, never run by
 * ctest; docs/PERFORMANCE.md describes the method.
 *
 * usage: bench_dispatch [DEVICES [ROUNDS]]   (default cpu:0, 20 rounds)
 *
 * The CPU workers scan chunks sized for 5 s each, so only the abort flag can
 * bring them to a new job quickly; each round installs a job and times how
 * long until every worker has it installed (polled every 0.1 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/dispatch/dispatch.h"
#include "tests/test_util.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "cpu:0";
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    if (rounds < 1 || rounds > 10000) {
        fprintf(stderr, "bench_dispatch: ROUNDS must be 1..10000\n");
        return 2;
    }
    lode_device_ref *devices;
    size_t count;
    char err[256];
    if (lode_registry_select(spec, LODE_ALGO_SHA256D, &devices, &count, err, sizeof err) != 0) {
        fprintf(stderr, "bench_dispatch: %s\n", err);
        return 2;
    }
    lode_dispatcher_config cfg = {
        .algo = LODE_ALGO_SHA256D, .devices = devices, .device_count = count, .chunk_ms = 5000};
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    free(devices);
    if (m == NULL) {
        fprintf(stderr, "bench_dispatch: %s\n", err);
        return 1;
    }
    int workers = lode_dispatcher_wait_ready(m, -1);
    if (workers <= 0) {
        fprintf(stderr, "bench_dispatch: no worker passed its self-test\n");
        lode_dispatcher_free(m);
        return 1;
    }
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
    nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL); /* scans are now long */
    double *ms = calloc((size_t)rounds, sizeof *ms);
    int status = 0;
    for (int round = 0; round < rounds && ms != NULL; round++) {
        w.header.header[0]++;
        double t0 = now_seconds();
        uint64_t seq = lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
        while ((int)lode_dispatcher_workers_on_job(m, seq) < workers) {
            if (now_seconds() - t0 > 60) {
                fprintf(stderr, "bench_dispatch: the workers did not take job %llu in 60 s\n",
                        (unsigned long long)seq);
                status = 1;
                break;
            }
            nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
        }
        ms[round] = (now_seconds() - t0) * 1e3;
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    lode_dispatcher_free(m);
    if (ms == NULL) {
        fprintf(stderr, "bench_dispatch: out of memory\n");
        return 1;
    }
    qsort(ms, (size_t)rounds, sizeof *ms, by_value);
    printf("job switch on %s, %d worker(s), %d rounds: median %.3f ms, worst %.3f ms\n", spec, workers,
           rounds, ms[rounds / 2], ms[rounds - 1]);
    free(ms);
    return status;
}
