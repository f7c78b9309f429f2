/* `lode --benchmark`: mine a synthetic job on every selected device and
 * report per-device and total hashrates, cpuminer style. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api/api.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/target.h"
#include "core/base/text.h"
#include "core/cli/commands.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/run_api.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/dispatch/dispatch.h"

#define REPORT_SECONDS 5.0 /* between hashrate lines, unless --log-interval */
/* The share difficulty starts at 1 and is raised, as a pool's vardiff
 * would, once a window of SHARE_WINDOW_S gives more than SHARES_PER_S_MAX
 * shares a second, to about SHARES_PER_S. Every share is still re-checked
 * on the CPU; at difficulty 1 an H100 gives 150 scrypt shares a second,
 * whose reference re-check alone costs 10% of a core: a cost of the
 * pool's difficulty, not of driving the GPU. A window closes early once it
 * holds a full window's worth of shares at SHARES_PER_S_MAX (a fast device
 * is raised within a tenth of a second, not after 450 re-checks). */
#define SHARE_WINDOW_S 3.0
#define SHARES_PER_S 2.0
#define SHARES_PER_S_MAX 8.0

typedef struct bench_job_source {
    lode_dispatcher *miner;
    bool roll_versions; /* sha256d: every job carries LODE_VERSIONS_MAX versions, as a BIP 310 pool allows */
    pthread_mutex_t lock; /* work and jobs: the exhausted callback runs on a worker */
    lode_work work;
    uint32_t jobs;
    double difficulty;
    atomic_uint_fast64_t shares;
} bench_job_source;

/* A fresh header for each job, as a pool's new extranonce would give:
 * the merkle root changes, everything else stays plausible. */
static void next_job(bench_job_source *s)
{
    pthread_mutex_lock(&s->lock);
    s->jobs++;
    for (int i = 0; i < 4; i++)
        s->work.header.header[36 + i] = (uint8_t)(s->jobs >> (8 * i));
    if (s->roll_versions) { /* BIP 320's general-purpose bits 13..28 */
        s->work.header.version_count = LODE_VERSIONS_MAX;
        for (uint32_t k = 0; k < LODE_VERSIONS_MAX; k++)
            s->work.header.versions[k] = 0x20000000u | (uint32_t)((s->jobs * LODE_VERSIONS_MAX + k) & 0xffff) << 13;
    }
    lode_target_from_difficulty(s->difficulty, s->work.algo, &s->work.header.target);
    lode_dispatcher_set_job(s->miner, &s->work, 0, UINT64_C(1) << 32);
    pthread_mutex_unlock(&s->lock);
}

/* Raises the share difficulty when the last window gave too many shares
 * (a new job at the new target, as a pool sends after a difficulty change). */
static void adjust_difficulty(bench_job_source *s, uint64_t shares, double seconds)
{
    const double rate = (double)shares / seconds;
    if (rate <= SHARES_PER_S_MAX)
        return;
    const double factor = exp2(ceil(log2(rate / SHARES_PER_S)));
    s->difficulty *= factor;
    lode_log(LODE_LOG_INFO, "%.0f shares/s: share difficulty raised to %g, as a pool would "
             "(every share is still re-checked on the CPU)", rate, s->difficulty);
    next_job(s);
}

static void on_exhausted(void *user, uint64_t seq)
{
    (void)seq;
    next_job(user);
}

static void on_found(void *user, const lode_found *found)
{
    bench_job_source *s = user;
    atomic_fetch_add(&s->shares, 1);
    lode_log(LODE_LOG_DEBUG, "benchmark share at nonce %llu", (unsigned long long)found->hit.index);
}

/* What the systemd STATUS line adds. */
static void status_extra(void *user, char *out, size_t len)
{
    bench_job_source *s = user;
    snprintf(out, len, "benchmark, shares %llu", (unsigned long long)atomic_load(&s->shares));
}

/* The last line, a plain number for scripts: whole units for H/s; three
 * significant digits below 100 (a Momentum sweep takes seconds: 0.123
 * sweeps/s, not 0), never e-notation. */
static void print_total(lode_algo algo, double total)
{
    char number[48];
    if (total >= 100)
        snprintf(number, sizeof number, "%.0f", total);
    else
        lode_format_decimal(total, 3, number, sizeof number);
    printf("%s total %s %s\n", lode_algo_get(algo)->name, number, cli_rate_unit(algo));
}

/* A random header as the first job's: version 2, the rest plausible. */
static void fill_first_header(bench_job_source *s)
{
    srand((unsigned)time(NULL));
    for (int i = 0; i < 76; i++)
        s->work.header.header[i] = (uint8_t)rand();
    s->work.header.header[0] = 0x02; /* version 2 */
}

static void log_ready_devices(const cli_options *o, lode_dispatcher *m, const bench_job_source *source)
{
    size_t n = lode_dispatcher_device_count(m);
    for (size_t d = 0; d < n; d++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(m, d, &st);
        lode_log(LODE_LOG_INFO, "%s: %s, %u worker(s) passed the self-test%s",
                 lode_dispatcher_device(m, d)->id, lode_dispatcher_device(m, d)->info.name, st.workers_ready,
                 st.workers_failed ? " (some were refused)" : "");
    }
    lode_log(LODE_LOG_INFO, "benchmarking %s%s%s%s; Ctrl-C stops", lode_algo_get(o->algo)->name,
             o->variant ? " with variant " : "", o->variant ? o->variant : "",
             source->roll_versions ? ", rolling 8 versions a nonce as BIP 310 pools allow (--no-version-rolling: one)"
                                   : "");
}

/* Hashes until Ctrl-C, --time-limit or no device left, raising the share
 * difficulty as a pool would: the exit status. */
static int bench_until_stopped(const cli_options *o, cli_run *run, bench_job_source *source)
{
    double start = lode_clock_s(), window_start = start;
    uint64_t window_shares = 0;
    int status = 0;
    while (!cli_interrupted()) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        const double now = lode_clock_s();
        if (o->time_limit > 0 && now - start >= o->time_limit)
            break;
        const uint64_t shares = atomic_load(&source->shares);
        if (now - window_start >= SHARE_WINDOW_S ||
            (double)(shares - window_shares) > SHARES_PER_S_MAX * SHARE_WINDOW_S) {
            adjust_difficulty(source, shares - window_shares, now - window_start);
            window_shares = shares;
            window_start = now;
        }
        cli_rate_report_tick(&run->report);
        if (cli_devices_left(run->miner) == 0) {
            lode_log(LODE_LOG_ERROR, "every device has failed or is quarantined; nothing is hashing");
            status = EXIT_RUNTIME;
            break;
        }
    }
    if (status == 0 && cli_interrupted())
        status = EXIT_INTERRUPTED;
    return status;
}

/* The benchmark on the selected devices, from start to the total line. */
static int run_benchmark(const cli_options *o, cli_run *run, bench_job_source *source)
{
    fill_first_header(source);
    source->roll_versions = o->algo == LODE_ALGO_SHA256D && !o->no_version_rolling;
    lode_dispatcher_config config = {
        .algo = o->algo,
        .devices = run->devices,
        .device_count = run->device_count,
        .threads = o->threads,
        .variant = o->variant,
        .callbacks = {.user = source, .found = on_found, .exhausted = on_exhausted},
    };
    int status = cli_run_start_dispatcher(run, o, &config);
    if (status != 0)
        return status;
    source->miner = run->miner;
    run->api_source = (cli_api_source){.algo = o->algo, .kind = "benchmark", .where = "benchmark",
                                       .unit = cli_rate_unit(o->algo)};
    if ((status = cli_run_start_api(run, o)) != 0 || (status = cli_run_wait_ready(run)) != 0)
        return status;
    log_ready_devices(o, run->miner, source);
    if ((status = cli_run_start_report(run, o->algo,
                                       o->log_interval > 0 ? o->log_interval : REPORT_SECONDS)) != 0)
        return status;
    next_job(source);
    cli_run_running(run, lode_algo_get(o->algo)->name, cli_rate_unit(o->algo), status_extra, source);
    status = bench_until_stopped(o, run, source);
    cli_run_stopping(run);
    uint64_t hw_errors;
    double total = cli_rate_report_stop_and_summarise(&run->report, &hw_errors);
    print_total(o->algo, total);
    if (hw_errors && status == 0)
        status = EXIT_RUNTIME;
    return status;
}

int cmd_benchmark(const cli_options *o)
{
    if (!o->algo_given)
        return cli_usage_error("--benchmark needs --algo (%s)", lode_algo_names());
    if (lode_algo_get(o->algo)->kind == LODE_WORK_TF)
        return cli_usage_error("--benchmark hashes block headers, not tf (trial factoring: lode tf --help)");
    if (cli_api_check(o) != 0)
        return EXIT_USAGE;
    cli_run run = {0};
    bench_job_source source = {.work = {.algo = o->algo}, .difficulty = 1.0};
    pthread_mutex_init(&source.lock, NULL);
    int status = cli_run_select(&run, o, o->algo);
    if (status == 0)
        status = run_benchmark(o, &run, &source);
    cli_run_end(&run); /* the dispatcher's workers before the job source they call */
    pthread_mutex_destroy(&source.lock);
    return status;
}
