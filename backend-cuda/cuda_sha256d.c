/* SHA-256d on a CUDA device: the host side of sha256d.cu. Nonce scans
 * through the shared pipeline (cuda_nonce_scan.c), plain or version-rolled
 * jobs, candidates of the kernel's top-word test re-hashed exactly. */
#include <stdlib.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "backend-cuda/sha256d_kernels.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/base/log.h"
#include "core/base/status.h"
#include "core/base/text.h"

/* Largest nonce count of one launch (keeps 32-bit offsets safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)

/* Additions on the FMA pipe (IMADs) or as IADD3s: the kernel's fma_adds. */
static const char *const variant_names[] = {"imad", "iadd3"};
static const int variant_fma_adds[] = {1, 0};

typedef struct cuda_sha256d_state {
    cuda_nonce_scan scan; /* first: cuda_nonce_engine reads it */
    uint8_t header[80];
    lode_u256 target;
    cuda_sha256d_params sha;
    sha256d_job host_job; /* the job on the host: precomputation, exact check */
    bool versions;        /* the job is version-rolled: vsha and vjobs hold it */
    cuda_sha256d_versions_params vsha;
    sha256d_version_set vjobs;
} cuda_sha256d_state;

static cuda_sha256d_state *state_of(const lode_device *d) { return d->algo_state; }

static int launch(lode_device *d, int slot, uint64_t start, uint64_t count, cuda_hits *hits, cudaStream_t stream)
{
    (void)slot;
    cuda_sha256d_state *st = state_of(d);
    const cuda_tune_params *t = &st->scan.tune;
    const int fma_adds = variant_fma_adds[d->variant_index];
    if (st->versions)
        TRY(d, cuda_sha256d_versions_launch(&st->vsha, (uint32_t)start, (uint32_t)count, t->threads_per_block,
                                            LODE_SHA256D_VERSIONS_NONCES_PER_THREAD, fma_adds, hits, stream));
    else
        TRY(d, cuda_sha256d_launch(&st->sha, (uint32_t)start, (uint32_t)count, t->threads_per_block,
                                   t->nonces_per_thread, fma_adds, hits, stream));
    return LODE_OK;
}

/* Candidates passed only the kernel's top-word test: hash them exactly
 * before they count as hits. */
static bool exact(const void *ctx, uint32_t nonce)
{
    const cuda_sha256d_state *st = ctx;
    return sha256d_meets_target(&st->host_job, nonce, &st->target);
}

/* Nonces per launch for about LAUNCH_MS at the measured (or a guessed) rate. */
static void size_launches(cuda_sha256d_state *st)
{
    const cuda_tune_params *t = &st->scan.tune;
    double rate = t->rate > 0 ? t->rate : 4e9;
    if (st->versions)
        rate /= LODE_VERSIONS_MAX; /* each nonce is that many hashes */
    uint64_t n = (uint64_t)(rate * LAUNCH_MS / 1000.0);
    uint64_t quantum = (uint64_t)t->threads_per_block * t->nonces_per_thread;
    n = n / quantum * quantum;
    st->scan.launch_count = n < quantum ? quantum : n > SHA256D_MAX_LAUNCH ? SHA256D_MAX_LAUNCH : n;
}

static void sha256d_close(lode_device *d)
{
    cuda_sha256d_state *st = state_of(d);
    if (st != NULL)
        cuda_nonce_close(&st->scan);
    free(st);
    d->algo_state = NULL;
}

static int sha256d_open(lode_device *d)
{
    cuda_sha256d_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return LODE_ERR_NO_MEMORY;
    d->algo_state = st;
    int rc = cuda_nonce_open(d, &st->scan, launch);
    if (rc != LODE_OK)
        return rc;
    st->scan.check = (lode_nonce_hit_check){.target = &st->target, .keep = exact, .ctx = st};
    cuda_nonce_load_params(d, &st->scan,
                           (cuda_tune_params){.threads_per_block = 256, .nonces_per_thread = 32, .rate = 0});
    size_launches(st);
    return LODE_OK;
}

static int sha256d_set_work(lode_device *d, const lode_work *work)
{
    cuda_sha256d_state *st = state_of(d);
    memcpy(st->header, work->header.header, 80);
    st->target = work->header.target;
    const bool versions = work->header.version_count == LODE_VERSIONS_MAX; /* rolls_versions */
    if (versions) {
        sha256d_versions_init(&st->vjobs, &work->header, st->vsha.w);
    } else {
        /* The same per-job precomputation as the CPU lane paths: midstate,
         * rounds 0..2 of the second block, the W3-free parts of round 3 and
         * of the early schedule (core/backend_support/sha256d_lanes.h). */
        sha256d_job *job = &st->host_job;
        sha256d_job_init(job, st->header, st->target.w[7]);
        sha256d_prepare_lanes(job);
        lode_sha256d_params_fill(st->sha.w, job->midstate, job->pre, job->target_top);
    }
    st->scan.check.versions = versions ? &st->vjobs : NULL;
    if (versions != st->versions) {
        st->versions = versions;
        size_launches(st); /* a rolled nonce is LODE_VERSIONS_MAX hashes */
    }
    return LODE_OK;
}

static uint64_t sha256d_preferred_chunk(lode_device *d, double target_ms)
{
    return cuda_nonce_preferred_chunk(&state_of(d)->scan, target_ms);
}

/* Every candidate a launch of 2^28 nonces (~40 ms at the target rate). */
static uint64_t trial_count(lode_device *d, size_t index, uint64_t last)
{
    (void)d, (void)index, (void)last;
    return UINT64_C(1) << 28;
}

/* Tries threads per block x nonces per thread and keeps the fastest. The
 * core tunes a handle right after its self-test, on a plain job: the
 * version-rolled search takes the block size found, with one nonce a
 * thread. */
static int sha256d_tune(lode_device *d, double target_ms)
{
    (void)target_ms; /* launches aim at LAUNCH_MS; the dispatcher sizes scans */
    cuda_sha256d_state *st = state_of(d);
    /* Cached or given by the user: nothing to measure (LODE_CUDA_TUNE=retune
     * forces a new measurement). */
    if (st->scan.tuned || st->scan.mode == LODE_TUNE_OFF)
        return LODE_OK;
    static const unsigned tpb[] = {128, 256, 512}, npt[] = {8, 32, 128};
    cuda_tune_params candidates[COUNT(tpb) * COUNT(npt)];
    for (size_t i = 0; i < COUNT(candidates); i++) {
        candidates[i] = st->scan.tune;
        candidates[i].threads_per_block = tpb[i / COUNT(npt)];
        candidates[i].nonces_per_thread = npt[i % COUNT(npt)];
    }
    /* A job whose target no hash meets: the hit buffers stay empty. */
    const cuda_sha256d_params saved = st->sha;
    st->sha.w[LODE_SHA256D_P_TARGET_TOP] = 0;
    int rc = cuda_nonce_tune(d, &st->scan, candidates, COUNT(candidates), trial_count);
    st->sha = saved;
    if (rc != LODE_OK)
        return rc;
    size_launches(st);
    char rate[48];
    lode_format_rate(st->scan.tune.rate, "H/s", rate, sizeof rate);
    lode_log(LODE_LOG_INFO, "%s: tuned sha256d/%s: %u threads per block, %u nonces per thread: %s", d->label,
             d->variant, st->scan.tune.threads_per_block, st->scan.tune.nonces_per_thread, rate);
    cuda_nonce_store_params(d, &st->scan);
    return LODE_OK;
}

const cuda_algo_ops cuda_sha256d_ops = {
    .variants = variant_names,
    .n_variants = COUNT(variant_names),
    .open = sha256d_open,
    .close = sha256d_close,
    .set_work = sha256d_set_work,
    .engine = cuda_nonce_engine,
    .preferred_chunk = sha256d_preferred_chunk,
    .tune = sha256d_tune,
};
