/* Mersenne trial factoring on an OpenCL device: the engine of ocl_tf.h
 * over kernels/tf.cl, and the backend's ocl_tf_ops over it. */
#include "backend-opencl/ocl_tf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_internal.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/tf_tables.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"

#define PREP_LOCAL 128u
#define PREP_GROUPS_PER_CU 4u
#define EXP_LOCAL 256u
#define LANES 2 /* queues the sub-launches alternate over */
#define DEPTH 2 /* launches (batches) in flight */
/* One sub-launch's results (kernels/tf.cl): candidates, factors, offsets. */
#define AREA_WORDS (2u + LODE_TF_FOUND_CAP)

/* A queue with its own sieve buffer and kernel copies (their buffer
 * arguments set once): one sub-launch's sieve (atomics) runs beside the
 * other lane's exponentiation (multiplies) on devices that overlap queues.
 * The buffer holds the small primes' starts, the sieve bits at bits_at and
 * the candidate list at cand_at (words): one kernel argument for the three. */
typedef struct lane {
    cl_command_queue queue;
    cl_mem mem;
    cl_kernel prepare, segments, exp;
    cl_uint count_arg; /* the count argument last set (0: none) */
    bool owns_queue;   /* created for this lane (released with it) */
} lane;

/* LODE_TF_PROFILE: a sub-launch's kernels, timed by profiling events. */
enum { STAGE_PREPARE, STAGE_SEGMENTS, STAGE_EXP, STAGES };

/* A launch: parts sub-launches, results in areas [slot * batch, + parts). */
typedef struct tf_launch {
    uint64_t n0, count;
    unsigned parts;
    cl_event kdone[LANES]; /* the last exponentiation on each lane used (polled) */
    cl_event done;         /* the read-back, after all of them */
    ocl_tf_part *part;     /* batch entries */
    cl_event (*stage)[STAGES]; /* LODE_TF_PROFILE: each part's kernels (NULL: none) */
} tf_launch;

struct ocl_tf {
    const char *label;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel k_fill, k_tables;
    unsigned want_primes, launch_bits, batch;
    size_t exp_items;  /* tf_exponentiate's items that test candidates */
    size_t prep_items; /* tf_prepare's */
    cl_uint exp_prep_groups; /* tf_exponentiate's groups that prepare the lane's next sub-launch */
    const uint32_t *primes; /* shared: tf_sieve_primes */
    cl_mem primes_dev; /* the prime list, uploaded once */
    cl_mem tables;     /* the sieve tables, want_primes words apart (LODE_TF_TABLE_*) */
    cl_uint bits_at, cand_at; /* in a lane's buffer */
    cl_mem results; /* DEPTH x batch areas */
    ocl_pinned host; /* their copy */
    unsigned n_small, n_all;
    uint32_t exponent; /* whose tables are loaded (0: none) */
    lode_tf_job job;
    lane lanes[LANES];
    unsigned next_lane;
    tf_launch launches[DEPTH];
    unsigned head, queued;
    /* LODE_TF_PROFILE: both lanes on one in-order queue, so each kernel
     * runs alone and its time is its own (as CUDA's profile). */
    bool profile;
    double stage_ms[STAGES];
    uint64_t stage_calls[STAGES], prof_parts, prof_indices, prof_survivors;
};

static int fail(const ocl_tf *f, const char *what, cl_int err)
{
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: tf: %s failed: %s", f->label, what, ocl_error_name(err, buf));
    return ocl_status(err);
}

#define TRY(what, call)                                                                            \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS)                                                                    \
            return fail(f, (what), err_);                                                          \
    } while (0)
#define ARG(k, i, v) TRY("clSetKernelArg", ocl.clSetKernelArg((k), (i), sizeof(v), &(v)))

static int buffer(ocl_tf *f, size_t size, cl_mem *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateBuffer(f->ctx, CL_MEM_READ_WRITE, size ? size : 4, NULL, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        return fail(f, "allocating a buffer", err);
    }
    return LODE_OK;
}

static int kernel(ocl_tf *f, const char *name, cl_kernel *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateKernel(f->prog, name, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        return fail(f, name, err);
    }
    return LODE_OK;
}

static void release_events(tf_launch *l, unsigned batch)
{
    for (unsigned j = 0; l->stage != NULL && j < batch; j++)
        for (int k = 0; k < STAGES; k++)
            if (l->stage[j][k] != NULL) {
                ocl.clReleaseEvent(l->stage[j][k]);
                l->stage[j][k] = NULL;
            }
    for (int q = 0; q < LANES; q++)
        if (l->kdone[q] != NULL) {
            ocl.clReleaseEvent(l->kdone[q]);
            l->kdone[q] = NULL;
        }
    if (l->done != NULL) {
        ocl.clReleaseEvent(l->done);
        l->done = NULL;
    }
}

void ocl_tf_free(ocl_tf *f)
{
    if (f == NULL)
        return;
    for (int q = 0; q < LANES; q++)
        if (f->lanes[q].queue != NULL)
            ocl.clFinish(f->lanes[q].queue);
    for (int s = 0; s < DEPTH; s++) {
        release_events(&f->launches[s], f->batch);
        free(f->launches[s].part);
        free(f->launches[s].stage);
    }
    if (f->profile && f->prof_parts > 0)
        lode_log(LODE_LOG_INFO,
                 "%s: tf: %llu sub-launches, %.4g indices each, %.2f%% survive the sieve (%u primes); ms per "
                 "sub-launch: segments %.3f, exponentiation with the next sub-launch's large primes %.3f; "
                 "tf_prepare %.3f per call (%llu calls)",
                 f->label, (unsigned long long)f->prof_parts, (double)f->prof_indices / f->prof_parts,
                 100.0 * f->prof_survivors / f->prof_indices, f->n_all,
                 f->stage_ms[STAGE_SEGMENTS] / f->prof_parts, f->stage_ms[STAGE_EXP] / f->prof_parts,
                 f->stage_calls[STAGE_PREPARE] ? f->stage_ms[STAGE_PREPARE] / f->stage_calls[STAGE_PREPARE] : 0.0,
                 (unsigned long long)f->stage_calls[STAGE_PREPARE]);
    if (f->host.ptr != NULL)
        ocl_pinned_free(&f->host, f->queue);
    for (int q = 0; q < LANES; q++) {
        lane *l = &f->lanes[q];
        cl_kernel ks[] = {l->prepare, l->segments, l->exp};
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            if (ks[i] != NULL)
                ocl.clReleaseKernel(ks[i]);
        if (l->mem != NULL)
            ocl.clReleaseMemObject(l->mem);
        if (l->owns_queue)
            ocl.clReleaseCommandQueue(l->queue);
    }
    cl_mem mems[] = {f->primes_dev, f->tables, f->results};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (mems[i] != NULL)
            ocl.clReleaseMemObject(mems[i]);
    cl_kernel ks[] = {f->k_fill, f->k_tables};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i] != NULL)
            ocl.clReleaseKernel(ks[i]);
    if (f->prog != NULL)
        ocl.clReleaseProgram(f->prog);
    free(f);
}

/* A lane's queue, buffers and kernels, with the arguments that never
 * change set; its sieve bits start all ones (tf_segments keeps them so).
 * Queues: the first lane uses the device's, the second its own; profiled,
 * both share one new profiling queue. */
static int setup_lane(ocl_tf *f, const ocl_dev_desc *desc, lane *l, bool first)
{
    const size_t launch = (size_t)1 << f->launch_bits;
    if (f->profile && !first) {
        l->queue = f->lanes[0].queue;
    } else if (first && !f->profile) {
        l->queue = f->queue;
    } else {
        cl_int err = CL_SUCCESS;
        l->queue = ocl.clCreateCommandQueue(f->ctx, desc->id, f->profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
        if (l->queue == NULL || err != CL_SUCCESS) {
            l->queue = NULL;
            return fail(f, "clCreateCommandQueue", err);
        }
        l->owns_queue = true;
    }
    int rc;
    if ((rc = buffer(f, ((size_t)f->cand_at + launch) * sizeof(uint32_t), &l->mem)) != LODE_OK ||
        (rc = kernel(f, "tf_prepare", &l->prepare)) != LODE_OK ||
        (rc = kernel(f, "tf_segments", &l->segments)) != LODE_OK ||
        (rc = kernel(f, "tf_exponentiate", &l->exp)) != LODE_OK)
        return rc;
    cl_ulong local_need = 0, local_have = 0; /* a segment must fit the device's local memory */
    if (first &&
        ocl.clGetKernelWorkGroupInfo(l->segments, desc->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_need, &local_need,
                                     NULL) == CL_SUCCESS &&
        ocl.clGetDeviceInfo(desc->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_have, &local_have, NULL) == CL_SUCCESS &&
        local_need > local_have) {
        lode_log(LODE_LOG_ERROR, "%s: tf: the sieve's segments need %llu bytes of local memory, the device has %llu",
                 f->label, (unsigned long long)local_need, (unsigned long long)local_have);
        return LODE_ERR_UNSUPPORTED;
    }
    const cl_uint stride = f->want_primes;
    cl_kernel k = l->prepare;
    ARG(k, 0, f->tables);
    ARG(k, 1, stride);
    ARG(k, 7, l->mem);
    ARG(k, 8, f->bits_at);
    ARG(k, 9, f->results);
    k = l->segments;
    ARG(k, 0, f->tables);
    ARG(k, 1, stride);
    ARG(k, 4, l->mem);
    ARG(k, 5, f->bits_at);
    ARG(k, 6, f->cand_at);
    ARG(k, 7, f->results);
    k = l->exp;
    ARG(k, 0, l->mem);
    ARG(k, 1, f->cand_at);
    ARG(k, 2, f->results);
    ARG(k, 10, f->tables);
    ARG(k, 11, stride);
    ARG(k, 14, f->bits_at);
    ARG(k, 18, f->exp_prep_groups);
    const cl_uint ones = 0xFFFFFFFFu;
    size_t words = launch / 32, at = f->bits_at;
    ARG(f->k_fill, 0, l->mem);
    ARG(f->k_fill, 1, ones);
    TRY("tf_fill", ocl.clEnqueueNDRangeKernel(l->queue, f->k_fill, 1, &at, &words, NULL, 0, NULL, NULL));
    TRY("clFinish", ocl.clFinish(l->queue));
    return LODE_OK;
}

/* The sizes from the settings and the device. */
static void configure(ocl_tf *f, const ocl_dev_desc *desc)
{
    const bool cpu = (desc->type & CL_DEVICE_TYPE_CPU) != 0;
    f->want_primes = lode_setting_unsigned_in(LODE_SETTING_TF_SIEVE_PRIMES, cpu ? 20000 : 1000000, 14, 2000000);
    /* A launch holds whole segments: tf_segments reads and clears a whole
     * segment's sieve bits, which past a shorter launch's bits are its
     * candidates (Oclgrind reported the race at 2^17 launches). */
    const unsigned min_bits = (unsigned)__builtin_ctz(LODE_TF_OCL_SEG_BITS);
    f->launch_bits = lode_setting_unsigned_in(LODE_SETTING_TF_LAUNCH_BITS, cpu ? 20 : 27, min_bits, 28);
    /* NVIDIA's OpenCL costs ~11 us of host CPU per enqueue and ~130 us per
     * batch (a wake, a read-back, events): 2^27 x 32 keeps the host under
     * 2% of a core at the H100's rate (docs/PERFORMANCE.md). */
    f->batch = lode_setting_unsigned_in(LODE_SETTING_TF_BATCH, cpu ? 16 : 32, 1, 64);
    f->exp_items = (size_t)(desc->compute_units ? desc->compute_units : 1) * (cpu ? 64 : 2048);
    f->exp_items = (f->exp_items + EXP_LOCAL - 1) / EXP_LOCAL * EXP_LOCAL;
    f->bits_at = f->want_primes;
    f->cand_at = f->bits_at + (1u << f->launch_bits) / 32;
    /* A small grid walks every prime (as CUDA's): measured on the H100 2.8%
     * faster than an item per prime, beside the other lane's work. */
    f->prep_items = (size_t)(desc->compute_units ? desc->compute_units : 1) * PREP_GROUPS_PER_CU * PREP_LOCAL;
    /* One preparing group per compute unit beside the candidates' groups
     * (kernels/tf.cl): 132 and 264 on the H200's 132 SMs ran the same. */
    f->exp_prep_groups = desc->compute_units ? desc->compute_units : 1;
    f->profile = lode_setting_flag(LODE_SETTING_TF_PROFILE);
}

/* NVIDIA's compiler takes inline PTX (the common options' LODE_NV_PTX):
 * the squaring's carry chains. 48 registers (54 uncapped, no spills at 48)
 * fit five of the exponentiation's 256-item work-groups on an SM instead of
 * four, as CUDA's kernel (46): +0.7% on the H200 (docs/PERFORMANCE.md). */
void ocl_tf_program(const ocl_dev_desc *x, ocl_program_spec *out)
{
    static const char *const names[] = {"tf_fill", "tf_tables", "tf_prepare", "tf_segments", "tf_exponentiate"};
    memset(out, 0, sizeof *out);
    out->algo = "tf";
    out->source = lode_ocl_src_tf;
    snprintf(out->id, sizeof out->id, "tf");
    int n = ocl_device_options(x, out->options, sizeof out->options);
    if (x->caps & OCL_CAP_NV_OPTIONS)
        snprintf(out->options + n, sizeof out->options - (size_t)n, " -cl-nv-maxrregcount=48");
    for (size_t i = 0; i < COUNT(names); i++)
        out->kernels[out->n_kernels++] = names[i];
}

void ocl_tf_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx)
{
    ocl_program_spec spec;
    ocl_tf_program(x, &spec);
    spec.variant = NULL; /* one program for every variant */
    sink(ctx, &spec);
}

/* The program and its two table kernels (the spec's first two; the lanes
 * make the other three). */
static int build_program(ocl_tf *f, const ocl_dev_desc *desc)
{
    ocl_program_spec spec;
    ocl_tf_program(desc, &spec);
    const char *sources[1] = {spec.source};
    int rc = ocl_program_build(desc, f->ctx, f->label, sources, 1, spec.options, &f->prog);
    if (rc == LODE_OK && (rc = kernel(f, spec.kernels[0], &f->k_fill)) == LODE_OK)
        rc = kernel(f, spec.kernels[1], &f->k_tables);
    return rc;
}

/* The prime list (uploaded), the tables, the results and their host copy,
 * and tf_tables' buffer arguments. */
static int alloc_buffers(ocl_tf *f)
{
    int rc = buffer(f, f->want_primes * sizeof(uint32_t), &f->primes_dev);
    if (rc == LODE_OK)
        rc = buffer(f, LODE_TF_TABLES * (size_t)f->want_primes * sizeof(uint32_t), &f->tables);
    const size_t results = (size_t)DEPTH * f->batch * AREA_WORDS * sizeof(uint32_t);
    if (rc == LODE_OK)
        rc = buffer(f, results, &f->results);
    if (rc != LODE_OK)
        return rc;
    cl_int err = ocl_pinned_new(f->ctx, f->queue, results, &f->host);
    if (err != CL_SUCCESS)
        return fail(f, "allocating the host results", err);
    err = ocl.clEnqueueWriteBuffer(f->queue, f->primes_dev, CL_TRUE, 0, f->want_primes * sizeof(uint32_t),
                                   f->primes, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return fail(f, "uploading the sieve primes", err);
    cl_kernel k = f->k_tables;
    const cl_uint stride = f->want_primes;
    err = ocl.clSetKernelArg(k, 0, sizeof(cl_mem), &f->primes_dev);
    if (err == CL_SUCCESS)
        err = ocl.clSetKernelArg(k, 5, sizeof(cl_mem), &f->tables);
    if (err == CL_SUCCESS)
        err = ocl.clSetKernelArg(k, 6, sizeof stride, &stride);
    return err != CL_SUCCESS ? fail(f, "clSetKernelArg", err) : LODE_OK;
}

int ocl_tf_new(const ocl_dev_desc *desc, cl_context ctx, cl_command_queue queue, const char *label,
               ocl_tf **out)
{
    *out = NULL;
    ocl_tf *f = calloc(1, sizeof *f);
    if (f == NULL)
        return LODE_ERR_NO_MEMORY;
    f->label = label;
    f->ctx = ctx;
    f->queue = queue;
    configure(f, desc);
    int rc = LODE_OK;
    if ((f->primes = tf_sieve_primes(f->want_primes)) == NULL)
        rc = LODE_ERR_NO_MEMORY;
    for (int s = 0; s < DEPTH && rc == LODE_OK; s++)
        if ((f->launches[s].part = calloc(f->batch, sizeof(ocl_tf_part))) == NULL ||
            (f->profile && (f->launches[s].stage = calloc(f->batch, sizeof *f->launches[s].stage)) == NULL))
            rc = LODE_ERR_NO_MEMORY;
    if (rc == LODE_OK)
        rc = build_program(f, desc);
    if (rc == LODE_OK)
        rc = alloc_buffers(f);
    for (int q = 0; q < LANES && rc == LODE_OK; q++)
        rc = setup_lane(f, desc, &f->lanes[q], q == 0);
    if (rc != LODE_OK) {
        ocl_tf_free(f);
        return rc;
    }
    *out = f;
    return LODE_OK;
}

uint64_t ocl_tf_launch_size(const ocl_tf *f) { return (uint64_t)f->batch << f->launch_bits; }

unsigned ocl_tf_depth(const ocl_tf *f)
{
    (void)f;
    return DEPTH;
}

/* Copies device table i (tf_sieve_tables_verify's order) to out. */
static int read_table(void *ctx, int i, uint32_t *out, unsigned count)
{
    ocl_tf *f = ctx;
    _Static_assert(LODE_TF_TABLE_PRIME == 0 && LODE_TF_TABLE_INV == 1 && LODE_TF_TABLE_PMOD == 2 &&
                       LODE_TF_TABLE_SMOD == 3 && LODE_TF_TABLE_MINV == 4,
                   "the tables' buffer is in tf_sieve_tables_verify's order");
    const size_t offset = (size_t)i * f->want_primes * sizeof(uint32_t);
    cl_int err =
        ocl.clEnqueueReadBuffer(f->queue, f->tables, CL_TRUE, offset, count * sizeof(uint32_t), out, 0, NULL, NULL);
    return err == CL_SUCCESS ? LODE_OK : fail(f, "reading the sieve tables back", err);
}

/* LODE_TF_CHECK_TABLES=1 (tests): the device's tables must equal the
 * host's entry for entry. */
static int check_tables(ocl_tf *f, uint32_t p, const tf_sieve_plan *plan)
{
    char why[128] = "";
    int rc = tf_sieve_tables_verify(f->primes, f->want_primes, p, LODE_TF_OCL_SEG_BITS, plan, read_table, f, why,
                                    sizeof why);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "%s: tf: M%u: the device's sieve tables differ from the host's: %s", f->label, p,
                 why);
    return rc;
}

/* Builds exponent p's sieve tables on the device and sets the arguments
 * that depend on them. */
static int load_exponent(ocl_tf *f, uint32_t p)
{
    const tf_sieve_plan plan = tf_sieve_plan_of(f->primes, f->want_primes, p, LODE_TF_OCL_SEG_BITS);
    for (int q = 0; q < LANES; q++) /* no launch may still read the tables */
        TRY("clFinish", ocl.clFinish(f->lanes[q].queue));
    if (plan.count > 0) {
        const cl_uint count = plan.count, skip = plan.skip, pp = p, seg = LODE_TF_OCL_SEG_BITS;
        cl_kernel k = f->k_tables;
        ARG(k, 1, count);
        ARG(k, 2, skip);
        ARG(k, 3, pp);
        ARG(k, 4, seg);
        size_t global = count;
        TRY("tf_tables", ocl.clEnqueueNDRangeKernel(f->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        TRY("clFinish", ocl.clFinish(f->queue)); /* the other lane's queue reads them too */
    }
    f->n_all = plan.count;
    f->n_small = plan.n_small;
    if (lode_setting_flag(LODE_SETTING_TF_CHECK_TABLES)) {
        int rc = check_tables(f, p, &plan);
        if (rc != LODE_OK)
            return rc;
    }
    const cl_uint n_small = f->n_small, n_all = f->n_all;
    for (int q = 0; q < LANES; q++) {
        ARG(f->lanes[q].prepare, 2, n_small);
        ARG(f->lanes[q].prepare, 3, n_all);
        ARG(f->lanes[q].segments, 2, n_small);
        ARG(f->lanes[q].exp, 12, n_small);
        ARG(f->lanes[q].exp, 13, n_all);
    }
    f->exponent = p;
    return LODE_OK;
}

int ocl_tf_set_job(ocl_tf *f, const lode_tf_job *job)
{
    if (job->exponent != f->exponent) {
        f->exponent = 0;
        int rc = load_exponent(f, job->exponent);
        if (rc != LODE_OK)
            return rc;
    }
    const cl_uint cls = job->class_index, p = job->exponent, bit_max = job->bit_max;
    const cl_ulong mask_lo = lode_tf_report_mask_lo(job);
    const cl_uint mask_hi = lode_tf_report_mask_hi(job);
    for (int q = 0; q < LANES; q++) {
        ARG(f->lanes[q].prepare, 4, cls);
        ARG(f->lanes[q].exp, 4, p);
        ARG(f->lanes[q].exp, 5, cls);
        ARG(f->lanes[q].exp, 7, bit_max);
        ARG(f->lanes[q].exp, 8, mask_lo);
        ARG(f->lanes[q].exp, 9, mask_hi);
    }
    f->job = *job;
    return LODE_OK;
}

/* Queues sub-launch part (results to area) on lane l: its preparation
 * unless the lane's previous exponentiation did it (prepared), its sieve,
 * and its exponentiation, which prepares next (results to next_area) when
 * given; *ev (if given) marks the exponentiation's end. */
static int enqueue_part(ocl_tf *f, lane *l, const ocl_tf_part *part, cl_uint area, bool prepared,
                        const ocl_tf_part *next, cl_uint next_area, cl_event *ev, cl_event *stage)
{
    const cl_ulong start = part->n0;
    const cl_uint count = part->count;
    const cl_uint segments = (count + LODE_TF_OCL_SEG_BITS - 1) / LODE_TF_OCL_SEG_BITS;
    if (l->count_arg != count) {
        ARG(l->prepare, 6, count);
        ARG(l->segments, 3, count);
        l->count_arg = count;
    }
    size_t local, global;
    if (!prepared) {
        ARG(l->prepare, 5, start);
        ARG(l->prepare, 10, area);
        local = PREP_LOCAL;
        global = f->prep_items;
        TRY("tf_prepare", ocl.clEnqueueNDRangeKernel(l->queue, l->prepare, 1, NULL, &global, &local, 0, NULL,
                                                     stage ? &stage[STAGE_PREPARE] : NULL));
    }
    ARG(l->segments, 8, area);
    local = LODE_TF_OCL_SIEVE_LOCAL;
    global = (size_t)segments * LODE_TF_OCL_SIEVE_LOCAL;
    TRY("tf_segments", ocl.clEnqueueNDRangeKernel(l->queue, l->segments, 1, NULL, &global, &local, 0, NULL,
                                                  stage ? &stage[STAGE_SEGMENTS] : NULL));
    const cl_ulong next_n0 = next != NULL ? next->n0 : 0;
    const cl_uint next_count = next != NULL ? next->count : 0;
    ARG(l->exp, 3, area);
    ARG(l->exp, 6, start);
    ARG(l->exp, 15, next_n0);
    ARG(l->exp, 16, next_count);
    ARG(l->exp, 17, next_area);
    local = EXP_LOCAL;
    global = f->exp_items + (size_t)f->exp_prep_groups * EXP_LOCAL;
    cl_event *exp_ev = stage ? &stage[STAGE_EXP] : ev;
    TRY("tf_exponentiate", ocl.clEnqueueNDRangeKernel(l->queue, l->exp, 1, NULL, &global, &local, 0, NULL, exp_ev));
    if (stage != NULL && ev != NULL) { /* the profile's event also marks the lane's end */
        *ev = *exp_ev;
        TRY("clRetainEvent", ocl.clRetainEvent(*ev));
    }
    return LODE_OK;
}

int ocl_tf_enqueue(ocl_tf *f, uint64_t n0, uint64_t count)
{
    if (f->queued == DEPTH || count == 0 || count > ocl_tf_launch_size(f) || f->exponent == 0)
        return LODE_ERR_INVALID;
    const unsigned slot = (f->head + f->queued) % DEPTH;
    tf_launch *b = &f->launches[slot];
    release_events(b, f->batch);
    const uint64_t sub = (uint64_t)1 << f->launch_bits;
    const unsigned parts = (unsigned)((count + sub - 1) / sub);
    for (unsigned j = 0; j < parts; j++) {
        const uint64_t off = (uint64_t)j * sub;
        b->part[j].n0 = n0 + off;
        b->part[j].count = (uint32_t)(count - off < sub ? count - off : sub);
    }
    /* The lanes in turn, so part j + LANES follows part j on its lane: the
     * exponentiation of j prepares it. The last part on each lane keeps an
     * event. */
    unsigned last_lane = 0;
    for (unsigned j = 0; j < parts; j++) {
        const unsigned q = f->next_lane;
        f->next_lane = (f->next_lane + 1) % LANES;
        const bool prepared = j >= LANES, last_on_lane = j + LANES >= parts;
        const ocl_tf_part *next = last_on_lane ? NULL : &b->part[j + LANES];
        int rc = enqueue_part(f, &f->lanes[q], &b->part[j], slot * f->batch + j, prepared, next,
                              slot * f->batch + j + LANES, last_on_lane ? &b->kdone[q] : NULL,
                              b->stage ? b->stage[j] : NULL);
        if (rc != LODE_OK)
            return rc;
        last_lane = q;
    }
    /* One read-back of every area, on the last sub-launch's lane after the
     * other lane's last exponentiation too. */
    const cl_event *other = NULL;
    cl_uint nother = 0;
    for (unsigned q = 0; q < LANES; q++)
        if (q != last_lane && b->kdone[q] != NULL) {
            other = &b->kdone[q];
            nother = 1;
        }
    const size_t offset = (size_t)slot * f->batch * AREA_WORDS * sizeof(uint32_t);
    cl_command_queue rq = f->lanes[last_lane].queue;
    if (nother > 0) /* the other lane's work starts now, not after the read is queued */
        TRY("clFlush", ocl.clFlush(f->lanes[(last_lane + 1) % LANES].queue));
    TRY("reading the factors",
        ocl.clEnqueueReadBuffer(rq, f->results, CL_FALSE, offset, (size_t)parts * AREA_WORDS * sizeof(uint32_t),
                                (char *)f->host.ptr + offset, nother, other, &b->done));
    TRY("clFlush", ocl.clFlush(rq));
    b->n0 = n0;
    b->count = count;
    b->parts = parts;
    f->queued++;
    return LODE_OK;
}

int ocl_tf_ready(ocl_tf *f)
{
    if (f->queued == 0)
        return LODE_ERR_INVALID;
    const tf_launch *b = &f->launches[f->head];
    for (int q = 0; q < LANES; q++) {
        if (b->kdone[q] == NULL)
            continue;
        cl_int done = ocl_event_done(b->kdone[q]);
        if (done != 1)
            return done == 0 ? 0 : fail(f, "a launch", done);
    }
    return 1;
}

/* Adds a finished profiled launch's kernel times and survivors. */
static void profile_collect(ocl_tf *f, const tf_launch *b, const uint32_t *areas)
{
    for (unsigned j = 0; j < b->parts; j++) {
        for (int k = 0; k < STAGES; k++) {
            cl_ulong t0 = 0, t1 = 0;
            if (b->stage[j][k] != NULL &&
                ocl.clGetEventProfilingInfo(b->stage[j][k], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) ==
                    CL_SUCCESS &&
                ocl.clGetEventProfilingInfo(b->stage[j][k], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) ==
                    CL_SUCCESS &&
                t1 >= t0) {
                f->stage_ms[k] += (double)(t1 - t0) * 1e-6;
                f->stage_calls[k]++;
            }
        }
        f->prof_parts++;
        f->prof_indices += b->part[j].count;
        f->prof_survivors += areas[(size_t)j * AREA_WORDS];
    }
}

int ocl_tf_finish(ocl_tf *f, uint64_t *n0, uint64_t *count, const ocl_tf_part **parts, unsigned *nparts,
                  bool *overflow)
{
    if (f->queued == 0)
        return LODE_ERR_INVALID;
    const unsigned slot = f->head;
    tf_launch *b = &f->launches[slot];
    f->head = (f->head + 1) % DEPTH;
    f->queued--;
    cl_int err = ocl.clWaitForEvents(1, &b->done);
    const uint32_t *areas = (const uint32_t *)f->host.ptr + (size_t)slot * f->batch * AREA_WORDS;
    if (err == CL_SUCCESS && b->stage != NULL)
        profile_collect(f, b, areas);
    release_events(b, f->batch);
    if (err != CL_SUCCESS)
        return fail(f, "waiting for a launch", err);
    *overflow = false;
    for (unsigned j = 0; j < b->parts; j++) {
        const uint32_t *a = areas + (size_t)j * AREA_WORDS;
        ocl_tf_part *part = &b->part[j];
        part->nfound = a[1] > LODE_TF_FOUND_CAP ? LODE_TF_FOUND_CAP : a[1];
        part->found = a + 2;
        if (a[1] > LODE_TF_FOUND_CAP)
            *overflow = true;
    }
    *n0 = b->n0;
    *count = b->count;
    *parts = b->part;
    *nparts = b->parts;
    return LODE_OK;
}

void ocl_tf_discard(ocl_tf *f)
{
    for (int q = 0; q < LANES; q++)
        ocl.clFinish(f->lanes[q].queue);
    for (int s = 0; s < DEPTH; s++)
        release_events(&f->launches[s], f->batch);
    f->queued = 0;
}

/* ---- the backend's trial factoring: ocl_tf_ops ---------------------------- */

typedef struct tf_state {
    ocl_tf *engine;
    /* What the last wait returned: the launch's factors. */
    uint64_t n0, count;
    const ocl_tf_part *parts;
    unsigned nparts;
    bool overflow;
} tf_state;

static tf_state *state_of(void *ctx) { return ((lode_device *)ctx)->state; }

static int tf_variants(const ocl_dev_desc *x, const char **names, int max)
{
    (void)x;
    static const char *const list[] = {"gpusieve"};
    return ocl_take_variants(list, (int)COUNT(list), names, max);
}

static int tf_open(lode_device *d)
{
    tf_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    d->state = s;
    return ocl_tf_new(d->desc, d->ctx, d->queue, d->label, &s->engine);
}

static void tf_close(lode_device *d)
{
    tf_state *s = d->state;
    if (s == NULL)
        return;
    ocl_tf_free(s->engine);
    free(s);
}

static int tf_set_work(lode_device *d, const lode_work *work)
{
    return ocl_tf_set_job(state_of(d)->engine, &work->factor);
}

/* Launches of up to ocl_tf_launch_size() indices (a batch of sub-launches
 * over the engine's two queues), two in flight; the dispatcher re-checks
 * every factor with the reference. */
static int tf_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    (void)slot; /* the engine queues in turn */
    return ocl_tf_enqueue(state_of(ctx)->engine, start, count);
}

static int tf_query(void *ctx, unsigned slot)
{
    (void)slot;
    return ocl_tf_ready(state_of(ctx)->engine);
}

static int tf_wait(void *ctx, unsigned slot)
{
    tf_state *s = state_of(ctx);
    (void)slot;
    return ocl_tf_finish(s->engine, &s->n0, &s->count, &s->parts, &s->nparts, &s->overflow);
}

static int tf_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    const lode_device *d = ctx;
    const tf_state *s = state_of(ctx);
    (void)slot;
    if (s->n0 != start || s->count != count) {
        lode_log(LODE_LOG_ERROR, "%s: a trial-factoring launch out of order", d->label);
        return LODE_ERR_DEVICE;
    }
    if (s->overflow)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = LODE_OK;
    for (unsigned j = 0; j < s->nparts && rc == LODE_OK; j++) {
        const ocl_tf_part *part = &s->parts[j];
        rc = lode_collect_factor_offsets(d->label, part->n0, part->count, part->found, part->nfound, hits);
    }
    return rc;
}

static void tf_drain(void *ctx) { ocl_tf_discard(state_of(ctx)->engine); }

static lode_launch_engine tf_engine(lode_device *d)
{
    const tf_state *s = d->state;
    return (lode_launch_engine){.ctx = d, .depth = ocl_tf_depth(s->engine),
                                .launch_size = ocl_tf_launch_size(s->engine), .enqueue = tf_enqueue,
                                .query = tf_query, .wait = tf_wait, .collect = tf_collect, .drain = tf_drain};
}

/* The dispatcher measures from a launch. */
static uint64_t tf_preferred_chunk(lode_device *d, double target_ms)
{
    (void)target_ms;
    return ocl_tf_launch_size(state_of(d)->engine);
}

const ocl_algo_ops ocl_tf_ops = {
    .variants = tf_variants,
    .open = tf_open,
    .close = tf_close,
    .set_work = tf_set_work,
    .engine = tf_engine,
    .preferred_chunk = tf_preferred_chunk,
};
