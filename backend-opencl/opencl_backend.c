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
#include "core/base/tune_cache.h"

/* Aimed duration of one launch: long enough that launch overhead vanishes,
 * short enough that a new job (abort) is picked up quickly. */
#define LAUNCH_MS 50.0
#define IN_FLIGHT 2
/* Largest nonce count of one SHA-256d launch (32-bit offsets stay safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)
/* The hit buffer and the parameter blocks: core/backend_support/kernel_params.h. */
#define PARAM_WORDS 64
_Static_assert(LODE_SHA256D_PARAM_WORDS <= PARAM_WORDS && LODE_SCRYPT_PARAM_WORDS <= PARAM_WORDS, "parameter block");
/* scrypt: per slot LODE_SCRYPT_STATE_WORDS between the kernels, and the scratchpad. */
#define SCRYPT_STATE_BYTES (LODE_SCRYPT_STATE_WORDS * 4u)
#define SCRYPT_MEM_SHARE 0.85
/* Slots come in multiples of this: every work-group shape the tuner tries
 * holds a divisor of it (at most 256 work-items, 4 per hash or 1). */
#define SCRYPT_SLOT_QUANTUM 256u
/* The pbkdf2 kernels' work-group size. */
#define PBKDF2_LOCAL 64u

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* How the four work-items of a scrypt hash trade words (kernels/scrypt.cl XCHG). */
enum { XCHG_SINGLE = 0, XCHG_LOCAL = 1, XCHG_NV = 2, XCHG_KHR = 3, XCHG_INTEL = 4, XCHG_STAGED = 5 };
/* romix_thread stages 144 bytes per work-item in local memory. */
#define STAGED_ROW_BYTES 144u
#define STAGED_MAX_LOCAL 128u

/* Launch parameters: tuned, cached (core/base/tune_cache.h) or set by
 * LODE_OPENCL_TUNE (keys ls, npt, il, batch). */
typedef struct ocl_tune_params {
    unsigned local_size; /* work-group size of the main kernel */
    unsigned per_item;   /* sha256d: nonces per work-item; scrypt: hashes per quad (1, 2) */
    unsigned batch;      /* scrypt: hash slots per romix launch; 0 = all allocated */
    double rate;         /* measured hashes per second, 0 if unknown */
} ocl_tune_params;

struct lode_device {
    int index;
    const ocl_dev_desc *desc;
    char label[180]; /* "opencl:0 (NVIDIA H100 80GB HBM3)" for messages */
    lode_algo algo;
    const char *variant;
    int xchg;             /* scrypt */
    unsigned lookup_gap;  /* scrypt */
    bool cpu;             /* a CPU device: other defaults and tuning choices */

    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel k_main, k_in, k_out; /* sha256d_search_* or romix_*, pbkdf2_in, pbkdf2_out */
    cl_program vprog;              /* sha256d: the version-rolled search, built on first use */
    cl_kernel k_versions;
    size_t versions_max_local;     /* the device's limit for k_versions */
    unsigned prog_hashes;          /* HASHES the scrypt program was built with */
    size_t main_max_local;         /* the device's limit for k_main */
    cl_mem params, hits[IN_FLIGHT], state, pad; /* params: scrypt's block */
    cl_event finished[IN_FLIGHT];    /* a launch's hit read-back */
    cl_event kernel_done[IN_FLIGHT]; /* its last kernel: polled (a pageable read-back may
                                        complete only inside clWaitForEvents) */
    uint32_t hits_host[IN_FLIGHT][LODE_HITS_WORDS];
    sha256d_job host_job; /* sha256d on the host: precomputation, exact check */
    bool versions;        /* the sha256d job is version-rolled: vjobs and vparams hold it */
    sha256d_version_set vjobs;
    uint32_t vparams[LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS];

    ocl_tune_params tune;
    bool tuned; /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */
    unsigned slots;        /* scrypt hash slots allocated */

    uint8_t header[80];
    lode_u256 target;
    uint32_t param_words[PARAM_WORDS];
    ocl_momentum *momentum;
    momentum_pairs pairs;
    ocl_tf *tf; /* trial factoring */

    lode_launch_driver driver;
    /* What the last wait returned (Momentum: the launch's sweeps, their
     * candidates copied one after another, sweep j's from sweep_at[j];
     * trial factoring: the launch's factors). */
    momentum_entry *cands;
    size_t cand_cap, sweep_at[OCL_MOMENTUM_BATCH_MAX + 1];
    unsigned sweeps;
    uint64_t tf_n0, tf_count;
    const ocl_tf_part *tf_parts;
    unsigned tf_nparts;
    bool tf_overflow;
};

/* ---- errors ---------------------------------------------------------- */

static int fail(const lode_device *d, const char *what, cl_int err)
{
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: %s failed: %s", d->label, what, ocl_error_name(err, buf));
    return ocl_status(err);
}

#define TRY(d, what, call)                                                                         \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS)                                                                    \
            return fail((d), (what), err_);                                                        \
    } while (0)

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

static const char *algo_name(lode_algo algo) { return lode_algo_get(algo)->name; }

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
        return fail(d, what, err);
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
static int build_program(lode_device *d, unsigned hashes)
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

/* ---- launch parameters ------------------------------------------------- */

/* scrypt kernels that run one work-item per hash (romix_single, romix_thread). */
static bool item_per_hash(const lode_device *d) { return d->xchg == XCHG_SINGLE || d->xchg == XCHG_STAGED; }

/* Hashes of one work-group of the main kernel. */
static unsigned per_group(const lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D)
        return d->tune.local_size * d->tune.per_item;
    return item_per_hash(d) ? d->tune.local_size : d->tune.local_size / 4 * d->tune.per_item;
}

/* Brings parameters into what the kernels and this device accept. */
static void clamp_params(lode_device *d)
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
        if (item_per_hash(d) || t->per_item != 2)
            t->per_item = 1;
        unsigned g = per_group(d);
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
                           .driver = d->desc->driver, .algo = algo_name(d->algo), .variant = d->variant};
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
static void load_params(lode_device *d)
{
    static pthread_once_t env_warned = PTHREAD_ONCE_INIT;
    d->tune = default_params(d);
    const double per = d->tune.per_item;
    double e[COUNT(env_names)] = {d->tune.local_size, per, per, d->tune.batch};
    d->mode = lode_tune_env(LODE_SETTING_OPENCL_TUNE, algo_name(d->algo), env_names, e, COUNT(env_names));
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
static void size_launches(lode_device *d)
{
    if (d->algo == LODE_ALGO_SHA256D) {
        double rate = d->tune.rate > 0 ? d->tune.rate : d->cpu ? 5e6 : 1e9;
        if (d->versions)
            rate /= LODE_VERSIONS_MAX; /* each nonce is that many hashes */
        uint64_t quantum = per_group(d);
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
        return fail(d, what, err);
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
        return fail(d, "clCreateContext", err);
    d->queue = ocl.clCreateCommandQueue(d->ctx, x->id, 0, &err);
    if (d->queue == NULL || err != CL_SUCCESS)
        return fail(d, "clCreateCommandQueue", err);
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
    load_params(d);
    clamp_params(d);
    rc = build_program(d, d->tune.per_item);
    if (rc != LODE_OK)
        return rc;
    clamp_params(d); /* now within the kernel's own work-group limit */
    size_launches(d);
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

static int upload_params(lode_device *d)
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
        size_launches(d);
    }
    return upload_params(d);
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
    const unsigned g = per_group(d);
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
    size_t items = item_per_hash(d) ? used : (size_t)used / d->tune.per_item * 4;
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
static int enqueue(lode_device *d, int slot, uint64_t start, uint64_t count)
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
static bool sha256d_exact(const void *ctx, uint32_t nonce)
{
    const lode_device *d = ctx;
    return sha256d_meets_target(&d->host_job, nonce, &d->target);
}

/* ---- engines of the launch driver --------------------------------------- */

/* Nonce scans (SHA-256d, scrypt): enqueue() above; each slot has its hit
 * buffer and the event of its read-back. */
static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    return enqueue(ctx, (int)slot, start, count);
}

static int nonce_query(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cl_int done = ocl_event_done(d->kernel_done[slot]);
    return done >= 0 ? done : fail(d, "a kernel launch (device lost or out of resources?)", done);
}

/* The read-back after the kernel (short once the kernel has finished). */
static int nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cl_int err = ocl.clWaitForEvents(1, &d->finished[slot]);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        ocl.clGetEventInfo(d->finished[slot], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS || status < 0)
        return fail(d, "a kernel launch (device lost or out of resources?)", status < 0 ? status : err);
    return LODE_OK;
}

/* Appends a finished launch's hits. */
static int nonce_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    const uint32_t *h = d->hits_host[slot];
    if (h[LODE_HITS_COUNT] > LODE_HITS_CAP)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = d->algo == LODE_ALGO_SHA256D && d->versions
                 ? sha256d_versions_push_hits(&d->vjobs, hits, h + LODE_HITS_NONCE0, h[LODE_HITS_COUNT], start,
                                              count, &d->target)
                 : lode_hits_push_nonces(hits, h + LODE_HITS_NONCE0, h[LODE_HITS_COUNT], start, count,
                                         d->algo == LODE_ALGO_SHA256D ? sha256d_exact : NULL, d);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "%s: kernel reported a nonce outside its range", d->label);
    return rc;
}

static void nonce_drain(void *ctx)
{
    lode_device *d = ctx;
    ocl.clFinish(d->queue); /* a launch may be half queued */
}

/* Momentum: a launch is up to ocl_momentum_batch() sweeps, one per header
 * nonce, queued ahead as deep as the engine takes; fetch copies their
 * candidates (a later launch's read-back overwrites them), so the next
 * launch is queued before the host pairs them. */
static int momentum_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot;
    momentum_consts c[OCL_MOMENTUM_BATCH_MAX];
    if (count == 0 || count > OCL_MOMENTUM_BATCH_MAX)
        return LODE_ERR_INVALID;
    for (uint64_t j = 0; j < count; j++) {
        uint8_t mid[32];
        momentum_midhash(d->header, (uint32_t)(start + j), mid);
        momentum_consts_init(&c[j], mid);
    }
    return ocl_momentum_enqueue(d->momentum, c, (unsigned)count);
}

static int momentum_query(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest launch */
    return ocl_momentum_ready(d->momentum);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    d->sweeps = 0;
    return ocl_momentum_finish(d->momentum, &d->sweeps);
}

static int momentum_fetch(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    size_t at = 0;
    for (unsigned j = 0; j < d->sweeps; j++) {
        momentum_entry *list;
        size_t n;
        int rc = ocl_momentum_sweep(d->momentum, j, &list, &n); /* an overflowed sweep is redone here */
        if (rc != LODE_OK)
            return rc;
        if (at + n > d->cand_cap) {
            momentum_entry *grown = realloc(d->cands, (at + n) * sizeof *grown);
            if (grown == NULL)
                return LODE_ERR_NO_MEMORY;
            d->cands = grown;
            d->cand_cap = at + n;
        }
        if (n > 0)
            memcpy(d->cands + at, list, n * sizeof *d->cands);
        d->sweep_at[j] = at;
        at += n;
    }
    d->sweep_at[d->sweeps] = at;
    return LODE_OK;
}

static int momentum_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (count != d->sweeps) {
        lode_log(LODE_LOG_ERROR, "%s: a Momentum launch of %u sweeps for %llu indices", d->label, d->sweeps,
                 (unsigned long long)count);
        return LODE_ERR_DEVICE;
    }
    int rc = LODE_OK;
    for (unsigned j = 0; j < d->sweeps && rc == LODE_OK; j++) {
        d->pairs.count = 0;
        rc = momentum_pairs_from_entries(d->cands + d->sweep_at[j], d->sweep_at[j + 1] - d->sweep_at[j], &d->pairs);
        if (rc == LODE_OK)
            rc = momentum_push_hits(d->header, (uint32_t)(start + j), &d->target, &d->pairs, hits);
    }
    return rc;
}

static void momentum_drain(void *ctx)
{
    lode_device *d = ctx;
    ocl_momentum_discard(d->momentum);
}

/* Trial factoring: launches of up to ocl_tf_launch_size() indices (a batch
 * of sub-launches over the engine's two queues), two in flight; the
 * dispatcher re-checks every factor with the reference. */
static int tf_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot; /* the engine queues in turn */
    return ocl_tf_enqueue(d->tf, start, count);
}

static int tf_query(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    return ocl_tf_ready(d->tf);
}

static int tf_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    return ocl_tf_finish(d->tf, &d->tf_n0, &d->tf_count, &d->tf_parts, &d->tf_nparts, &d->tf_overflow);
}

static int tf_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (d->tf_n0 != start || d->tf_count != count) {
        lode_log(LODE_LOG_ERROR, "%s: a trial-factoring launch out of order", d->label);
        return LODE_ERR_DEVICE;
    }
    if (d->tf_overflow)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = LODE_OK;
    for (unsigned j = 0; j < d->tf_nparts && rc == LODE_OK; j++) {
        const ocl_tf_part *part = &d->tf_parts[j];
        rc = lode_hits_push_offsets(hits, part->n0, part->count, part->found, part->nfound);
    }
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "%s: a factor outside its launch", d->label);
    return rc;
}

static void tf_drain(void *ctx)
{
    lode_device *d = ctx;
    ocl_tf_discard(d->tf);
}

/* The engine of the handle's algorithm. */
static lode_launch_engine engine_of(lode_device *d)
{
    if (d->algo == LODE_ALGO_MOMENTUM)
        return (lode_launch_engine){.ctx = d, .depth = ocl_momentum_depth(d->momentum),
                                    .launch_size = ocl_momentum_batch(d->momentum),
                                    .enqueue = momentum_enqueue, .query = momentum_query,
                                    .wait = momentum_wait, .fetch = momentum_fetch,
                                    .collect = momentum_collect, .drain = momentum_drain};
    if (d->algo == LODE_ALGO_TF)
        return (lode_launch_engine){.ctx = d, .depth = ocl_tf_depth(d->tf),
                                    .launch_size = ocl_tf_launch_size(d->tf),
                                    .enqueue = tf_enqueue, .query = tf_query, .wait = tf_wait,
                                    .collect = tf_collect, .drain = tf_drain};
    return (lode_launch_engine){.ctx = d, .depth = IN_FLIGHT, .launch_size = d->launch_count,
                                .enqueue = nonce_enqueue, .query = nonce_query, .wait = nonce_wait,
                                .collect = nonce_collect,
                                .drain = nonce_drain};
}

static int opencl_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                       const atomic_int *abort)
{
    *done = 0;
    const lode_launch_engine e = engine_of(d);
    return lode_launch_run(&d->driver, &e, r->start, r->count, hits, done, abort);
}

/* ---- tuning -------------------------------------------------------------- */

/* Runs one launch of count indices from nonce 0 and returns its duration
 * in seconds, or < 0 with *rc set. */
static double time_launch(lode_device *d, uint64_t count, int *rc)
{
    const double t0 = lode_clock_s();
    *rc = enqueue(d, 0, 0, count);
    int done = 0;
    /* Polled with short sleeps, not clWaitForEvents (it spins in some drivers). */
    for (int polls = 0; *rc == LODE_OK && polls < 40000 && (done = nonce_query(d, 0)) == 0; polls++)
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
    if (*rc == LODE_OK)
        *rc = done < 0 ? done : nonce_wait(d, 0);
    return *rc == LODE_OK ? lode_clock_s() - t0 : -1;
}

static void try_shape(lode_device *d, uint64_t count, bool warm_up, ocl_tune_params *best, int *rc)
{
    clamp_params(d);
    *rc = build_program(d, d->tune.per_item);
    if (*rc != LODE_OK)
        return;
    clamp_params(d);
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
static int opencl_tune(lode_device *d, double target_ms)
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
    int rc = upload_params(d);
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
        const unsigned n_il = item_per_hash(d) || d->xchg == XCHG_LOCAL ? 1 : 2;
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
    int rc2 = upload_params(d);
    if (rc == LODE_OK)
        rc = rc2;
    if (rc != LODE_OK || best.rate <= 0) {
        d->tune = saved;
        clamp_params(d);
        return rc != LODE_OK ? rc : LODE_ERR_DEVICE;
    }
    d->tune = best;
    d->tuned = true;
    rc = build_program(d, d->tune.per_item);
    if (rc != LODE_OK)
        return rc;
    clamp_params(d);
    size_launches(d);
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

static uint64_t opencl_preferred_chunk(lode_device *d, double target_ms)
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
    .preferred_chunk = opencl_preferred_chunk,
    .tune = opencl_tune,
    .read_sensors = opencl_read_sensors,
    .describe = opencl_describe,
};
