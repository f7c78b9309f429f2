#include "backend-opencl/ocl_tf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_program.h"
#include "core/backend_support/tf_tables.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"

#define PREP_LOCAL 256u
#define EXP_LOCAL 256u
#define SLOTS 2

typedef struct slot {
    /* Each slot its own queue: one launch's sieve (atomics) runs beside the
     * other's exponentiation (multiplies) on devices that overlap queues. */
    cl_command_queue queue;
    cl_mem start, bits, cand, counts, found;
    uint32_t host[2 + LODE_TF_FOUND_CAP]; /* counts, then found */
    cl_event done;  /* the read-back */
    cl_event kdone; /* the last kernel (polled: the read-back may complete only in a wait) */
    uint64_t n0;
    uint32_t count;
} slot;

struct ocl_tf {
    const char *label;
    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel k_fill, k_prepare, k_segments, k_exp;
    unsigned want_primes, launch_bits;
    size_t exp_items;
    uint32_t *primes;
    cl_mem prime, inv, pmod, smod, minv;
    unsigned n_small, n_all;
    uint32_t exponent; /* whose tables are loaded (0: none) */
    lode_tf_job job;
    slot slots[SLOTS];
    unsigned head, queued;
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

void ocl_tf_free(ocl_tf *f)
{
    if (f == NULL)
        return;
    if (f->queue != NULL)
        ocl.clFinish(f->queue);
    for (int s = 0; s < SLOTS; s++) {
        slot *b = &f->slots[s];
        if (b->done != NULL)
            ocl.clReleaseEvent(b->done);
        if (b->kdone != NULL)
            ocl.clReleaseEvent(b->kdone);
        if (b->queue != NULL) {
            ocl.clFinish(b->queue);
            if (b->queue != f->queue)
                ocl.clReleaseCommandQueue(b->queue);
        }
        cl_mem mems[] = {b->start, b->bits, b->cand, b->counts, b->found};
        for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
            if (mems[i] != NULL)
                ocl.clReleaseMemObject(mems[i]);
    }
    cl_mem mems[] = {f->prime, f->inv, f->pmod, f->smod, f->minv};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (mems[i] != NULL)
            ocl.clReleaseMemObject(mems[i]);
    cl_kernel ks[] = {f->k_fill, f->k_prepare, f->k_segments, f->k_exp};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i] != NULL)
            ocl.clReleaseKernel(ks[i]);
    if (f->prog != NULL)
        ocl.clReleaseProgram(f->prog);
    free(f->primes);
    free(f);
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
    const bool cpu = (desc->type & CL_DEVICE_TYPE_CPU) != 0;
    f->want_primes = lode_setting_unsigned_in(LODE_SETTING_TF_SIEVE_PRIMES, cpu ? 20000 : 1000000, 14, 2000000);
    f->launch_bits = lode_setting_unsigned_in(LODE_SETTING_TF_LAUNCH_BITS, cpu ? 20 : 26, 17, 28);
    f->exp_items = (size_t)(desc->compute_units ? desc->compute_units : 1) * (cpu ? 64 : 2048);
    f->exp_items = (f->exp_items + EXP_LOCAL - 1) / EXP_LOCAL * EXP_LOCAL;
    const size_t launch = (size_t)1 << f->launch_bits;
    int rc = LODE_OK;
    if ((f->primes = tf_first_primes(f->want_primes)) == NULL)
        rc = LODE_ERR_NO_MEMORY;
    if (rc == LODE_OK) {
        const char *sources[1] = {lode_ocl_src_tf};
        /* NVIDIA's compiler takes inline PTX: the squaring's carry chains. */
        const char *options = desc->caps & OCL_CAP_NV_SHFL ? "-cl-std=CL1.2 -D LODE_NV_PTX=1" : "-cl-std=CL1.2";
        rc = ocl_program_build(desc, ctx, label, sources, 1, options, &f->prog);
    }
    const char *names[] = {"tf_fill", "tf_prepare", "tf_segments", "tf_exponentiate"};
    cl_kernel *ks[] = {&f->k_fill, &f->k_prepare, &f->k_segments, &f->k_exp};
    for (int i = 0; i < 4 && rc == LODE_OK; i++) {
        cl_int err = CL_SUCCESS;
        *ks[i] = ocl.clCreateKernel(f->prog, names[i], &err);
        if (*ks[i] == NULL || err != CL_SUCCESS) {
            *ks[i] = NULL;
            rc = fail(f, names[i], err);
        }
    }
    cl_mem *tables[] = {&f->prime, &f->inv, &f->pmod, &f->smod, &f->minv};
    for (int i = 0; i < 5 && rc == LODE_OK; i++)
        rc = buffer(f, f->want_primes * sizeof(uint32_t), tables[i]);
    for (int s = 0; s < SLOTS && rc == LODE_OK; s++) {
        slot *b = &f->slots[s];
        b->queue = queue;
        if (s > 0) {
            cl_int err = CL_SUCCESS;
            b->queue = ocl.clCreateCommandQueue(ctx, desc->id, 0, &err);
            if (b->queue == NULL || err != CL_SUCCESS) {
                b->queue = NULL;
                rc = fail(f, "clCreateCommandQueue", err);
                break;
            }
        }
        if ((rc = buffer(f, f->want_primes * sizeof(uint32_t), &b->start)) == LODE_OK &&
            (rc = buffer(f, launch / 8, &b->bits)) == LODE_OK &&
            (rc = buffer(f, launch * sizeof(uint32_t), &b->cand)) == LODE_OK &&
            (rc = buffer(f, 2 * sizeof(uint32_t), &b->counts)) == LODE_OK)
            rc = buffer(f, LODE_TF_FOUND_CAP * sizeof(uint32_t), &b->found);
    }
    if (rc != LODE_OK) {
        ocl_tf_free(f);
        return rc;
    }
    *out = f;
    return LODE_OK;
}

uint64_t ocl_tf_launch_size(const ocl_tf *f) { return (uint64_t)1 << f->launch_bits; }

unsigned ocl_tf_depth(const ocl_tf *f)
{
    (void)f;
    return SLOTS;
}

static int load_exponent(ocl_tf *f, uint32_t p)
{
    tf_sieve_tables t;
    if (tf_sieve_tables_build(f->primes, f->want_primes, p, LODE_TF_OCL_SEG_BITS, &t) != 0)
        return LODE_ERR_NO_MEMORY;
    for (int s = 0; s < SLOTS; s++) /* no launch may still read the tables */
        ocl.clFinish(f->slots[s].queue);
    const uint32_t *src[] = {t.prime, t.inv, t.pmod, t.smod, t.minv};
    cl_mem dst[] = {f->prime, f->inv, f->pmod, f->smod, f->minv};
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 5 && err == CL_SUCCESS && t.count > 0; i++)
        err = ocl.clEnqueueWriteBuffer(f->queue, dst[i], CL_TRUE, 0, t.count * sizeof(uint32_t), src[i], 0,
                                       NULL, NULL);
    f->n_all = t.count;
    f->n_small = t.n_small;
    tf_sieve_tables_free(&t);
    if (err != CL_SUCCESS)
        return fail(f, "uploading the sieve tables", err);
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
    f->job = *job;
    return LODE_OK;
}

static int fill(ocl_tf *f, cl_command_queue queue, cl_mem buf, size_t words, cl_uint value)
{
    ARG(f->k_fill, 0, buf);
    ARG(f->k_fill, 1, value);
    TRY("tf_fill", ocl.clEnqueueNDRangeKernel(queue, f->k_fill, 1, NULL, &words, NULL, 0, NULL, NULL));
    return LODE_OK;
}

int ocl_tf_enqueue(ocl_tf *f, uint64_t n0, uint32_t count)
{
    if (f->queued == SLOTS || count == 0 || count > ocl_tf_launch_size(f) || f->exponent == 0)
        return LODE_ERR_INVALID;
    slot *b = &f->slots[(f->head + f->queued) % SLOTS];
    const lode_tf_job *j = &f->job;
    const cl_uint segments = (count + LODE_TF_OCL_SEG_BITS - 1) / LODE_TF_OCL_SEG_BITS;
    const cl_uint ones = 0xFFFFFFFFu, zero = 0;
    cl_command_queue queue = b->queue;
    int rc = fill(f, queue, b->bits, (size_t)segments * LODE_TF_OCL_SEG_BITS / 32, ones);
    if (rc == LODE_OK)
        rc = fill(f, queue, b->counts, 2, zero);
    if (rc != LODE_OK)
        return rc;
    const cl_uint n_small = f->n_small, n_all = f->n_all, cls = j->class_index, cnt = count, p = j->exponent,
                  bit_max = j->bit_max;
    const cl_ulong start = n0;
    cl_kernel k = f->k_prepare;
    ARG(k, 0, f->prime);
    ARG(k, 1, f->inv);
    ARG(k, 2, f->pmod);
    ARG(k, 3, n_small);
    ARG(k, 4, n_all);
    ARG(k, 5, cls);
    ARG(k, 6, start);
    ARG(k, 7, cnt);
    ARG(k, 8, b->start);
    ARG(k, 9, b->bits);
    size_t local = PREP_LOCAL, global = (n_all + PREP_LOCAL - 1) / PREP_LOCAL * PREP_LOCAL;
    TRY("tf_prepare", ocl.clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    k = f->k_segments;
    ARG(k, 0, f->prime);
    ARG(k, 1, b->start);
    ARG(k, 2, f->smod);
    ARG(k, 3, f->minv);
    ARG(k, 4, n_small);
    ARG(k, 5, cnt);
    ARG(k, 6, b->bits);
    ARG(k, 7, b->cand);
    ARG(k, 8, b->counts);
    local = LODE_TF_OCL_SIEVE_LOCAL;
    global = (size_t)segments * LODE_TF_OCL_SIEVE_LOCAL;
    TRY("tf_segments", ocl.clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    k = f->k_exp;
    ARG(k, 0, b->cand);
    ARG(k, 1, b->counts);
    ARG(k, 2, p);
    ARG(k, 3, cls);
    ARG(k, 4, start);
    ARG(k, 5, bit_max);
    ARG(k, 6, b->found);
    local = EXP_LOCAL;
    global = f->exp_items;
    if (b->kdone != NULL) {
        ocl.clReleaseEvent(b->kdone);
        b->kdone = NULL;
    }
    TRY("tf_exponentiate", ocl.clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, &b->kdone));
    TRY("reading the counts", ocl.clEnqueueReadBuffer(queue, b->counts, CL_FALSE, 0, 2 * sizeof(uint32_t),
                                                      b->host, 0, NULL, NULL));
    TRY("reading the factors", ocl.clEnqueueReadBuffer(queue, b->found, CL_FALSE, 0,
                                                       LODE_TF_FOUND_CAP * sizeof(uint32_t), b->host + 2, 0,
                                                       NULL, &b->done));
    TRY("clFlush", ocl.clFlush(queue));
    b->n0 = n0;
    b->count = count;
    f->queued++;
    return LODE_OK;
}

int ocl_tf_ready(ocl_tf *f)
{
    if (f->queued == 0)
        return LODE_ERR_INVALID;
    cl_int done = ocl_event_done(f->slots[f->head].kdone);
    return done >= 0 ? done : fail(f, "a launch", done);
}

int ocl_tf_finish(ocl_tf *f, uint64_t *n0, uint32_t *count, const uint32_t **found,
                      uint32_t *found_count, bool *overflow)
{
    if (f->queued == 0)
        return LODE_ERR_INVALID;
    slot *b = &f->slots[f->head];
    f->head = (f->head + 1) % SLOTS;
    f->queued--;
    cl_int err = ocl.clWaitForEvents(1, &b->done);
    ocl.clReleaseEvent(b->done);
    b->done = NULL;
    if (err != CL_SUCCESS)
        return fail(f, "waiting for a launch", err);
    *n0 = b->n0;
    *count = b->count;
    *overflow = b->host[1] > LODE_TF_FOUND_CAP;
    *found_count = *overflow ? LODE_TF_FOUND_CAP : b->host[1];
    *found = b->host + 2;
    return LODE_OK;
}

void ocl_tf_discard(ocl_tf *f)
{
    for (int s = 0; s < SLOTS; s++)
        ocl.clFinish(f->slots[s].queue);
    for (int s = 0; s < SLOTS; s++)
        if (f->slots[s].done != NULL) {
            ocl.clReleaseEvent(f->slots[s].done);
            f->slots[s].done = NULL;
        }
    f->queued = 0;
}
