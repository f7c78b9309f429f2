/* Nonce scans on an OpenCL device, shared by SHA-256d and scrypt: two hit
 * buffers in flight, the launch driver's engine over them, and the tuning
 * of the launch shape (core/backend_support/autotune.h) from the cache,
 * LODE_OPENCL_TUNE or a measurement. The algorithm gives its kernels and
 * its shapes through ocl_nonce_algo. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "backend-opencl/ocl_internal.h"
#include "core/backend_support/autotune.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"

int ocl_nonce_open(lode_device *d)
{
    ocl_nonce_scan *s = ocl_nonce_of(d);
    int rc = LODE_OK;
    for (int i = 0; i < IN_FLIGHT && rc == LODE_OK; i++)
        rc = ocl_create_buffer(d, CL_MEM_READ_WRITE, LODE_HITS_WORDS * sizeof(uint32_t), &s->hits[i]);
    return rc;
}

void ocl_nonce_close(ocl_nonce_scan *s)
{
    for (int i = 0; i < IN_FLIGHT; i++) {
        if (s->finished[i] != NULL)
            ocl.clReleaseEvent(s->finished[i]);
        if (s->kernel_done[i] != NULL)
            ocl.clReleaseEvent(s->kernel_done[i]);
        ocl_release_mem(&s->hits[i]);
    }
}

unsigned ocl_pow2_local(unsigned want, size_t max, unsigned floor)
{
    unsigned ls = 1;
    while (ls * 2 <= want && ls * 2 <= max)
        ls *= 2;
    return ls < floor ? floor : ls;
}

/* ---- launches -------------------------------------------------------- */

/* Queues one launch (count >= 1 indices from start) on hit buffer slot:
 * clear the counter, run, read the hits back, mark the event. */
static int nonce_launch(lode_device *d, unsigned slot, uint64_t start, uint64_t count)
{
    static const cl_uint zero = 0; /* static: the write may complete later */
    ocl_nonce_scan *s = ocl_nonce_of(d);
    cl_mem hits = s->hits[slot];
    OCL_TRY(d, "clearing the hit counter",
        ocl.clEnqueueWriteBuffer(d->queue, hits, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL));
    int rc = s->algo->enqueue(d, hits, &s->kernel_done[slot], start, count);
    if (rc != LODE_OK)
        return rc;
    if (s->finished[slot] != NULL) {
        ocl.clReleaseEvent(s->finished[slot]);
        s->finished[slot] = NULL;
    }
    OCL_TRY(d, "reading the hits",
        ocl.clEnqueueReadBuffer(d->queue, hits, CL_FALSE, 0, sizeof s->hits_host[slot], s->hits_host[slot], 0,
                                NULL, &s->finished[slot]));
    OCL_TRY(d, "clFlush", ocl.clFlush(d->queue)); /* start now, not at the wait */
    return LODE_OK;
}

static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    return nonce_launch(ctx, slot, start, count);
}

static int nonce_query(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cl_int done = ocl_event_done(ocl_nonce_of(d)->kernel_done[slot]);
    return done >= 0 ? done : ocl_fail(d, "a kernel launch (device lost or out of resources?)", done);
}

/* The read-back after the kernel (short once the kernel has finished). */
static int nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    ocl_nonce_scan *s = ocl_nonce_of(d);
    cl_int err = ocl.clWaitForEvents(1, &s->finished[slot]);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        ocl.clGetEventInfo(s->finished[slot], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS || status < 0)
        return ocl_fail(d, "a kernel launch (device lost or out of resources?)", status < 0 ? status : err);
    return LODE_OK;
}

static int nonce_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    ocl_nonce_scan *s = ocl_nonce_of(d);
    return lode_collect_nonce_hits(d->label, s->hits_host[slot], start, count, &s->check, hits);
}

static void nonce_drain(void *ctx)
{
    lode_device *d = ctx;
    ocl.clFinish(d->queue); /* a launch may be half queued */
}

lode_launch_engine ocl_nonce_engine(lode_device *d)
{
    return (lode_launch_engine){.ctx = d, .depth = IN_FLIGHT, .launch_size = ocl_nonce_of(d)->launch_count,
                                .enqueue = nonce_enqueue, .query = nonce_query, .wait = nonce_wait,
                                .collect = nonce_collect, .drain = nonce_drain};
}

uint64_t ocl_nonce_preferred_chunk(lode_device *d, double target_ms)
{
    const ocl_nonce_scan *s = ocl_nonce_of(d);
    double rate = s->tune.rate > 0 ? s->tune.rate : (double)s->launch_count * 1000.0 / LAUNCH_MS;
    double n = rate * target_ms / 1000.0;
    return n < (double)s->launch_count ? s->launch_count : (uint64_t)n;
}

/* ---- parameters: cache, environment, defaults --------------------------- */

/* ocl_tune_params by name: the cache's names, and LODE_OPENCL_TUNE's keys
 * (npt and il both set per_item: npt reads better for sha256d, il for scrypt). */
static const char *const cache_names[] = {"local_size", "per_item", "batch", "rate"};
static const char *const env_names[] = {"ls", "npt", "il", "batch"};

static void to_values(const ocl_tune_params *p, double v[4])
{
    v[0] = p->local_size;
    v[1] = p->per_item;
    v[2] = p->batch;
    v[3] = p->rate;
}

static ocl_tune_params from_values(const double v[4])
{
    return (ocl_tune_params){.local_size = (unsigned)v[0], .per_item = (unsigned)v[1],
                             .batch = (unsigned)v[2], .rate = v[3]};
}

static void env_from_values(const double *v, double *e)
{
    e[0] = v[0];
    e[1] = v[1];
    e[2] = v[1];
    e[3] = v[2];
}

/* The module takes 1..2^24; the work-group and per-item limits are the old
 * ones, and clamp fits the rest to the device. il wins where both differ
 * from the default (v[1] on entry). */
static void env_to_values(const double *e, double *v)
{
    v[1] = e[2] != v[1] ? e[2] : e[1];
    v[0] = e[0];
    v[2] = e[3];
    v[3] = 0;
}

/* Checked as doubles, so a hostile cache never reaches a cast; clamp fits
 * what passes to the device. */
static bool values_ok(const double *v)
{
    return v[0] >= 1 && v[0] <= 4096 && v[1] >= 1 && v[1] <= 4096 && v[2] >= 0 && v[2] <= 4294967295.0 &&
           v[3] >= 0 && v[3] < 1e15;
}

static void warn_env_values(void)
{
    lode_log(LODE_LOG_WARN, "opencl: ignoring LODE_OPENCL_TUNE='%s' (ls, npt, il: up to 4096)",
             lode_setting_text(LODE_SETTING_OPENCL_TUNE));
}

static pthread_once_t env_warned = PTHREAD_ONCE_INIT;
static const lode_autotune_spec tune_spec = {
    .setting = LODE_SETTING_OPENCL_TUNE,
    .cache_names = cache_names,
    .n_values = COUNT(cache_names),
    .env_names = env_names,
    .n_env = COUNT(env_names),
    .env_from_values = env_from_values,
    .env_to_values = env_to_values,
    .values_ok = values_ok,
    .warn_env = warn_env_values,
    .warn_once = &env_warned,
    .cache_needs_rate = true,
};

static lode_tune_key tune_key(const lode_device *d)
{
    return (lode_tune_key){.backend = "opencl", .device = d->desc->name, .platform = d->desc->platform_name,
                           .driver = d->desc->driver, .algo = ocl_algo_name(d->algo), .variant = d->variant};
}

void ocl_nonce_load_params(lode_device *d, ocl_tune_params defaults)
{
    ocl_nonce_scan *s = ocl_nonce_of(d);
    double v[COUNT(cache_names)];
    to_values(&defaults, v);
    const lode_tune_key key = tune_key(d);
    s->mode = lode_autotune_load(&tune_spec, &key, v, &s->tuned);
    s->tune = from_values(v);
}

int ocl_nonce_ready(lode_device *d)
{
    const ocl_nonce_algo *a = ocl_nonce_of(d)->algo;
    a->clamp(d);
    int rc = a->build(d);
    if (rc != LODE_OK)
        return rc;
    a->clamp(d); /* now within the kernel's own work-group limit */
    a->size_launches(d);
    return LODE_OK;
}

/* ---- tuning ---------------------------------------------------------- */

double ocl_nonce_time_launch(lode_device *d, uint64_t count, int *rc)
{
    const double t0 = lode_clock_s();
    *rc = nonce_launch(d, 0, 0, count);
    int done = 0;
    /* Polled with short sleeps, not clWaitForEvents (it spins in some drivers). */
    for (int polls = 0; *rc == LODE_OK && polls < 40000 && (done = nonce_query(d, 0)) == 0; polls++)
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
    if (*rc == LODE_OK)
        *rc = done < 0 ? done : nonce_wait(d, 0);
    return *rc == LODE_OK ? lode_clock_s() - t0 : -1;
}

double ocl_nonce_measure_rate(lode_device *d, uint64_t quantum, uint64_t max, int *rc)
{
    quantum = quantum < 1 ? 1 : quantum;
    max = max < quantum ? quantum : max;
    ocl_nonce_time_launch(d, quantum, rc); /* first-launch costs */
    uint64_t count = quantum;
    double sec = -1;
    while (*rc == LODE_OK) {
        sec = ocl_nonce_time_launch(d, count, rc);
        if (*rc != LODE_OK || sec >= 0.02 || count >= max)
            break;
        count = count > max / 8 ? max : count * 8;
    }
    return *rc == LODE_OK && sec > 0 ? (double)count / sec : 0;
}

/* A shape given or cached without its rate: measured once, so that
 * launches follow the device rather than a guess. */
static int measure_untuned(lode_device *d)
{
    ocl_nonce_scan *s = ocl_nonce_of(d);
    const ocl_nonce_algo *a = s->algo;
    int rc = a->tune_begin(d);
    const double rate = rc == LODE_OK ? ocl_nonce_measure_rate(d, a->launch_quantum(d), a->trial_count(d), &rc) : 0;
    const int rc2 = a->tune_end(d);
    if (rc != LODE_OK || rc2 != LODE_OK)
        return rc != LODE_OK ? rc : rc2;
    s->tune.rate = rate;
    a->size_launches(d);
    return LODE_OK;
}

/* The most shapes an algorithm tries. */
#define MAX_SHAPES 32

typedef struct trials {
    lode_device *d;
    ocl_tune_params tried[MAX_SHAPES]; /* each shape as clamped for its trial */
} trials;

/* Candidate i: its shape within the device's limits and built, then one
 * launch (after a warm-up, where asked) of about 40 ms. */
static int trial(void *ctx, size_t i, double *rate)
{
    trials *t = ctx;
    lode_device *d = t->d;
    ocl_nonce_scan *s = ocl_nonce_of(d);
    const ocl_nonce_algo *a = s->algo;
    a->shape(d, i);
    a->clamp(d);
    int rc = a->build(d);
    if (rc != LODE_OK)
        return rc;
    a->clamp(d);
    t->tried[i] = s->tune;
    const uint64_t count = a->trial_count(d);
    if (i == 0 && a->warm_up_first)
        ocl_nonce_time_launch(d, count, &rc); /* clocks, first-launch costs */
    double sec = rc == LODE_OK ? ocl_nonce_time_launch(d, count, &rc) : -1;
    *rate = sec > 0 ? (double)count / sec : 0;
    return rc;
}

/* Tries the algorithm's shapes and keeps the fastest, with a zero target
 * so no hit is written. The core calls this once, right after the
 * self-test, on a plain job. Cached or given by the user: only the rate is
 * measured where it is not known (LODE_OPENCL_TUNE=retune measures all). */
int ocl_nonce_tune(lode_device *d, double target_ms)
{
    (void)target_ms; /* launches aim at LAUNCH_MS; the dispatcher sizes scans */
    ocl_nonce_scan *s = ocl_nonce_of(d);
    const ocl_nonce_algo *a = s->algo;
    if (!lode_autotune_wanted(s->mode, s->tuned))
        return s->tune.rate > 0 ? LODE_OK : measure_untuned(d);
    const ocl_tune_params saved = s->tune;
    trials t = {.d = d};
    size_t best = 0;
    double best_rate = 0;
    int rc = a->tune_begin(d);
    const size_t n = a->candidates(d);
    if (rc == LODE_OK)
        rc = lode_autotune_best(&t, n < MAX_SHAPES ? n : MAX_SHAPES, trial, LODE_AUTOTUNE_BUDGET_S, &best,
                                &best_rate);
    int rc2 = a->tune_end(d);
    if (rc == LODE_OK)
        rc = rc2;
    if (rc != LODE_OK || best_rate <= 0) {
        s->tune = saved;
        a->clamp(d);
        return rc != LODE_OK ? rc : LODE_ERR_DEVICE;
    }
    s->tune = t.tried[best];
    s->tune.rate = best_rate;
    s->tuned = true;
    rc = a->build(d);
    if (rc != LODE_OK)
        return rc;
    a->clamp(d);
    a->size_launches(d);
    a->report(d);
    double v[COUNT(cache_names)];
    to_values(&s->tune, v);
    const lode_tune_key key = tune_key(d);
    lode_autotune_store(&tune_spec, &key, s->mode, v);
    return LODE_OK;
}
