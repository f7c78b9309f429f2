/* The OpenCL backend's engines of the launch driver
 * (core/backend_support/launch_driver.h): nonce scans (SHA-256d, scrypt),
 * Momentum sweeps and trial-factoring launches. */
#include <string.h>

#include "backend-opencl/ocl_internal.h"

/* ---- engines of the launch driver --------------------------------------- */

/* Nonce scans (SHA-256d, scrypt): ocl_enqueue() above; each slot has its hit
 * buffer and the event of its read-back. */
static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    return ocl_enqueue(ctx, (int)slot, start, count);
}

int ocl_nonce_query(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cl_int done = ocl_event_done(d->kernel_done[slot]);
    return done >= 0 ? done : ocl_fail(d, "a kernel launch (device lost or out of resources?)", done);
}

/* The read-back after the kernel (short once the kernel has finished). */
int ocl_nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cl_int err = ocl.clWaitForEvents(1, &d->finished[slot]);
    cl_int status = CL_COMPLETE;
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        ocl.clGetEventInfo(d->finished[slot], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS || status < 0)
        return ocl_fail(d, "a kernel launch (device lost or out of resources?)", status < 0 ? status : err);
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
                                         d->algo == LODE_ALGO_SHA256D ? ocl_sha256d_exact : NULL, d);
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
lode_launch_engine ocl_engine_of(lode_device *d)
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
                                .enqueue = nonce_enqueue, .query = ocl_nonce_query, .wait = ocl_nonce_wait,
                                .collect = nonce_collect,
                                .drain = nonce_drain};
}
