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
#include "backend-cuda/cuda_internal.h"

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
#include "core/backend_support/tune_cache.h"
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

/* ---- errors ---------------------------------------------------------- */

/* Logs a failed runtime call with the device it concerns and maps it to a
 * lode status: out of memory or a device failure. */
int cuda_fail(const lode_device *d, int index, const char *what, cudaError_t err)
{
    lode_log(LODE_LOG_ERROR, "cuda:%d (%s): %s failed: %s (%s)", d ? d->index : index,
             d ? d->name : "?", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return err == cudaErrorMemoryAllocation ? LODE_ERR_NO_MEMORY : LODE_ERR_DEVICE;
}

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
        return cuda_fail(NULL, index, "cudaGetDeviceProperties", err);
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
            const cuda_scrypt_shape shape = cuda_scrypt_shape_of(d, &t);
            unsigned r = cuda_scrypt_resident_slots(&shape);
            resident = r > resident ? r : resident;
        }
    size_t free_bytes = 0, total = 0;
    TRY(d, cudaMemGetInfo(&free_bytes, &total));
    const cuda_scrypt_shape any_shape = cuda_scrypt_shape_of(d, &d->tune); /* the pad size is the variant's */
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
        return cuda_fail(d, d->index, "cudaSetDeviceFlags", err);
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
    cuda_load_params(d);
    if (d->algo == LODE_ALGO_SCRYPT) {
        int rc = alloc_scrypt(d);
        if (rc != LODE_OK)
            return rc;
    }
    cuda_size_launches(d);
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
        cuda_size_launches(d); /* a rolled nonce is LODE_VERSIONS_MAX hashes */
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
int cuda_enqueue(lode_device *d, int slot, uint64_t start, uint64_t count)
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
        const uint64_t batch = cuda_scrypt_batch(d);
        const unsigned half = d->lanes == 2 ? (unsigned)slot : 0;
        const size_t half_slots = d->scrypt_slots / (d->lanes ? d->lanes : 1);
        char *state = (char *)d->scrypt_state + half * half_slots * CUDA_SCRYPT_STATE_BYTES;
        const cuda_scrypt_shape shape = cuda_scrypt_shape_of(d, &d->tune);
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
bool cuda_sha256d_exact(const void *ctx, uint32_t nonce)
{
    const lode_device *d = ctx;
    return sha256d_meets_target(&d->host_job, nonce, &d->target);
}

static int cuda_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = cuda_engine_of(d);
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
    .tune = cuda_tune_measure,
    .read_sensors = cuda_read_sensors,
    .describe = cuda_describe,
};
