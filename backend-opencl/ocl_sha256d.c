/* SHA-256d on an OpenCL device (kernels/sha256d.cl): the plain nonce
 * search with a top-word prefilter checked exactly on the host, and the
 * version-rolled search, a program of its own built on the first
 * version-rolled job. Launches, hits and tuning: ocl_nonce.c. */
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_internal.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/base/log.h"
#include "core/base/status.h"
#include "core/base/text.h"

/* Largest nonce count of one launch (32-bit offsets stay safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)

typedef struct sha256d_state {
    ocl_nonce_scan scan; /* first: ocl_nonce.c reaches it through lode_device.state */
    cl_program prog;
    cl_kernel k_main;      /* sha256d_search_<variant> */
    size_t main_max_local; /* the device's limit for k_main */
    cl_program vprog;      /* the version-rolled search, built on first use */
    cl_kernel k_versions;
    size_t versions_max_local; /* the device's limit for k_versions */
    sha256d_job host_job;      /* precomputation, exact check */
    bool versions;             /* the job is version-rolled: vjobs and vparams hold it */
    sha256d_version_set vjobs;
    uint32_t vparams[LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS];
    uint32_t param_words[LODE_SHA256D_PARAM_WORDS];
    uint32_t saved_job[LODE_SHA256D_PARAM_WORDS]; /* while tuning */
    uint64_t trial_count;                         /* nonces of one tuning trial */
    uint8_t header[80];
    lode_u256 target;
} sha256d_state;

static sha256d_state *state_of(lode_device *d) { return d->state; }

/* "imad" and "iadd3" (kernels/sha256d.cl): additions as multiply-adds pay
 * where a separate pipe runs them (NVIDIA's FMA pipe, measured there);
 * elsewhere plain ones first. */
static int sha256d_variants(const ocl_dev_desc *x, const char **names, int max)
{
    const bool nvidia = x->vendor_id == VENDOR_NVIDIA;
    const char *list[] = {nvidia ? "imad" : "iadd3", nvidia ? "iadd3" : "imad"};
    return ocl_take_variants(list, (int)COUNT(list), names, max);
}

/* One search program of sha256d.cl and its kernel (the variant's: NAME_imad
 * or NAME_iadd3). NVIDIA, 64 registers: sha256d_search, which the compiler
 * left to itself holds at 39 registers, gets CUDA's (whose launch bound
 * allows 64; at 40 the same code runs 9% slower). The version-rolled search
 * gets 80 (the schedule it keeps for every version takes 48); as in CUDA,
 * 80 beats 128 (more warps resident, docs/PERFORMANCE.md). The other
 * drivers choose. */
void ocl_sha256d_program(const ocl_dev_desc *x, const char *variant, bool versions, ocl_program_spec *out)
{
    memset(out, 0, sizeof *out);
    out->algo = "sha256d";
    out->variant = variant;
    out->source = lode_ocl_src_sha256d;
    snprintf(out->id, sizeof out->id, "sha256d-%s%s", variant, versions ? "-versions" : "");
    int n = ocl_device_options(x, out->options, sizeof out->options);
    if (x->caps & OCL_CAP_NV_SHFL)
        snprintf(out->options + n, sizeof out->options - (size_t)n, " -cl-nv-maxrregcount=%u", versions ? 80 : 64);
    static const char *const names[2][2] = {{"sha256d_search_iadd3", "sha256d_search_imad"},
                                            {"sha256d_search_versions_iadd3", "sha256d_search_versions_imad"}};
    const bool im = strcmp(variant, "imad") == 0;
    out->kernels[out->n_kernels++] = names[versions][im];
}

void ocl_sha256d_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx)
{
    const char *variants[4];
    int n = sha256d_variants(x, variants, 4);
    for (int i = 0; i < n; i++)
        for (int versions = 0; versions < 2; versions++) {
            ocl_program_spec spec;
            ocl_sha256d_program(x, variants[i], versions, &spec);
            sink(ctx, &spec);
        }
}

static int build_search(lode_device *d, bool versions, cl_program *prog, cl_kernel *kernel, size_t *max_local)
{
    if (*prog != NULL)
        return LODE_OK;
    ocl_program_spec spec;
    ocl_sha256d_program(d->desc, d->variant, versions, &spec);
    const char *sources[1] = {spec.source};
    int rc = ocl_program_build(d->desc, d->ctx, d->label, sources, 1, spec.options, prog);
    if (rc == LODE_OK)
        rc = ocl_make_kernel(d, *prog, spec.kernels[0], kernel);
    return rc == LODE_OK ? ocl_max_local(d, *kernel, max_local) : rc;
}

static int sha256d_build(lode_device *d)
{
    sha256d_state *s = state_of(d);
    return build_search(d, false, &s->prog, &s->k_main, &s->main_max_local);
}

/* The version-rolled search, built on the first version-rolled job. */
static int build_versions_program(lode_device *d)
{
    sha256d_state *s = state_of(d);
    return build_search(d, true, &s->vprog, &s->k_versions, &s->versions_max_local);
}

/* Brings parameters into what the kernels and this device accept. */
static void sha256d_clamp(lode_device *d)
{
    sha256d_state *s = state_of(d);
    ocl_tune_params *t = &s->scan.tune;
    size_t max = s->main_max_local ? s->main_max_local : d->desc->max_work_group;
    if (max > 256)
        max = 256;
    t->local_size = ocl_pow2_local(t->local_size, max, ocl_group_floor(d->desc, 4, max));
    if (t->per_item == 0)
        t->per_item = 1;
}

/* Nonces per launch for about LAUNCH_MS at the measured (or a guessed) rate. */
static void sha256d_size_launches(lode_device *d)
{
    sha256d_state *s = state_of(d);
    const ocl_tune_params *t = &s->scan.tune;
    double rate = t->rate > 0 ? t->rate : d->cpu ? 5e6 : 1e9;
    if (s->versions)
        rate /= LODE_VERSIONS_MAX; /* each nonce is that many hashes */
    uint64_t quantum = (uint64_t)t->local_size * t->per_item;
    uint64_t n = (uint64_t)(rate * LAUNCH_MS / 1000.0) / quantum * quantum;
    s->scan.launch_count = n < quantum ? quantum : n > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : n;
}

static int enqueue_versions(lode_device *d, cl_mem hits, cl_event *kernel_done, uint64_t start, uint64_t count)
{
    sha256d_state *s = state_of(d);
    cl_uint first = (cl_uint)start, n = (cl_uint)count;
    size_t local = s->scan.tune.local_size; /* the tuned size, within k_versions' limit */
    while (local > s->versions_max_local && local > 1)
        local /= 2;
    const uint64_t per_item = LODE_SHA256D_VERSIONS_NONCES_PER_THREAD;
    size_t items = ocl_round_up((size_t)((count + per_item - 1) / per_item), local);
    int rc = ocl_set_args(d, s->k_versions, 4, (size_t[]){sizeof s->vparams, 4, 4, sizeof(cl_mem)},
                          (const void *[]){s->vparams, &first, &n, &hits});
    return rc == LODE_OK ? ocl_run_kernel(d, s->k_versions, items, local, "launching sha256d_search_versions",
                                          kernel_done)
                         : rc;
}

/* The job's parameter block goes by value at each launch. */
static int sha256d_enqueue(lode_device *d, cl_mem hits, cl_event *kernel_done, uint64_t start, uint64_t count)
{
    sha256d_state *s = state_of(d);
    if (s->versions)
        return enqueue_versions(d, hits, kernel_done, start, count);
    const ocl_tune_params *t = &s->scan.tune;
    cl_uint first = (cl_uint)start, n = (cl_uint)count;
    size_t items = ocl_round_up((size_t)((count + t->per_item - 1) / t->per_item), t->local_size);
    int rc = ocl_set_args(d, s->k_main, 4, (size_t[]){sizeof s->param_words, 4, 4, sizeof(cl_mem)},
                          (const void *[]){s->param_words, &first, &n, &hits});
    return rc == LODE_OK ? ocl_run_kernel(d, s->k_main, items, t->local_size, "launching sha256d_search", kernel_done)
                         : rc;
}

/* Candidates passed only the kernel's top-word test: hash them exactly
 * before they count as hits. */
static bool sha256d_exact(const void *ctx, uint32_t nonce)
{
    const sha256d_state *s = ctx;
    return sha256d_meets_target(&s->host_job, nonce, &s->target);
}

static int sha256d_set_work(lode_device *d, const lode_work *work)
{
    sha256d_state *s = state_of(d);
    memcpy(s->header, work->header.header, 80);
    s->target = work->header.target;
    memset(s->param_words, 0, sizeof s->param_words);
    const bool versions = work->header.version_count == LODE_VERSIONS_MAX; /* rolls_versions */
    if (versions) {
        int rc = build_versions_program(d);
        if (rc != LODE_OK)
            return rc;
        sha256d_versions_init(&s->vjobs, &work->header, s->vparams);
        s->scan.check = (lode_nonce_hit_check){.target = &s->target, .versions = &s->vjobs};
    } else {
        /* The same per-job precomputation as the CPU lane paths and CUDA
         * (core/backend_support/sha256d_lanes.h), in the block
         * kernels/sha256d.cl reads. */
        sha256d_job *job = &s->host_job;
        sha256d_job_init(job, s->header, s->target.w[7]);
        sha256d_prepare_lanes(job);
        lode_sha256d_params_fill(s->param_words, job->midstate, job->pre, job->target_top);
        s->scan.check = (lode_nonce_hit_check){.target = &s->target, .keep = sha256d_exact, .ctx = s};
    }
    if (versions != s->versions) {
        s->versions = versions;
        sha256d_size_launches(d);
    }
    return LODE_OK;
}

/* ---- tuning: work-group size x nonces per work-item ---- */

static const unsigned gpu_ls[] = {64, 128, 256}, gpu_npt[] = {8, 32, 128};
static const unsigned cpu_ls[] = {16, 64, 256}, cpu_npt[] = {1, 8, 32};

static uint64_t sha256d_launch_quantum(lode_device *d)
{
    const ocl_tune_params *t = &state_of(d)->scan.tune;
    return (uint64_t)t->local_size * t->per_item;
}

/* A zero target (no hit is written) and the trial size: ~40 ms at the
 * default shape's measured rate (probes of up to 2^24 nonces, 2^18 on a
 * CPU). */
static int sha256d_tune_begin(lode_device *d)
{
    sha256d_state *s = state_of(d);
    memcpy(s->saved_job, s->param_words, sizeof s->saved_job);
    s->param_words[LODE_SHA256D_P_TARGET_TOP] = 0;
    int rc = LODE_OK;
    const uint64_t probe = d->cpu ? UINT64_C(1) << 18 : UINT64_C(1) << 24, quantum = sha256d_launch_quantum(d);
    s->trial_count = probe; /* the measurement's largest launch */
    const double rate = ocl_nonce_measure_rate(d, quantum, probe, &rc);
    const uint64_t count = rate > 0 ? (uint64_t)(rate * 0.04) : probe;
    s->trial_count = count < quantum ? quantum : count > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : count;
    return rc;
}

static int sha256d_tune_end(lode_device *d)
{
    sha256d_state *s = state_of(d);
    memcpy(s->param_words, s->saved_job, sizeof s->saved_job);
    return LODE_OK;
}

static void sha256d_shape(lode_device *d, size_t i)
{
    ocl_tune_params *t = &state_of(d)->scan.tune;
    t->local_size = (d->cpu ? cpu_ls : gpu_ls)[i / 3];
    t->per_item = (d->cpu ? cpu_npt : gpu_npt)[i % 3];
}

static uint64_t sha256d_trial_count(lode_device *d) { return state_of(d)->trial_count; }

static void sha256d_report(lode_device *d)
{
    const ocl_tune_params *t = &state_of(d)->scan.tune;
    char rate[48];
    lode_format_rate(t->rate, "H/s", rate, sizeof rate);
    lode_log(LODE_LOG_INFO, "%s: tuned sha256d/%s: work-groups of %u, %u nonces per work-item: %s", d->label,
             d->variant, t->local_size, t->per_item, rate);
}

static size_t sha256d_candidates(const lode_device *d)
{
    (void)d;
    return COUNT(gpu_ls) * COUNT(gpu_npt);
}

static const ocl_nonce_algo sha256d_nonce = {
    .enqueue = sha256d_enqueue,
    .clamp = sha256d_clamp,
    .build = sha256d_build,
    .size_launches = sha256d_size_launches,
    .candidates = sha256d_candidates,
    .tune_begin = sha256d_tune_begin,
    .tune_end = sha256d_tune_end,
    .shape = sha256d_shape,
    .trial_count = sha256d_trial_count,
    .launch_quantum = sha256d_launch_quantum,
    .report = sha256d_report,
};

/* ---- open and close ---- */

static int sha256d_open(lode_device *d)
{
    sha256d_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    d->state = s;
    s->scan.algo = &sha256d_nonce;
    int rc = ocl_nonce_open(d);
    if (rc != LODE_OK)
        return rc;
    ocl_nonce_load_params(d, (ocl_tune_params){.local_size = d->cpu ? 64 : 256, .per_item = d->cpu ? 8 : 32});
    return ocl_nonce_ready(d);
}

static void sha256d_close(lode_device *d)
{
    sha256d_state *s = state_of(d);
    if (s == NULL)
        return;
    ocl_nonce_close(&s->scan);
    ocl_release_kernel(&s->k_main);
    ocl_release_program(&s->prog);
    ocl_release_kernel(&s->k_versions);
    ocl_release_program(&s->vprog);
    free(s);
}

const ocl_algo_ops ocl_sha256d_ops = {
    .variants = sha256d_variants,
    .open = sha256d_open,
    .close = sha256d_close,
    .set_work = sha256d_set_work,
    .engine = ocl_nonce_engine,
    .preferred_chunk = ocl_nonce_preferred_chunk,
    .tune = ocl_nonce_tune,
};
