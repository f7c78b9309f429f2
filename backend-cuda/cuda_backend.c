/* The CUDA backend: the lode_backend_ops of NVIDIA GPUs.
 *
 * One device is one GPU with one worker. open() runs on the worker's
 * thread, makes the device current there and picks the algorithm's table
 * (cuda_<name>.c, one per row of core/base/algos.def) once; every later
 * call of the handle comes from that thread (core/base/backend.h) and goes
 * through that table.
 *
 * A scan runs through the launch driver (core/backend_support/launch_driver.h)
 * with the algorithm's engine. Every engine waits on events created with
 * cudaEventBlockingSync, so the host sleeps while the GPU works.
 *
 * The CUDA runtime is linked statically: on a machine with no NVIDIA driver
 * the binary still starts, and probe() reports why the backend is off. */
#include "backend-cuda/cuda_backend.h"
#include "backend-cuda/cuda_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/nvml_sensors.h"
#include "core/base/log.h"
#include "core/base/status.h"

/* The algorithms' tables, one per row of algos.def. */
static const cuda_algo_ops *const algo_ops[] = {
#define LODE_ALGO(ID, name, ...) [LODE_ALGO_##ID] = &cuda_##name##_ops,
#include "core/base/algos.def"
#undef LODE_ALGO
};

static const cuda_algo_ops *ops_of(lode_algo algo)
{
    return (unsigned)algo < COUNT(algo_ops) ? algo_ops[algo] : NULL;
}

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
    lode_nvml_identify(out);
    out->workers = 1;
    out->max_workers = 1;
    out->memory_bytes = prop.totalGlobalMem;
    out->algo_mask = 0;
    for (size_t a = 0; a < COUNT(algo_ops); a++)
        if (algo_ops[a] != NULL)
            out->algo_mask |= 1u << a;
    return LODE_OK;
}

static int cuda_variants(int index, lode_algo algo, const char **names, int max)
{
    (void)index;
    const cuda_algo_ops *ops = ops_of(algo);
    int k = 0;
    for (size_t i = 0; ops != NULL && i < ops->n_variants && k < max; i++)
        names[k++] = ops->variants[i];
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
    if (d->ops != NULL)
        d->ops->close(d);
    if (d->stream != NULL)
        cudaStreamDestroy(d->stream);
    free(d);
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
    return d->ops->open(d);
}

static int cuda_open(int index, const lode_open_params *params, lode_device **out)
{
    if (index < 0 || index >= cuda_device_count())
        return LODE_ERR_INVALID;
    const cuda_algo_ops *ops = ops_of(params->algo);
    size_t v = 0;
    while (ops != NULL && v < ops->n_variants && params->variant != NULL &&
           strcmp(params->variant, ops->variants[v]) != 0)
        v++;
    if (ops == NULL || v == ops->n_variants)
        return LODE_ERR_UNSUPPORTED;

    lode_device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return LODE_ERR_NO_MEMORY;
    d->index = index;
    d->algo = params->algo;
    d->variant_index = (unsigned)v;
    d->variant = ops->variants[v];
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess)
        snprintf(d->name, sizeof d->name, "%.127s", prop.name);
    else
        snprintf(d->name, sizeof d->name, "unknown GPU");
    snprintf(d->label, sizeof d->label, "cuda:%d (%s)", d->index, d->name);
    d->ops = ops;
    int rc = open_on_thread(d);
    if (rc != LODE_OK) {
        cuda_close(d);
        return rc;
    }
    *out = d;
    return LODE_OK;
}

/* ---- jobs and scanning: the algorithm's ----------------------------------- */

static int cuda_set_work(lode_device *d, const lode_work *work) { return d->ops->set_work(d, work); }

static int cuda_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = d->ops->engine(d);
    return lode_launch_run(&d->driver, &e, r->start, r->count, hits, done, abort);
}

static uint64_t cuda_preferred_chunk(lode_device *d, double target_ms)
{
    return d->ops->preferred_chunk(d, target_ms);
}

static int cuda_tune(lode_device *d, double target_ms)
{
    return d->ops->tune != NULL ? d->ops->tune(d, target_ms) : LODE_OK;
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
