/* `lode check`: every device and implementation variant against the CPU
 * reference (core/dispatch/check.h does the work): a table per device x
 * variant x algorithm, each difference with the `lode scan` command that
 * shows it again, a verdict and the exit status; --json for scripts. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/base/sensors.h"
#include "core/base/status.h"
#include "core/base/text.h"
#include "core/cli/commands.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/dispatch/check.h"

#define DEFAULT_JOBS 4
#define PROGRESS_INTERVAL_S 10.0
#define TEXT_MISMATCHES 3 /* per row in the text report (--json has LODE_CHECK_KEPT_MISMATCHES) */

void cmd_check_usage(FILE *out)
{
    fprintf(out,
            "usage: lode check [-a ALGO,...] [-d LIST] [--variant NAME] [--jobs N | --duration TIME]\n"
            "                  [--seed S] [-t N] [--json]\n"
            "\n"
            "Every selected device and implementation variant computes random work of each\n"
            "algorithm, and the CPU reference computes the same; the answers must be equal,\n"
            "hit for hit. Exit status 0 only if everything matched.\n"
            "\n");
    cli_print_options(out, CLI_CMD_CHECK);
    fprintf(out,
            "\n"
            "Jobs: SHA-256d and scrypt scan random headers at loose targets (dozens of hits),\n"
            "over ranges of odd length, some ending at nonce 2^32-1; Momentum finds every\n"
            "colliding pair of random headers; trial factoring scans ranges holding known\n"
            "factors and random small ranges. The seed reproduces the jobs (with --jobs, the\n"
            "whole run). With --duration the devices' ranges grow to about half a second of\n"
            "work and the reference compares a share of each exactly (every hit anywhere is\n"
            "re-checked): errors per hour per device, with the temperature at each error.\n"
            "Each difference comes with the `lode scan` command that shows it on that device.\n");
}

/* ---- progress (duration mode): a line per row every 10 s ------------------ */

typedef struct progress_state {
    pthread_mutex_t lock;
    double last[64]; /* per device thread: when it last said something, by row pointer hash */
    double start;
    bool json;       /* rows go to stderr as log lines, stdout is the JSON at the end */
    bool header;     /* the text table's header is out */
    const lode_check_row **done; /* the rows shown as they finished */
    size_t done_count, done_cap;
} progress_state;

static void on_progress(void *user, const lode_check_row *row)
{
    progress_state *p = user;
    size_t slot = ((uintptr_t)row->device / sizeof(void *)) % 64;
    pthread_mutex_lock(&p->lock);
    double t = lode_clock_s();
    bool say = t - p->last[slot] >= PROGRESS_INTERVAL_S;
    if (say)
        p->last[slot] = t;
    pthread_mutex_unlock(&p->lock);
    if (!say)
        return;
    char text[160] = "";
    cli_device_sensors_text(row->device, text, sizeof text);
    const char *sensors = text + strspn(text, " ");
    lode_log(LODE_LOG_INFO, "check %s %s%s%s: %llu jobs, %llu hits, %llu mismatches%s%s", row->device->id,
             lode_algo_get(row->algo)->name, row->variant[0] ? " " : "", row->variant,
             (unsigned long long)row->jobs, (unsigned long long)row->hits_reported,
             (unsigned long long)row->mismatches, sensors[0] ? ", " : "", sensors);
}

/* ---- reproduction commands -------------------------------------------------- */

static void repro_command(const lode_check_row *row, const lode_check_mismatch *m, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    lode_appendf(out, len, &used, "lode scan -a %s -d %s", lode_algo_get(row->algo)->name, row->device->id);
    if (row->variant[0])
        lode_appendf(out, len, &used, " --variant %s", row->variant);
    const lode_work *w = &m->work;
    switch (lode_algo_get(row->algo)->kind) {
    case LODE_WORK_NONCE_SCAN: {
        char header[161], target[65];
        uint8_t t[32];
        lode_hex_encode(w->header.header, 80, header);
        lode_u256_to_le_bytes(&w->header.target, t);
        lode_hex_encode_reversed(t, 32, target);
        lode_appendf(out, len, &used, " --header %s --target %s --start %llu --count %llu", header, target,
                     (unsigned long long)m->range.start, (unsigned long long)m->range.count);
        /* A version-rolled job: the same versions, so the device runs the
         * same search again. */
        for (uint32_t k = 0; k < w->header.version_count; k++)
            lode_appendf(out, len, &used, "%s%08x", k == 0 ? " --versions " : ",", (unsigned)w->header.versions[k]);
        break;
    }
    case LODE_WORK_COLLISION_SEARCH: {
        uint8_t header[80];
        char hex[161];
        memcpy(header, w->header.header, 80);
        for (int b = 0; b < 4; b++)
            header[76 + b] = (uint8_t)(m->range.start >> (8 * b));
        lode_hex_encode(header, 80, hex);
        lode_appendf(out, len, &used, " --header %s", hex);
        break;
    }
    case LODE_WORK_TF:
        lode_appendf(out, len, &used, " --tf-class %u,%u,%u,%u --start %llu --count %llu", w->factor.exponent,
                     w->factor.bit_min, w->factor.bit_max, w->factor.class_index,
                     (unsigned long long)m->range.start, (unsigned long long)m->range.count);
        break;
    }
}

static const char *rate_unit(lode_algo algo)
{
    return algo == LODE_ALGO_TF ? "candidates/s" : cli_rate_unit(algo);
}

static double row_rate(const lode_check_row *row)
{
    return row->device_s > 0 ? (double)row->indices / row->device_s : 0;
}

/* ---- the text report ------------------------------------------------------ */

/* "compared": the share of the scanned indices the reference enumerated
 * too (100% with --jobs; a share with --duration), not a match rate. */
static void print_header(void)
{
    printf("%-10s %-12s %-9s %7s %9s %11s %10s %20s %7s\n", "device", "variant", "algorithm", "jobs", "hits",
           "compared", "mismatches", "rate", "max C");
    fflush(stdout);
}

static void print_row(const lode_check_row *r)
{
    char rate[32] = "-", temp[16] = "-", compared[48] = "-";
    if (r->ran)
        lode_format_rate(row_rate(r), rate_unit(r->algo), rate, sizeof rate);
    if (!isnan(r->max_temp_c))
        snprintf(temp, sizeof temp, "%.0f", r->max_temp_c);
    if (r->indices > 0) { /* "0.00000412%", not 4.12e-06% */
        lode_format_decimal(100.0 * (double)r->indices_exact / (double)r->indices, 3, compared, sizeof compared);
        size_t used = strlen(compared);
        lode_appendf(compared, sizeof compared, &used, "%%");
    }
    printf("%-10s %-12s %-9s %7llu %9llu %11s %10llu %20s %7s%s%s\n", r->device->id,
           r->variant[0] ? r->variant : "-", lode_algo_get(r->algo)->name, (unsigned long long)r->jobs,
           (unsigned long long)r->hits_reported, compared, (unsigned long long)r->mismatches, rate, temp,
           r->error != LODE_OK ? "  ERROR: " : "", r->error != LODE_OK ? r->error_text : "");
    fflush(stdout);
}

/* A row has finished (a device's thread): shown now, not after the whole
 * check (the CPU's rows can take minutes). */
static void on_row_done(void *user, const lode_check_row *row)
{
    progress_state *p = user;
    pthread_mutex_lock(&p->lock);
    if (p->done_count == p->done_cap) {
        size_t cap = p->done_cap ? 2 * p->done_cap : 16;
        const lode_check_row **grown = realloc(p->done, cap * sizeof *grown);
        if (grown != NULL) {
            p->done = grown;
            p->done_cap = cap;
        }
    }
    bool kept = p->done_count < p->done_cap;
    if (kept) /* else it is shown again at the end: twice rather than never */
        p->done[p->done_count++] = row;
    if (p->json)
        lode_log(LODE_LOG_INFO, "check %s %s%s%s: done, %llu jobs, %llu hits, %llu mismatching", row->device->id,
                 lode_algo_get(row->algo)->name, row->variant[0] ? " " : "", row->variant,
                 (unsigned long long)row->jobs, (unsigned long long)row->hits_reported,
                 (unsigned long long)row->mismatches);
    else {
        if (!p->header)
            print_header();
        p->header = true;
        print_row(row);
    }
    pthread_mutex_unlock(&p->lock);
}

static bool shown_already(const progress_state *p, const lode_check_row *row)
{
    for (size_t i = 0; i < p->done_count; i++)
        if (p->done[i] == row)
            return true;
    return false;
}

static void print_text(const lode_check *c, uint64_t seed, const cli_options *o, const progress_state *p)
{
    if (!p->header)
        print_header();
    for (size_t i = 0; i < c->row_count; i++) /* those a stop left unfinished */
        if (!shown_already(p, &c->rows[i]))
            print_row(&c->rows[i]);
    /* Each difference kept, with the command that shows it again. */
    for (size_t i = 0; i < c->row_count; i++) {
        const lode_check_row *r = &c->rows[i];
        size_t kept = r->differences < TEXT_MISMATCHES ? (size_t)r->differences : TEXT_MISMATCHES;
        for (size_t k = 0; k < kept; k++) {
            const lode_check_mismatch *m = &r->kept[k];
            char cmd[900], sensors[160] = "";
            repro_command(r, m, cmd, sizeof cmd);
            lode_sensors_format(&m->sensors, sensors, sizeof sensors);
            memmove(sensors, sensors + strspn(sensors, " "), strlen(sensors + strspn(sensors, " ")) + 1);
            printf("\nMISMATCH %s %s%s%s job %llu (seed %llu), %.1f s in%s%s: %s\n  reproduce: %s\n", r->device->id,
                   lode_algo_get(r->algo)->name, r->variant[0] ? " " : "", r->variant, (unsigned long long)m->job,
                   (unsigned long long)seed, m->at_s, sensors[0] ? ", " : "", sensors, m->what, cmd);
        }
        if (r->differences > kept)
            printf("  ... and %llu more differences on %s %s\n", (unsigned long long)(r->differences - kept),
                   r->device->id, lode_algo_get(r->algo)->name);
    }
    /* Per device: errors per hour (the stability figure) with a duration. */
    if (o->check.duration > 0) {
        printf("\n");
        for (size_t i = 0; i < c->row_count;) {
            const lode_device_ref *dev = c->rows[i].device;
            uint64_t diffs = 0;
            double secs = 0, maxt = NAN;
            for (; i < c->row_count && c->rows[i].device == dev; i++) {
                diffs += c->rows[i].mismatches;
                secs += c->rows[i].seconds;
                if (!isnan(c->rows[i].max_temp_c) && (isnan(maxt) || c->rows[i].max_temp_c > maxt))
                    maxt = c->rows[i].max_temp_c;
            }
            char temp[32] = "";
            if (!isnan(maxt))
                snprintf(temp, sizeof temp, ", at most %.0f C", maxt);
            char per_hour[48];
            lode_format_decimal(secs > 0 ? (double)diffs * 3600 / secs : 0.0, 3, per_hour, sizeof per_hour);
            printf("%s: %llu mismatching jobs in %.1f min (%s per hour)%s\n", dev->id, (unsigned long long)diffs,
                   secs / 60, per_hour, temp);
        }
    }
}

/* ---- the JSON report ------------------------------------------------------ */

static json_t *json_sensors(const lode_sensors *s)
{
    char text[160];
    lode_sensors_format(s, text, sizeof text);
    json_t *o = json_object();
    if (s->present & LODE_SENSOR_TEMP)
        json_object_set_new(o, "temp_c", json_real(s->temp_c));
    if (s->present & LODE_SENSOR_POWER)
        json_object_set_new(o, "power_w", json_real(s->power_w));
    json_object_set_new(o, "text", json_string(text));
    return o;
}

static int print_json(const lode_check *c, uint64_t seed, const cli_options *o, bool passed, bool stopped)
{
    json_t *root = json_object(), *rows = json_array();
    json_object_set_new(root, "seed", json_integer((json_int_t)seed));
    if (o->check.duration > 0)
        json_object_set_new(root, "duration_s", json_real(o->check.duration));
    else
        json_object_set_new(root, "jobs_per_row", json_integer((json_int_t)o->check.jobs));
    json_object_set_new(root, "seconds", json_real(c->seconds));
    for (size_t i = 0; i < c->row_count; i++) {
        const lode_check_row *r = &c->rows[i];
        json_t *row = json_object(), *list = json_array();
        json_object_set_new(row, "device", json_string(r->device->id));
        json_object_set_new(row, "name", json_string(r->device->info.name));
        json_object_set_new(row, "variant", r->variant[0] ? json_string(r->variant) : json_null());
        json_object_set_new(row, "algorithm", json_string(lode_algo_get(r->algo)->name));
        json_object_set_new(row, "ran", json_boolean(r->ran));
        json_object_set_new(row, "error", r->error != LODE_OK ? json_string(r->error_text) : json_null());
        json_object_set_new(row, "jobs", json_integer((json_int_t)r->jobs));
        json_object_set_new(row, "hits_reported", json_integer((json_int_t)r->hits_reported));
        json_object_set_new(row, "hits_compared", json_integer((json_int_t)r->hits_compared));
        json_object_set_new(row, "indices", json_integer((json_int_t)r->indices));
        json_object_set_new(row, "indices_exact", json_integer((json_int_t)r->indices_exact));
        json_object_set_new(row, "mismatching_jobs", json_integer((json_int_t)r->mismatches));
        json_object_set_new(row, "differences", json_integer((json_int_t)r->differences));
        json_object_set_new(row, "rate", json_real(row_rate(r)));
        json_object_set_new(row, "rate_unit", json_string(rate_unit(r->algo)));
        json_object_set_new(row, "seconds", json_real(r->seconds));
        json_object_set_new(row, "max_temp_c", isnan(r->max_temp_c) ? json_null() : json_real(r->max_temp_c));
        size_t kept = r->differences < LODE_CHECK_KEPT_MISMATCHES ? (size_t)r->differences
                                                                   : LODE_CHECK_KEPT_MISMATCHES;
        for (size_t k = 0; k < kept; k++) {
            const lode_check_mismatch *m = &r->kept[k];
            char cmd[900];
            repro_command(r, m, cmd, sizeof cmd);
            json_t *mm = json_object();
            json_object_set_new(mm, "job", json_integer((json_int_t)m->job));
            json_object_set_new(mm, "what", json_string(m->what));
            json_object_set_new(mm, "index", json_integer((json_int_t)m->hit.index));
            if (m->work.header.version_count > 0) /* a version-rolled SHA-256d job: the hit's version */
                json_object_set_new(mm, "version", json_integer((json_int_t)m->hit.version));
            json_object_set_new(mm, "reported_by_device", json_boolean(m->reported));
            json_object_set_new(mm, "at_s", json_real(m->at_s));
            json_object_set_new(mm, "sensors", json_sensors(&m->sensors));
            json_object_set_new(mm, "reproduce", json_string(cmd));
            json_array_append_new(list, mm);
        }
        json_object_set_new(row, "mismatches", list);
        json_array_append_new(rows, row);
    }
    json_object_set_new(root, "rows", rows);
    json_object_set_new(root, "verdict", json_string(stopped ? "interrupted" : passed ? "pass" : "fail"));
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (text == NULL)
        return -1;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* ---- the command ---------------------------------------------------------- */

static atomic_int stop_flag;

static void *watch_signals(void *arg)
{
    atomic_int *done = arg;
    while (!atomic_load(done)) {
        if (cli_interrupted())
            atomic_store(&stop_flag, 1);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f == NULL || fread(&s, sizeof s, 1, f) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec;
    }
    if (f != NULL)
        fclose(f);
    return s % 1000000000000u; /* short enough to type */
}

/* The verdict, on stderr as well as in the report. */
static void log_verdict(const lode_check *result, uint64_t seed, bool stopped, bool passed)
{
    uint64_t jobs = 0, hits = 0;
    char bad[512] = "";
    size_t bad_used = 0;
    for (size_t i = 0; i < result->row_count; i++) {
        const lode_check_row *r = &result->rows[i];
        jobs += r->jobs;
        hits += r->hits_reported;
        if (r->differences || r->error != LODE_OK || !r->ran)
            lode_appendf(bad, sizeof bad, &bad_used, "%s%s %s%s%s (%s)", bad_used ? ", " : "", r->device->id,
                         lode_algo_get(r->algo)->name, r->variant[0] ? " " : "", r->variant,
                         r->error != LODE_OK ? r->error_text
                         : r->differences     ? "differs from the reference"
                                              : "did not run");
    }
    if (stopped)
        lode_log(LODE_LOG_WARN, "check interrupted after %llu jobs (seed %llu)", (unsigned long long)jobs,
                 (unsigned long long)seed);
    else if (passed)
        lode_log(LODE_LOG_NOTICE, "check passed: every device matched the CPU reference (%llu jobs, %llu hits "
                 "re-checked, seed %llu)", (unsigned long long)jobs, (unsigned long long)hits,
                 (unsigned long long)seed);
    else
        lode_log(LODE_LOG_ERROR, "check FAILED (seed %llu): %s", (unsigned long long)seed, bad);
}

/* Runs the check with Ctrl-C watched (it sets the check's stop flag). */
static int run_watched(const lode_check_config *cfg, lode_check *result, char *err, size_t err_len)
{
    atomic_int watching_done = 0;
    pthread_t watcher;
    bool watching = pthread_create(&watcher, NULL, watch_signals, &watching_done) == 0;
    int rc = lode_check_run(cfg, &stop_flag, result, err, err_len);
    atomic_store(&watching_done, 1);
    if (watching)
        pthread_join(watcher, NULL);
    return rc;
}

/* The check of the selected devices, from the first job to the verdict. */
static int run_check(const cli_options *o, cli_run *run, const lode_algo *algos, size_t algo_count,
                     progress_state *progress, bool *abandoned)
{
    cli_options shown = *o;
    if (shown.check.jobs == 0 && shown.check.duration <= 0)
        shown.check.jobs = DEFAULT_JOBS;
    uint64_t seed = o->check.seed_given ? o->check.seed : fresh_seed();
    lode_check_config cfg = {.devices = run->devices, .device_count = run->device_count, .algos = algos,
                             .algo_count = algo_count, .variant = o->variant, .seed = seed,
                             .jobs = shown.check.jobs, .duration_s = o->check.duration,
                             .reference_threads = o->threads,
                             .progress = o->check.duration > 0 ? on_progress : NULL, .row_done = on_row_done,
                             .user = progress};
    if (o->check.duration > 0)
        lode_log(LODE_LOG_INFO, "check: seed %llu, %.0f s over %zu device(s)", (unsigned long long)seed,
                 o->check.duration, run->device_count);
    else
        lode_log(LODE_LOG_INFO, "check: seed %llu, %llu jobs per device x variant x algorithm on %zu device(s)",
                 (unsigned long long)seed, (unsigned long long)shown.check.jobs, run->device_count);
    lode_check result;
    char err[512];
    if (run_watched(&cfg, &result, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    bool stopped = cli_interrupted();
    bool passed = lode_check_passed(&result);
    int status = stopped ? EXIT_INTERRUPTED : passed ? 0 : EXIT_RUNTIME;
    if (o->check.json) {
        if (print_json(&result, seed, &shown, passed, stopped) != 0)
            status = EXIT_RUNTIME;
    } else {
        print_text(&result, seed, &shown, progress);
    }
    log_verdict(&result, seed, stopped, passed);
    *abandoned = result.abandoned > 0;
    if (!*abandoned)
        lode_check_free(&result);
    return status;
}

int cmd_check(const cli_options *o, int argc, char **argv)
{
    lode_log_configure(o->quiet, false);
    if (argc > 0)
        return cli_usage_error("unexpected argument '%s' (see lode check --help)", argv[0]);
    if (o->check.duration > 0 && o->check.jobs > 0)
        return cli_usage_error("give --jobs or --duration, not both");
    lode_algo algos[LODE_ALGO_COUNT];
    size_t algo_count = o->check.algo_count;
    memcpy(algos, o->check.algos, sizeof algos);
    if (algo_count == 0)
        for (int a = 0; a < LODE_ALGO_COUNT; a++)
            algos[algo_count++] = (lode_algo)a;
    cli_run run = {0};
    int status = cli_run_select_all(&run, o);
    if (status != 0)
        return status;
    progress_state progress = {.lock = PTHREAD_MUTEX_INITIALIZER, .start = lode_clock_s(), .json = o->check.json};
    bool abandoned = false;
    status = run_check(o, &run, algos, algo_count, &progress, &abandoned);
    if (abandoned) /* its threads still use the devices and the progress */
        return status;
    free(progress.done);
    cli_run_end(&run);
    return status;
}
