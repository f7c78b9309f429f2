/* The CUDA backend's engines of the launch driver
 * (core/backend_support/launch_driver.h): nonce scans (SHA-256d, scrypt),
 * Momentum sweeps and trial-factoring launches. */
#include <string.h>

#include "backend-cuda/cuda_internal.h"

/* ---- engines of the launch driver --------------------------------------- */

/* Nonce scans (SHA-256d, scrypt): cuda_enqueue() above; each slot has its hit
 * buffers and its event. */
static int nonce_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    return cuda_enqueue(ctx, (int)slot, start, count);
}

static int nonce_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cudaError_t err = cudaEventSynchronize(d->finished[slot]);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a kernel launch", err);
}

/* Appends a finished launch's hits. */
static int nonce_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    const cuda_hits *h = d->hits_host[slot];
    if (h->count > LODE_HITS_CAP)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = d->algo == LODE_ALGO_SHA256D && d->versions
                 ? sha256d_versions_push_hits(&d->vjobs, hits, h->nonce, h->count, start, count, &d->target)
                 : lode_hits_push_nonces(hits, h->nonce, h->count, start, count,
                                         d->algo == LODE_ALGO_SHA256D ? cuda_sha256d_exact : NULL, d);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): kernel reported a nonce outside its range", d->index, d->name);
    return rc;
}

static void nonce_drain(void *ctx)
{
    lode_device *d = ctx; /* a launch may be half queued */
    cudaStreamSynchronize(d->stream);
    cudaStreamSynchronize(d->stream2);
}

/* Momentum: a launch is a batch of sweeps of consecutive header nonces
 * (cuda_momentum_batch). The engine queues batches ahead (two for the
 * bucket method); fetch copies the candidates off the pinned buffers (a
 * later batch's copies overwrite them), so the next batch is queued before
 * the host pairs them. */
static int momentum_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot;
    for (uint64_t i = 0; i < count; i++) {
        uint8_t mid[32];
        momentum_midhash(d->header, (uint32_t)(start + i), mid);
        momentum_consts_init(&d->sweep_jobs[i], mid);
    }
    cudaError_t err = cuda_momentum_enqueue(d->momentum, d->sweep_jobs, (unsigned)count);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "queueing Momentum sweeps", err);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest batch */
    cudaError_t err = cuda_momentum_wait(d->momentum, &d->sweeps_done);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a Momentum sweep", err);
}

/* Copies every sweep's candidates of the finished batch, one after the
 * other; sweep_ends[i] is where sweep i's end. */
static int momentum_fetch(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot;
    size_t total = 0;
    for (unsigned i = 0; i < d->sweeps_done; i++) {
        momentum_entry *list;
        size_t n;
        cudaError_t err = cuda_momentum_result(d->momentum, i, &list, &n);
        if (err != cudaSuccess)
            return cuda_fail(d, d->index, "a Momentum sweep", err);
        if (total + n > d->cand_cap) {
            const size_t cap = (total + n) * 2;
            momentum_entry *grown = realloc(d->cands, cap * sizeof *grown);
            if (grown == NULL)
                return LODE_ERR_NO_MEMORY;
            d->cands = grown;
            d->cand_cap = cap;
        }
        if (n > 0)
            memcpy(d->cands + total, list, n * sizeof *d->cands);
        total += n;
        d->sweep_ends[i] = total;
    }
    return LODE_OK;
}

static int momentum_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (count != d->sweeps_done)
        return LODE_ERR_DEVICE;
    for (unsigned i = 0; i < d->sweeps_done; i++) {
        const size_t from = i > 0 ? d->sweep_ends[i - 1] : 0;
        d->pairs.count = 0;
        int rc = momentum_pairs_from_entries(d->cands + from, d->sweep_ends[i] - from, &d->pairs);
        if (rc == LODE_OK)
            rc = momentum_push_hits(d->header, (uint32_t)(start + i), &d->target, &d->pairs, hits);
        if (rc != LODE_OK)
            return rc;
    }
    return LODE_OK;
}

static void momentum_drain(void *ctx)
{
    lode_device *d = ctx;
    cuda_momentum_discard(d->momentum);
}

/* Trial factoring: launches of up to cuda_tf_launch_size() indices of one
 * class, as many in flight as the engine has streams; the dispatcher
 * re-checks every factor with the reference. */
static int tf_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot; /* the engine queues in turn */
    cudaError_t err = cuda_tf_enqueue(d->tf, start, (uint32_t)count);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "queueing a trial-factoring launch", err);
}

static int tf_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest launch */
    cudaError_t err = cuda_tf_finish(d->tf, &d->tf_n0, &d->tf_count, &d->tf_found, &d->tf_nfound, &d->tf_overflow);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a trial-factoring launch", err);
}

static int tf_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    (void)slot;
    if (d->tf_n0 != start || d->tf_count != count) {
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): a trial-factoring launch out of order", d->index, d->name);
        return LODE_ERR_DEVICE;
    }
    if (d->tf_overflow)
        return LODE_ERR_HITS_OVERFLOW;
    int rc = lode_hits_push_offsets(hits, d->tf_n0, d->tf_count, d->tf_found, d->tf_nfound);
    if (rc == LODE_ERR_DEVICE)
        lode_log(LODE_LOG_ERROR, "cuda:%d (%s): a factor outside its launch", d->index, d->name);
    return rc;
}

static void tf_drain(void *ctx)
{
    lode_device *d = ctx;
    cuda_tf_discard(d->tf);
}

/* The engine of the handle's algorithm. */
lode_launch_engine cuda_engine_of(lode_device *d)
{
    if (d->algo == LODE_ALGO_MOMENTUM)
        return (lode_launch_engine){.ctx = d, .depth = cuda_momentum_depth(d->momentum),
                                    .launch_size = cuda_momentum_batch(d->momentum),
                                    .blocking_wait = true, .enqueue = momentum_enqueue, .wait = momentum_wait,
                                    .fetch = momentum_fetch, .collect = momentum_collect,
                                    .drain = momentum_drain};
    if (d->algo == LODE_ALGO_TF)
        return (lode_launch_engine){.ctx = d, .depth = cuda_tf_depth(d->tf),
                                    .launch_size = cuda_tf_launch_size(d->tf), .blocking_wait = true,
                                    .enqueue = tf_enqueue, .wait = tf_wait, .collect = tf_collect,
                                    .drain = tf_drain};
    return (lode_launch_engine){.ctx = d, .depth = IN_FLIGHT, .launch_size = d->launch_count,
                                .blocking_wait = true, .enqueue = nonce_enqueue, .wait = nonce_wait,
                                .collect = nonce_collect, .drain = nonce_drain};
}
