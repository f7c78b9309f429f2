/* The OpenCL backend: the lode_backend_ops of OpenCL devices (AMD, Intel
 * and NVIDIA GPUs, PoCL on a CPU, ...), through an OpenCL 1.2 API loaded at
 * run time (ocl_api.h).
 *
 * One device is one OpenCL device with one worker. The worker's handle owns
 * a context, an in-order queue, the kernels built for this device and
 * variant (ocl_program.h), two hit buffers and (scrypt) the scratchpad.
 *
 * A scan runs through the launch driver (core/backend_support/launch_driver.h)
 * with one engine per workload below: nonce scans (launches of about
 * LAUNCH_MS, two in flight), Momentum sweeps and trial-factoring launches.
 * The engines never block in clWaitForEvents (NVIDIA's driver spins in
 * it): they answer the driver's polls from the event status, and the
 * driver sleeps through most of each launch. */
#include "backend-opencl/opencl_backend.h"
#include "backend-opencl/ocl_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "backend-opencl/ocl_momentum.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_tf.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/nvml_sensors.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/clock.h"
#include "core/base/backend.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/text.h"
#include "core/base/tf_ref.h"
#include "core/backend_support/tune_cache.h"

/* ---- errors ---------------------------------------------------------- */

int ocl_fail(const lode_device *d, const char *what, cl_int err)
{
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: %s failed: %s", d->label, what, ocl_error_name(err, buf));
    return ocl_status(err);
}

/* ---- enumeration ------------------------------------------------------ */

static int opencl_probe(char why[LODE_WHY_LEN]) { return ocl_devices_probe(why, LODE_WHY_LEN); }

static int opencl_device_count(void) { return ocl_devices_count(); }

static int opencl_device_info(int index, lode_device_info *out)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    if (d == NULL)
        return LODE_ERR_INVALID;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", d->name);
    snprintf(out->bus_id, sizeof out->bus_id, "%s", d->bus_id);
    /* One worker: the device schedules its own compute units (PoCL its
     * own threads). */
    out->workers = 1;
    out->max_workers = 1;
    out->memory_bytes = d->global_mem;
    out->algo_mask = 1u << LODE_ALGO_SHA256D | 1u << LODE_ALGO_SCRYPT | 1u << LODE_ALGO_MOMENTUM |
                     1u << LODE_ALGO_TF;
    out->on_host_cpu = (d->type & CL_DEVICE_TYPE_CPU) != 0;
    return LODE_OK;
}

#define VENDOR_NVIDIA 0x10de

static bool is_cpu(const ocl_dev_desc *d) { return (d->type & CL_DEVICE_TYPE_CPU) != 0; }

/* Variants the device supports, best first. sha256d: "imad" and "iadd3"
 * (kernels/sha256d.cl). scrypt: "thread" (a work-item
 * per hash, the scratchpad staged through local memory) on GPUs, "shuffle"
 * where the device can shuffle within a sub-group, "local" on any device,
 * "single" (one work-item per hash, no exchange, no staging) which suits
 * CPUs best. */
static int variant_list(const ocl_dev_desc *d, lode_algo algo, const char **names, int max)
{
    const char *list[4];
    int n = 0;
    if (algo == LODE_ALGO_SHA256D) {
        /* Additions as multiply-adds pay where a separate pipe runs them
         * (NVIDIA's FMA pipe, measured there); elsewhere plain ones first. */
        const bool nvidia = d->vendor_id == VENDOR_NVIDIA;
        list[n++] = nvidia ? "imad" : "iadd3";
        list[n++] = nvidia ? "iadd3" : "imad";
    } else if (algo == LODE_ALGO_SCRYPT) {
        if (is_cpu(d))
            list[n++] = "single";
        else
            list[n++] = "thread";
        if (d->caps & (OCL_CAP_NV_SHFL | OCL_CAP_KHR_SHUFFLE | OCL_CAP_INTEL_SHUFFLE))
            list[n++] = "shuffle";
        list[n++] = "local";
        list[n++] = is_cpu(d) ? "thread" : "single";
    } else if (algo == LODE_ALGO_MOMENTUM) {
        if (ocl_momentum_bucket_fits(d))
            list[n++] = "bucket";
        list[n++] = "filter";
    } else if (algo == LODE_ALGO_TF) {
        list[n++] = "gpusieve";
    }
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        names[k++] = list[i];
    return k;
}

static int opencl_variants(int index, lode_algo algo, const char **names, int max)
{
    const ocl_dev_desc *d = ocl_devices_get(index);
    return d == NULL ? 0 : variant_list(d, algo, names, max);
}

/* ---- programs ---------------------------------------------------------- */

const char *ocl_algo_name(lode_algo algo) { return lode_algo_get(algo)->name; }

static void release_program(lode_device *d)
{
    cl_kernel *ks[] = {&d->k_main, &d->k_in, &d->k_out};
    for (size_t i = 0; i < COUNT(ks); i++)
        if (*ks[i] != NULL) {
            ocl.clReleaseKernel(*ks[i]);
            *ks[i] = NULL;
        }
    if (d->prog != NULL) {
        ocl.clReleaseProgram(d->prog);
        d->prog = NULL;
    }
    if (d->k_versions != NULL) {
        ocl.clReleaseKernel(d->k_versions);
        d->k_versions = NULL;
    }
    if (d->vprog != NULL) {
        ocl.clReleaseProgram(d->vprog);
        d->vprog = NULL;
    }
}

static int make_kernel_of(lode_device *d, cl_program prog, const char *name, cl_kernel *out)
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

static int make_kernel(lode_device *d, const char *name, cl_kernel *out) { return make_kernel_of(d, d->prog, name, out); }

/* The build options every program gets; returns their length. The vendor
 * id lets a kernel specialise; OpenCL C 1.2 is the floor; NVIDIA takes
 * inline PTX (core/backend_support/kernels/lode_kernel.h). */
static int common_options(const lode_device *d, char *options, size_t len)
{
    int n = snprintf(options, len, "-cl-std=CL1.2 -D LODE_VENDOR_ID=0x%x", (unsigned)d->desc->vendor_id);
    if (d->desc->caps & OCL_CAP_NV_SHFL)
        n += snprintf(options + n, len - (size_t)n, " -D LODE_NV_PTX=1");
    return n;
}

/* The device's largest work-group for kernel k. */
static int max_local(lode_device *d, cl_kernel k, size_t *out)
{
    *out = 0;
    TRY(d, "clGetKernelWorkGroupInfo",
        ocl.clGetKernelWorkGroupInfo(k, d->desc->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof *out, out, NULL));
    return LODE_OK;
}

/* Builds this handle's program; scrypt's interleave (HASHES) is a build
 * option, so a new value means a new program. */
int ocl_build_program(lode_device *d, unsigned hashes)
{
    if (d->prog != NULL && (d->algo == LODE_ALGO_SHA256D || d->prog_hashes == hashes))
        return LODE_OK;
    release_program(d);
    char options[256];
    int n = common_options(d, options, sizeof options);
    if (d->algo == LODE_ALGO_SCRYPT)
        n += snprintf(options + n, sizeof options - (size_t)n, " -D LOOKUP_GAP=%u -D XCHG=%d -D HASHES=%u",
                      d->lookup_gap, d->xchg, hashes);
    /* NVIDIA, 64 registers: romix_thread keeps 32 warps resident; and
     * sha256d_search, which the compiler left to itself holds at 39
     * registers, gets CUDA's (whose launch bound allows 64; at 40 the same
     * code runs 9% slower, docs/PERFORMANCE.md). */
    if ((d->algo == LODE_ALGO_SHA256D || (d->algo == LODE_ALGO_SCRYPT && d->xchg == XCHG_STAGED)) &&
        (d->desc->caps & OCL_CAP_NV_SHFL))
        snprintf(options + n, sizeof options - (size_t)n, " -cl-nv-maxrregcount=64");
    const char *sources[1] = {d->algo == LODE_ALGO_SHA256D ? lode_ocl_src_sha256d : lode_ocl_src_scrypt};
    int rc = ocl_program_build(d->desc, d->ctx, d->label, sources, 1, options, &d->prog);
    if (rc != LODE_OK)
        return rc;
    d->prog_hashes = hashes;
    if (d->algo == LODE_ALGO_SHA256D) {
        rc = make_kernel(d, strcmp(d->variant, "imad") == 0 ? "sha256d_search_imad" : "sha256d_search_iadd3",
                         &d->k_main);
    } else {
        rc = make_kernel(d, d->xchg == XCHG_SINGLE   ? "romix_single"
                            : d->xchg == XCHG_STAGED ? "romix_thread"
                                                     : "romix_quad",
                         &d->k_main);
        if (rc == LODE_OK)
            rc = make_kernel(d, "pbkdf2_in", &d->k_in);
        if (rc == LODE_OK)
            rc = make_kernel(d, "pbkdf2_out", &d->k_out);
    }
    return rc == LODE_OK ? max_local(d, d->k_main, &d->main_max_local) : rc;
}

/* The version-rolled SHA-256d search (kernels/sha256d.cl), built on the
 * first version-rolled job. A program of its own: on NVIDIA it gets 80
 * registers (the schedule it keeps for every version takes 48), where the
 * plain search gets 64; as in CUDA, 80 beats 128 (8.05 against 7.53 GH/s
 * on the H100: more warps resident, docs/PERFORMANCE.md). */
static int build_versions_program(lode_device *d)
{
    if (d->vprog != NULL)
        return LODE_OK;
    char options[256];
    int n = common_options(d, options, sizeof options);
    if (d->desc->caps & OCL_CAP_NV_SHFL)
        snprintf(options + n, sizeof options - (size_t)n, " -cl-nv-maxrregcount=80");
    const char *sources[1] = {lode_ocl_src_sha256d};
    int rc = ocl_program_build(d->desc, d->ctx, d->label, sources, 1, options, &d->vprog);
    if (rc == LODE_OK)
        rc = make_kernel_of(d, d->vprog,
                            strcmp(d->variant, "imad") == 0 ? "sha256d_search_versions_imad"
                                                            : "sha256d_search_versions_iadd3",
                            &d->k_versions);
    return rc == LODE_OK ? max_local(d, d->k_versions, &d->versions_max_local) : rc;
}

/* ---- open and close ------------------------------------------------------ */

static void opencl_close(lode_device *d)
{
    if (d == NULL)
        return;
    /* Nothing may still write into buffers about to be freed. */
    if (d->queue != NULL)
        ocl.clFinish(d->queue);
    ocl_momentum_free(d->momentum);
    ocl_tf_free(d->tf);
    momentum_pairs_free(&d->pairs);
    free(d->cands);
    for (int i = 0; i < IN_FLIGHT; i++) {
        if (d->finished[i] != NULL)
            ocl.clReleaseEvent(d->finished[i]);
        if (d->kernel_done[i] != NULL)
            ocl.clReleaseEvent(d->kernel_done[i]);
        if (d->hits[i] != NULL)
            ocl.clReleaseMemObject(d->hits[i]);
    }
    cl_mem *mems[] = {&d->params, &d->state, &d->pad};
    for (size_t i = 0; i < COUNT(mems); i++)
        if (*mems[i] != NULL)
            ocl.clReleaseMemObject(*mems[i]);
    release_program(d);
    if (d->queue != NULL)
        ocl.clReleaseCommandQueue(d->queue);
    if (d->ctx != NULL)
        ocl.clReleaseContext(d->ctx);
    free(d);
}

static int create_buffer(lode_device *d, cl_mem_flags flags, size_t size, cl_mem *out)
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

/* The scratchpad: about two waves of resident hashes on a GPU (OpenCL has
 * no occupancy query: 2048 work-items per compute unit, 4 per hash, two
 * interleaved), a few work-groups per core on a CPU, within a share of the
 * device memory and the largest single buffer. */
static int alloc_scrypt(lode_device *d)
{
    const ocl_dev_desc *x = d->desc;
    const uint64_t pad_per_slot = (uint64_t)128 * LODE_SCRYPT_N / d->lookup_gap;
    uint64_t want = (uint64_t)x->compute_units * (d->cpu ? 128 : 2048);
    uint64_t fit_mem = (uint64_t)((double)x->global_mem * SCRYPT_MEM_SHARE) / (pad_per_slot + SCRYPT_STATE_BYTES);
    uint64_t fit_alloc = x->max_alloc / pad_per_slot;
    /* The kernels index the scratchpad in 32-bit uint4 units. */
    uint64_t fit_index = (UINT64_C(1) << 32) / (pad_per_slot / 16);
    uint64_t slots = want;
    slots = slots < fit_mem ? slots : fit_mem;
    slots = slots < fit_alloc ? slots : fit_alloc;
    slots = slots < fit_index ? slots : fit_index;
    slots = slots / SCRYPT_SLOT_QUANTUM * SCRYPT_SLOT_QUANTUM;
    if (slots == 0) {
        lode_log(LODE_LOG_ERROR, "%s: %" PRIu64 " MiB of memory (largest buffer %" PRIu64
                 " MiB) is too little for one scrypt batch", d->label, (uint64_t)x->global_mem >> 20,
                 (uint64_t)x->max_alloc >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    d->slots = (unsigned)slots;
    int rc = create_buffer(d, CL_MEM_READ_WRITE, (size_t)slots * SCRYPT_STATE_BYTES, &d->state);
    if (rc == LODE_OK)
        rc = create_buffer(d, CL_MEM_READ_WRITE, (size_t)(slots * pad_per_slot), &d->pad);
    return rc;
}

static int xchg_of(const ocl_dev_desc *x, const char *variant)
{
    if (strcmp(variant, "single") == 0)
        return XCHG_SINGLE;
    if (strcmp(variant, "local") == 0)
        return XCHG_LOCAL;
    if (strcmp(variant, "thread") == 0)
        return XCHG_STAGED;
    return x->caps & OCL_CAP_NV_SHFL ? XCHG_NV : x->caps & OCL_CAP_KHR_SHUFFLE ? XCHG_KHR : XCHG_INTEL;
}

/* scrypt's lookup gap: 1 (no recomputation) unless memory is scarce;
 * LODE_OPENCL_LOOKUP_GAP=1|2|4 overrides. */
static unsigned lookup_gap_for(const ocl_dev_desc *x)
{
    const int gap = lode_setting_choice(LODE_SETTING_OPENCL_LOOKUP_GAP); /* words 1, 2, 4 */
    if (gap >= 0)
        return 1u << gap;
    return x->global_mem < (UINT64_C(2) << 30) ? 2 : 1;
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
    if (d->algo == LODE_ALGO_MOMENTUM)
        return ocl_momentum_new(x, d->ctx, d->queue, d->label, strcmp(d->variant, "bucket") == 0,
                                &d->momentum);
    if (d->algo == LODE_ALGO_TF)
        return ocl_tf_new(x, d->ctx, d->queue, d->label, &d->tf);
    /* scrypt's parameter block is a buffer; sha256d's goes by value. */
    int rc = d->algo == LODE_ALGO_SCRYPT
                 ? create_buffer(d, CL_MEM_READ_ONLY, PARAM_WORDS * sizeof(uint32_t), &d->params)
                 : LODE_OK;
    for (int i = 0; i < IN_FLIGHT && rc == LODE_OK; i++)
        rc = create_buffer(d, CL_MEM_READ_WRITE, LODE_HITS_WORDS * sizeof(uint32_t), &d->hits[i]);
    if (rc == LODE_OK && d->algo == LODE_ALGO_SCRYPT)
        rc = alloc_scrypt(d);
    if (rc != LODE_OK)
        return rc;
    ocl_load_params(d);
    ocl_clamp_params(d);
    rc = ocl_build_program(d, d->tune.per_item);
    if (rc != LODE_OK)
        return rc;
    ocl_clamp_params(d); /* now within the kernel's own work-group limit */
    ocl_size_launches(d);
    return LODE_OK;
}

static int opencl_open(int index, const lode_open_params *params, lode_device **out)
{
    const ocl_dev_desc *x = ocl_devices_get(index);
    if (x == NULL)
        return LODE_ERR_INVALID;
    const char *names[4];
    int n = variant_list(x, params->algo, names, 4);
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
        d->cpu = is_cpu(x);
        d->xchg = params->algo == LODE_ALGO_SCRYPT ? xchg_of(x, names[i]) : XCHG_SINGLE;
        d->lookup_gap = d->xchg == XCHG_STAGED ? 1 : lookup_gap_for(x); /* romix_thread: no gap */
        snprintf(d->label, sizeof d->label, "%s", label);
        rc = open_variant(d);
        if (rc == LODE_OK) {
            *out = d;
            return LODE_OK;
        }
        opencl_close(d);
        if (params->variant != NULL || rc == LODE_ERR_NO_MEMORY)
            return rc;
        lode_log(LODE_LOG_WARN, "%s: variant %s failed, trying the next", label, names[i]);
    }
    return rc;
}

/* ---- jobs -------------------------------------------------------------- */

static void prepare_sha256d(lode_device *d)
{
    /* The same per-job precomputation as the CPU lane paths and CUDA
     * (core/backend_support/sha256d_lanes.h), in the block kernels/sha256d.cl reads. */
    sha256d_job *job = &d->host_job;
    sha256d_job_init(job, d->header, d->target.w[7]);
    sha256d_prepare_lanes(job);
    lode_sha256d_params_fill(d->param_words, job->midstate, job->pre, job->target_top);
}

static void prepare_scrypt(lode_device *d)
{
    sha256d_job job; /* for its midstate: the HMAC key hash starts there */
    sha256d_job_init(&job, d->header, 0);
    lode_scrypt_params_fill(d->param_words, d->header, job.midstate, d->target.w);
}

int ocl_upload_params(lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D)
        return LODE_OK; /* passed by value at each launch (kernels/sha256d.cl) */
    /* Blocking: nothing is in flight between scans, and the host copy may
     * change right after. */
    TRY(d, "writing the job parameters",
        ocl.clEnqueueWriteBuffer(d->queue, d->params, CL_TRUE, 0, sizeof d->param_words,
                                 d->param_words, 0, NULL, NULL));
    return LODE_OK;
}

static int opencl_set_work(lode_device *d, const lode_work *work)
{
    if (d->algo == LODE_ALGO_TF)
        return ocl_tf_set_job(d->tf, &work->factor);
    memcpy(d->header, work->header.header, 80);
    d->target = work->header.target;
    if (d->algo == LODE_ALGO_MOMENTUM)
        return LODE_OK;
    memset(d->param_words, 0, sizeof d->param_words);
    const bool versions = work->header.version_count == LODE_VERSIONS_MAX; /* rolls_versions */
    if (d->algo == LODE_ALGO_SHA256D && versions) {
        int rc = build_versions_program(d);
        if (rc != LODE_OK)
            return rc;
        sha256d_versions_init(&d->vjobs, &work->header, d->vparams);
    } else if (d->algo == LODE_ALGO_SHA256D) {
        prepare_sha256d(d);
    } else {
        prepare_scrypt(d);
    }
    if (d->algo == LODE_ALGO_SHA256D && versions != d->versions) {
        d->versions = versions;
        ocl_size_launches(d);
    }
    return ocl_upload_params(d);
}

/* ---- scanning ------------------------------------------------------------ */

static int set_args(lode_device *d, cl_kernel k, unsigned n, const size_t *sizes, const void *const *vals)
{
    for (unsigned i = 0; i < n; i++)
        TRY(d, "clSetKernelArg", ocl.clSetKernelArg(k, i, sizes[i], vals[i]));
    return LODE_OK;
}

/* ev, if given, receives the kernel's event (a previous one is released). */
static int run_kernel(lode_device *d, cl_kernel k, size_t global, size_t local, const char *what, cl_event *ev)
{
    cl_event e = NULL;
    TRY(d, what, ocl.clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &local, 0, NULL, ev ? &e : NULL));
    if (ev != NULL) {
        if (*ev != NULL)
            ocl.clReleaseEvent(*ev);
        *ev = e;
    }
    return LODE_OK;
}

static size_t round_up(size_t n, size_t q) { return (n + q - 1) / q * q; }

/* One scrypt batch: count (<= batch) hashes from start. */
static int enqueue_scrypt_batch(lode_device *d, uint32_t start, uint32_t count, cl_mem hits, cl_event *ev)
{
    const unsigned g = ocl_per_group(d);
    /* Whole work-groups of romix: the slots used, rounded up to a group,
     * are also the scratchpad's entry stride. */
    cl_uint used = (cl_uint)round_up(count, g);
    cl_uint n = count;
    const size_t pb_local = PBKDF2_LOCAL;
    int rc = set_args(d, d->k_in, 4, (size_t[]){sizeof(cl_mem), 4, 4, sizeof(cl_mem)},
                      (const void *[]){&d->params, &start, &used, &d->state});
    if (rc == LODE_OK)
        rc = run_kernel(d, d->k_in, round_up(used, pb_local), pb_local, "launching pbkdf2_in", NULL);
    if (rc != LODE_OK)
        return rc;
    if (d->xchg == XCHG_LOCAL || d->xchg == XCHG_STAGED) {
        size_t bytes = d->xchg == XCHG_STAGED
                           ? (size_t)d->tune.local_size * STAGED_ROW_BYTES
                           : 2 * 3 * (size_t)d->tune.per_item * d->tune.local_size * sizeof(cl_uint);
        rc = set_args(d, d->k_main, 4, (size_t[]){sizeof(cl_mem), sizeof(cl_mem), 4, bytes},
                      (const void *[]){&d->state, &d->pad, &used, NULL});
    } else {
        rc = set_args(d, d->k_main, 3, (size_t[]){sizeof(cl_mem), sizeof(cl_mem), 4},
                      (const void *[]){&d->state, &d->pad, &used});
    }
    size_t items = ocl_item_per_hash(d) ? used : (size_t)used / d->tune.per_item * 4;
    if (rc == LODE_OK)
        rc = run_kernel(d, d->k_main, items, d->tune.local_size, "launching romix", NULL);
    if (rc == LODE_OK)
        rc = set_args(d, d->k_out, 5, (size_t[]){sizeof(cl_mem), 4, 4, sizeof(cl_mem), sizeof(cl_mem)},
                      (const void *[]){&d->params, &start, &n, &d->state, &hits});
    if (rc == LODE_OK)
        rc = run_kernel(d, d->k_out, round_up(n, pb_local), pb_local, "launching pbkdf2_out", ev);
    return rc;
}

/* Queues one launch (count >= 1 indices from start) on hit buffer slot:
 * clear the counter, run, read the hits back, mark the event. */
int ocl_enqueue(lode_device *d, int slot, uint64_t start, uint64_t count)
{
    static const cl_uint zero = 0; /* static: the write may complete later */
    cl_mem hits = d->hits[slot];
    TRY(d, "clearing the hit counter",
        ocl.clEnqueueWriteBuffer(d->queue, hits, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL));
    int rc = LODE_OK;
    if (d->algo == LODE_ALGO_SHA256D && d->versions) {
        cl_uint s = (cl_uint)start, n = (cl_uint)count;
        size_t local = d->tune.local_size; /* the tuned size, within k_versions' limit */
        while (local > d->versions_max_local && local > 1)
            local /= 2;
        const uint64_t per_item = LODE_SHA256D_VERSIONS_NONCES_PER_THREAD;
        size_t items = round_up((size_t)((count + per_item - 1) / per_item), local);
        rc = set_args(d, d->k_versions, 4, (size_t[]){sizeof d->vparams, 4, 4, sizeof(cl_mem)},
                      (const void *[]){d->vparams, &s, &n, &hits});
        if (rc == LODE_OK)
            rc = run_kernel(d, d->k_versions, items, local, "launching sha256d_search_versions",
                            &d->kernel_done[slot]);
    } else if (d->algo == LODE_ALGO_SHA256D) {
        cl_uint s = (cl_uint)start, n = (cl_uint)count;
        size_t items = round_up((size_t)((count + d->tune.per_item - 1) / d->tune.per_item),
                                d->tune.local_size);
        rc = set_args(d, d->k_main, 4, (size_t[]){LODE_SHA256D_PARAM_WORDS * sizeof(uint32_t), 4, 4, sizeof(cl_mem)},
                      (const void *[]){d->param_words, &s, &n, &hits});
        if (rc == LODE_OK)
            rc = run_kernel(d, d->k_main, items, d->tune.local_size, "launching sha256d_search", &d->kernel_done[slot]);
    } else {
        for (uint64_t off = 0; off < count && rc == LODE_OK; off += d->tune.batch) {
            uint64_t n = count - off < d->tune.batch ? count - off : d->tune.batch;
            rc = enqueue_scrypt_batch(d, (uint32_t)(start + off), (uint32_t)n, hits, &d->kernel_done[slot]);
        }
    }
    if (rc != LODE_OK)
        return rc;
    if (d->finished[slot] != NULL) {
        ocl.clReleaseEvent(d->finished[slot]);
        d->finished[slot] = NULL;
    }
    TRY(d, "reading the hits",
        ocl.clEnqueueReadBuffer(d->queue, hits, CL_FALSE, 0, sizeof d->hits_host[slot],
                                d->hits_host[slot], 0, NULL, &d->finished[slot]));
    TRY(d, "clFlush", ocl.clFlush(d->queue)); /* start now, not at the wait */
    return LODE_OK;
}

/* SHA-256d candidates passed only the kernel's top-word test: hash them
 * exactly before they count as hits. */
bool ocl_sha256d_exact(const void *ctx, uint32_t nonce)
{
    const lode_device *d = ctx;
    return sha256d_meets_target(&d->host_job, nonce, &d->target);
}

static int opencl_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                       const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = ocl_engine_of(d);
    return lode_launch_run(&d->driver, &e, r->start, r->count, hits, done, abort);
}

/* ---- sensors and versions ----------------------------------------------- */

/* A GPU's sensors from its PCI bus id: amdgpu's hwmon files where the
 * amdgpu driver runs it, NVML for NVIDIA's GPUs (the same shared code the
 * CUDA backend reads them with); nothing for other devices. */
static int opencl_read_sensors(int index, lode_sensors *out)
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

static void opencl_describe(char *buf, size_t len)
{
    size_t used = 0;
    char why[LODE_WHY_LEN] = "";
    char loaded[LODE_WHY_LEN];
    if (ocl_api_load(loaded, sizeof loaded) != 0) {
        lode_appendf(buf, len, &used, "  library: %s\n", loaded);
        return;
    }
    lode_appendf(buf, len, &used, "  library: libOpenCL.so.1 (loaded at run time)\n");
    ocl_devices_probe(why, sizeof why);
    int np = ocl_platforms_count();
    for (int i = 0; i < np; i++) {
        const ocl_platform_desc *p = ocl_platforms_get(i);
        lode_appendf(buf, len, &used, "  platform: %s, %s, %u device(s)\n", p->name, p->version, p->devices);
    }
    if (np == 0 || ocl_devices_count() == 0)
        lode_appendf(buf, len, &used, "  devices: none: %s\n", why);
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
    .probe = opencl_probe,
    .device_count = opencl_device_count,
    .device_info = opencl_device_info,
    .open = opencl_open,
    .close = opencl_close,
    .set_work = opencl_set_work,
    .scan = opencl_scan,
    .rolls_versions = true,
    .variants = opencl_variants,
    .preferred_chunk = ocl_preferred_chunk,
    .tune = ocl_tune_measure,
    .read_sensors = opencl_read_sensors,
    .describe = opencl_describe,
};
