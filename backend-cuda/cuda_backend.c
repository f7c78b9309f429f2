/* The CUDA backend: the lode_backend_ops of NVIDIA GPUs.
 *
 * One device is one GPU with one worker. The worker's handle owns a stream,
 * two hit buffers and (scrypt) the scratchpad; open() runs on the worker's
 * thread and makes the device current there, and every later call of the
 * handle comes from that thread (core/base/backend.h).
 *
 * A scan runs through the launch driver (core/backend_support/launch_driver.h)
 * with one engine per workload below: nonce scans (launches of about
 * LAUNCH_MS, two in flight), Momentum sweeps and trial-factoring launches.
 * Every engine waits on events created with cudaEventBlockingSync, so the
 * host sleeps while the GPU works.
 *
 * The CUDA runtime is linked statically: on a machine with no NVIDIA driver
 * the binary still starts, and probe() reports why the backend is off. */
#include "backend-cuda/cuda_backend.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backend-cuda/cuda_kernels.h"
#include "backend-cuda/momentum_cuda.h"
#include "backend-cuda/tf_cuda.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/momentum_common.h"
#include "core/backend_support/nvml_sensors.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/base/backend.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/text.h"
#include "core/base/tf_ref.h"
#include "core/base/tune_cache.h"

/* Aimed duration of one launch: long enough that launch overhead vanishes,
 * short enough that a new job (abort) is picked up quickly. */
#define LAUNCH_MS 50.0
#define IN_FLIGHT 2
/* Largest nonce count of one SHA-256d launch (keeps 32-bit offsets safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)
/* scrypt scratchpad: at most this many batches' worth of resident slots,
 * and at most this share of the free device memory. */
#define SCRYPT_MAX_WAVES 2u
#define SCRYPT_MEM_SHARE 0.85
/* Hash slots come in multiples of this (hashes per block for every shape
 * the tuner tries: at most 256, a hash per thread). */
#define SCRYPT_SLOT_QUANTUM 256u

typedef struct variant_desc {
    const char *name;
    unsigned value; /* sha256d: additions on the FMA pipe; scrypt: the shape's gap */
    unsigned lanes; /* scrypt: at most this many launches run at once (1 or 2) */
    cuda_scrypt_layout layout; /* scrypt */
} variant_desc;

/* Best first (the order of variants()). */
static const variant_desc sha256d_variants[] = {{"imad", 1, 1}, {"iadd3", 0, 1}};
/* scrypt: a hash per thread, leaving out every 8th, none, every 4th or
 * every 2nd scratchpad entry; then four threads per hash with lookup gaps
 * 1, 2, 4 (the shuffle layout of seed 000). Ordered by H100 rate. */
static const variant_desc scrypt_variants[] = {
    {"thread-skip8", 8, 2, CUDA_SCRYPT_THREAD}, {"thread", 0, 2, CUDA_SCRYPT_THREAD},
    {"thread-skip4", 4, 2, CUDA_SCRYPT_THREAD}, {"thread-skip2", 2, 2, CUDA_SCRYPT_THREAD},
    {"lg1", 1, 2, CUDA_SCRYPT_QUAD},            {"lg2", 2, 2, CUDA_SCRYPT_QUAD},
    {"lg4", 4, 2, CUDA_SCRYPT_QUAD}};
/* Momentum: value is the cuda_momentum_method. */
static const variant_desc momentum_variants[] = {
    {"bucket", CUDA_MOMENTUM_BUCKET, 1}, {"filter", CUDA_MOMENTUM_FILTER, 1}, {"radix", CUDA_MOMENTUM_RADIX, 1}};
/* Trial factoring: one pipeline, sieved on the GPU (tf_cuda.h). */
static const variant_desc tf_variants[] = {{"gpusieve", 0, 1}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Launch parameters: tuned, cached (core/base/tune_cache.h) or set by LODE_CUDA_TUNE
 * (keys tpb, npt, waves). */
typedef struct cuda_tune_params {
    unsigned threads_per_block;
    unsigned nonces_per_thread; /* sha256d: nonces per thread and launch;
                                   scrypt lg*: hashes per group of 4 threads (1, 2);
                                   scrypt thread*: 1 */
    unsigned waves;             /* scrypt: batch = waves x resident hash slots */
    double rate;                /* measured hashes per second, 0 if unknown */
} cuda_tune_params;

struct lode_device {
    int index;
    char name[128];
    lode_algo algo;
    const variant_desc *variant;
    cudaStream_t stream;       /* sha256d, and scrypt launches of slot 0 */
    cudaStream_t stream2;      /* scrypt launches of slot 1 (see enqueue) */
    unsigned lanes;            /* scrypt: 2 when the scratch holds two halves */
    cudaEvent_t finished[IN_FLIGHT];
    cuda_hits *hits_dev[IN_FLIGHT];
    cuda_hits *hits_host[IN_FLIGHT]; /* pinned */

    cuda_tune_params tune;
    bool tuned;           /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */

    uint8_t header[80];
    lode_u256 target;
    cuda_sha256d_params sha;
    sha256d_job host_job; /* the job on the host: precomputation, exact check */
    bool versions;        /* the job is version-rolled: vsha and vjobs hold it */
    cuda_sha256d_versions_params vsha;
    sha256d_version_set vjobs;
    cuda_scrypt_params scrypt;
    void *scrypt_state, *scrypt_pad;
    unsigned scrypt_slots; /* hash slots allocated (all lanes together) */
    cuda_scrypt_shape resident_shape; /* the shape resident_slots was measured for */
    unsigned resident_slots;          /* hash slots of it resident at once */
    cuda_momentum *momentum;
    momentum_pairs pairs;
    momentum_entry *cands; /* a batch's candidates, copied off the pinned buffers */
    size_t cand_cap;
    momentum_consts *sweep_jobs; /* a batch's, cuda_momentum_batch() */
    size_t *sweep_ends;          /* where each sweep's candidates end in cands */
    unsigned sweeps_done;        /* sweeps of the batch last waited for */
    cuda_tf *tf;

    lode_launch_driver driver;
    /* What the last trial-factoring wait returned (the launch's factors),
     * read by collect. */
    uint64_t tf_n0;
    uint32_t tf_count, tf_nfound;
    const uint32_t *tf_found;
    bool tf_overflow;
};

/* ---- errors ---------------------------------------------------------- */

/* Logs a failed runtime call with the device it concerns and maps it to a
 * lode status: out of memory or a device failure. */
static int fail(const lode_device *d, int index, const char *what, cudaError_t err)
{
    lode_log(LODE_LOG_ERROR, "cuda:%d (%s): %s failed: %s (%s)", d ? d->index : index,
             d ? d->name : "?", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return err == cudaErrorMemoryAllocation ? LODE_ERR_NO_MEMORY : LODE_ERR_DEVICE;
}

#define TRY(d, call)                                                                               \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return fail((d), (d)->index, #call, err_);                                            \
    } while (0)

/* ---- enumeration ---------------------------------------------------------- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_count;
static char probe_why[LODE_WHY_LEN];

static void probe_run(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorNoDevice || (err == cudaSuccess && n == 0)) {
        snprintf(probe_why, sizeof probe_why, "no CUDA device found (cudaGetDeviceCount: %s)",
                 cudaGetErrorString(err == cudaSuccess ? cudaErrorNoDevice : err));
    } else if (err != cudaSuccess) {
        /* cudaErrorInsufficientDriver when libcuda.so.1 is missing or older
         * than this runtime. */
        snprintf(probe_why, sizeof probe_why, "no NVIDIA driver: cudaGetDeviceCount: %s",
                 cudaGetErrorString(err));
    } else {
        probe_count = n;
    }
}

static int cuda_probe(char why[LODE_WHY_LEN])
{
    pthread_once(&probe_once, probe_run);
    snprintf(why, LODE_WHY_LEN, "%s", probe_why);
    return probe_count > 0 ? 0 : -1;
}

static int cuda_device_count(void)
{
    pthread_once(&probe_once, probe_run);
    return probe_count;
}

static int cuda_device_info(int index, lode_device_info *out)
{
    if (index < 0 || index >= cuda_device_count())
        return LODE_ERR_INVALID;
    struct cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, index);
    if (err != cudaSuccess)
        return fail(NULL, index, "cudaGetDeviceProperties", err);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.127s", prop.name);
    if (cudaDeviceGetPCIBusId(out->bus_id, (int)sizeof out->bus_id, index) == cudaSuccess) {
        for (char *p = out->bus_id; *p != '\0'; p++) /* "0000:41:00.0", like sysfs */
            if (*p >= 'A' && *p <= 'F')
                *p = (char)(*p - 'A' + 'a');
    } else {
        out->bus_id[0] = '\0';
    }
    out->workers = 1;
    out->max_workers = 1;
    out->memory_bytes = prop.totalGlobalMem;
    out->algo_mask = 1u << LODE_ALGO_SHA256D | 1u << LODE_ALGO_SCRYPT | 1u << LODE_ALGO_MOMENTUM |
                     1u << LODE_ALGO_TF;
    return LODE_OK;
}

static const variant_desc *variant_table(lode_algo algo, size_t *n)
{
    if (algo == LODE_ALGO_SHA256D) {
        *n = COUNT(sha256d_variants);
        return sha256d_variants;
    }
    if (algo == LODE_ALGO_SCRYPT) {
        *n = COUNT(scrypt_variants);
        return scrypt_variants;
    }
    if (algo == LODE_ALGO_MOMENTUM) {
        *n = COUNT(momentum_variants);
        return momentum_variants;
    }
    if (algo == LODE_ALGO_TF) {
        *n = COUNT(tf_variants);
        return tf_variants;
    }
    *n = 0;
    return NULL;
}

static int cuda_variants(int index, lode_algo algo, const char **names, int max)
{
    (void)index;
    size_t n;
    const variant_desc *v = variant_table(algo, &n);
    int k = 0;
    for (size_t i = 0; i < n && k < max; i++)
        names[k++] = v[i].name;
    return k;
}

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
static cuda_scrypt_shape scrypt_shape(const lode_device *d, const cuda_tune_params *t)
{
    return (cuda_scrypt_shape){.layout = d->variant->layout, .gap = d->variant->value,
                               .interleave = t->nonces_per_thread, .threads_per_block = t->threads_per_block};
}

/* Hash slots of one scrypt batch with the current parameters. The
 * occupancy query runs once per shape, not once per launch. */
static unsigned scrypt_batch(lode_device *d)
{
    const cuda_scrypt_shape shape = scrypt_shape(d, &d->tune);
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
static void size_launches(lode_device *d)
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
        uint64_t batch = scrypt_batch(d);
        uint64_t k = (uint64_t)(rate * LAUNCH_MS / 1000.0 / (double)batch + 0.5);
        d->launch_count = batch * (k < 1 ? 1 : k);
    }
}

static int enqueue(lode_device *d, int slot, uint64_t start, uint64_t count);

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
    if (err == cudaSuccess && (*rc = enqueue(d, 0, 0, count)) == LODE_OK) {
        err = cudaEventRecord(t1, d->stream);
        if (err == cudaSuccess)
            err = cudaEventSynchronize(t1);
        if (err == cudaSuccess)
            err = cudaEventElapsedTime(&ms, t0, t1);
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    if (err != cudaSuccess)
        *rc = fail(d, d->index, "timing a tuning launch", err);
    return *rc == LODE_OK ? ms / 1000.0 : -1;
}

/* Tries launch shapes and keeps the fastest: sha256d threads per block x
 * nonces per thread, scrypt threads per block x batch size (waves). Each
 * trial is one launch of about LAUNCH_MS after a warm-up. The core tunes a
 * handle right after its self-test, on a plain job: the version-rolled
 * search takes the block size found, with one nonce a thread. */
static int cuda_tune(lode_device *d, double target_ms)
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
                uint64_t count = scrypt_batch(d);
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
    size_launches(d);
    char rate[48];
    lode_format_rate(best.rate, "H/s", rate, sizeof rate);
    if (d->algo == LODE_ALGO_SHA256D) {
        lode_log(LODE_LOG_INFO, "cuda:%d (%s): tuned sha256d/%s: %u threads per block, %u nonces "
                 "per thread: %s", d->index, d->name, d->variant->name,
                 best.threads_per_block, best.nonces_per_thread, rate);
    } else {
        const cuda_scrypt_shape shape = scrypt_shape(d, &best);
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
static void load_params(lode_device *d)
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
        const cuda_scrypt_shape shape = scrypt_shape(d, &d->tune);
        if (cuda_scrypt_hashes_per_block(&shape) == 0)
            d->tune.threads_per_block = default_params(d->algo).threads_per_block;
    }
}

/* ---- open and close ------------------------------------------------------- */

static void cuda_close(lode_device *d)
{
    if (d == NULL)
        return;
    /* Nothing may still write into buffers about to be freed. */
    if (d->stream != NULL)
        cudaStreamSynchronize(d->stream);
    if (d->stream2 != NULL)
        cudaStreamSynchronize(d->stream2);
    for (int i = 0; i < IN_FLIGHT; i++) {
        if (d->finished[i] != NULL)
            cudaEventDestroy(d->finished[i]);
        cudaFree(d->hits_dev[i]);
        cudaFreeHost(d->hits_host[i]);
    }
    cudaFree(d->scrypt_state);
    cudaFree(d->scrypt_pad);
    if (cuda_momentum_redos(d->momentum) > 0) /* as OpenCL's: tests look for it */
        lode_log(LODE_LOG_INFO, "cuda:%d (%s): momentum: %u sweep(s) redone with the filter", d->index,
                 d->name, cuda_momentum_redos(d->momentum));
    cuda_momentum_free(d->momentum);
    cuda_tf_free(d->tf);
    momentum_pairs_free(&d->pairs);
    free(d->cands);
    free(d->sweep_jobs);
    free(d->sweep_ends);
    if (d->stream != NULL)
        cudaStreamDestroy(d->stream);
    if (d->stream2 != NULL)
        cudaStreamDestroy(d->stream2);
    free(d);
}

/* The scratchpad: up to SCRYPT_MAX_WAVES batches of resident hash slots,
 * within a share of the memory free now. */
static int alloc_scrypt(lode_device *d)
{
    unsigned resident = 0;
    /* The thread layout has no interleave (scrypt_shape's 1 or 2 is quad's). */
    const unsigned max_il = d->variant->layout == CUDA_SCRYPT_THREAD ? 1 : 2;
    for (unsigned tpb = 64; tpb <= 256; tpb *= 2)
        for (unsigned il = 1; il <= max_il; il++) {
            const cuda_tune_params t = {.threads_per_block = tpb, .nonces_per_thread = il};
            const cuda_scrypt_shape shape = scrypt_shape(d, &t);
            unsigned r = cuda_scrypt_resident_slots(&shape);
            resident = r > resident ? r : resident;
        }
    size_t free_bytes = 0, total = 0;
    TRY(d, cudaMemGetInfo(&free_bytes, &total));
    const cuda_scrypt_shape any_shape = scrypt_shape(d, &d->tune); /* the pad size is the variant's */
    const size_t per_slot = cuda_scrypt_pad_bytes(&any_shape) + CUDA_SCRYPT_STATE_BYTES;
    uint64_t fit = (uint64_t)((double)free_bytes * SCRYPT_MEM_SHARE) / per_slot;
    uint64_t want = (uint64_t)(resident ? resident : 4096) * SCRYPT_MAX_WAVES;
    uint64_t slots = (want < fit ? want : fit) / SCRYPT_SLOT_QUANTUM * SCRYPT_SLOT_QUANTUM;
    if (slots == 0) {
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): %zu MiB free, too little for one scrypt batch",
                 d->index, d->name, free_bytes >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    d->scrypt_slots = (unsigned)slots;
    /* Two halves when each still holds a batch: the two launches in flight
     * then run on two streams at once, so one launch's batch boundaries
     * (pbkdf2 kernels, the last blocks of a romix, a partial last batch)
     * are filled with the other's blocks instead of idle SMs. */
    d->lanes = d->variant->lanes == 2 && slots >= 2 * (uint64_t)SCRYPT_SLOT_QUANTUM ? 2 : 1;
    if (d->lanes == 2)
        d->scrypt_slots = (unsigned)(slots / (2 * SCRYPT_SLOT_QUANTUM) * (2 * SCRYPT_SLOT_QUANTUM));
    TRY(d, cudaMalloc(&d->scrypt_state, slots * CUDA_SCRYPT_STATE_BYTES));
    TRY(d, cudaMalloc(&d->scrypt_pad, slots * cuda_scrypt_pad_bytes(&any_shape)));
    return LODE_OK;
}

/* Momentum's first-round table: 2^27 counters (32 MiB, so the atomics stay
 * in an H100's L2: measured fastest, docs/PERFORMANCE.md; the seed's design
 * is 2^30, 256 MiB), fewer where memory is short; LODE_MOMENTUM_TABLE_BITS
 * (24..34) overrides for measurements. */
static int alloc_momentum(lode_device *d)
{
    cuda_momentum_method method = (cuda_momentum_method)d->variant->value;
    unsigned bits = lode_setting_unsigned(LODE_SETTING_MOMENTUM_TABLE_BITS);
    size_t free_bytes = 0, total = 0;
    TRY(d, cudaMemGetInfo(&free_bytes, &total));
    while (bits > 26 && cuda_momentum_bytes(method, bits) > free_bytes * 0.9)
        bits--;
    if (cuda_momentum_bytes(method, bits) > free_bytes) {
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): %zu MiB free, Momentum needs %zu MiB", d->index,
                 d->name, free_bytes >> 20, cuda_momentum_bytes(method, bits) >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    TRY(d, cuda_momentum_new(method, bits, d->stream, &d->momentum));
    const unsigned batch = cuda_momentum_batch(d->momentum);
    d->sweep_jobs = calloc(batch, sizeof *d->sweep_jobs);
    d->sweep_ends = calloc(batch, sizeof *d->sweep_ends);
    return d->sweep_jobs != NULL && d->sweep_ends != NULL ? LODE_OK : LODE_ERR_NO_MEMORY;
}

static int open_on_thread(lode_device *d)
{
    TRY(d, cudaSetDevice(d->index));
    /* Host waits sleep instead of spinning. The flag applies to the primary
     * context (and takes effect when it is created). */
    cudaError_t err = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    if (err != cudaSuccess && err != cudaErrorSetOnActiveProcess)
        return fail(d, d->index, "cudaSetDeviceFlags", err);
    cudaGetLastError(); /* not sticky: clear it */
    TRY(d, cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    TRY(d, cudaStreamCreateWithFlags(&d->stream2, cudaStreamNonBlocking));
    for (int i = 0; i < IN_FLIGHT; i++) {
        TRY(d, cudaEventCreateWithFlags(&d->finished[i], cudaEventBlockingSync | cudaEventDisableTiming));
        TRY(d, cudaMalloc((void **)&d->hits_dev[i], sizeof(cuda_hits)));
        TRY(d, cudaMallocHost((void **)&d->hits_host[i], sizeof(cuda_hits)));
    }
    if (d->algo == LODE_ALGO_MOMENTUM)
        return alloc_momentum(d);
    if (d->algo == LODE_ALGO_TF) {
        TRY(d, cuda_tf_new(d->stream, &d->tf));
        return LODE_OK;
    }
    load_params(d);
    if (d->algo == LODE_ALGO_SCRYPT) {
        int rc = alloc_scrypt(d);
        if (rc != LODE_OK)
            return rc;
    }
    size_launches(d);
    return LODE_OK;
}

static int cuda_open(int index, const lode_open_params *params, lode_device **out)
{
    if (index < 0 || index >= cuda_device_count())
        return LODE_ERR_INVALID;
    size_t n;
    const variant_desc *table = variant_table(params->algo, &n);
    const variant_desc *v = NULL;
    for (size_t i = 0; i < n && v == NULL; i++)
        if (params->variant == NULL || strcmp(params->variant, table[i].name) == 0)
            v = &table[i];
    if (v == NULL)
        return LODE_ERR_UNSUPPORTED;

    lode_device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return LODE_ERR_NO_MEMORY;
    d->index = index;
    d->algo = params->algo;
    d->variant = v;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess)
        snprintf(d->name, sizeof d->name, "%.127s", prop.name);
    else
        snprintf(d->name, sizeof d->name, "unknown GPU");
    int rc = open_on_thread(d);
    if (rc != LODE_OK) {
        cuda_close(d);
        return rc;
    }
    *out = d;
    return LODE_OK;
}

/* ---- jobs ------------------------------------------------------------------ */

static void prepare_sha256d(lode_device *d)
{
    /* The same per-job precomputation as the CPU lane paths: midstate,
     * rounds 0..2 of the second block, the W3-free parts of round 3 and of
     * the early schedule (core/backend_support/sha256d_lanes.h). */
    sha256d_job *job = &d->host_job;
    sha256d_job_init(job, d->header, d->target.w[7]);
    sha256d_prepare_lanes(job);
    lode_sha256d_params_fill(d->sha.w, job->midstate, job->pre, job->target_top);
}

static void prepare_scrypt(lode_device *d)
{
    sha256d_job job; /* for its midstate: the HMAC key hash starts there */
    sha256d_job_init(&job, d->header, 0);
    lode_scrypt_params_fill(d->scrypt.w, d->header, job.midstate, d->target.w);
}

static int cuda_set_work(lode_device *d, const lode_work *work)
{
    if (d->algo == LODE_ALGO_TF) {
        TRY(d, cuda_tf_set_job(d->tf, &work->factor));
        return LODE_OK;
    }
    memcpy(d->header, work->header.header, 80);
    d->target = work->header.target;
    const bool versions = work->header.version_count == LODE_VERSIONS_MAX; /* rolls_versions */
    if (d->algo == LODE_ALGO_SHA256D && versions)
        sha256d_versions_init(&d->vjobs, &work->header, d->vsha.w);
    else if (d->algo == LODE_ALGO_SHA256D)
        prepare_sha256d(d);
    else if (d->algo == LODE_ALGO_SCRYPT)
        prepare_scrypt(d);
    if (d->algo == LODE_ALGO_SHA256D && versions != d->versions) {
        d->versions = versions;
        size_launches(d); /* a rolled nonce is LODE_VERSIONS_MAX hashes */
    }
    return LODE_OK;
}

/* ---- scanning -------------------------------------------------------------- */

/* The stream of a launch slot: scrypt with two scratch halves runs slot 1
 * on the second stream and half, so both launches in flight overlap. */
static cudaStream_t slot_stream(const lode_device *d, int slot)
{
    return d->algo == LODE_ALGO_SCRYPT && d->lanes == 2 && slot == 1 ? d->stream2 : d->stream;
}

/* Queues one launch (count >= 1 indices from start) with its hit buffer
 * slot: clear the counter, run, copy the hits back, mark the event. */
static int enqueue(lode_device *d, int slot, uint64_t start, uint64_t count)
{
    cudaStream_t stream = slot_stream(d, slot);
    TRY(d, cudaMemsetAsync(&d->hits_dev[slot]->count, 0, sizeof(uint32_t), stream));
    if (d->algo == LODE_ALGO_SHA256D && d->versions) {
        TRY(d, cuda_sha256d_versions_launch(&d->vsha, (uint32_t)start, (uint32_t)count,
                                            d->tune.threads_per_block, LODE_SHA256D_VERSIONS_NONCES_PER_THREAD,
                                            (int)d->variant->value,
                                            d->hits_dev[slot], stream));
    } else if (d->algo == LODE_ALGO_SHA256D) {
        TRY(d, cuda_sha256d_launch(&d->sha, (uint32_t)start, (uint32_t)count,
                                   d->tune.threads_per_block, d->tune.nonces_per_thread,
                                   (int)d->variant->value, d->hits_dev[slot], stream));
    } else {
        const uint64_t batch = scrypt_batch(d);
        const unsigned half = d->lanes == 2 ? (unsigned)slot : 0;
        const size_t half_slots = d->scrypt_slots / (d->lanes ? d->lanes : 1);
        char *state = (char *)d->scrypt_state + half * half_slots * CUDA_SCRYPT_STATE_BYTES;
        const cuda_scrypt_shape shape = scrypt_shape(d, &d->tune);
        char *pad = (char *)d->scrypt_pad + half * half_slots * cuda_scrypt_pad_bytes(&shape);
        for (uint64_t off = 0; off < count; off += batch) {
            uint64_t n = count - off < batch ? count - off : batch;
            TRY(d, cuda_scrypt_launch(&d->scrypt, (uint32_t)(start + off), (uint32_t)n,
                                      (unsigned)batch, &shape, state, pad, d->hits_dev[slot], stream));
        }
    }
    TRY(d, cudaMemcpyAsync(d->hits_host[slot], d->hits_dev[slot], sizeof(cuda_hits),
                           cudaMemcpyDeviceToHost, stream));
    TRY(d, cudaEventRecord(d->finished[slot], stream));
    return LODE_OK;
}

/* SHA-256d candidates passed only the kernel's top-word test: hash them
 * exactly before they count as hits. */
static bool sha256d_exact(const void *ctx, uint32_t nonce)
{
    const lode_device *d = ctx;
    return sha256d_meets_target(&d->host_job, nonce, &d->target);
}

/* ---- engines of the launch driver --------------------------------------- */

/* Nonce scans (SHA-256d, scrypt): enqueue() above; each slot has its hit
 * buffers and its event. */
static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    return enqueue(ctx, (int)slot, start, count);
}

static int nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cudaError_t err = cudaEventSynchronize(d->finished[slot]);
    return err == cudaSuccess ? LODE_OK : fail(d, d->index, "a kernel launch", err);
}

/* Appends a finished launch's hits. */
static int nonce_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    const cuda_hits *h = d->hits_host[slot];
    if (h->count > LODE_HITS_CAP)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = d->algo == LODE_ALGO_SHA256D && d->versions
                 ? sha256d_versions_push_hits(&d->vjobs, hits, h->nonce, h->count, start, count, &d->target)
                 : lode_hits_push_nonces(hits, h->nonce, h->count, start, count,
                                         d->algo == LODE_ALGO_SHA256D ? sha256d_exact : NULL, d);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): kernel reported a nonce outside its range", d->index, d->name);
    return rc;
}

static void nonce_drain(void *ctx)
{
    lode_device *d = ctx; /* a launch may be half queued */
    cudaStreamSynchronize(d->stream);
    cudaStreamSynchronize(d->stream2);
}

/* Momentum: a launch is a batch of sweeps of consecutive header nonces
 * (cuda_momentum_batch). The engine queues batches ahead (two for the
 * bucket method); fetch copies the candidates off the pinned buffers (a
 * later batch's copies overwrite them), so the next batch is queued before
 * the host pairs them. */
static int momentum_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot;
    for (uint64_t i = 0; i < count; i++) {
        uint8_t mid[32];
        momentum_midhash(d->header, (uint32_t)(start + i), mid);
        momentum_consts_init(&d->sweep_jobs[i], mid);
    }
    cudaError_t err = cuda_momentum_enqueue(d->momentum, d->sweep_jobs, (unsigned)count);
    return err == cudaSuccess ? LODE_OK : fail(d, d->index, "queueing Momentum sweeps", err);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest batch */
    cudaError_t err = cuda_momentum_wait(d->momentum, &d->sweeps_done);
    return err == cudaSuccess ? LODE_OK : fail(d, d->index, "a Momentum sweep", err);
}

/* Copies every sweep's candidates of the finished batch, one after the
 * other; sweep_ends[i] is where sweep i's end. */
static int momentum_fetch(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    size_t total = 0;
    for (unsigned i = 0; i < d->sweeps_done; i++) {
        momentum_entry *list;
        size_t n;
        cudaError_t err = cuda_momentum_result(d->momentum, i, &list, &n);
        if (err != cudaSuccess)
            return fail(d, d->index, "a Momentum sweep", err);
        if (total + n > d->cand_cap) {
            const size_t cap = (total + n) * 2;
            momentum_entry *grown = realloc(d->cands, cap * sizeof *grown);
            if (grown == NULL)
                return LODE_ERR_NO_MEMORY;
            d->cands = grown;
            d->cand_cap = cap;
        }
        if (n > 0)
            memcpy(d->cands + total, list, n * sizeof *d->cands);
        total += n;
        d->sweep_ends[i] = total;
    }
    return LODE_OK;
}

static int momentum_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (count != d->sweeps_done)
        return LODE_ERR_DEVICE;
    for (unsigned i = 0; i < d->sweeps_done; i++) {
        const size_t from = i > 0 ? d->sweep_ends[i - 1] : 0;
        d->pairs.count = 0;
        int rc = momentum_pairs_from_entries(d->cands + from, d->sweep_ends[i] - from, &d->pairs);
        if (rc == LODE_OK)
            rc = momentum_push_hits(d->header, (uint32_t)(start + i), &d->target, &d->pairs, hits);
        if (rc != LODE_OK)
            return rc;
    }
    return LODE_OK;
}

static void momentum_drain(void *ctx)
{
    lode_device *d = ctx;
    cuda_momentum_discard(d->momentum);
}

/* Trial factoring: launches of up to cuda_tf_launch_size() indices of one
 * class, as many in flight as the engine has streams; the dispatcher
 * re-checks every factor with the reference. */
static int tf_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot; /* the engine queues in turn */
    cudaError_t err = cuda_tf_enqueue(d->tf, start, (uint32_t)count);
    return err == cudaSuccess ? LODE_OK : fail(d, d->index, "queueing a trial-factoring launch", err);
}

static int tf_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest launch */
    cudaError_t err = cuda_tf_finish(d->tf, &d->tf_n0, &d->tf_count, &d->tf_found, &d->tf_nfound, &d->tf_overflow);
    return err == cudaSuccess ? LODE_OK : fail(d, d->index, "a trial-factoring launch", err);
}

static int tf_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (d->tf_n0 != start || d->tf_count != count) {
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): a trial-factoring launch out of order", d->index, d->name);
        return LODE_ERR_DEVICE;
    }
    if (d->tf_overflow)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = lode_hits_push_offsets(hits, d->tf_n0, d->tf_count, d->tf_found, d->tf_nfound);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): a factor outside its launch", d->index, d->name);
    return rc;
}

static void tf_drain(void *ctx)
{
    lode_device *d = ctx;
    cuda_tf_discard(d->tf);
}

/* The engine of the handle's algorithm. */
static lode_launch_engine engine_of(lode_device *d)
{
    if (d->algo == LODE_ALGO_MOMENTUM)
        return (lode_launch_engine){.ctx = d, .depth = cuda_momentum_depth(d->momentum),
                                    .launch_size = cuda_momentum_batch(d->momentum),
                                    .blocking_wait = true, .enqueue = momentum_enqueue, .wait = momentum_wait,
                                    .fetch = momentum_fetch, .collect = momentum_collect,
                                    .drain = momentum_drain};
    if (d->algo == LODE_ALGO_TF)
        return (lode_launch_engine){.ctx = d, .depth = cuda_tf_depth(d->tf),
                                    .launch_size = cuda_tf_launch_size(d->tf), .blocking_wait = true,
                                    .enqueue = tf_enqueue, .wait = tf_wait, .collect = tf_collect,
                                    .drain = tf_drain};
    return (lode_launch_engine){.ctx = d, .depth = IN_FLIGHT, .launch_size = d->launch_count,
                                .blocking_wait = true, .enqueue = nonce_enqueue, .wait = nonce_wait,
                                .collect = nonce_collect, .drain = nonce_drain};
}

static int cuda_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = engine_of(d);
    return lode_launch_run(&d->driver, &e, r->start, r->count, hits, done, abort);
}

static uint64_t cuda_preferred_chunk(lode_device *d, double target_ms)
{
    if (d->algo == LODE_ALGO_MOMENTUM) { /* about 350 sweeps/s on an H100: whole batches */
        const uint64_t batch = cuda_momentum_batch(d->momentum);
        const uint64_t n = target_ms * 0.3 < 1 ? 1 : (uint64_t)(target_ms * 0.3);
        return (n + batch - 1) / batch * batch;
    }
    if (d->algo == LODE_ALGO_TF) { /* a device launch takes about a millisecond on an H100; whole batches */
        const uint64_t batch = cuda_tf_launch_size(d->tf);
        const uint64_t n = cuda_tf_device_launch_size(d->tf) * (target_ms < 1 ? 1 : (uint64_t)target_ms);
        return (n + batch - 1) / batch * batch;
    }
    double rate = d->tune.rate > 0 ? d->tune.rate
                                   : (double)d->launch_count * 1000.0 / LAUNCH_MS;
    double n = rate * target_ms / 1000.0;
    return n < (double)d->launch_count ? d->launch_count : (uint64_t)n;
}

/* ---- sensors and versions ----------------------------------------------- */

/* Through NVML (core/backend_support/nvml_sensors.h), found by the GPU's
 * PCI bus id: CUDA's device order need not be NVML's. */
static int cuda_read_sensors(int index, lode_sensors *out)
{
    if (index < 0 || index >= cuda_device_count())
        return LODE_ERR_INVALID;
    char bus_id[32];
    if (cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, index) != cudaSuccess)
        return LODE_ERR_DEVICE;
    return lode_nvml_read(bus_id, out) == 0 ? LODE_OK : LODE_ERR_UNSUPPORTED;
}

/* "12.8" from CUDA's 12080. */
static void cuda_version_text(int v, char *out, size_t len)
{
    snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void cuda_describe(char *buf, size_t len)
{
    int runtime = 0, driver = 0;
    char rt[16] = "unknown", drv[16], built[16], nvml_text[200];
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        cuda_version_text(runtime, rt, sizeof rt);
    cuda_version_text(CUDART_VERSION, built, sizeof built);
    /* 0 (with success) means no driver is installed. */
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
        snprintf(drv, sizeof drv, "no driver");
    else
        cuda_version_text(driver, drv, sizeof drv);
    char why[LODE_WHY_LEN];
    int devices = cuda_probe(why) == 0 ? cuda_device_count() : 0;
    lode_nvml_describe(nvml_text, sizeof nvml_text);
    snprintf(buf, len,
             "  runtime: %s (linked statically; built with %s)\n"
             "  driver: %s%s\n"
             "  devices: %d%s%s\n"
             "  sensors: %s\n",
             rt, built, drv, driver ? " (the newest CUDA it supports)" : "", devices, devices ? "" : ": ", devices ? "" : why, nvml_text);
}

const lode_backend_ops lode_backend_cuda = {
    .name = "cuda",
    .probe = cuda_probe,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .open = cuda_open,
    .close = cuda_close,
    .set_work = cuda_set_work,
    .scan = cuda_scan,
    .rolls_versions = true,
    .variants = cuda_variants,
    .preferred_chunk = cuda_preferred_chunk,
    .tune = cuda_tune,
    .read_sensors = cuda_read_sensors,
    .describe = cuda_describe,
};
