/* scrypt (N=1024, r=1, p=1) on a CUDA device: the host side of scrypt.cu.
 * Nonce scans through the shared pipeline (cuda_nonce_scan.c) in batches
 * of hash slots that fit the scratchpad; with two scratch halves the two
 * launches in flight run on two streams. */
#include <stdlib.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "backend-cuda/scrypt_kernels.h"
#include "core/backend_support/sha256d_job.h"
#include "core/base/log.h"
#include "core/base/status.h"
#include "core/base/text.h"

/* The scratchpad: at most this many batches' worth of resident slots, and
 * at most this share of the free device memory. */
#define SCRYPT_MAX_WAVES 2u
#define SCRYPT_MEM_SHARE 0.85
/* Hash slots come in multiples of this (hashes per block for every shape
 * the tuner tries: at most 256, a hash per thread). */
#define SCRYPT_SLOT_QUANTUM 256u

/* A hash per thread, leaving out every 8th, none, every 4th or every 2nd
 * scratchpad entry; then four threads per hash with lookup gaps 1, 2, 4
 * (four threads trading words by warp shuffles). Ordered by H100 rate
 * (docs/PERFORMANCE.md). */
typedef struct scrypt_variant {
    unsigned gap;
    unsigned lanes; /* at most this many launches run at once (1 or 2) */
    cuda_scrypt_layout layout;
} scrypt_variant;
static const char *const variant_names[] = {"thread-skip8", "thread", "thread-skip4", "thread-skip2",
                                            "lg1",          "lg2",    "lg4"};
static const scrypt_variant variants[] = {
    {8, 2, CUDA_SCRYPT_THREAD}, {0, 2, CUDA_SCRYPT_THREAD}, {4, 2, CUDA_SCRYPT_THREAD}, {2, 2, CUDA_SCRYPT_THREAD},
    {1, 2, CUDA_SCRYPT_QUAD},   {2, 2, CUDA_SCRYPT_QUAD},   {4, 2, CUDA_SCRYPT_QUAD}};
_Static_assert(COUNT(variant_names) == COUNT(variants), "one name per variant");

typedef struct cuda_scrypt_state {
    cuda_nonce_scan scan; /* first: cuda_nonce_engine reads it */
    const scrypt_variant *variant;
    lode_u256 target;
    cuda_scrypt_params scrypt;
    cudaStream_t stream2; /* launches of slot 1 when lanes == 2 */
    unsigned lanes;       /* 2 when the scratch holds two halves */
    void *state, *pad;
    unsigned slots;                   /* hash slots allocated (all lanes together) */
    cuda_scrypt_shape resident_shape; /* the shape resident_slots was measured for */
    unsigned resident_slots;          /* hash slots of it resident at once */
} cuda_scrypt_state;

static cuda_scrypt_state *state_of(const lode_device *d) { return d->algo_state; }

/* The romix shape of the variant with these launch parameters. */
static cuda_scrypt_shape shape_of(const cuda_scrypt_state *st, const cuda_tune_params *t)
{
    return (cuda_scrypt_shape){.layout = st->variant->layout, .gap = st->variant->gap,
                               .interleave = t->nonces_per_thread, .threads_per_block = t->threads_per_block};
}

/* Hash slots of one batch with the current parameters. The occupancy
 * query runs once per shape, not once per launch. */
static unsigned batch_slots(cuda_scrypt_state *st)
{
    const cuda_scrypt_shape shape = shape_of(st, &st->scan.tune);
    if (memcmp(&shape, &st->resident_shape, sizeof shape) != 0 || st->resident_slots == 0) {
        st->resident_shape = shape;
        st->resident_slots = cuda_scrypt_resident_slots(&shape);
    }
    unsigned resident = st->resident_slots;
    const unsigned lane_slots = st->slots / (st->lanes ? st->lanes : 1);
    uint64_t want = (uint64_t)resident * (st->scan.tune.waves ? st->scan.tune.waves : 1);
    if (want == 0 || want > lane_slots)
        want = lane_slots;
    return (unsigned)(want / SCRYPT_SLOT_QUANTUM * SCRYPT_SLOT_QUANTUM);
}

/* Hashes per launch for about LAUNCH_MS at the measured (or a guessed)
 * rate, in whole batches: a partial one costs as long as a full one. */
static void size_launches(cuda_scrypt_state *st)
{
    double rate = st->scan.tune.rate > 0 ? st->scan.tune.rate : 5e6;
    uint64_t batch = batch_slots(st);
    uint64_t k = (uint64_t)(rate * LAUNCH_MS / 1000.0 / (double)batch + 0.5);
    st->scan.launch_count = batch * (k < 1 ? 1 : k);
}

/* One launch: batches over the slot's half of the scratch (the whole of
 * it with one lane). */
static int launch(lode_device *d, int slot, uint64_t start, uint64_t count, cuda_hits *hits, cudaStream_t stream)
{
    cuda_scrypt_state *st = state_of(d);
    const uint64_t batch = batch_slots(st);
    const unsigned half = st->lanes == 2 ? (unsigned)slot : 0;
    const size_t half_slots = st->slots / (st->lanes ? st->lanes : 1);
    char *state = (char *)st->state + half * half_slots * CUDA_SCRYPT_STATE_BYTES;
    const cuda_scrypt_shape shape = shape_of(st, &st->scan.tune);
    char *pad = (char *)st->pad + half * half_slots * cuda_scrypt_pad_bytes(&shape);
    for (uint64_t off = 0; off < count; off += batch) {
        uint64_t n = count - off < batch ? count - off : batch;
        TRY(d, cuda_scrypt_launch(&st->scrypt, (uint32_t)(start + off), (uint32_t)n, (unsigned)batch, &shape,
                                  state, pad, hits, stream));
    }
    return LODE_OK;
}

/* The most hash slots resident at once over the shapes the tuner tries. */
static unsigned most_resident(const cuda_scrypt_state *st)
{
    unsigned resident = 0;
    /* The thread layout has no interleave (a shape's 1 or 2 is quad's). */
    const unsigned max_il = st->variant->layout == CUDA_SCRYPT_THREAD ? 1 : 2;
    for (unsigned tpb = 64; tpb <= 256; tpb *= 2)
        for (unsigned il = 1; il <= max_il; il++) {
            const cuda_tune_params t = {.threads_per_block = tpb, .nonces_per_thread = il};
            const cuda_scrypt_shape shape = shape_of(st, &t);
            unsigned r = cuda_scrypt_resident_slots(&shape);
            resident = r > resident ? r : resident;
        }
    return resident;
}

/* The scratchpad: up to SCRYPT_MAX_WAVES batches of resident hash slots,
 * within a share of the memory free now. */
static int alloc_scratch(lode_device *d, cuda_scrypt_state *st)
{
    const unsigned resident = most_resident(st);
    size_t free_bytes = 0, total = 0;
    TRY(d, cudaMemGetInfo(&free_bytes, &total));
    const cuda_scrypt_shape any_shape = shape_of(st, &st->scan.tune); /* the pad size is the variant's */
    const size_t per_slot = cuda_scrypt_pad_bytes(&any_shape) + CUDA_SCRYPT_STATE_BYTES;
    uint64_t fit = (uint64_t)((double)free_bytes * SCRYPT_MEM_SHARE) / per_slot;
    uint64_t want = (uint64_t)(resident ? resident : 4096) * SCRYPT_MAX_WAVES;
    uint64_t slots = (want < fit ? want : fit) / SCRYPT_SLOT_QUANTUM * SCRYPT_SLOT_QUANTUM;
    if (slots == 0) {
        lode_log(LODE_LOG_ERROR, "%s: %zu MiB free, too little for one scrypt batch", d->label, free_bytes >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    st->slots = (unsigned)slots;
    /* Two halves when each still holds a batch: the two launches in flight
     * then run on two streams at once, so one launch's batch boundaries
     * (pbkdf2 kernels, the last blocks of a romix, a partial last batch)
     * are filled with the other's blocks instead of idle SMs. */
    st->lanes = st->variant->lanes == 2 && slots >= 2 * (uint64_t)SCRYPT_SLOT_QUANTUM ? 2 : 1;
    if (st->lanes == 2)
        st->slots = (unsigned)(slots / (2 * SCRYPT_SLOT_QUANTUM) * (2 * SCRYPT_SLOT_QUANTUM));
    TRY(d, cudaMalloc(&st->state, slots * CUDA_SCRYPT_STATE_BYTES));
    TRY(d, cudaMalloc(&st->pad, slots * cuda_scrypt_pad_bytes(&any_shape)));
    if (st->lanes == 2)
        st->scan.slot_stream[1] = st->stream2;
    return LODE_OK;
}

static void scrypt_close(lode_device *d)
{
    cuda_scrypt_state *st = state_of(d);
    if (st == NULL)
        return;
    if (st->stream2 != NULL) /* nothing may still write into buffers about to be freed */
        cudaStreamSynchronize(st->stream2);
    cuda_nonce_close(&st->scan);
    cudaFree(st->state);
    cudaFree(st->pad);
    if (st->stream2 != NULL)
        cudaStreamDestroy(st->stream2);
    free(st);
    d->algo_state = NULL;
}

/* Cached or user-given parameters, else the defaults (tuned later). lg*
 * runs 1 or 2 hashes per group of 4 threads, thread* one per thread; a
 * block size romix does not take falls back to the default. */
static void load_params(lode_device *d, cuda_scrypt_state *st)
{
    const cuda_tune_params defaults = {.threads_per_block = 128, .nonces_per_thread = 2, .waves = 1, .rate = 0};
    cuda_nonce_load_params(d, &st->scan, defaults);
    cuda_tune_params *t = &st->scan.tune;
    if (st->variant->layout == CUDA_SCRYPT_THREAD)
        t->nonces_per_thread = 1;
    else if (t->nonces_per_thread != 1)
        t->nonces_per_thread = 2;
    const cuda_scrypt_shape shape = shape_of(st, t);
    if (cuda_scrypt_hashes_per_block(&shape) == 0)
        t->threads_per_block = defaults.threads_per_block;
}

static int scrypt_open(lode_device *d)
{
    cuda_scrypt_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return LODE_ERR_NO_MEMORY;
    d->algo_state = st;
    st->variant = &variants[d->variant_index];
    TRY(d, cudaStreamCreateWithFlags(&st->stream2, cudaStreamNonBlocking));
    st->scan.extra_stream = st->stream2;
    int rc = cuda_nonce_open(d, &st->scan, launch);
    if (rc != LODE_OK)
        return rc;
    /* The kernel compares the whole hash with the target: no re-check. */
    st->scan.check = (lode_nonce_hit_check){.target = &st->target};
    load_params(d, st);
    rc = alloc_scratch(d, st);
    if (rc != LODE_OK)
        return rc;
    size_launches(st);
    return LODE_OK;
}

static int scrypt_set_work(lode_device *d, const lode_work *work)
{
    cuda_scrypt_state *st = state_of(d);
    st->target = work->header.target;
    sha256d_job job; /* for its midstate: the HMAC key hash starts there */
    sha256d_job_init(&job, work->header.header, 0);
    lode_scrypt_params_fill(st->scrypt.w, work->header.header, job.midstate, st->target.w);
    return LODE_OK;
}

static uint64_t scrypt_preferred_chunk(lode_device *d, double target_ms)
{
    return cuda_nonce_preferred_chunk(&state_of(d)->scan, target_ms);
}

/* Candidates are (threads per block, interleave) x waves, waves fastest. */
static const unsigned tune_tpb[] = {64, 128, 256}, tune_il[] = {1, 2}, tune_waves[] = {1, 2};

/* A batch per candidate; none where the scratchpad has no room for more
 * waves than the candidate before. */
static uint64_t trial_count(lode_device *d, size_t index, uint64_t last)
{
    const uint64_t count = batch_slots(state_of(d));
    return count == 0 || (index % COUNT(tune_waves) > 0 && count == last) ? 0 : count;
}

/* Tries threads per block x hashes per group x batch size (waves) and
 * keeps the fastest. */
static int scrypt_tune(lode_device *d, double target_ms)
{
    (void)target_ms; /* launches aim at LAUNCH_MS; the dispatcher sizes scans */
    cuda_scrypt_state *st = state_of(d);
    if (st->scan.tuned || st->scan.mode == LODE_TUNE_OFF)
        return LODE_OK; /* cached or user-given (LODE_CUDA_TUNE=retune measures again) */
    /* The thread layout has no interleave: one pass over the sizes. */
    const size_t n_il = st->variant->layout == CUDA_SCRYPT_THREAD ? 1 : COUNT(tune_il);
    cuda_tune_params candidates[COUNT(tune_tpb) * COUNT(tune_il) * COUNT(tune_waves)];
    const size_t n = COUNT(tune_tpb) * n_il * COUNT(tune_waves);
    for (size_t i = 0; i < n; i++) {
        const size_t c = i / COUNT(tune_waves);
        candidates[i] = st->scan.tune;
        candidates[i].threads_per_block = tune_tpb[c / n_il];
        candidates[i].nonces_per_thread = tune_il[c % n_il];
        candidates[i].waves = tune_waves[i % COUNT(tune_waves)];
    }
    /* A job whose target no hash meets: the hit buffers stay empty. */
    const cuda_scrypt_params saved = st->scrypt;
    memset(st->scrypt.w + LODE_SCRYPT_P_TARGET, 0, 8 * sizeof(uint32_t));
    int rc = cuda_nonce_tune(d, &st->scan, candidates, n, trial_count);
    st->scrypt = saved;
    if (rc != LODE_OK)
        return rc;
    size_launches(st);
    char rate[48];
    lode_format_rate(st->scan.tune.rate, "H/s", rate, sizeof rate);
    const cuda_scrypt_shape shape = shape_of(st, &st->scan.tune);
    lode_log(LODE_LOG_INFO, "%s: tuned scrypt/%s: %u threads and %u hashes per block, batches of %u waves: %s",
             d->label, d->variant, st->scan.tune.threads_per_block, cuda_scrypt_hashes_per_block(&shape),
             st->scan.tune.waves, rate);
    cuda_nonce_store_params(d, &st->scan);
    return LODE_OK;
}

const cuda_algo_ops cuda_scrypt_ops = {
    .variants = variant_names,
    .n_variants = COUNT(variant_names),
    .open = scrypt_open,
    .close = scrypt_close,
    .set_work = scrypt_set_work,
    .engine = cuda_nonce_engine,
    .preferred_chunk = scrypt_preferred_chunk,
    .tune = scrypt_tune,
};
