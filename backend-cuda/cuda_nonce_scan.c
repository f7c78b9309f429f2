/* The nonce-scan pipeline SHA-256d and scrypt share (cuda_internal.h): hit
 * buffers and events per launch slot, the launch driver's engine, and the
 * launch shape from the tune cache, the environment or a measurement
 * (core/backend_support/autotune.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "core/backend_support/autotune.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"

int cuda_nonce_open(lode_device *d, cuda_nonce_scan *s, cuda_nonce_launch launch)
{
    s->launch = launch;
    for (int i = 0; i < IN_FLIGHT; i++) {
        s->slot_stream[i] = d->stream;
        TRY(d, cudaEventCreateWithFlags(&s->finished[i], cudaEventBlockingSync | cudaEventDisableTiming));
        TRY(d, cudaMalloc((void **)&s->hits_dev[i], sizeof(cuda_hits)));
        TRY(d, cudaMallocHost((void **)&s->hits_host[i], sizeof(cuda_hits)));
    }
    return LODE_OK;
}

void cuda_nonce_close(cuda_nonce_scan *s)
{
    for (int i = 0; i < IN_FLIGHT; i++) {
        if (s->finished[i] != NULL)
            cudaEventDestroy(s->finished[i]);
        cudaFree(s->hits_dev[i]);
        cudaFreeHost(s->hits_host[i]);
    }
}

int cuda_nonce_enqueue(lode_device *d, cuda_nonce_scan *s, int slot, uint64_t start, uint64_t count)
{
    cudaStream_t stream = s->slot_stream[slot];
    TRY(d, cudaMemsetAsync(&s->hits_dev[slot]->count, 0, sizeof(uint32_t), stream));
    int rc = s->launch(d, slot, start, count, s->hits_dev[slot], stream);
    if (rc != LODE_OK)
        return rc;
    TRY(d, cudaMemcpyAsync(s->hits_host[slot], s->hits_dev[slot], sizeof(cuda_hits), cudaMemcpyDeviceToHost,
                           stream));
    TRY(d, cudaEventRecord(s->finished[slot], stream));
    return LODE_OK;
}

/* ---- the engine of the launch driver ----------------------------------- */

static cuda_nonce_scan *scan_of(lode_device *d) { return d->algo_state; }

static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    return cuda_nonce_enqueue(d, scan_of(d), (int)slot, start, count);
}

static int nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cudaError_t err = cudaEventSynchronize(scan_of(d)->finished[slot]);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a kernel launch", err);
}

/* Appends a finished launch's hits. */
static int nonce_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    const cuda_nonce_scan *s = scan_of(d);
    return lode_collect_nonce_hits(d->label, (const uint32_t *)s->hits_host[slot], start, count, &s->check, hits);
}

static void nonce_drain(void *ctx)
{
    lode_device *d = ctx; /* a launch may be half queued */
    cudaStreamSynchronize(d->stream);
    if (scan_of(d)->extra_stream != NULL)
        cudaStreamSynchronize(scan_of(d)->extra_stream);
}

lode_launch_engine cuda_nonce_engine(lode_device *d)
{
    return (lode_launch_engine){.ctx = d, .depth = IN_FLIGHT, .launch_size = scan_of(d)->launch_count,
                                .blocking_wait = true, .enqueue = nonce_enqueue, .wait = nonce_wait,
                                .collect = nonce_collect, .drain = nonce_drain};
}

uint64_t cuda_nonce_preferred_chunk(const cuda_nonce_scan *s, double target_ms)
{
    double rate = s->tune.rate > 0 ? s->tune.rate : (double)s->launch_count * 1000.0 / LAUNCH_MS;
    double n = rate * target_ms / 1000.0;
    return n < (double)s->launch_count ? s->launch_count : (uint64_t)n;
}

/* ---- launch parameters -------------------------------------------------- */

/* The driver's version for the cache key: the kernel module's version
 * string, and the CUDA driver API version ("580.159.04 cuda 13000"). */
static void driver_version(char *out, size_t len)
{
    int v = 0;
    cudaDriverGetVersion(&v);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." */
    char line[256] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        fclose(f);
    }
    /* The first word shaped like 580.159.04 after "Module". */
    char module[32] = "";
    const char *p = strstr(line, "Module");
    while (p != NULL && *p != '\0' && module[0] == '\0') {
        p += strcspn(p, "0123456789");
        unsigned a, b;
        int n = 0;
        if (sscanf(p, "%u.%u%n", &a, &b, &n) == 2 && n > 0)
            sscanf(p, "%31[0-9.]", module);
        else
            p += strspn(p, "0123456789");
    }
    snprintf(out, len, "%s%scuda %d", module, module[0] ? " " : "", v);
}

/* driver: storage for the key's driver string. */
static lode_tune_key tune_key(const lode_device *d, char driver[64])
{
    driver_version(driver, 64);
    return (lode_tune_key){.backend = "cuda", .device = d->name, .driver = driver,
                           .algo = lode_algo_get(d->algo)->name, .variant = d->variant};
}

/* cuda_tune_params by name: the cache's names, and LODE_CUDA_TUNE's keys
 * (the first three of the cache's, in the same order). */
static const char *const cache_names[] = {"threads_per_block", "nonces_per_thread", "waves", "rate"};
static const char *const env_names[] = {"tpb", "npt", "waves"};

static void to_values(const cuda_tune_params *p, double v[4])
{
    v[0] = p->threads_per_block;
    v[1] = p->nonces_per_thread;
    v[2] = p->waves;
    v[3] = p->rate;
}

/* Values the kernels accept: whole warps up to 1024 threads. */
static bool values_ok(const double *v)
{
    return v[0] >= 32 && v[0] <= 1024 && (unsigned)v[0] % 32 == 0 && v[1] >= 1 && v[1] <= (1u << 20) &&
           v[2] >= 0 && v[2] <= 16 && v[3] >= 0 && v[3] < 1e15;
}

static cuda_tune_params from_values(const double v[4])
{
    return (cuda_tune_params){.threads_per_block = (unsigned)v[0], .nonces_per_thread = (unsigned)v[1],
                              .waves = (unsigned)v[2], .rate = v[3]};
}

static void warn_env_values(void)
{
    lode_log(LODE_LOG_WARN, "cuda: ignoring LODE_CUDA_TUNE='%s' (tpb: a multiple of 32 up to 1024; "
             "npt: up to 1048576; waves: up to 16)", lode_setting_text(LODE_SETTING_CUDA_TUNE));
}

static pthread_once_t env_warned = PTHREAD_ONCE_INIT;
static const lode_autotune_spec tune_spec = {
    .setting = LODE_SETTING_CUDA_TUNE,
    .cache_names = cache_names,
    .n_values = COUNT(cache_names),
    .env_names = env_names,
    .n_env = COUNT(env_names),
    .values_ok = values_ok,
    .warn_env = warn_env_values,
    .warn_once = &env_warned,
};

void cuda_nonce_load_params(const lode_device *d, cuda_nonce_scan *s, cuda_tune_params defaults)
{
    char driver[64];
    const lode_tune_key key = tune_key(d, driver);
    double v[COUNT(cache_names)];
    to_values(&defaults, v);
    s->mode = lode_autotune_load(&tune_spec, &key, v, &s->tuned);
    s->tune = from_values(v);
}

/* ---- tuning -------------------------------------------------------------- */

/* Runs one launch of count indices from nonce 0 on the installed job (or
 * the zero job) and returns its duration in seconds, or < 0 on error. */
static double time_launch(lode_device *d, cuda_nonce_scan *s, uint64_t count, int *rc)
{
    cudaEvent_t t0, t1;
    float ms = 0;
    *rc = LODE_OK;
    if (cudaEventCreate(&t0) != cudaSuccess)
        return -1;
    if (cudaEventCreate(&t1) != cudaSuccess) {
        cudaEventDestroy(t0);
        return -1;
    }
    cudaError_t err = cudaEventRecord(t0, d->stream);
    if (err == cudaSuccess && (*rc = cuda_nonce_enqueue(d, s, 0, 0, count)) == LODE_OK) {
        err = cudaEventRecord(t1, d->stream);
        if (err == cudaSuccess)
            err = cudaEventSynchronize(t1);
        if (err == cudaSuccess)
            err = cudaEventElapsedTime(&ms, t0, t1);
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    if (err != cudaSuccess)
        *rc = cuda_fail(d, d->index, "timing a tuning launch", err);
    return *rc == LODE_OK ? ms / 1000.0 : -1;
}

typedef struct tune_run {
    lode_device *d;
    cuda_nonce_scan *s;
    const cuda_tune_params *candidates;
    cuda_trial_count count;
    uint64_t last; /* the count of the last candidate run */
} tune_run;

static int trial(void *ctx, size_t index, double *rate)
{
    tune_run *t = ctx;
    t->s->tune = t->candidates[index];
    const uint64_t count = t->count(t->d, index, t->last);
    if (count == 0)
        return LODE_OK; /* skipped */
    t->last = count;
    int rc = LODE_OK;
    if (index == 0)
        time_launch(t->d, t->s, count, &rc); /* warm-up: clocks, module load */
    const double s = rc == LODE_OK ? time_launch(t->d, t->s, count, &rc) : -1;
    *rate = s > 0 ? count / s : 0;
    return rc;
}

int cuda_nonce_tune(lode_device *d, cuda_nonce_scan *s, const cuda_tune_params *candidates, size_t n,
                    cuda_trial_count count)
{
    const cuda_tune_params saved = s->tune;
    tune_run run = {.d = d, .s = s, .candidates = candidates, .count = count};
    size_t best;
    double rate;
    int rc = lode_autotune_best(&run, n, trial, LODE_AUTOTUNE_BUDGET_S, &best, &rate);
    if (rc != LODE_OK || rate <= 0) {
        s->tune = saved;
        return rc != LODE_OK ? rc : LODE_ERR_DEVICE;
    }
    s->tune = candidates[best];
    s->tune.rate = rate;
    s->tuned = true;
    return LODE_OK;
}

void cuda_nonce_store_params(const lode_device *d, const cuda_nonce_scan *s)
{
    char driver[64];
    const lode_tune_key key = tune_key(d, driver);
    double v[COUNT(cache_names)];
    to_values(&s->tune, v);
    lode_autotune_store(&tune_spec, &key, s->mode, v);
}
