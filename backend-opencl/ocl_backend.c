/* The OpenCL backend: the lode_backend_ops of OpenCL devices (AMD, Intel
 * and NVIDIA GPUs, PoCL on a CPU, ...), through an OpenCL 1.2 API loaded at
 * run time (ocl_api.h).
 *
 * One device is one OpenCL device with one worker. The worker's handle owns
 * a context and an in-order queue; what an algorithm builds and allocates
 * in them (kernels of ocl_program.h, hit buffers, scratchpads) is the state
 * of its ocl_<name>.c, whose ocl_algo_ops the handle takes when it opens.
 *
 * A scan runs through the launch driver (core/backend_support/launch_driver.h)
 * with the algorithm's engine: nonce scans (ocl_nonce.c: launches of about
 * LAUNCH_MS, two in flight), Momentum sweeps and trial-factoring launches.
 * The engines never block in clWaitForEvents (NVIDIA's driver spins in
 * it): they answer the driver's polls from the event status, and the
 * driver sleeps through most of each launch. */
#include "backend-opencl/ocl_backend.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "backend-opencl/ocl_internal.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/nvml_sensors.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/backend.h"
#include "core/base/log.h"
#include "core/base/sensors.h"
#include "core/base/status.h"
#include "core/base/settings.h"
#include "core/base/text.h"

/* The algorithms' operations, by lode_algo (ocl_<name>.c). */
static const ocl_algo_ops *const algo_ops[LODE_ALGO_COUNT] = {
#define LODE_ALGO(ID, name, ...) [LODE_ALGO_##ID] = &ocl_##name##_ops,
#include "core/base/algos.def"
#undef LODE_ALGO
};

static const ocl_algo_ops *ops_of(lode_algo algo)
{
    return (unsigned)algo < LODE_ALGO_COUNT ? algo_ops[algo] : NULL;
}

/* ---- device helpers -------------------------------------------------- */

int ocl_fail(const lode_device *d, const char *what, cl_int err)
{
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: %s failed: %s", d->label, what, ocl_error_name(err, buf));
    return ocl_status(err);
}

const char *ocl_algo_name(lode_algo algo) { return lode_algo_get(algo)->name; }

bool ocl_is_cpu(const ocl_dev_desc *x) { return (x->type & CL_DEVICE_TYPE_CPU) != 0; }

int ocl_take_variants(const char *const *list, int n, const char **names, int max)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        names[k++] = list[i];
    return k;
}

int ocl_create_buffer(lode_device *d, cl_mem_flags flags, size_t size, cl_mem *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateBuffer(d->ctx, flags, size, NULL, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        char what[64];
        snprintf(what, sizeof what, "allocating %zu MiB", size >> 20);
        return ocl_fail(d, what, err);
    }
    return LODE_OK;
}

int ocl_set_args(lode_device *d, cl_kernel k, unsigned n, const size_t *sizes, const void *const *vals)
{
    for (unsigned i = 0; i < n; i++)
        OCL_TRY(d, "clSetKernelArg", ocl.clSetKernelArg(k, i, sizes[i], vals[i]));
    return LODE_OK;
}

int ocl_run_kernel(lode_device *d, cl_kernel k, size_t global, size_t local, const char *what, cl_event *ev)
{
    cl_event e = NULL;
    OCL_TRY(d, what, ocl.clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &local, 0, NULL, ev ? &e : NULL));
    if (ev != NULL) {
        if (*ev != NULL)
            ocl.clReleaseEvent(*ev);
        *ev = e;
    }
    return LODE_OK;
}

void ocl_release_kernel(cl_kernel *k)
{
    if (*k != NULL) {
        ocl.clReleaseKernel(*k);
        *k = NULL;
    }
}

void ocl_release_program(cl_program *p)
{
    if (*p != NULL) {
        ocl.clReleaseProgram(*p);
        *p = NULL;
    }
}

void ocl_release_mem(cl_mem *m)
{
    if (*m != NULL) {
        ocl.clReleaseMemObject(*m);
        *m = NULL;
    }
}

/* ---- enumeration ------------------------------------------------------ */

static int ocl_probe(char why[LODE_WHY_LEN]) { return ocl_devices_probe(why, LODE_WHY_LEN); }

static int ocl_device_count(void) { return ocl_devices_count(); }

static int ocl_device_info(int index, lode_device_info *out)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    if (d == NULL)
        return LODE_ERR_INVALID;
    memset(out, 0, sizeof *out);
    /* ROCm names the device by its gfx target: the board's name is the one users know. */
    snprintf(out->name, sizeof out->name, "%s", d->board[0] != '\0' ? d->board : d->name);
    snprintf(out->bus_id, sizeof out->bus_id, "%s", d->bus_id);
    ocl_device_details(d, out->details, sizeof out->details);
    if (d->vendor_id == VENDOR_NVIDIA)
        lode_nvml_identify(out);
    /* One worker: the device schedules its own compute units (PoCL its
     * own threads). */
    out->workers = 1;
    out->max_workers = 1;
    out->memory_bytes = d->global_mem;
    for (int a = 0; a < LODE_ALGO_COUNT; a++)
        if (algo_ops[a] != NULL)
            out->algo_mask |= 1u << a;
    out->on_host_cpu = ocl_is_cpu(d);
    return LODE_OK;
}

/* Variants the device supports, best first (ocl_<name>.c). */
static int ocl_variants(int index, lode_algo algo, const char **names, int max)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    const ocl_algo_ops *ops = ops_of(algo);
    return d == NULL || ops == NULL ? 0 : ops->variants(d, names, max);
}

/* ---- programs ---------------------------------------------------------- */

int ocl_make_kernel(lode_device *d, cl_program prog, const char *name, cl_kernel *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateKernel(prog, name, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        char what[64];
        snprintf(what, sizeof what, "clCreateKernel(%s)", name);
        return ocl_fail(d, what, err);
    }
    return LODE_OK;
}

/* The vendor id lets a kernel specialise; OpenCL C 1.2 is the floor;
 * NVIDIA takes inline PTX, AMD's media ops give amd_bitalign
 * (core/backend_support/kernels/lode_kernel.h). */
int ocl_device_options(const ocl_dev_desc *x, char *options, size_t len)
{
    int n = snprintf(options, len, "-cl-std=CL1.2 -D LODE_VENDOR_ID=0x%x", (unsigned)x->vendor_id);
    if (x->caps & OCL_CAP_NV_SHFL)
        n += snprintf(options + n, len - (size_t)n, " -D LODE_NV_PTX=1");
    if (x->caps & OCL_CAP_AMD_MEDIA_OPS)
        n += snprintf(options + n, len - (size_t)n, " -D LODE_AMD_MEDIA_OPS=1");
    /* Tests run a vendor's kernel paths on another device (PoCL). */
    const char *extra = lode_setting_text(LODE_SETTING_TEST_OPENCL_OPTIONS);
    if (extra != NULL)
        n += snprintf(options + n, len - (size_t)n, " %s", extra);
    return n < (int)len ? n : (int)len - 1; /* callers append after n */
}

int ocl_common_options(const lode_device *d, char *options, size_t len)
{
    return ocl_device_options(d->desc, options, len);
}

int ocl_max_local(lode_device *d, cl_kernel k, size_t *out)
{
    *out = 0;
    OCL_TRY(d, "clGetKernelWorkGroupInfo",
        ocl.clGetKernelWorkGroupInfo(k, d->desc->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof *out, out, NULL));
    return LODE_OK;
}

/* ---- open and close ------------------------------------------------------ */

static void ocl_close(lode_device *d)
{
    if (d == NULL)
        return;
    /* Nothing may still write into buffers about to be freed. */
    if (d->queue != NULL)
        ocl.clFinish(d->queue);
    d->ops->close(d);
    if (d->queue != NULL)
        ocl.clReleaseCommandQueue(d->queue);
    if (d->ctx != NULL)
        ocl.clReleaseContext(d->ctx);
    free(d);
}

static int open_variant(lode_device *d)
{
    const ocl_dev_desc *x = d->desc;
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)x->platform, 0};
    d->ctx = ocl.clCreateContext(props, 1, &x->id, NULL, NULL, &err);
    if (d->ctx == NULL || err != CL_SUCCESS)
        return ocl_fail(d, "clCreateContext", err);
    d->queue = ocl.clCreateCommandQueue(d->ctx, x->id, 0, &err);
    if (d->queue == NULL || err != CL_SUCCESS)
        return ocl_fail(d, "clCreateCommandQueue", err);
    return d->ops->open(d);
}

static int ocl_open(int index, const lode_open_params *params, lode_device **out)
{
    const ocl_dev_desc *x = ocl_devices_get(index);
    const ocl_algo_ops *ops = ops_of(params->algo);
    if (x == NULL)
        return LODE_ERR_INVALID;
    const char *names[4];
    int n = ops != NULL ? ops->variants(x, names, 4) : 0;
    int rc = LODE_ERR_UNSUPPORTED;
    char label[sizeof ((lode_device *)0)->label]; /* named as the user names it */
    if (params->id != NULL)
        snprintf(label, sizeof label, "%s (%s)", params->id, x->name);
    else
        snprintf(label, sizeof label, "opencl:%d (%s)", index, x->name);
    /* An explicit variant must be one of the device's; without one, the
     * best that builds and runs here (a driver may reject the shuffles). */
    for (int i = 0; i < n; i++) {
        if (params->variant != NULL && strcmp(params->variant, names[i]) != 0)
            continue;
        lode_device *d = calloc(1, sizeof *d);
        if (d == NULL)
            return LODE_ERR_NO_MEMORY;
        d->index = index;
        d->desc = x;
        d->algo = params->algo;
        d->variant = names[i];
        d->cpu = ocl_is_cpu(x);
        d->ops = ops;
        snprintf(d->label, sizeof d->label, "%s", label);
        rc = open_variant(d);
        if (rc == LODE_OK) {
            *out = d;
            return LODE_OK;
        }
        ocl_close(d);
        if (params->variant != NULL || rc == LODE_ERR_NO_MEMORY)
            return rc;
        lode_log(LODE_LOG_WARN, "%s: variant %s failed, trying the next", label, names[i]);
    }
    return rc;
}

/* ---- jobs and scanning ---------------------------------------------------- */

static int ocl_set_work(lode_device *d, const lode_work *work) { return d->ops->set_work(d, work); }

static int ocl_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                       const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = d->ops->engine(d);
    return lode_launch_run(&d->driver, &e, r->start, r->count, hits, done, abort);
}

static uint64_t ocl_preferred_chunk(lode_device *d, double target_ms)
{
    return d->ops->preferred_chunk(d, target_ms);
}

static int ocl_tune(lode_device *d, double target_ms)
{
    return d->ops->tune != NULL ? d->ops->tune(d, target_ms) : LODE_OK;
}

/* ---- sensors and versions ----------------------------------------------- */

/* A GPU's sensors from its PCI bus id: amdgpu's hwmon files where the
 * amdgpu driver runs it, NVML for NVIDIA's GPUs (the same shared code the
 * CUDA backend reads them with); nothing for other devices. */
static int ocl_read_sensors(int index, lode_sensors *out)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    if (d == NULL)
        return LODE_ERR_INVALID;
    if (d->bus_id[0] == '\0')
        return LODE_ERR_UNSUPPORTED;
    if (lode_sysfs_amdgpu_read(d->bus_id, out) == 0)
        return LODE_OK;
    if (d->vendor_id == VENDOR_NVIDIA && lode_nvml_read(d->bus_id, out) == 0)
        return LODE_OK;
    return LODE_ERR_UNSUPPORTED;
}

/* A device's line of lode -V; for an AMD GPU also where its sensors come
 * from, as a report of missing readings needs it. */
static void describe_device(int index, char *buf, size_t len, size_t *used)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    char details[256];
    ocl_device_details(d, details, sizeof details);
    lode_appendf(buf, len, used, "  device %d: %s%s%s%s, %.1f GiB: %s\n", index, d->board[0] ? d->board : d->name,
                 d->bus_id[0] ? " [" : "", d->bus_id, d->bus_id[0] ? "]" : "", (double)d->global_mem / (1u << 30),
                 details);
    if (d->vendor_id != OCL_VENDOR_AMD || d->bus_id[0] == '\0')
        return;
    lode_sensors s;
    char now[160];
    if (lode_sysfs_amdgpu_read(d->bus_id, &s) == 0) {
        lode_sensors_format(&s, now, sizeof now);
        lode_appendf(buf, len, used, "    sensors (amdgpu hwmon):%s\n", now[0] ? now : " none readable");
    } else {
        lode_appendf(buf, len, used, "    sensors: none (no amdgpu hwmon for PCI %s in /sys/bus/pci/devices)\n",
                     d->bus_id);
    }
}

static void ocl_describe(char *buf, size_t len)
{
    size_t used = 0;
    char why[LODE_WHY_LEN] = "";
    char loaded[LODE_WHY_LEN];
    if (ocl_api_load(loaded, sizeof loaded) != 0) {
        lode_appendf(buf, len, &used, "  library: %s\n", loaded);
        return;
    }
    lode_appendf(buf, len, &used, "  library: %s (loaded at run time)\n", ocl_api_library());
    ocl_devices_probe(why, sizeof why);
    int np = ocl_platforms_count();
    for (int i = 0; i < np; i++) {
        const ocl_platform_desc *p = ocl_platforms_get(i);
        lode_appendf(buf, len, &used, "  platform: %s, %s, %u device(s)\n", p->name, p->version, p->devices);
    }
    if (np == 0 || ocl_devices_count() == 0)
        lode_appendf(buf, len, &used, "  devices: none: %s\n", why);
    for (int i = 0; i < ocl_devices_count(); i++)
        describe_device(i, buf, len, &used);
    bool nvidia = false;
    for (int i = 0; i < ocl_devices_count(); i++)
        nvidia |= ocl_devices_get(i)->vendor_id == VENDOR_NVIDIA;
    if (nvidia) {
        char nvml_text[200];
        lode_nvml_describe(nvml_text, sizeof nvml_text);
        lode_appendf(buf, len, &used, "  sensors (NVIDIA): %s\n", nvml_text);
    }
}

const lode_backend_ops lode_backend_opencl = {
    .name = "opencl",
    .probe = ocl_probe,
    .device_count = ocl_device_count,
    .device_info = ocl_device_info,
    .open = ocl_open,
    .close = ocl_close,
    .set_work = ocl_set_work,
    .scan = ocl_scan,
    .rolls_versions = true,
    .variants = ocl_variants,
    .preferred_chunk = ocl_preferred_chunk,
    .tune = ocl_tune,
    .read_sensors = ocl_read_sensors,
    .describe = ocl_describe,
};
