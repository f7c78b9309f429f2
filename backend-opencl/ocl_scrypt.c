/* scrypt on an OpenCL device (kernels/scrypt.cl): pbkdf2_in, a romix
 * kernel of the variant's exchange, pbkdf2_out, over batches of hash slots
 * in a scratchpad sized to the device. Launches, hits and tuning:
 * ocl_nonce.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_internal.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/sha256d_job.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/text.h"

/* The parameter block (core/backend_support/kernel_params.h), a buffer. */
#define PARAM_WORDS 64
_Static_assert(LODE_SCRYPT_PARAM_WORDS <= PARAM_WORDS, "parameter block");
/* Per slot LODE_SCRYPT_STATE_WORDS between the kernels, and the scratchpad. */
#define SCRYPT_STATE_BYTES (LODE_SCRYPT_STATE_WORDS * 4u)
#define SCRYPT_MEM_SHARE 0.85
/* Slots come in multiples of this: every work-group shape the tuner tries
 * holds a divisor of it (at most 256 work-items, 4 per hash or 1). */
#define SCRYPT_SLOT_QUANTUM 256u
/* The pbkdf2 kernels' work-group size. */
#define PBKDF2_LOCAL 64u

/* How the four work-items of a hash trade words (kernels/scrypt.cl XCHG). */
enum { XCHG_SINGLE = 0, XCHG_LOCAL = 1, XCHG_NV = 2, XCHG_KHR = 3, XCHG_INTEL = 4, XCHG_STAGED = 5 };
/* romix_thread stages 144 bytes per work-item in local memory. */
#define STAGED_ROW_BYTES 144u
#define STAGED_MAX_LOCAL 128u

typedef struct scrypt_state {
    ocl_nonce_scan scan; /* first: ocl_nonce.c reaches it through lode_device.state */
    int xchg;
    unsigned lookup_gap;
    unsigned slots; /* hash slots allocated */
    cl_program prog;
    unsigned prog_hashes;  /* HASHES the program was built with */
    cl_kernel k_main, k_in, k_out; /* romix_*, pbkdf2_in, pbkdf2_out */
    size_t main_max_local; /* the device's limit for k_main */
    cl_mem params, state, pad;
    uint32_t param_words[PARAM_WORDS];
    uint32_t saved_job[PARAM_WORDS]; /* while tuning */
    uint8_t header[80];
    lode_u256 target;
} scrypt_state;

static scrypt_state *state_of(lode_device *d) { return d->state; }

/* "thread" (a work-item per hash, the scratchpad staged through local
 * memory) on GPUs, "shuffle" where the device can shuffle within a
 * sub-group, "local" on any device, "single" (one work-item per hash, no
 * exchange, no staging) which suits CPUs best. */
static int scrypt_variants(const ocl_dev_desc *x, const char **names, int max)
{
    const char *list[4];
    int n = 0;
    list[n++] = ocl_is_cpu(x) ? "single" : "thread";
    if (x->caps & (OCL_CAP_NV_SHFL | OCL_CAP_KHR_SHUFFLE | OCL_CAP_INTEL_SHUFFLE))
        list[n++] = "shuffle";
    list[n++] = "local";
    list[n++] = ocl_is_cpu(x) ? "thread" : "single";
    return ocl_take_variants(list, n, names, max);
}

/* Kernels that run one work-item per hash (romix_single, romix_thread). */
static bool item_per_hash(const scrypt_state *s) { return s->xchg == XCHG_SINGLE || s->xchg == XCHG_STAGED; }

/* Hashes of one work-group of romix. */
static unsigned per_group(const scrypt_state *s)
{
    const ocl_tune_params *t = &s->scan.tune;
    return item_per_hash(s) ? t->local_size : t->local_size / 4 * t->per_item;
}

static void release_program(scrypt_state *s)
{
    ocl_release_kernel(&s->k_main);
    ocl_release_kernel(&s->k_in);
    ocl_release_kernel(&s->k_out);
    ocl_release_program(&s->prog);
}

static int xchg_of(const ocl_dev_desc *x, const char *variant);

/* The program of an exchange, lookup gap and interleave (HASHES).
 * NVIDIA, 64 registers: romix_thread keeps 32 warps resident. */
void ocl_scrypt_program(const ocl_dev_desc *x, const char *variant, unsigned lookup_gap, unsigned hashes,
                        ocl_program_spec *out)
{
    memset(out, 0, sizeof *out);
    const int xchg = xchg_of(x, variant);
    out->algo = "scrypt";
    out->variant = variant;
    out->source = lode_ocl_src_scrypt;
    snprintf(out->id, sizeof out->id, "scrypt-%s-g%u-h%u", variant, lookup_gap, hashes);
    int n = ocl_device_options(x, out->options, sizeof out->options);
    n += snprintf(out->options + n, sizeof out->options - (size_t)n, " -D LOOKUP_GAP=%u -D XCHG=%d -D HASHES=%u",
                  lookup_gap, xchg, hashes);
    if (xchg == XCHG_STAGED && (x->caps & OCL_CAP_NV_SHFL))
        snprintf(out->options + n, sizeof out->options - (size_t)n, " -cl-nv-maxrregcount=64");
    out->kernels[0] = xchg == XCHG_SINGLE ? "romix_single" : xchg == XCHG_STAGED ? "romix_thread" : "romix_quad";
    out->kernels[1] = "pbkdf2_in";
    out->kernels[2] = "pbkdf2_out";
    out->n_kernels = 3;
}

/* Each variant with every lookup gap it may get (romix_thread: none;
 * LODE_OPENCL_LOOKUP_GAP=1|2|4) and every interleave the tuner or
 * LODE_OPENCL_TUNE may set (the quad kernels: 1 or 2). */
void ocl_scrypt_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx)
{
    const char *variants[4];
    const int n = scrypt_variants(x, variants, 4);
    for (int i = 0; i < n; i++) {
        const int xchg = xchg_of(x, variants[i]);
        const unsigned gaps = xchg == XCHG_STAGED ? 1 : 3;
        const unsigned interleaves = xchg == XCHG_SINGLE || xchg == XCHG_STAGED ? 1 : 2;
        for (unsigned g = 0; g < gaps; g++)
            for (unsigned h = 1; h <= interleaves; h++) {
                ocl_program_spec spec;
                ocl_scrypt_program(x, variants[i], 1u << g, h, &spec);
                sink(ctx, &spec);
            }
    }
}

/* The interleave (HASHES) is a build option, so a new value means a new
 * program. */
static int scrypt_build(lode_device *d)
{
    scrypt_state *s = state_of(d);
    const unsigned hashes = s->scan.tune.per_item;
    if (s->prog != NULL && s->prog_hashes == hashes)
        return LODE_OK;
    release_program(s);
    ocl_program_spec spec;
    ocl_scrypt_program(d->desc, d->variant, s->lookup_gap, hashes, &spec);
    const char *sources[1] = {spec.source};
    int rc = ocl_program_build(d->desc, d->ctx, d->label, sources, 1, spec.options, &s->prog);
    if (rc != LODE_OK)
        return rc;
    s->prog_hashes = hashes;
    cl_kernel *kernels[3] = {&s->k_main, &s->k_in, &s->k_out};
    for (int i = 0; i < spec.n_kernels && rc == LODE_OK; i++)
        rc = ocl_make_kernel(d, s->prog, spec.kernels[i], kernels[i]);
    return rc == LODE_OK ? ocl_max_local(d, s->k_main, &s->main_max_local) : rc;
}

/* Brings parameters into what the kernels and this device accept. */
static void scrypt_clamp(lode_device *d)
{
    scrypt_state *s = state_of(d);
    ocl_tune_params *t = &s->scan.tune;
    /* Whole warps for shfl.sync; whole 32-item units for romix_thread. */
    unsigned floor_ls = s->xchg == XCHG_NV || s->xchg == XCHG_STAGED ? 32 : 4;
    size_t max = s->main_max_local ? s->main_max_local : d->desc->max_work_group;
    if (max > 256)
        max = 256; /* keeps slots a multiple of SCRYPT_SLOT_QUANTUM per group */
    if (s->xchg == XCHG_STAGED && max > STAGED_MAX_LOCAL)
        max = STAGED_MAX_LOCAL; /* 18 KiB of staging: within any GPU's local memory */
    t->local_size = ocl_pow2_local(t->local_size, max, ocl_group_floor(d->desc, floor_ls, max));
    if (item_per_hash(s) || t->per_item != 2)
        t->per_item = 1;
    unsigned g = per_group(s);
    unsigned batch = t->batch == 0 || t->batch > s->slots ? s->slots : t->batch;
    batch = batch / g * g;
    t->batch = batch < g ? g : batch;
}

/* Whole batches a launch, about LAUNCH_MS at the measured (or a guessed)
 * rate: a partial batch costs about as long as a full one. */
static void scrypt_size_launches(lode_device *d)
{
    scrypt_state *s = state_of(d);
    const ocl_tune_params *t = &s->scan.tune;
    double rate = t->rate > 0 ? t->rate : d->cpu ? 2e3 : 5e5;
    uint64_t batch = t->batch;
    uint64_t k = (uint64_t)(rate * LAUNCH_MS / 1000.0 / (double)batch + 0.5);
    s->scan.launch_count = batch * (k < 1 ? 1 : k);
}

static int set_romix_args(lode_device *d, cl_uint *used)
{
    scrypt_state *s = state_of(d);
    const ocl_tune_params *t = &s->scan.tune;
    if (s->xchg == XCHG_LOCAL || s->xchg == XCHG_STAGED) {
        size_t bytes = s->xchg == XCHG_STAGED ? (size_t)t->local_size * STAGED_ROW_BYTES
                                              : 2 * 3 * (size_t)t->per_item * t->local_size * sizeof(cl_uint);
        return ocl_set_args(d, s->k_main, 4, (size_t[]){sizeof(cl_mem), sizeof(cl_mem), 4, bytes},
                            (const void *[]){&s->state, &s->pad, used, NULL});
    }
    return ocl_set_args(d, s->k_main, 3, (size_t[]){sizeof(cl_mem), sizeof(cl_mem), 4},
                        (const void *[]){&s->state, &s->pad, used});
}

/* One batch: count (<= batch) hashes from start. */
static int enqueue_batch(lode_device *d, uint32_t start, uint32_t count, cl_mem hits, cl_event *ev)
{
    scrypt_state *s = state_of(d);
    const ocl_tune_params *t = &s->scan.tune;
    /* Whole work-groups of romix: the slots used, rounded up to a group,
     * are also the scratchpad's entry stride. */
    cl_uint used = (cl_uint)ocl_round_up(count, per_group(s));
    cl_uint n = count;
    const size_t pb_local = PBKDF2_LOCAL;
    int rc = ocl_set_args(d, s->k_in, 4, (size_t[]){sizeof(cl_mem), 4, 4, sizeof(cl_mem)},
                          (const void *[]){&s->params, &start, &used, &s->state});
    if (rc == LODE_OK)
        rc = ocl_run_kernel(d, s->k_in, ocl_round_up(used, pb_local), pb_local, "launching pbkdf2_in", NULL);
    if (rc == LODE_OK)
        rc = set_romix_args(d, &used);
    size_t items = item_per_hash(s) ? used : (size_t)used / t->per_item * 4;
    if (rc == LODE_OK)
        rc = ocl_run_kernel(d, s->k_main, items, t->local_size, "launching romix", NULL);
    if (rc == LODE_OK)
        rc = ocl_set_args(d, s->k_out, 5, (size_t[]){sizeof(cl_mem), 4, 4, sizeof(cl_mem), sizeof(cl_mem)},
                          (const void *[]){&s->params, &start, &n, &s->state, &hits});
    if (rc == LODE_OK)
        rc = ocl_run_kernel(d, s->k_out, ocl_round_up(n, pb_local), pb_local, "launching pbkdf2_out", ev);
    return rc;
}

static int scrypt_enqueue(lode_device *d, cl_mem hits, cl_event *kernel_done, uint64_t start, uint64_t count)
{
    const unsigned batch = state_of(d)->scan.tune.batch;
    int rc = LODE_OK;
    for (uint64_t off = 0; off < count && rc == LODE_OK; off += batch) {
        uint64_t n = count - off < batch ? count - off : batch;
        rc = enqueue_batch(d, (uint32_t)(start + off), (uint32_t)n, hits, kernel_done);
    }
    return rc;
}

/* Blocking: nothing is in flight between scans, and the host copy may
 * change right after. */
static int upload_params(lode_device *d)
{
    scrypt_state *s = state_of(d);
    OCL_TRY(d, "writing the job parameters",
        ocl.clEnqueueWriteBuffer(d->queue, s->params, CL_TRUE, 0, sizeof s->param_words, s->param_words, 0,
                                 NULL, NULL));
    return LODE_OK;
}

static int scrypt_set_work(lode_device *d, const lode_work *work)
{
    scrypt_state *s = state_of(d);
    memcpy(s->header, work->header.header, 80);
    s->target = work->header.target;
    memset(s->param_words, 0, sizeof s->param_words);
    sha256d_job job; /* for its midstate: the HMAC key hash starts there */
    sha256d_job_init(&job, s->header, 0);
    lode_scrypt_params_fill(s->param_words, s->header, job.midstate, s->target.w);
    return upload_params(d);
}

/* ---- tuning: work-group size x hashes per quad x batch ---- */

static const unsigned quad_ls[] = {64, 128, 256}, single_ls[] = {16, 64, 256}, staged_ls[] = {32, 64, 128};
#define BATCHES 3

/* Interleave is a rebuild; on CPUs (local exchange) it does not pay. */
static unsigned interleaves(const scrypt_state *s) { return item_per_hash(s) || s->xchg == XCHG_LOCAL ? 1 : 2; }

static int scrypt_tune_begin(lode_device *d)
{
    scrypt_state *s = state_of(d);
    memcpy(s->saved_job, s->param_words, sizeof s->saved_job);
    memset(s->param_words + LODE_SCRYPT_P_TARGET, 0, 8 * sizeof(uint32_t));
    return upload_params(d);
}

static int scrypt_tune_end(lode_device *d)
{
    scrypt_state *s = state_of(d);
    memcpy(s->param_words, s->saved_job, sizeof s->saved_job);
    return upload_params(d);
}

/* Shape i: interleave (outer), work-group size, batch (inner). */
static void scrypt_shape(lode_device *d, size_t i)
{
    scrypt_state *s = state_of(d);
    ocl_tune_params *t = &s->scan.tune;
    const unsigned *ls = s->xchg == XCHG_SINGLE ? single_ls : s->xchg == XCHG_STAGED ? staged_ls : quad_ls;
    const unsigned batches[BATCHES] = {s->slots / 4, s->slots / 2, s->slots};
    const unsigned n_il = interleaves(s);
    t->local_size = ls[i / BATCHES % COUNT(quad_ls)];
    t->per_item = n_il == 1 ? 1 : (unsigned)(i / (BATCHES * COUNT(quad_ls))) + 1;
    t->batch = batches[i % BATCHES];
}

static uint64_t scrypt_trial_count(lode_device *d) { return state_of(d)->scan.tune.batch; }
static uint64_t scrypt_launch_quantum(lode_device *d) { return per_group(state_of(d)); }

static void scrypt_report(lode_device *d)
{
    const ocl_tune_params *t = &state_of(d)->scan.tune;
    char rate[48];
    lode_format_rate(t->rate, "H/s", rate, sizeof rate);
    lode_log(LODE_LOG_INFO, "%s: tuned scrypt/%s: work-groups of %u, %u hash(es) per quad, batches of %u: %s",
             d->label, d->variant, t->local_size, t->per_item, t->batch, rate);
}

static size_t scrypt_candidates(const lode_device *d);

static const ocl_nonce_algo scrypt_nonce = {
    .enqueue = scrypt_enqueue,
    .clamp = scrypt_clamp,
    .build = scrypt_build,
    .size_launches = scrypt_size_launches,
    .candidates = scrypt_candidates,
    .warm_up_first = true,
    .tune_begin = scrypt_tune_begin,
    .tune_end = scrypt_tune_end,
    .shape = scrypt_shape,
    .trial_count = scrypt_trial_count,
    .launch_quantum = scrypt_launch_quantum,
    .report = scrypt_report,
};

/* Without interleave the second half of the shapes is not tried. */
static size_t scrypt_candidates(const lode_device *d)
{
    return interleaves(d->state) * COUNT(quad_ls) * BATCHES;
}

/* ---- open and close ---- */

/* The scratchpad: about two waves of resident hashes on a GPU (OpenCL has
 * no occupancy query: 2048 work-items per compute unit, 4 per hash, two
 * interleaved), a few work-groups per core on a CPU, within a share of the
 * device memory and the largest single buffer. */
static int alloc_scratchpad(lode_device *d)
{
    scrypt_state *s = state_of(d);
    const ocl_dev_desc *x = d->desc;
    const uint64_t pad_per_slot = (uint64_t)128 * LODE_SCRYPT_N / s->lookup_gap;
    uint64_t want = (uint64_t)x->compute_units * (d->cpu ? 128 : 2048);
    want = want < SCRYPT_SLOT_QUANTUM ? SCRYPT_SLOT_QUANTUM : want; /* one batch on a one-unit device */
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
    s->slots = (unsigned)slots;
    int rc = ocl_create_buffer(d, CL_MEM_READ_WRITE, (size_t)slots * SCRYPT_STATE_BYTES, &s->state);
    if (rc == LODE_OK)
        rc = ocl_create_buffer(d, CL_MEM_READ_WRITE, (size_t)(slots * pad_per_slot), &s->pad);
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

/* The lookup gap: 1 (no recomputation) unless memory is scarce;
 * LODE_OPENCL_LOOKUP_GAP=1|2|4 overrides. */
static unsigned lookup_gap_for(const ocl_dev_desc *x)
{
    const int gap = lode_setting_choice(LODE_SETTING_OPENCL_LOOKUP_GAP); /* words 1, 2, 4 */
    if (gap >= 0)
        return 1u << gap;
    return x->global_mem < (UINT64_C(2) << 30) ? 2 : 1;
}

static ocl_tune_params default_params(const lode_device *d)
{
    const scrypt_state *s = d->state;
    if (s->xchg == XCHG_SINGLE)
        return (ocl_tune_params){.local_size = d->cpu ? 16 : 64, .per_item = 1};
    if (s->xchg == XCHG_STAGED)
        return (ocl_tune_params){.local_size = 64, .per_item = 1, .batch = d->cpu ? 0 : s->slots / 2};
    return (ocl_tune_params){.local_size = s->xchg == XCHG_LOCAL ? 64 : 128,
                             .per_item = s->xchg == XCHG_LOCAL || d->cpu ? 1 : 2,
                             .batch = d->cpu ? 0 : s->slots / 2};
}

static int scrypt_open(lode_device *d)
{
    scrypt_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    d->state = s;
    s->scan.algo = &scrypt_nonce;
    s->xchg = xchg_of(d->desc, d->variant);
    s->lookup_gap = s->xchg == XCHG_STAGED ? 1 : lookup_gap_for(d->desc); /* romix_thread: no gap */
    int rc = ocl_create_buffer(d, CL_MEM_READ_ONLY, PARAM_WORDS * sizeof(uint32_t), &s->params);
    if (rc == LODE_OK)
        rc = ocl_nonce_open(d);
    if (rc == LODE_OK)
        rc = alloc_scratchpad(d);
    if (rc != LODE_OK)
        return rc;
    ocl_nonce_load_params(d, default_params(d));
    return ocl_nonce_ready(d);
}

static void scrypt_close(lode_device *d)
{
    scrypt_state *s = state_of(d);
    if (s == NULL)
        return;
    ocl_nonce_close(&s->scan);
    ocl_release_mem(&s->params);
    ocl_release_mem(&s->state);
    ocl_release_mem(&s->pad);
    release_program(s);
    free(s);
}

const ocl_algo_ops ocl_scrypt_ops = {
    .variants = scrypt_variants,
    .open = scrypt_open,
    .close = scrypt_close,
    .set_work = scrypt_set_work,
    .engine = ocl_nonce_engine,
    .preferred_chunk = ocl_nonce_preferred_chunk,
    .tune = ocl_nonce_tune,
};
