/* Momentum on an OpenCL device: the engine of ocl_momentum.h over
 * kernels/momentum.cl, and the backend's ocl_momentum_ops over it. */
#include "backend-opencl/ocl_momentum.h"
#include "core/base/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_internal.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/momentum_batch.h"
#include "core/base/log.h"
#include "core/base/status.h"

#define LOCAL 256u
#define LIST_TABLE_BITS 26
#define LIST_ROUNDS 4
#define LIST_GROUPS 1024u
#define ENTRY 16u /* ulong2: birthday, nonce */
/* Bucket method (kernels/momentum.cl): LODE_MOM_NBUCKETS buckets of
 * LODE_MOM_BK_CAP slots (kernel_params.h). */
#define BK_LOCAL 256u
#define BK_LOCAL_BYTES (32768u + 8192u + 4u) /* table, survivors, their count */
#define SLOTS 2          /* bucket launches in flight */
/* A bucket sweep's area of the results buffer (kernels/momentum.cl): its
 * flags, then HOST_CAP entries, all read back (more entries: a redo). */
#define HOST_CAP 1024u
#define AREA_ENTRIES (1u + HOST_CAP)

static const uint64_t mixers[1 + LIST_ROUNDS] = {
    0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull,
    0xFF51AFD7ED558CCDull};

struct ocl_momentum {
    const char *label;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel k_clear, k_hash, k_keep_all, k_count_list, k_keep_list, k_hash_bucket, k_bucket_find;
    cl_mem B, table, list_table, list[2], counts;
    cl_mem store, bcount, results; /* bucket method: results has SLOTS x batch areas */
    ocl_pinned res_host;           /* their copy */
    bool bucket;                   /* the bucket method (else the filter) */
    bool bcount_dirty;             /* a launch was half queued: clear the counters again */
    unsigned bucket_cap, redos, batch;
    cl_context ctx;
    const ocl_dev_desc *desc;
    /* Launch k uses slot k % SLOTS (one at a time for the filter). */
    unsigned queued, finished, last_slot;
    momentum_consts *job[SLOTS]; /* batch each */
    unsigned sweeps[SLOTS];
    cl_event ev[SLOTS];  /* a bucket launch's read-back */
    cl_event kev[SLOTS]; /* its last kernel (polled: the read-back may complete only in a wait) */
    unsigned table_bits;
    momentum_entry *host;
    size_t host_cap;
};

static int fail(const ocl_momentum *m, const char *what, cl_int err)
{
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: momentum: %s failed: %s", m->label, what, ocl_error_name(err, buf));
    return ocl_status(err);
}

#define TRY(what, call)                                                                            \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS)                                                                    \
            return fail(m, (what), err_);                                                          \
    } while (0)

void ocl_momentum_free(ocl_momentum *m)
{
    if (m == NULL)
        return;
    if (m->queue != NULL)
        ocl.clFinish(m->queue);
    for (int k = 0; k < SLOTS; k++) {
        if (m->ev[k] != NULL)
            ocl.clReleaseEvent(m->ev[k]);
        if (m->kev[k] != NULL)
            ocl.clReleaseEvent(m->kev[k]);
        free(m->job[k]);
    }
    if (m->res_host.ptr != NULL)
        ocl_pinned_free(&m->res_host, m->queue);
    if (m->redos > 0)
        lode_log(LODE_LOG_INFO, "%s: momentum: %u sweep(s) redone with the filter", m->label, m->redos);
    cl_kernel ks[] = {m->k_clear,      m->k_hash,        m->k_keep_all,   m->k_count_list,
                      m->k_keep_list, m->k_hash_bucket, m->k_bucket_find};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i] != NULL)
            ocl.clReleaseKernel(ks[i]);
    cl_mem mems[] = {m->B,      m->table,     m->list_table, m->list[0], m->list[1],
                     m->counts, m->store,     m->bcount,     m->results};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (mems[i] != NULL)
            ocl.clReleaseMemObject(mems[i]);
    if (m->prog != NULL)
        ocl.clReleaseProgram(m->prog);
    free(m->host);
    free(m);
}

#define ARG(k, i, v) TRY("clSetKernelArg", ocl.clSetKernelArg((k), (i), sizeof(v), &(v)))

static int clear(ocl_momentum *m, cl_mem buf, size_t bytes);

static int buffer(ocl_momentum *m, cl_context ctx, size_t size, cl_mem *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        return fail(m, "allocating a buffer", err);
    }
    return LODE_OK;
}

static int kernel(ocl_momentum *m, const char *name, cl_kernel *out)
{
    cl_int err = CL_SUCCESS;
    *out = ocl.clCreateKernel(m->prog, name, &err);
    if (*out == NULL || err != CL_SUCCESS) {
        *out = NULL;
        return fail(m, name, err);
    }
    return LODE_OK;
}

/* The filter method's buffers (the bucket method makes them on its first
 * redo). Table: 2^27 counters (32 MiB, L2-sized on an H100, as CUDA's;
 * a 2^30 table is the textbook size), fewer where memory or the largest buffer is
 * short; LODE_MOMENTUM_TABLE_BITS overrides. */
static int setup_filter(ocl_momentum *m)
{
    const ocl_dev_desc *desc = m->desc;
    unsigned bits = lode_setting_unsigned(LODE_SETTING_MOMENTUM_TABLE_BITS);
    const uint64_t fixed = (uint64_t)LODE_MOM_NONCES * 8 + 2 * (uint64_t)LODE_MOM_NONCES * ENTRY + (UINT64_C(1) << LIST_TABLE_BITS) / 4;
    while (bits > 24 && (fixed + (UINT64_C(1) << bits) / 4 > desc->global_mem * 0.8 ||
                         (UINT64_C(1) << bits) / 4 > desc->max_alloc))
        bits--;
    m->table_bits = bits;
    int rc = buffer(m, m->ctx, (size_t)LODE_MOM_NONCES * 8, &m->B);
    if (rc == LODE_OK)
        rc = buffer(m, m->ctx, ((size_t)1 << bits) / 4, &m->table);
    if (rc == LODE_OK)
        rc = buffer(m, m->ctx, ((size_t)1 << LIST_TABLE_BITS) / 4, &m->list_table);
    for (int i = 0; i < 2 && rc == LODE_OK; i++)
        rc = buffer(m, m->ctx, (size_t)LODE_MOM_NONCES * ENTRY, &m->list[i]);
    return rc;
}

bool ocl_momentum_bucket_fits(const ocl_dev_desc *desc)
{
    return desc->local_mem >= BK_LOCAL_BYTES + 256 && desc->max_work_group >= BK_LOCAL &&
           (uint64_t)LODE_MOM_NBUCKETS * LODE_MOM_BK_CAP * 8 <= desc->max_alloc;
}

/* One program serves both variants. The vendor id and AMD's media ops as
 * every program gets them; not NVIDIA's inline PTX, which the SHA-512
 * code was never measured with. */
void ocl_momentum_program(const ocl_dev_desc *x, ocl_program_spec *out)
{
    static const char *const names[] = {"mom_clear",     "mom_hash",        "mom_keep_all",   "mom_count_list",
                                        "mom_keep_list", "mom_hash_bucket", "mom_bucket_find"};
    memset(out, 0, sizeof *out);
    out->algo = "momentum";
    out->source = lode_ocl_src_momentum;
    snprintf(out->id, sizeof out->id, "momentum");
    ocl_dev_desc no_ptx = *x;
    no_ptx.caps &= ~(unsigned)OCL_CAP_NV_SHFL;
    ocl_device_options(&no_ptx, out->options, sizeof out->options);
    for (size_t i = 0; i < COUNT(names); i++)
        out->kernels[out->n_kernels++] = names[i];
}

void ocl_momentum_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx)
{
    ocl_program_spec spec;
    ocl_momentum_program(x, &spec);
    sink(ctx, &spec);
}

static int setup(ocl_momentum *m, const ocl_dev_desc *desc, cl_context ctx)
{
    ocl_program_spec spec;
    ocl_momentum_program(desc, &spec);
    const char *sources[1] = {spec.source};
    int rc = ocl_program_build(desc, ctx, m->label, sources, 1, spec.options, &m->prog);
    cl_kernel *ks[] = {&m->k_clear,     &m->k_hash,        &m->k_keep_all,   &m->k_count_list,
                       &m->k_keep_list, &m->k_hash_bucket, &m->k_bucket_find};
    _Static_assert(COUNT(ks) <= OCL_PROGRAM_MAX_KERNELS, "kernels");
    for (int i = 0; i < spec.n_kernels && rc == LODE_OK; i++)
        rc = kernel(m, spec.kernels[i], ks[i]);
    if (rc == LODE_OK)
        rc = buffer(m, ctx, 64, &m->counts);
    m->batch = m->bucket ? lode_setting_unsigned(LODE_SETTING_MOMENTUM_BATCH) : 1;
    if (m->batch > OCL_MOMENTUM_BATCH_MAX)
        m->batch = OCL_MOMENTUM_BATCH_MAX;
    for (int k = 0; k < SLOTS && rc == LODE_OK; k++)
        if ((m->job[k] = malloc(m->batch * sizeof(momentum_consts))) == NULL)
            rc = LODE_ERR_NO_MEMORY;
    if (rc != LODE_OK || !m->bucket)
        return rc == LODE_OK ? setup_filter(m) : rc;
    /* LODE_MOMENTUM_BUCKET_CAP (tests): fewer slots, to force redos. */
    m->bucket_cap = lode_setting_unsigned_in(LODE_SETTING_MOMENTUM_BUCKET_CAP, LODE_MOM_BK_CAP, 64, LODE_MOM_BK_CAP);
    const size_t results = (size_t)SLOTS * m->batch * AREA_ENTRIES * ENTRY;
    rc = buffer(m, ctx, (size_t)LODE_MOM_NBUCKETS * m->bucket_cap * 8, &m->store);
    if (rc == LODE_OK)
        rc = buffer(m, ctx, (size_t)LODE_MOM_NBUCKETS * 4, &m->bcount);
    if (rc == LODE_OK)
        rc = buffer(m, ctx, results, &m->results);
    if (rc == LODE_OK) {
        cl_int err = ocl_pinned_new(ctx, m->queue, results, &m->res_host);
        if (err != CL_SUCCESS)
            rc = fail(m, "allocating the host results", err);
    }
    /* The counters start clean; mom_bucket_find keeps them so. */
    if (rc == LODE_OK && (rc = clear(m, m->bcount, (size_t)LODE_MOM_NBUCKETS * 4)) == LODE_OK)
        TRY("clFinish", ocl.clFinish(m->queue));
    if (rc != LODE_OK)
        return rc;
    /* The arguments that never change. */
    const cl_uint cap = m->bucket_cap, out_cap = HOST_CAP;
    ARG(m->k_hash_bucket, 5, m->store);
    ARG(m->k_hash_bucket, 6, m->bcount);
    ARG(m->k_hash_bucket, 7, cap);
    ARG(m->k_hash_bucket, 8, m->results);
    ARG(m->k_hash_bucket, 10, out_cap);
    ARG(m->k_bucket_find, 0, m->store);
    ARG(m->k_bucket_find, 1, m->bcount);
    ARG(m->k_bucket_find, 2, cap);
    ARG(m->k_bucket_find, 3, m->results);
    ARG(m->k_bucket_find, 5, out_cap);
    return LODE_OK;
}

int ocl_momentum_new(const ocl_dev_desc *desc, cl_context ctx, cl_command_queue queue,
                     const char *label, bool bucket, ocl_momentum **out)
{
    ocl_momentum *m = calloc(1, sizeof *m);
    if (m == NULL)
        return LODE_ERR_NO_MEMORY;
    m->label = label;
    m->queue = queue;
    m->ctx = ctx;
    m->desc = desc;
    m->bucket = bucket && ocl_momentum_bucket_fits(desc);
    int rc = setup(m, desc, ctx);
    if (rc != LODE_OK) {
        ocl_momentum_free(m);
        return rc;
    }
    *out = m;
    return LODE_OK;
}

static int clear(ocl_momentum *m, cl_mem buf, size_t bytes)
{
    TRY("clSetKernelArg", ocl.clSetKernelArg(m->k_clear, 0, sizeof buf, &buf));
    size_t global = bytes / 16, local = 64;
    if (global < local)
        local = global;
    TRY("mom_clear", ocl.clEnqueueNDRangeKernel(m->queue, m->k_clear, 1, NULL, &global, &local, 0, NULL, NULL));
    return LODE_OK;
}

static int read_list(ocl_momentum *m, cl_mem buf, size_t n, momentum_entry **list, size_t *count)
{
    if (n > m->host_cap) {
        momentum_entry *grown = realloc(m->host, n * sizeof *grown);
        if (grown == NULL)
            return LODE_ERR_NO_MEMORY;
        m->host = grown;
        m->host_cap = n;
    }
    if (n > 0)
        TRY("reading the survivors",
            ocl.clEnqueueReadBuffer(m->queue, buf, CL_TRUE, 0, n * ENTRY, m->host, 0, NULL, NULL));
    *list = m->host;
    *count = n;
    return LODE_OK;
}

static int sweep_filter(ocl_momentum *m, const momentum_consts *c, momentum_entry **list, size_t *count);

/* Queues a launch of n bucket sweeps into slot: two kernels each, then one
 * read-back of their areas into the host copy, ev[slot] marking its end. */
static int enqueue_bucket(ocl_momentum *m, const momentum_consts *c, unsigned n, unsigned slot)
{
    if (m->bcount_dirty) {
        int rc = clear(m, m->bcount, (size_t)LODE_MOM_NBUCKETS * 4);
        if (rc != LODE_OK)
            return rc;
        m->bcount_dirty = false;
    }
    if (m->kev[slot] != NULL) {
        ocl.clReleaseEvent(m->kev[slot]);
        m->kev[slot] = NULL;
    }
    m->bcount_dirty = true; /* until every sweep's find is queued */
    for (unsigned j = 0; j < n; j++) {
        const cl_ulong w[5] = {c[j].w0_low, c[j].w1, c[j].w2, c[j].w3, c[j].w4};
        const cl_uint area = slot * m->batch + j;
        for (cl_uint i = 0; i < 5; i++)
            ARG(m->k_hash_bucket, i, w[i]);
        ARG(m->k_hash_bucket, 9, area);
        ARG(m->k_bucket_find, 4, area);
        size_t global = LODE_MOM_NBASES, local = LOCAL;
        TRY("mom_hash_bucket",
            ocl.clEnqueueNDRangeKernel(m->queue, m->k_hash_bucket, 1, NULL, &global, &local, 0, NULL, NULL));
        global = (size_t)LODE_MOM_NBUCKETS * BK_LOCAL;
        local = BK_LOCAL;
        TRY("mom_bucket_find", ocl.clEnqueueNDRangeKernel(m->queue, m->k_bucket_find, 1, NULL, &global, &local, 0,
                                                          NULL, j + 1 == n ? &m->kev[slot] : NULL));
    }
    m->bcount_dirty = false;
    const size_t offset = (size_t)slot * m->batch * AREA_ENTRIES * ENTRY;
    TRY("reading the pairs", ocl.clEnqueueReadBuffer(m->queue, m->results, CL_FALSE, offset,
                                                     (size_t)n * AREA_ENTRIES * ENTRY, (char *)m->res_host.ptr + offset,
                                                     0, NULL, &m->ev[slot]));
    TRY("clFlush", ocl.clFlush(m->queue));
    return LODE_OK;
}

unsigned ocl_momentum_depth(const ocl_momentum *m)
{
    return m->bucket ? SLOTS : 1;
}

unsigned ocl_momentum_batch(const ocl_momentum *m) { return m->batch; }

int ocl_momentum_enqueue(ocl_momentum *m, const momentum_consts *c, unsigned n)
{
    if (m->queued - m->finished >= ocl_momentum_depth(m) || n == 0 || n > m->batch)
        return LODE_ERR_INVALID;
    const unsigned slot = m->queued % SLOTS;
    memcpy(m->job[slot], c, n * sizeof *c);
    m->sweeps[slot] = n;
    int rc = m->bucket ? enqueue_bucket(m, c, n, slot) : LODE_OK; /* the filter runs in ocl_momentum_sweep */
    if (rc == LODE_OK)
        m->queued++;
    return rc;
}

int ocl_momentum_ready(ocl_momentum *m)
{
    if (m->queued == m->finished)
        return LODE_ERR_INVALID;
    if (!m->bucket)
        return 1;
    cl_int done = ocl_event_done(m->kev[m->finished % SLOTS]);
    return done >= 0 ? done : fail(m, "a sweep", done);
}

int ocl_momentum_finish(ocl_momentum *m, unsigned *n)
{
    if (m->queued == m->finished)
        return LODE_ERR_INVALID;
    const unsigned slot = m->finished++ % SLOTS;
    m->last_slot = slot;
    *n = m->sweeps[slot];
    if (!m->bucket)
        return LODE_OK;
    cl_int err = ocl.clWaitForEvents(1, &m->ev[slot]);
    ocl.clReleaseEvent(m->ev[slot]);
    m->ev[slot] = NULL;
    if (err != CL_SUCCESS) {
        m->sweeps[slot] = 0;
        return fail(m, "waiting for a sweep", err);
    }
    return LODE_OK;
}

int ocl_momentum_sweep(ocl_momentum *m, unsigned j, momentum_entry **list, size_t *count)
{
    const unsigned slot = m->last_slot;
    if (j >= m->sweeps[slot])
        return LODE_ERR_INVALID;
    if (!m->bucket)
        return sweep_filter(m, &m->job[slot][j], list, count);
    momentum_entry *area = (momentum_entry *)m->res_host.ptr + ((size_t)slot * m->batch + j) * AREA_ENTRIES;
    uint32_t flags[2];
    memcpy(flags, area, sizeof flags);
    if (flags[1] != 0 || flags[0] > HOST_CAP) {
        /* A bucket, a local list or the area's list overflowed: redo the
         * sweep exactly with the filter (its buffers made on the first). */
        m->redos++;
        int rc;
        if (m->B == NULL && (rc = setup_filter(m)) != LODE_OK)
            return rc;
        return sweep_filter(m, &m->job[slot][j], list, count);
    }
    *list = area + 1;
    *count = flags[0];
    return LODE_OK;
}

void ocl_momentum_discard(ocl_momentum *m)
{
    ocl.clFinish(m->queue);
    for (int k = 0; k < SLOTS; k++)
        if (m->ev[k] != NULL) {
            ocl.clReleaseEvent(m->ev[k]);
            m->ev[k] = NULL;
        }
    m->finished = m->queued;
}

static int sweep_filter(ocl_momentum *m, const momentum_consts *c, momentum_entry **list, size_t *count)
{
    static const uint32_t zeros[1 + LIST_ROUNDS];
    TRY("clearing the counts", ocl.clEnqueueWriteBuffer(m->queue, m->counts, CL_FALSE, 0, sizeof zeros,
                                                        zeros, 0, NULL, NULL));
    int rc = clear(m, m->table, ((size_t)1 << m->table_bits) / 4);
    if (rc != LODE_OK)
        return rc;
    cl_uint shift = 64 - m->table_bits, list_shift = 64 - LIST_TABLE_BITS;
    cl_ulong mixer = mixers[0];
    cl_ulong w[5] = {c->w0_low, c->w1, c->w2, c->w3, c->w4};
    for (cl_uint i = 0; i < 5; i++)
        ARG(m->k_hash, i, w[i]);
    ARG(m->k_hash, 5, m->B);
    ARG(m->k_hash, 6, m->table);
    ARG(m->k_hash, 7, mixer);
    ARG(m->k_hash, 8, shift);
    size_t global = LODE_MOM_NBASES, local = LOCAL;
    TRY("mom_hash", ocl.clEnqueueNDRangeKernel(m->queue, m->k_hash, 1, NULL, &global, &local, 0, NULL, NULL));
    ARG(m->k_keep_all, 0, m->B);
    ARG(m->k_keep_all, 1, m->table);
    ARG(m->k_keep_all, 2, mixer);
    ARG(m->k_keep_all, 3, shift);
    ARG(m->k_keep_all, 4, m->list[0]);
    ARG(m->k_keep_all, 5, m->counts);
    global = LODE_MOM_NONCES;
    TRY("mom_keep_all", ocl.clEnqueueNDRangeKernel(m->queue, m->k_keep_all, 1, NULL, &global, &local, 0, NULL, NULL));
    for (unsigned r = 1; r <= LIST_ROUNDS; r++) {
        rc = clear(m, m->list_table, ((size_t)1 << LIST_TABLE_BITS) / 4);
        if (rc != LODE_OK)
            return rc;
        cl_mem in = m->list[(r - 1) & 1], out = m->list[r & 1];
        cl_ulong mx = mixers[r];
        cl_uint round = r;
        size_t g = (size_t)LIST_GROUPS * LOCAL;
        ARG(m->k_count_list, 0, in);
        ARG(m->k_count_list, 1, m->counts);
        ARG(m->k_count_list, 2, round);
        ARG(m->k_count_list, 3, m->list_table);
        ARG(m->k_count_list, 4, mx);
        ARG(m->k_count_list, 5, list_shift);
        TRY("mom_count_list", ocl.clEnqueueNDRangeKernel(m->queue, m->k_count_list, 1, NULL, &g, &local, 0, NULL, NULL));
        ARG(m->k_keep_list, 0, in);
        ARG(m->k_keep_list, 1, m->counts);
        ARG(m->k_keep_list, 2, round);
        ARG(m->k_keep_list, 3, m->list_table);
        ARG(m->k_keep_list, 4, mx);
        ARG(m->k_keep_list, 5, list_shift);
        ARG(m->k_keep_list, 6, out);
        TRY("mom_keep_list", ocl.clEnqueueNDRangeKernel(m->queue, m->k_keep_list, 1, NULL, &g, &local, 0, NULL, NULL));
    }
    /* The last round's survivors: the count, then the entries. */
    uint32_t counts[1 + LIST_ROUNDS];
    TRY("reading the counts", ocl.clEnqueueReadBuffer(m->queue, m->counts, CL_TRUE, 0, sizeof counts,
                                                      counts, 0, NULL, NULL));
    return read_list(m, m->list[LIST_ROUNDS & 1], counts[LIST_ROUNDS], list, count);
}

/* ---- the backend's Momentum: ocl_momentum_ops ----------------------------- */

typedef struct momentum_state {
    ocl_momentum *engine;
    momentum_batch batch; /* the last finished launch's candidates, per sweep */
    unsigned sweeps;      /* that launch's sweeps */
    uint8_t header[80];
    lode_u256 target;
} momentum_state;

static momentum_state *state_of(void *ctx) { return ((lode_device *)ctx)->state; }

static int momentum_variants(const ocl_dev_desc *x, const char **names, int max)
{
    const char *list[2];
    int n = 0;
    if (ocl_momentum_bucket_fits(x))
        list[n++] = "bucket";
    list[n++] = "filter";
    return ocl_take_variants(list, n, names, max);
}

static int momentum_open(lode_device *d)
{
    momentum_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return LODE_ERR_NO_MEMORY;
    d->state = s;
    int rc = momentum_batch_init(&s->batch, OCL_MOMENTUM_BATCH_MAX);
    if (rc != LODE_OK)
        return rc;
    return ocl_momentum_new(d->desc, d->ctx, d->queue, d->label, strcmp(d->variant, "bucket") == 0, &s->engine);
}

static void momentum_close(lode_device *d)
{
    momentum_state *s = d->state;
    if (s == NULL)
        return;
    ocl_momentum_free(s->engine);
    momentum_batch_free(&s->batch);
    free(s);
}

static int momentum_set_work(lode_device *d, const lode_work *work)
{
    momentum_state *s = d->state;
    memcpy(s->header, work->header.header, 80);
    s->target = work->header.target;
    return LODE_OK;
}

/* A launch is up to ocl_momentum_batch() sweeps, one per header nonce,
 * queued ahead as deep as the engine takes; fetch copies their candidates
 * (a later launch's read-back overwrites them), so the next launch is
 * queued before the host pairs them. */
static int momentum_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    momentum_state *s = state_of(ctx);
    (void)slot;
    momentum_consts c[OCL_MOMENTUM_BATCH_MAX];
    if (count == 0 || count > OCL_MOMENTUM_BATCH_MAX)
        return LODE_ERR_INVALID;
    for (uint64_t j = 0; j < count; j++) {
        uint8_t mid[32];
        momentum_midhash(s->header, (uint32_t)(start + j), mid);
        momentum_consts_init(&c[j], mid);
    }
    return ocl_momentum_enqueue(s->engine, c, (unsigned)count);
}

static int momentum_query(void *ctx, unsigned slot)
{
    (void)slot; /* the engine finishes its oldest launch */
    return ocl_momentum_ready(state_of(ctx)->engine);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    momentum_state *s = state_of(ctx);
    (void)slot;
    s->sweeps = 0;
    return ocl_momentum_finish(s->engine, &s->sweeps);
}

static int momentum_fetch(void *ctx, unsigned slot)
{
    momentum_state *s = state_of(ctx);
    (void)slot;
    momentum_batch_begin(&s->batch);
    for (unsigned j = 0; j < s->sweeps; j++) {
        momentum_entry *list;
        size_t n;
        int rc = ocl_momentum_sweep(s->engine, j, &list, &n); /* an overflowed sweep is redone here */
        if (rc == LODE_OK)
            rc = momentum_batch_add(&s->batch, list, n);
        if (rc != LODE_OK)
            return rc;
    }
    return LODE_OK;
}

static int momentum_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    const lode_device *d = ctx;
    momentum_state *s = state_of(ctx);
    (void)slot;
    if (count != s->sweeps) {
        lode_log(LODE_LOG_ERROR, "%s: a Momentum launch of %u sweeps for %llu indices", d->label, s->sweeps,
                 (unsigned long long)count);
        return LODE_ERR_DEVICE;
    }
    return momentum_batch_push_hits(&s->batch, s->header, start, &s->target, hits);
}

static void momentum_drain(void *ctx) { ocl_momentum_discard(state_of(ctx)->engine); }

static lode_launch_engine momentum_engine(lode_device *d)
{
    momentum_state *s = d->state;
    return (lode_launch_engine){.ctx = d, .depth = ocl_momentum_depth(s->engine),
                                .launch_size = ocl_momentum_batch(s->engine), .enqueue = momentum_enqueue,
                                .query = momentum_query, .wait = momentum_wait, .fetch = momentum_fetch,
                                .collect = momentum_collect, .drain = momentum_drain};
}

/* ~4 ms a sweep on a GPU: whole launches where that is more. */
static uint64_t momentum_preferred_chunk(lode_device *d, double target_ms)
{
    const momentum_state *s = d->state;
    const uint64_t n = d->cpu || target_ms * 0.25 < 1 ? 1 : (uint64_t)(target_ms * 0.25);
    const uint64_t batch = ocl_momentum_batch(s->engine);
    return n >= batch ? n / batch * batch : n;
}

const ocl_algo_ops ocl_momentum_ops = {
    .variants = momentum_variants,
    .open = momentum_open,
    .close = momentum_close,
    .set_work = momentum_set_work,
    .engine = momentum_engine,
    .preferred_chunk = momentum_preferred_chunk,
};
