/* The OpenCL backend's launch parameters and tuning: each workload's
 * shape from the tune cache, the environment or a measurement
 * (ocl_tune_measure), and the chunk the dispatcher should hand out. */
#include <string.h>

#include "backend-opencl/ocl_internal.h"

/* ---- launch parameters ------------------------------------------------- */

/* scrypt kernels that run one work-item per hash (romix_single, romix_thread). */
bool ocl_item_per_hash(const lode_device *d) { return d->xchg == XCHG_SINGLE || d->xchg == XCHG_STAGED; }

/* Hashes of one work-group of the main kernel. */
unsigned ocl_per_group(const lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D)
        return d->tune.local_size * d->tune.per_item;
    return ocl_item_per_hash(d) ? d->tune.local_size : d->tune.local_size / 4 * d->tune.per_item;
}

/* Brings parameters into what the kernels and this device accept. */
void ocl_clamp_params(lode_device *d)
{
    ocl_tune_params *t = &d->tune;
    /* Whole warps for shfl.sync; whole 32-item units for romix_thread. */
    unsigned floor_ls = d->xchg == XCHG_NV || d->xchg == XCHG_STAGED ? 32 : 4;
    size_t max = d->main_max_local ? d->main_max_local : d->desc->max_work_group;
    if (max > 256)
        max = 256; /* keeps slots a multiple of SCRYPT_SLOT_QUANTUM per group */
    if (d->algo == LODE_ALGO_SCRYPT && d->xchg == XCHG_STAGED && max > STAGED_MAX_LOCAL)
        max = STAGED_MAX_LOCAL; /* 18 KiB of staging: within any GPU's local memory */
    unsigned ls = 1;
    while (ls * 2 <= t->local_size && ls * 2 <= max)
        ls *= 2; /* a power of two */
    t->local_size = ls < floor_ls ? floor_ls : ls;
    if (d->algo == LODE_ALGO_SCRYPT) {
        if (ocl_item_per_hash(d) || t->per_item != 2)
            t->per_item = 1;
        unsigned g = ocl_per_group(d);
        unsigned batch = t->batch == 0 || t->batch > d->slots ? d->slots : t->batch;
        batch = batch / g * g;
        t->batch = batch < g ? g : batch;
    } else if (t->per_item == 0) {
        t->per_item = 1;
    }
}

static ocl_tune_params default_params(const lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D)
        return (ocl_tune_params){.local_size = d->cpu ? 64 : 256, .per_item = d->cpu ? 8 : 32};
    if (d->xchg == XCHG_SINGLE)
        return (ocl_tune_params){.local_size = d->cpu ? 16 : 64, .per_item = 1};
    if (d->xchg == XCHG_STAGED)
        return (ocl_tune_params){.local_size = 64, .per_item = 1, .batch = d->cpu ? 0 : d->slots / 2};
    return (ocl_tune_params){.local_size = d->xchg == XCHG_LOCAL ? 64 : 128,
                             .per_item = d->xchg == XCHG_LOCAL || d->cpu ? 1 : 2,
                             .batch = d->cpu ? 0 : d->slots / 2};
}

static lode_tune_key tune_key(const lode_device *d)
{
    return (lode_tune_key){.backend = "opencl", .device = d->desc->name, .platform = d->desc->platform_name,
                           .driver = d->desc->driver, .algo = ocl_algo_name(d->algo), .variant = d->variant};
}

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

/* Checked as doubles, so a hostile cache never reaches a cast; clamp_params
 * fits what passes to the device. */
static bool values_ok(const double v[4])
{
    return v[0] >= 1 && v[0] <= 4096 && v[1] >= 1 && v[1] <= 4096 && v[2] >= 0 && v[2] <= 4294967295.0 &&
           v[3] >= 0 && v[3] < 1e15;
}

static void warn_env_values(void)
{
    lode_log(LODE_LOG_WARN, "opencl: ignoring LODE_OPENCL_TUNE='%s' (ls, npt, il: up to 4096)",
             lode_setting_text(LODE_SETTING_OPENCL_TUNE));
}

static ocl_tune_params from_values(const double v[4])
{
    return (ocl_tune_params){.local_size = (unsigned)v[0], .per_item = (unsigned)v[1],
                             .batch = (unsigned)v[2], .rate = v[3]};
}

/* Cached or user-given parameters, else the defaults (tuned later). */
void ocl_load_params(lode_device *d)
{
    static pthread_once_t env_warned = PTHREAD_ONCE_INIT;
    d->tune = default_params(d);
    const double per = d->tune.per_item;
    double e[COUNT(env_names)] = {d->tune.local_size, per, per, d->tune.batch};
    d->mode = lode_tune_env(LODE_SETTING_OPENCL_TUNE, ocl_algo_name(d->algo), env_names, e, COUNT(env_names));
    if (d->mode == LODE_TUNE_FIXED) {
        /* The module takes 1..2^24; the work-group and per-item limits are
         * the old ones, and clamp_params fits the rest to the device. */
        double v[COUNT(cache_names)] = {e[0], e[2] != per ? e[2] : e[1], e[3], 0};
        if (values_ok(v)) {
            d->tune = from_values(v);
        } else {
            pthread_once(&env_warned, warn_env_values);
            d->mode = LODE_TUNE_AUTO;
        }
    }
    d->tuned = d->mode == LODE_TUNE_FIXED;
    if (d->mode == LODE_TUNE_AUTO) {
        lode_tune_key key = tune_key(d);
        double v[COUNT(cache_names)];
        /* A cached entry has a measured rate; one without is not ours. */
        if (lode_tune_load(&key, cache_names, v, COUNT(cache_names)) == 0 && values_ok(v) && v[3] > 0) {
            d->tune = from_values(v);
            d->tuned = true;
        }
    }
}

/* Indices per launch for about LAUNCH_MS at the measured (or a guessed) rate. */
void ocl_size_launches(lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D) {
        double rate = d->tune.rate > 0 ? d->tune.rate : d->cpu ? 5e6 : 1e9;
        if (d->versions)
            rate /= LODE_VERSIONS_MAX; /* each nonce is that many hashes */
        uint64_t quantum = ocl_per_group(d);
        uint64_t n = (uint64_t)(rate * LAUNCH_MS / 1000.0) / quantum * quantum;
        d->launch_count = n < quantum ? quantum : n > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : n;
    } else {
        /* Whole batches: a partial one costs about as long as a full one. */
        double rate = d->tune.rate > 0 ? d->tune.rate : d->cpu ? 2e3 : 5e5;
        uint64_t batch = d->tune.batch;
        uint64_t k = (uint64_t)(rate * LAUNCH_MS / 1000.0 / (double)batch + 0.5);
        d->launch_count = batch * (k < 1 ? 1 : k);
    }
}
/* ---- tuning -------------------------------------------------------------- */

/* Runs one launch of count indices from nonce 0 and returns its duration
 * in seconds, or < 0 with *rc set. */
static double time_launch(lode_device *d, uint64_t count, int *rc)
{
    const double t0 = lode_clock_s();
    *rc = ocl_enqueue(d, 0, 0, count);
    int done = 0;
    /* Polled with short sleeps, not clWaitForEvents (it spins in some drivers). */
    for (int polls = 0; *rc == LODE_OK && polls < 40000 && (done = ocl_nonce_query(d, 0)) == 0; polls++)
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
    if (*rc == LODE_OK)
        *rc = done < 0 ? done : ocl_nonce_wait(d, 0);
    return *rc == LODE_OK ? lode_clock_s() - t0 : -1;
}

static void try_shape(lode_device *d, uint64_t count, bool warm_up, ocl_tune_params *best, int *rc)
{
    ocl_clamp_params(d);
    *rc = ocl_build_program(d, d->tune.per_item);
    if (*rc != LODE_OK)
        return;
    ocl_clamp_params(d);
    if (d->algo == LODE_ALGO_SCRYPT)
        count = d->tune.batch;
    if (warm_up)
        time_launch(d, count, rc); /* clocks, first-launch costs */
    double s = *rc == LODE_OK ? time_launch(d, count, rc) : -1;
    if (s > 0 && (double)count / s > best->rate) {
        *best = d->tune;
        best->rate = (double)count / s;
    }
}

/* Tries launch shapes and keeps the fastest: sha256d work-group size x
 * nonces per work-item; scrypt work-group size x hashes per quad x batch.
 * Each trial is one launch of about 40 ms (a batch, for scrypt) after a
 * warm-up, with a zero target so no hit is written. The core tunes a
 * handle right after its self-test, on a plain job: the version-rolled
 * search takes the work-group size found, with one nonce a work-item. */
int ocl_tune_measure(lode_device *d, double target_ms)
{
    (void)target_ms; /* launches aim at LAUNCH_MS; the dispatcher sizes scans */
    if (d->algo == LODE_ALGO_MOMENTUM || d->algo == LODE_ALGO_TF)
        return LODE_OK;
    /* The core calls this once after the self-test. Cached or given by the
     * user: nothing to measure (LODE_OPENCL_TUNE=retune measures again). */
    if (d->tuned || d->mode == LODE_TUNE_OFF)
        return LODE_OK;
    const ocl_tune_params saved = d->tune;
    uint32_t job[PARAM_WORDS];
    memcpy(job, d->param_words, sizeof job);
    if (d->algo == LODE_ALGO_SHA256D)
        d->param_words[LODE_SHA256D_P_TARGET_TOP] = 0;
    else
        memset(d->param_words + LODE_SCRYPT_P_TARGET, 0, 8 * sizeof(uint32_t));
    int rc = ocl_upload_params(d);
    ocl_tune_params best = saved;
    best.rate = 0;

    if (rc == LODE_OK && d->algo == LODE_ALGO_SHA256D) {
        static const unsigned gpu_ls[] = {64, 128, 256}, gpu_npt[] = {8, 32, 128};
        static const unsigned cpu_ls[] = {16, 64, 256}, cpu_npt[] = {1, 8, 32};
        const unsigned *ls = d->cpu ? cpu_ls : gpu_ls, *npt = d->cpu ? cpu_npt : gpu_npt;
        /* Calibrate the trial size: ~40 ms at the default shape's rate. */
        uint64_t probe = d->cpu ? UINT64_C(1) << 18 : UINT64_C(1) << 24;
        double s = time_launch(d, probe, &rc);
        if (rc == LODE_OK)
            s = time_launch(d, probe, &rc);
        uint64_t count = s > 0 ? (uint64_t)((double)probe / s * 0.04) : probe;
        count = count < probe ? probe : count > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : count;
        for (size_t i = 0; i < 3 && rc == LODE_OK; i++)
            for (size_t j = 0; j < 3 && rc == LODE_OK; j++) {
                d->tune.local_size = ls[i];
                d->tune.per_item = npt[j];
                try_shape(d, count, false, &best, &rc);
            }
    } else if (rc == LODE_OK) {
        static const unsigned quad_ls[] = {64, 128, 256}, single_ls[] = {16, 64, 256},
                              staged_ls[] = {32, 64, 128};
        const bool single = d->xchg == XCHG_SINGLE;
        const unsigned *ls = single ? single_ls : d->xchg == XCHG_STAGED ? staged_ls : quad_ls;
        /* Interleave is a rebuild; on CPUs (local exchange) it does not pay. */
        const unsigned n_il = ocl_item_per_hash(d) || d->xchg == XCHG_LOCAL ? 1 : 2;
        const unsigned batches[] = {d->slots / 4, d->slots / 2, d->slots};
        bool first = true;
        for (unsigned il = 1; il <= n_il && rc == LODE_OK; il++)
            for (size_t i = 0; i < 3 && rc == LODE_OK; i++)
                for (size_t b = 0; b < COUNT(batches) && rc == LODE_OK; b++) {
                    d->tune.local_size = ls[i];
                    d->tune.per_item = n_il == 1 ? 1 : il;
                    d->tune.batch = batches[b];
                    try_shape(d, 0, first, &best, &rc);
                    first = false;
                }
    }

    memcpy(d->param_words, job, sizeof job);
    int rc2 = ocl_upload_params(d);
    if (rc == LODE_OK)
        rc = rc2;
    if (rc != LODE_OK || best.rate <= 0) {
        d->tune = saved;
        ocl_clamp_params(d);
        return rc != LODE_OK ? rc : LODE_ERR_DEVICE;
    }
    d->tune = best;
    d->tuned = true;
    rc = ocl_build_program(d, d->tune.per_item);
    if (rc != LODE_OK)
        return rc;
    ocl_clamp_params(d);
    ocl_size_launches(d);
    char rate[48];
    lode_format_rate(best.rate, "H/s", rate, sizeof rate);
    if (d->algo == LODE_ALGO_SHA256D)
        lode_log(LODE_LOG_INFO, "%s: tuned sha256d/%s: work-groups of %u, %u nonces per work-item: "
                 "%s", d->label, d->variant, best.local_size, best.per_item, rate);
    else
        lode_log(LODE_LOG_INFO, "%s: tuned scrypt/%s: work-groups of %u, %u hash(es) per quad, "
                 "batches of %u: %s", d->label, d->variant, best.local_size, best.per_item,
                 best.batch, rate);
    if (d->mode != LODE_TUNE_OFF) {
        lode_tune_key key = tune_key(d);
        double v[COUNT(cache_names)];
        to_values(&best, v);
        lode_tune_store(&key, cache_names, v, COUNT(cache_names));
    }
    return LODE_OK;
}

uint64_t ocl_preferred_chunk(lode_device *d, double target_ms)
{
    if (d->algo == LODE_ALGO_MOMENTUM) { /* ~4 ms a sweep on a GPU: whole launches where that is more */
        const uint64_t n = d->cpu || target_ms * 0.25 < 1 ? 1 : (uint64_t)(target_ms * 0.25);
        const uint64_t batch = ocl_momentum_batch(d->momentum);
        return n >= batch ? n / batch * batch : n;
    }
    if (d->algo == LODE_ALGO_TF) /* the dispatcher measures from there */
        return ocl_tf_launch_size(d->tf);
    double rate = d->tune.rate > 0 ? d->tune.rate : (double)d->launch_count * 1000.0 / LAUNCH_MS;
    double n = rate * target_ms / 1000.0;
    return n < (double)d->launch_count ? d->launch_count : (uint64_t)n;
}
