/* The CUDA backend's tuning: the launch shape of each workload from the
 * tune cache, the environment or a measurement (cuda_tune). */
#include <string.h>

#include "backend-cuda/cuda_internal.h"

/* ---- tuning ----------------------------------------------------------- */

static const char *algo_name(lode_algo algo) { return lode_algo_get(algo)->name; }

static cuda_tune_params default_params(lode_algo algo)
{
    if (algo == LODE_ALGO_SHA256D)
        return (cuda_tune_params){.threads_per_block = 256, .nonces_per_thread = 32, .rate = 0};
    return (cuda_tune_params){.threads_per_block = 128, .nonces_per_thread = 2, .waves = 1, .rate = 0};
}

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
                           .algo = algo_name(d->algo), .variant = d->variant->name};
}

/* cuda_tune_params by name: the cache's names, and LODE_CUDA_TUNE's keys. */
static const char *const cache_names[] = {"threads_per_block", "nonces_per_thread", "waves", "rate"};
static const char *const env_names[] = {"tpb", "npt", "waves"};

static void to_values(const cuda_tune_params *p, double v[4])
{
    v[0] = p->threads_per_block;
    v[1] = p->nonces_per_thread;
    v[2] = p->waves;
    v[3] = p->rate;
}

/* Values the kernels accept (checked as doubles: a hostile cache or a typo
 * must not reach a cast or a launch): whole warps up to 1024 threads. */
static bool values_ok(const double v[4])
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

/* The romix shape of the variant with these launch parameters. */
cuda_scrypt_shape cuda_scrypt_shape_of(const lode_device *d, const cuda_tune_params *t)
{
    return (cuda_scrypt_shape){.layout = d->variant->layout, .gap = d->variant->value,
                               .interleave = t->nonces_per_thread, .threads_per_block = t->threads_per_block};
}

/* Hash slots of one scrypt batch with the current parameters. The
 * occupancy query runs once per shape, not once per launch. */
unsigned cuda_scrypt_batch(lode_device *d)
{
    const cuda_scrypt_shape shape = cuda_scrypt_shape_of(d, &d->tune);
    if (memcmp(&shape, &d->resident_shape, sizeof shape) != 0 || d->resident_slots == 0) {
        d->resident_shape = shape;
        d->resident_slots = cuda_scrypt_resident_slots(&shape);
    }
    unsigned resident = d->resident_slots;
    const unsigned lane_slots = d->scrypt_slots / (d->lanes ? d->lanes : 1);
    uint64_t want = (uint64_t)resident * (d->tune.waves ? d->tune.waves : 1);
    if (want == 0 || want > lane_slots)
        want = lane_slots;
    return (unsigned)(want / SCRYPT_SLOT_QUANTUM * SCRYPT_SLOT_QUANTUM);
}

/* Indices per launch for about LAUNCH_MS at the measured (or a guessed) rate. */
void cuda_size_launches(lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D) {
        double rate = d->tune.rate > 0 ? d->tune.rate : 4e9;
        if (d->versions)
            rate /= LODE_VERSIONS_MAX; /* each nonce is that many hashes */
        uint64_t n = (uint64_t)(rate * LAUNCH_MS / 1000.0);
        uint64_t quantum = (uint64_t)d->tune.threads_per_block * d->tune.nonces_per_thread;
        n = n / quantum * quantum;
        d->launch_count = n < quantum ? quantum : n > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : n;
    } else {
        /* Whole batches: a partial one costs as long as a full one. */
        double rate = d->tune.rate > 0 ? d->tune.rate : 5e6;
        uint64_t batch = cuda_scrypt_batch(d);
        uint64_t k = (uint64_t)(rate * LAUNCH_MS / 1000.0 / (double)batch + 0.5);
        d->launch_count = batch * (k < 1 ? 1 : k);
    }
}

/* Runs one launch of count indices from nonce 0 on the installed job (or
 * the zero job) and returns its duration in seconds, or < 0 on error. */
static double time_launch(lode_device *d, uint64_t count, int *rc)
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
    if (err == cudaSuccess && (*rc = cuda_enqueue(d, 0, 0, count)) == LODE_OK) {
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

/* Tries launch shapes and keeps the fastest: sha256d threads per block x
 * nonces per thread, scrypt threads per block x batch size (waves). Each
 * trial is one launch of about LAUNCH_MS after a warm-up. The core tunes a
 * handle right after its self-test, on a plain job: the version-rolled
 * search takes the block size found, with one nonce a thread. */
int cuda_tune_measure(lode_device *d, double target_ms)
{
    (void)target_ms; /* launches aim at LAUNCH_MS; the dispatcher sizes scans */
    if (d->algo == LODE_ALGO_MOMENTUM || d->algo == LODE_ALGO_TF)
        return LODE_OK; /* one launch shape; sizes are fixed or follow memory */
    /* Cached or given by the user: nothing to measure (LODE_CUDA_TUNE=retune
     * forces a new measurement). */
    if (d->tuned || d->mode == LODE_TUNE_OFF)
        return LODE_OK;
    static const unsigned sha_tpb[] = {128, 256, 512}, sha_npt[] = {8, 32, 128};
    static const unsigned scr_tpb[] = {64, 128, 256}, scr_il[] = {1, 2}, scr_waves[] = {1, 2};
    const cuda_tune_params saved = d->tune;
    /* A job whose target no hash meets: the hit buffers stay empty. */
    const cuda_sha256d_params sha_saved = d->sha;
    const cuda_scrypt_params scrypt_saved = d->scrypt;
    d->sha.w[LODE_SHA256D_P_TARGET_TOP] = 0;
    memset(d->scrypt.w + LODE_SCRYPT_P_TARGET, 0, 8 * sizeof(uint32_t));

    cuda_tune_params best = saved;
    best.rate = 0;
    int rc = LODE_OK;
    if (d->algo == LODE_ALGO_SHA256D) {
        for (size_t i = 0; i < COUNT(sha_tpb) && rc == LODE_OK; i++)
            for (size_t j = 0; j < COUNT(sha_npt) && rc == LODE_OK; j++) {
                d->tune.threads_per_block = sha_tpb[i];
                d->tune.nonces_per_thread = sha_npt[j];
                uint64_t count = UINT64_C(1) << 28; /* ~40 ms at the target rate */
                if (i == 0 && j == 0)
                    time_launch(d, count, &rc); /* warm-up: clocks, module load */
                double s = rc == LODE_OK ? time_launch(d, count, &rc) : -1;
                if (s > 0 && count / s > best.rate) {
                    best = d->tune;
                    best.rate = count / s;
                }
            }
    } else {
        uint64_t last = 0;
        /* The thread layout has no interleave: one pass over the sizes. */
        const size_t n_il = d->variant->layout == CUDA_SCRYPT_THREAD ? 1 : COUNT(scr_il);
        for (size_t c = 0; c < COUNT(scr_tpb) * n_il && rc == LODE_OK; c++)
            for (size_t j = 0; j < COUNT(scr_waves) && rc == LODE_OK; j++) {
                d->tune.threads_per_block = scr_tpb[c / n_il];
                d->tune.nonces_per_thread = scr_il[c % n_il];
                d->tune.waves = scr_waves[j];
                uint64_t count = cuda_scrypt_batch(d);
                if (count == 0 || (j > 0 && count == last))
                    continue; /* the scratchpad has no room for more waves */
                last = count;
                if (c == 0 && j == 0)
                    time_launch(d, count, &rc);
                double s = rc == LODE_OK ? time_launch(d, count, &rc) : -1;
                if (s > 0 && count / s > best.rate) {
                    best = d->tune;
                    best.rate = count / s;
                }
            }
    }
    d->sha = sha_saved;
    d->scrypt = scrypt_saved;
    if (rc != LODE_OK || best.rate <= 0) {
        d->tune = saved;
        return rc != LODE_OK ? rc : LODE_ERR_DEVICE;
    }
    d->tune = best;
    d->tuned = true;
    cuda_size_launches(d);
    char rate[48];
    lode_format_rate(best.rate, "H/s", rate, sizeof rate);
    if (d->algo == LODE_ALGO_SHA256D) {
        lode_log(LODE_LOG_INFO, "cuda:%d (%s): tuned sha256d/%s: %u threads per block, %u nonces "
                 "per thread: %s", d->index, d->name, d->variant->name,
                 best.threads_per_block, best.nonces_per_thread, rate);
    } else {
        const cuda_scrypt_shape shape = cuda_scrypt_shape_of(d, &best);
        lode_log(LODE_LOG_INFO, "cuda:%d (%s): tuned scrypt/%s: %u threads and %u hashes per "
                 "block, batches of %u waves: %s", d->index, d->name, d->variant->name,
                 best.threads_per_block, cuda_scrypt_hashes_per_block(&shape), best.waves, rate);
    }
    if (d->mode != LODE_TUNE_OFF) {
        char driver[64];
        lode_tune_key key = tune_key(d, driver);
        double v[COUNT(cache_names)];
        to_values(&best, v);
        lode_tune_store(&key, cache_names, v, COUNT(cache_names));
    }
    return LODE_OK;
}

/* Cached or user-given parameters, else the defaults (tuned later). */
void cuda_load_params(lode_device *d)
{
    static pthread_once_t env_warned = PTHREAD_ONCE_INIT;
    d->tune = default_params(d->algo);
    double v[COUNT(cache_names)];
    to_values(&d->tune, v);
    /* env_names are the first three of cache_names, in the same order. */
    d->mode = lode_tune_env(LODE_SETTING_CUDA_TUNE, algo_name(d->algo), env_names, v, COUNT(env_names));
    if (d->mode == LODE_TUNE_FIXED) {
        if (values_ok(v)) {
            d->tune = from_values(v);
        } else {
            pthread_once(&env_warned, warn_env_values);
            d->mode = LODE_TUNE_AUTO;
        }
    }
    d->tuned = d->mode == LODE_TUNE_FIXED;
    if (d->mode == LODE_TUNE_AUTO) {
        char driver[64];
        lode_tune_key key = tune_key(d, driver);
        if (lode_tune_load(&key, cache_names, v, COUNT(cache_names)) == 0 && values_ok(v)) {
            d->tune = from_values(v);
            d->tuned = true;
        }
    }
    /* scrypt lg* runs 1 or 2 hashes per group of 4 threads, thread* one per
     * thread; a block size romix does not take falls back to the default. */
    if (d->algo == LODE_ALGO_SCRYPT) {
        if (d->variant->layout == CUDA_SCRYPT_THREAD)
            d->tune.nonces_per_thread = 1;
        else if (d->tune.nonces_per_thread != 1)
            d->tune.nonces_per_thread = 2;
        const cuda_scrypt_shape shape = cuda_scrypt_shape_of(d, &d->tune);
        if (cuda_scrypt_hashes_per_block(&shape) == 0)
            d->tune.threads_per_block = default_params(d->algo).threads_per_block;
    }
}
