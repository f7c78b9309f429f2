/* Momentum on a CUDA device: the host side of momentum.cu. A launch of
 * the launch driver is a batch of sweeps of consecutive header nonces
 * (cuda_momentum_batch); the host pairs each sweep's candidates
 * (core/backend_support/momentum_batch.h). */
#include <stdlib.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "backend-cuda/momentum_kernels.h"
#include "core/backend_support/momentum_batch.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"

static const char *const variant_names[] = {"bucket", "filter", "radix"};
static const cuda_momentum_method variant_methods[] = {CUDA_MOMENTUM_BUCKET, CUDA_MOMENTUM_FILTER,
                                                       CUDA_MOMENTUM_RADIX};

typedef struct cuda_momentum_state {
    cuda_momentum *engine;
    uint8_t header[80];
    lode_u256 target;
    momentum_consts *sweep_jobs; /* a batch's, cuda_momentum_batch() */
    unsigned sweeps_done;        /* sweeps of the batch last waited for */
    momentum_batch batch;        /* their candidates, copied off the pinned buffers */
} cuda_momentum_state;

static cuda_momentum_state *state_of(const lode_device *d) { return d->algo_state; }

static void momentum_close(lode_device *d)
{
    cuda_momentum_state *st = state_of(d);
    if (st == NULL)
        return;
    if (cuda_momentum_redos(st->engine) > 0) /* as OpenCL's: tests look for it */
        lode_log(LODE_LOG_INFO, "%s: momentum: %u sweep(s) redone with the filter", d->label,
                 cuda_momentum_redos(st->engine));
    cuda_momentum_free(st->engine);
    momentum_batch_free(&st->batch);
    free(st->sweep_jobs);
    free(st);
    d->algo_state = NULL;
}

/* The first-round table: 2^27 counters (32 MiB, so the atomics stay in an
 * H100's L2: measured fastest, docs/PERFORMANCE.md; the seed's design is
 * 2^30, 256 MiB), fewer where memory is short; LODE_MOMENTUM_TABLE_BITS
 * (24..34) overrides for measurements. */
static int momentum_open(lode_device *d)
{
    cuda_momentum_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return LODE_ERR_NO_MEMORY;
    d->algo_state = st;
    const cuda_momentum_method method = variant_methods[d->variant_index];
    unsigned bits = lode_setting_unsigned(LODE_SETTING_MOMENTUM_TABLE_BITS);
    size_t free_bytes = 0, total = 0;
    TRY(d, cudaMemGetInfo(&free_bytes, &total));
    while (bits > 26 && cuda_momentum_bytes(method, bits) > free_bytes * 0.9)
        bits--;
    if (cuda_momentum_bytes(method, bits) > free_bytes) {
        lode_log(LODE_LOG_ERROR, "%s: %zu MiB free, Momentum needs %zu MiB", d->label, free_bytes >> 20,
                 cuda_momentum_bytes(method, bits) >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    TRY(d, cuda_momentum_new(method, bits, d->stream, &st->engine));
    const unsigned batch = cuda_momentum_batch(st->engine);
    st->sweep_jobs = calloc(batch, sizeof *st->sweep_jobs);
    if (st->sweep_jobs == NULL)
        return LODE_ERR_NO_MEMORY;
    return momentum_batch_init(&st->batch, batch);
}

static int momentum_set_work(lode_device *d, const lode_work *work)
{
    cuda_momentum_state *st = state_of(d);
    memcpy(st->header, work->header.header, 80);
    st->target = work->header.target;
    return LODE_OK;
}

/* ---- the engine of the launch driver ------------------------------------ */

/* The engine queues batches ahead (two for the bucket method); fetch copies
 * the candidates off the pinned buffers (a later batch's copies overwrite
 * them), so the next batch is queued before the host pairs them. */
static int momentum_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    cuda_momentum_state *st = state_of(d);
    (void)slot;
    for (uint64_t i = 0; i < count; i++) {
        uint8_t mid[32];
        momentum_midhash(st->header, (uint32_t)(start + i), mid);
        momentum_consts_init(&st->sweep_jobs[i], mid);
    }
    cudaError_t err = cuda_momentum_enqueue(st->engine, st->sweep_jobs, (unsigned)count);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "queueing Momentum sweeps", err);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest batch */
    cudaError_t err = cuda_momentum_wait(state_of(d)->engine, &state_of(d)->sweeps_done);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a Momentum sweep", err);
}

/* Copies every sweep's candidates of the finished batch, one after the
 * other. */
static int momentum_fetch(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    cuda_momentum_state *st = state_of(d);
    (void)slot;
    momentum_batch_begin(&st->batch);
    for (unsigned i = 0; i < st->sweeps_done; i++) {
        momentum_entry *list;
        size_t n;
        cudaError_t err = cuda_momentum_result(st->engine, i, &list, &n);
        if (err != cudaSuccess)
            return cuda_fail(d, d->index, "a Momentum sweep", err);
        int rc = momentum_batch_add(&st->batch, list, n);
        if (rc != LODE_OK)
            return rc;
    }
    return LODE_OK;
}

static int momentum_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    cuda_momentum_state *st = state_of(d);
    (void)slot;
    if (count != st->sweeps_done || st->batch.sweeps != st->sweeps_done)
        return LODE_ERR_DEVICE;
    return momentum_batch_push_hits(&st->batch, st->header, start, &st->target, hits);
}

static void momentum_drain(void *ctx)
{
    cuda_momentum_discard(state_of(ctx)->engine);
}

static lode_launch_engine momentum_engine(lode_device *d)
{
    const cuda_momentum *m = state_of(d)->engine;
    return (lode_launch_engine){.ctx = d, .depth = cuda_momentum_depth(m), .launch_size = cuda_momentum_batch(m),
                                .blocking_wait = true, .enqueue = momentum_enqueue, .wait = momentum_wait,
                                .fetch = momentum_fetch, .collect = momentum_collect, .drain = momentum_drain};
}

/* Whole batches, of about 0.3 sweeps a millisecond (an H100's rate,
 * docs/PERFORMANCE.md). */
static uint64_t momentum_preferred_chunk(lode_device *d, double target_ms)
{
    const uint64_t batch = cuda_momentum_batch(state_of(d)->engine);
    const uint64_t n = target_ms * 0.3 < 1 ? 1 : (uint64_t)(target_ms * 0.3);
    return (n + batch - 1) / batch * batch;
}

const cuda_algo_ops cuda_momentum_ops = {
    .variants = variant_names,
    .n_variants = COUNT(variant_names),
    .open = momentum_open,
    .close = momentum_close,
    .set_work = momentum_set_work,
    .engine = momentum_engine,
    .preferred_chunk = momentum_preferred_chunk,
};
