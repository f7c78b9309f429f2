/* Mersenne trial factoring on a CUDA device: the host side of tf.cu, the
 * pipeline tf_kernels.h describes (buffers, CUDA graphs, batches of device
 * launches) and its engine of the launch driver.
 *
 * Index bits: bit j of a launch stands for n = n0 + j. A sieve prime r
 * divides q(n) exactly when n = root (mod r), root = -q(0) / q_step mod r;
 * "start" is the first such bit of the launch, (root - n0) mod r. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "backend-cuda/tf_kernels.h"
#include "core/backend_support/tf_tables.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"

/* Odd primes from 13 on the sieve uses (LODE_TF_SIEVE_PRIMES). */
#define TF_DEFAULT_SIEVE_PRIMES 1000000u
#define TF_MAX_SIEVE_PRIMES 2000000u
/* Batches in flight. */
#define TF_DEPTH 2u
/* Buffer sets device launches alternate between. */
#define TF_SETS 2u

/* One pipeline, sieved on the GPU. */
static const char *const variant_names[] = {"gpusieve"};

/* The buffers of one device launch. Consecutive launches alternate between
 * TF_SETS of them, so one launch's sieve (atomics) runs beside the other's
 * exponentiation (multiplies); the sieve kernels have the higher priority,
 * so their blocks go first whenever an SM frees up and the next candidate
 * list is ready before the multiplies run dry. A set's work is ordered on
 * its stream; queued call by call, the exponentiation is forked to
 * exp_stream and joined back. */
typedef struct set_buffers {
    cudaStream_t stream;     /* the set's order (graphs run here); sieve kernels, high priority */
    cudaStream_t exp_stream; /* call by call: exponentiation, low priority */
    cudaEvent_t sieved, finished;
    uint32_t *start; /* the middle primes' first bits in the launch */
    uint32_t *bits;  /* one bit per index of the launch */
    uint32_t *cand;  /* survivors' offsets */
} set_buffers;

/* A launch of the driver: a batch of up to `batch` device launches over
 * consecutive indices, with one event at its end, so the host wakes once
 * per batch. TF_DEPTH of them are in flight.
 * With graphs, device launch i of a slot's batch is graph[i], built once
 * per exponent and bit size with every parameter fixed (the kernels read
 * what changes from desc[i]): queuing it is one event wait and one graph
 * launch, no parameter updates. */
typedef struct batch_slot {
    uint32_t *areas; /* device: batch x CUDA_TF_RESULT_WORDS */
    uint32_t *host;  /* pinned: batch x CUDA_TF_RESULT_WORDS */
    uint32_t *found; /* malloc'd: batch x LODE_TF_FOUND_CAP, offsets from n0 */
    cuda_tf_launch_desc *desc;   /* device: batch descriptors */
    cuda_tf_launch_desc *h_desc; /* pinned: the same, written by the host before the batch */
    cudaEvent_t done, join;
    uint64_t n0;
    uint32_t count;
    unsigned launches, first_set;
    cudaGraph_t *graph;    /* [batch]: device launch i, in set i % TF_SETS */
    cudaGraphExec_t *exec; /* [batch] */
} batch_slot;

typedef struct cuda_tf_state {
    cudaStream_t stream;
    unsigned want_primes;
    unsigned launch_bits;
    unsigned batch; /* device launches per batch */
    bool graphs;
    const uint32_t *primes; /* host: the first want_primes odd primes from 13 (shared) */
    uint32_t *d_primes;     /* the same on the device (the tables are built from it) */
    /* device, per exponent: usable primes and their constants */
    uint32_t *d_prime, *d_inv, *d_pmod, *d_smod, *d_minv;
    unsigned seg_log; /* log2 of the bits one sieve block holds: 16..18 */
    unsigned n_small, n_all;
    uint32_t exponent; /* whose tables are loaded (0: none) */
    bool check_tables;
    lode_tf_job job;
    int exp_blocks;
    int prep_blocks; /* tf_sieve_prepare: one block per SM */
    int prio_high, prio_low;
    set_buffers set[TF_SETS];
    unsigned next_set;
    batch_slot slot[TF_DEPTH];
    unsigned head, queued;
    /* LODE_TF_PROFILE=1: events between the stages of each launch (queued
     * call by call, one at a time), summed and printed when the pipeline is
     * freed (for measurements). */
    bool profile;
    unsigned interleave; /* candidates per thread at once: 1, 2, 4; 0 by bit size */
    cudaEvent_t ev[TF_SETS][4];
    bool ev_pending[TF_SETS];
    double stage_ms[3];
    uint64_t launches, indices, survivors;
    /* What the last wait returned (the batch's factors), read by collect. */
    uint64_t done_n0;
    uint32_t done_count, done_nfound;
    const uint32_t *done_found;
    bool done_overflow;
} cuda_tf_state;

static cuda_tf_state *state_of(const lode_device *d) { return d->algo_state; }

static uint32_t full_launch(const cuda_tf_state *tf) { return 1u << tf->launch_bits; }

/* Indices of one full launch of the engine (a batch of device launches; at
 * most 2^31). */
static uint64_t launch_size(const cuda_tf_state *tf) { return (uint64_t)tf->batch << tf->launch_bits; }

static void drop_graphs(const cuda_tf_state *tf, batch_slot *sl)
{
    for (unsigned i = 0; i < tf->batch && sl->exec != NULL; i++) {
        if (sl->exec[i] != NULL)
            cudaGraphExecDestroy(sl->exec[i]);
        if (sl->graph[i] != NULL)
            cudaGraphDestroy(sl->graph[i]);
        sl->exec[i] = NULL;
        sl->graph[i] = NULL;
    }
}

/* Waits for everything the pipeline queued, on every stream. */
static cudaError_t sync_all(cuda_tf_state *tf)
{
    cudaError_t first = cudaSuccess;
    for (unsigned s = 0; s < TF_SETS; s++) {
        const cudaStream_t streams[] = {tf->set[s].stream, tf->set[s].exp_stream};
        for (size_t i = 0; i < COUNT(streams); i++) {
            const cudaError_t err = streams[i] != NULL ? cudaStreamSynchronize(streams[i]) : cudaSuccess;
            first = first == cudaSuccess ? err : first;
        }
    }
    return first;
}

/* ---- creation and teardown ---------------------------------------------- */

static void destroy_event(cudaEvent_t e)
{
    if (e != NULL)
        cudaEventDestroy(e);
}

static void free_buffers(cuda_tf_state *tf)
{
    for (unsigned s = 0; s < TF_SETS; s++) {
        set_buffers *b = &tf->set[s];
        cudaFree(b->start);
        cudaFree(b->bits);
        cudaFree(b->cand);
        destroy_event(b->sieved);
        destroy_event(b->finished);
        if (b->stream != NULL)
            cudaStreamDestroy(b->stream);
        if (b->exp_stream != NULL)
            cudaStreamDestroy(b->exp_stream);
    }
    for (unsigned k = 0; k < TF_DEPTH; k++) {
        batch_slot *sl = &tf->slot[k];
        drop_graphs(tf, sl);
        free(sl->graph);
        free(sl->exec);
        cudaFree(sl->areas);
        cudaFreeHost(sl->host);
        cudaFree(sl->desc);
        cudaFreeHost(sl->h_desc);
        free(sl->found);
        destroy_event(sl->done);
        destroy_event(sl->join);
    }
}

static void tf_free(cuda_tf_state *tf)
{
    if (tf == NULL)
        return;
    sync_all(tf);
    if (tf->profile && tf->launches > 0)
        fprintf(stderr,
                "tf: %llu launches, %.4g indices each, %.2f%% survive the sieve (%u primes); ms per launch: "
                "large primes %.3f, segments %.3f, exponentiation %.3f\n",
                (unsigned long long)tf->launches, (double)tf->indices / tf->launches,
                100.0 * tf->survivors / tf->indices, tf->n_all, tf->stage_ms[0] / tf->launches,
                tf->stage_ms[1] / tf->launches, tf->stage_ms[2] / tf->launches);
    for (unsigned s = 0; s < TF_SETS; s++)
        for (int i = 0; i < 4; i++)
            destroy_event(tf->ev[s][i]);
    uint32_t *const tables[] = {tf->d_primes, tf->d_prime, tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv};
    for (size_t i = 0; i < COUNT(tables); i++)
        cudaFree(tables[i]);
    free_buffers(tf);
    free(tf);
}

/* The LODE_TF_* settings and the device's figures: by default
 * TF_DEFAULT_SIEVE_PRIMES sieve primes, and device launches of 2^28
 * indices on GPUs of 16 GiB or more, else 2^27. */
static cudaError_t read_settings(cuda_tf_state *tf)
{
    tf->want_primes = lode_setting_unsigned_in(LODE_SETTING_TF_SIEVE_PRIMES, TF_DEFAULT_SIEVE_PRIMES,
                                               CUDA_TF_MIN_SIEVE_PRIMES, TF_MAX_SIEVE_PRIMES);
    /* Device launches of 2^28 where the GPU has the room (two sets'
     * candidate lists are 2 GiB): half the graph launches of 2^27 and
     * faster, measured on an H200 (docs/PERFORMANCE.md). */
    size_t free_bytes = 0, total_bytes = 0;
    const unsigned default_bits =
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && total_bytes >= ((size_t)16 << 30) ? 28 : 27;
    tf->launch_bits = lode_setting_unsigned_in(LODE_SETTING_TF_LAUNCH_BITS, default_bits, 20, 28);
    /* A batch's offsets are 32-bit: at most 2^31 indices. */
    tf->batch = lode_setting_unsigned_in(LODE_SETTING_TF_BATCH, 16, 1, 64);
    if (tf->batch > (1u << (31 - tf->launch_bits)))
        tf->batch = 1u << (31 - tf->launch_bits);
    tf->graphs = !lode_setting_flag(LODE_SETTING_CUDA_NO_GRAPHS);
    tf->check_tables = lode_setting_flag(LODE_SETTING_TF_CHECK_TABLES);
    cudaError_t err = cudaErrorMemoryAllocation;
    int dev = 0, sms = 0;
    tf->primes = tf_sieve_primes(tf->want_primes);
    if (tf->primes == NULL)
        return err;
    if ((err = cudaGetDevice(&dev)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (err = cudaDeviceGetStreamPriorityRange(&tf->prio_low, &tf->prio_high)) != cudaSuccess)
        return err;
    tf->exp_blocks =
        sms * (int)lode_setting_unsigned_in(LODE_SETTING_TF_EXP_BLOCKS_PER_SM, CUDA_TF_EXP_BLOCKS_PER_SM, 1, 64);
    tf->prep_blocks = sms;
    tf->seg_log = lode_setting_unsigned_in(LODE_SETTING_TF_SEGMENT_BITS, 18, 16, 18);
    tf->profile = lode_setting_flag(LODE_SETTING_TF_PROFILE);
    if (tf->profile) /* a launch's events are read before its set is used again */
        tf->batch = 1;
    if (!lode_setting_unsigned_given(LODE_SETTING_TF_INTERLEAVE, &tf->interleave))
        tf->interleave = 0; /* the kernel's own default (cuda_tf_exp_kernel) */
    return cudaSuccess;
}

/* The prime list on the device, room for the per-exponent tables. */
static cudaError_t alloc_tables(cuda_tf_state *tf)
{
    const size_t n = tf->want_primes;
    uint32_t **tables[] = {&tf->d_primes, &tf->d_prime, &tf->d_inv, &tf->d_pmod, &tf->d_smod, &tf->d_minv};
    cudaError_t err;
    for (size_t i = 0; i < COUNT(tables); i++)
        if ((err = cudaMalloc((void **)tables[i], n * sizeof(uint32_t))) != cudaSuccess)
            return err;
    /* On the stream the tables are built on, and waited for: a plain
     * cudaMemcpy from pageable memory may return before its last chunk
     * lands, and the non-blocking stream does not wait for it (the tables'
     * build then read zeros from the second 2 MiB on: a zero "prime" made
     * the preparation loop forever). */
    if ((err = cudaMemcpyAsync(tf->d_primes, tf->primes, n * sizeof(uint32_t), cudaMemcpyHostToDevice,
                               tf->stream)) != cudaSuccess)
        return err;
    return cudaStreamSynchronize(tf->stream);
}

static cudaError_t alloc_sets(cuda_tf_state *tf)
{
    const size_t launch = full_launch(tf);
    cudaError_t err = cudaSuccess;
    for (unsigned s = 0; s < TF_SETS; s++) {
        set_buffers *b = &tf->set[s];
        if ((err = cudaStreamCreateWithPriority(&b->stream, cudaStreamNonBlocking, tf->prio_high)) != cudaSuccess ||
            (err = cudaStreamCreateWithPriority(&b->exp_stream, cudaStreamNonBlocking, tf->prio_low)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&b->sieved, cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&b->finished, cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->start, tf->want_primes * sizeof(uint32_t))) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->bits, launch / 8)) != cudaSuccess ||
            (err = cudaMalloc((void **)&b->cand, launch * sizeof(uint32_t))) != cudaSuccess)
            return err;
        for (int i = 0; i < 4 && tf->profile; i++)
            if ((err = cudaEventCreate(&tf->ev[s][i])) != cudaSuccess)
                return err;
    }
    return err;
}

static cudaError_t alloc_slots(cuda_tf_state *tf)
{
    const size_t area_bytes = tf->batch * CUDA_TF_RESULT_WORDS * sizeof(uint32_t);
    const size_t desc_bytes = tf->batch * sizeof(cuda_tf_launch_desc);
    cudaError_t err;
    for (unsigned k = 0; k < TF_DEPTH; k++) {
        batch_slot *sl = &tf->slot[k];
        if ((err = cudaMalloc((void **)&sl->areas, area_bytes)) != cudaSuccess ||
            (err = cudaMallocHost((void **)&sl->host, area_bytes)) != cudaSuccess ||
            (err = cudaMalloc((void **)&sl->desc, desc_bytes)) != cudaSuccess ||
            (err = cudaMallocHost((void **)&sl->h_desc, desc_bytes)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&sl->done, cudaEventBlockingSync | cudaEventDisableTiming)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&sl->join, cudaEventDisableTiming)) != cudaSuccess)
            return err;
        sl->graph = calloc(tf->batch, sizeof *sl->graph);
        sl->exec = calloc(tf->batch, sizeof *sl->exec);
        if (sl->graph == NULL || sl->exec == NULL)
            return cudaErrorMemoryAllocation;
        if ((sl->found = malloc(tf->batch * LODE_TF_FOUND_CAP * sizeof(uint32_t))) == NULL)
            return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

/* stream carries the table uploads. */
static cudaError_t tf_new(cudaStream_t stream, cuda_tf_state **out)
{
    *out = NULL;
    cuda_tf_state *tf = calloc(1, sizeof *tf);
    if (tf == NULL)
        return cudaErrorMemoryAllocation;
    tf->stream = stream;
    cudaError_t err;
    if ((err = read_settings(tf)) != cudaSuccess || (err = alloc_tables(tf)) != cudaSuccess ||
        (err = alloc_sets(tf)) != cudaSuccess || (err = alloc_slots(tf)) != cudaSuccess) {
        tf_free(tf);
        return err;
    }
    *out = tf;
    return cudaSuccess;
}

/* ---- the per-exponent tables ---------------------------------------------- */

/* Copies device table i (tf_sieve_tables_verify's order) to out. */
static int read_table(void *ctx, int i, uint32_t *out, unsigned count)
{
    const cuda_tf_state *tf = ctx;
    const uint32_t *dev[] = {tf->d_prime, tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv};
    cudaError_t err = cudaMemcpy(out, dev[i], count * sizeof *out, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        return LODE_OK;
    lode_log(LODE_LOG_ERROR, "tf: reading the sieve tables back: %s", cudaGetErrorString(err));
    return LODE_ERR_DEVICE;
}

/* LODE_TF_CHECK_TABLES=1 (tests): the device's tables must equal the
 * host's entry for entry. */
static cudaError_t check_tables(cuda_tf_state *tf, uint32_t p, const tf_sieve_plan *plan)
{
    char why[128] = "";
    int rc = tf_sieve_tables_verify(tf->primes, tf->want_primes, p, 1u << tf->seg_log, plan, read_table, tf, why,
                                    sizeof why);
    if (rc == LODE_OK)
        return cudaSuccess;
    if (rc == LODE_ERR_NO_MEMORY)
        return cudaErrorMemoryAllocation;
    if (why[0] != '\0')
        lode_log(LODE_LOG_ERROR, "tf: M%u: the GPU's sieve tables differ from the host's: %s", p, why);
    return cudaErrorInvalidValue;
}

/* The usable primes of exponent p (r < 2p + 1, so that no prime can equal a
 * candidate q = 2kp + 1 >= 2p + 1, and r != p, which never divides q) and
 * their constants, built on the device. */
static cudaError_t load_exponent(cuda_tf_state *tf, uint32_t p)
{
    cudaError_t err = sync_all(tf); /* no launch may still read the tables */
    if (err != cudaSuccess)
        return err;
    const tf_sieve_plan plan = tf_sieve_plan_of(tf->primes, tf->want_primes, p, 1u << tf->seg_log);
    if ((err = cuda_tf_build_tables(tf->d_primes, plan.count, plan.skip, p, 1u << tf->seg_log, tf->d_prime,
                                    tf->d_inv, tf->d_pmod, tf->d_smod, tf->d_minv, tf->stream)) != cudaSuccess ||
        (err = cudaStreamSynchronize(tf->stream)) != cudaSuccess)
        return err;
    tf->n_all = plan.count;
    tf->n_small = plan.n_small;
    if (tf->check_tables && (err = check_tables(tf, p, &plan)) != cudaSuccess)
        return err;
    tf->exponent = p;
    return cudaSuccess;
}

/* The exponentiation kernel of the job's bit size and the interleave. */
static const void *exp_kernel(const cuda_tf_state *tf)
{
    return cuda_tf_exp_kernel(tf->interleave, tf->job.bit_max);
}

/* Installs a class (per exponent: the usable primes and their inverses are
 * computed once, on the GPU; per class: nothing but c). */
static cudaError_t tf_set_job(cuda_tf_state *tf, const lode_tf_job *job)
{
    if (job->exponent != tf->exponent) {
        tf->exponent = 0;
        cudaError_t err = load_exponent(tf, job->exponent);
        if (err != cudaSuccess)
            return err;
    }
    const void *exp_before = exp_kernel(tf);
    const bool new_exponent = job->exponent != tf->job.exponent;
    tf->job = *job;
    /* A class is a descriptor field; the graphs hold the exponent's table
     * sizes and the bit size's kernel, so those need new graphs. */
    if (exp_kernel(tf) != exp_before || new_exponent) {
        cudaError_t err = sync_all(tf);
        if (err != cudaSuccess)
            return err;
        for (unsigned k = 0; k < TF_DEPTH; k++)
            drop_graphs(tf, &tf->slot[k]);
    }
    return cudaSuccess;
}

/* ---- device launches ------------------------------------------------------- */

/* The arguments of one device launch's three kernels (pointers into it
 * stay valid while the struct lives). */
typedef struct launch_args {
    const uint32_t *prime, *inv, *pmod, *smod, *minv;
    unsigned n_small, n_all;
    uint32_t p;
    const cuda_tf_launch_desc *desc;
    uint32_t *start, *bits, *cand, *counts, *found, *found_count;
    void *prepare[9], *segments[9], *exponentiate[6];
} launch_args;

static void fill_args(const cuda_tf_state *tf, const set_buffers *b, const cuda_tf_launch_desc *desc,
                      uint32_t *area, launch_args *a)
{
    *a = (launch_args){.prime = tf->d_prime, .inv = tf->d_inv, .pmod = tf->d_pmod, .smod = tf->d_smod,
                       .minv = tf->d_minv, .n_small = tf->n_small, .n_all = tf->n_all, .p = tf->exponent,
                       .desc = desc, .start = b->start, .bits = b->bits, .cand = b->cand, .counts = area,
                       .found = area + 2, .found_count = area + 1};
    void *prepare[] = {&a->prime, &a->inv, &a->pmod, &a->n_small, &a->n_all, &a->desc, &a->start, &a->bits,
                       &a->counts};
    void *segments[] = {&a->prime, &a->start, &a->smod, &a->minv, &a->n_small, &a->desc, &a->bits, &a->cand,
                        &a->counts};
    void *exponentiate[] = {&a->cand, &a->counts, &a->p, &a->desc, &a->found, &a->found_count};
    memcpy(a->prepare, prepare, sizeof prepare);
    memcpy(a->segments, segments, sizeof segments);
    memcpy(a->exponentiate, exponentiate, sizeof exponentiate);
}

static struct cudaKernelNodeParams node_params(const void *func, unsigned blocks, unsigned threads, void **args)
{
    return (struct cudaKernelNodeParams){.func = (void *)func, .gridDim = {blocks, 1, 1}, .blockDim = {threads, 1, 1},
                                  .sharedMemBytes = 0, .kernelParams = args, .extra = NULL};
}

static struct cudaKernelNodeParams prepare_params(const cuda_tf_state *tf, launch_args *a)
{
    return node_params(cuda_tf_prepare_kernel(), (unsigned)tf->prep_blocks, CUDA_TF_PREP_THREADS, a->prepare);
}

/* count: the launch's indices (a graph's node is sized for a full launch). */
static struct cudaKernelNodeParams segments_params(const cuda_tf_state *tf, launch_args *a, uint32_t count)
{
    const uint32_t seg_bits = 1u << tf->seg_log;
    return node_params(cuda_tf_segments_kernel(tf->seg_log), (count + seg_bits - 1) / seg_bits,
                       CUDA_TF_SIEVE_THREADS, a->segments);
}

static struct cudaKernelNodeParams exp_params(const cuda_tf_state *tf, launch_args *a)
{
    return node_params(exp_kernel(tf), (unsigned)tf->exp_blocks, CUDA_TF_EXP_THREADS, a->exponentiate);
}

static cudaError_t launch_node(const struct cudaKernelNodeParams *k, cudaStream_t stream)
{
    return cudaLaunchKernel(k->func, k->gridDim, k->blockDim, k->kernelParams, 0, stream);
}

static cudaError_t set_priority(cudaGraphNode_t node, int priority)
{
    cudaLaunchAttributeValue v;
    memset(&v, 0, sizeof v);
    v.priority = priority;
    return cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributePriority, &v);
}

/* Builds the graph of device launch i of slot k (in set i % TF_SETS): set
 * the bits, the two sieve kernels (the preparation clears the area's
 * counters), mark "sieved", the exponentiation; every parameter fixed. The
 * host's cost of a graph launch grows with its nodes, but the bits must
 * stay a memset right before the preparation: set back by the segments
 * kernel instead, they left the L2 before the preparation's atomics
 * (measured slower, docs/PERFORMANCE.md). */
static cudaError_t build_graph(cuda_tf_state *tf, unsigned k, unsigned i)
{
    batch_slot *sl = &tf->slot[k];
    set_buffers *b = &tf->set[i % TF_SETS];
    uint32_t *area = sl->areas + i * CUDA_TF_RESULT_WORDS;
    const uint32_t full = full_launch(tf);
    launch_args a;
    fill_args(tf, b, sl->desc + i, area, &a);
    const struct cudaMemsetParams bits = {.dst = b->bits, .value = 0xFF, .elementSize = 1, .width = full / 8, .height = 1};
    const struct cudaKernelNodeParams prep = prepare_params(tf, &a), seg = segments_params(tf, &a, full),
                               expo = exp_params(tf, &a);
    cudaGraph_t g;
    cudaError_t err = cudaGraphCreate(&g, 0);
    if (err != cudaSuccess)
        return err;
    sl->graph[i] = g;
    cudaGraphNode_t clear, prepare, segments, exponentiate, sieved;
    if ((err = cudaGraphAddMemsetNode(&clear, g, NULL, 0, &bits)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&prepare, g, &clear, 1, &prep)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&segments, g, &prepare, 1, &seg)) != cudaSuccess ||
        (err = cudaGraphAddEventRecordNode(&sieved, g, &segments, 1, b->sieved)) != cudaSuccess ||
        (err = cudaGraphAddKernelNode(&exponentiate, g, &segments, 1, &expo)) != cudaSuccess ||
        (err = set_priority(prepare, tf->prio_high)) != cudaSuccess ||
        (err = set_priority(segments, tf->prio_high)) != cudaSuccess ||
        (err = set_priority(exponentiate, tf->prio_low)) != cudaSuccess ||
        (err = cudaGraphInstantiate(&sl->exec[i], g, 0)) != cudaSuccess)
        return err;
    return cudaSuccess;
}

/* A launch's sieve starts once the previous launch (in the other set) has
 * sieved: the sieves then run beside exponentiations. Without it, two
 * deep queues drift into step, sieve beside sieve and multiplies beside
 * multiplies (measured slower, docs/PERFORMANCE.md). */
static cudaError_t stagger(cuda_tf_state *tf, unsigned si)
{
    const unsigned previous = (si + TF_SETS - 1) % TF_SETS;
    return cudaStreamWaitEvent(tf->set[si].stream, tf->set[previous].sieved, 0);
}

/* A launch queued call by call (profiling, or graphs off). */
static cudaError_t launch_calls(cuda_tf_state *tf, unsigned si, const cuda_tf_launch_desc *desc, uint32_t count,
                                uint32_t *area)
{
    set_buffers *b = &tf->set[si];
    cudaStream_t st = b->stream, xs = b->exp_stream;
    launch_args a;
    fill_args(tf, b, desc, area, &a);
    const struct cudaKernelNodeParams prep = prepare_params(tf, &a), seg = segments_params(tf, &a, count),
                               expo = exp_params(tf, &a);
    cudaError_t err;
    if (tf->profile) { /* one launch at a time, so the stage times are its own */
        const unsigned other = (si + TF_SETS - 1) % TF_SETS;
        if ((err = cudaStreamWaitEvent(st, tf->set[other].finished, 0)) != cudaSuccess)
            return err;
    } else if ((err = stagger(tf, si)) != cudaSuccess) {
        return err;
    }
    const uint32_t seg_bits = 1u << tf->seg_log;
    const unsigned segments = (count + seg_bits - 1) / seg_bits;
    if ((err = cudaMemsetAsync(b->bits, 0xFF, (size_t)segments * seg_bits / 8, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][0], st);
    if ((err = launch_node(&prep, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][1], st);
    if ((err = launch_node(&seg, st)) != cudaSuccess)
        return err;
    if (tf->profile)
        cudaEventRecord(tf->ev[si][2], st);
    if ((err = cudaEventRecord(b->sieved, st)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(xs, b->sieved, 0)) != cudaSuccess || (err = launch_node(&expo, xs)) != cudaSuccess)
        return err;
    if (tf->profile) {
        cudaEventRecord(tf->ev[si][3], xs);
        tf->ev_pending[si] = true;
    }
    /* Join the exponentiation back into the set's stream: whatever comes
     * next on it follows this whole launch. */
    if ((err = cudaEventRecord(b->finished, xs)) != cudaSuccess ||
        (err = cudaStreamWaitEvent(st, b->finished, 0)) != cudaSuccess)
        return err;
    return cudaSuccess;
}

/* A launch through its fixed graph: the stagger and one graph launch. */
static cudaError_t launch_graph(cuda_tf_state *tf, unsigned k, unsigned i)
{
    batch_slot *sl = &tf->slot[k];
    const unsigned si = i % TF_SETS;
    cudaError_t err;
    if (sl->exec[i] == NULL && (err = build_graph(tf, k, i)) != cudaSuccess) {
        drop_graphs(tf, sl);
        return err;
    }
    if ((err = stagger(tf, si)) != cudaSuccess)
        return err;
    return cudaGraphLaunch(sl->exec[i], tf->set[si].stream);
}

/* A batch of launches: the descriptors' copy goes first on the first
 * set's stream (the other set's first sieve waits for this one's, so it
 * follows the copy too), the results' copy and the event last. With
 * graphs, a batch's launch i is in set i % TF_SETS; call by call, the sets
 * alternate across batches. */
static cudaError_t launch_batch(cuda_tf_state *tf, unsigned k)
{
    batch_slot *sl = &tf->slot[k];
    const bool graphs = tf->graphs && !tf->profile;
    if (graphs)
        tf->next_set = 0;
    cudaError_t err = cudaMemcpyAsync(sl->desc, sl->h_desc, sl->launches * sizeof(cuda_tf_launch_desc),
                                      cudaMemcpyHostToDevice, tf->set[tf->next_set].stream);
    unsigned last = 0;
    for (unsigned i = 0; i < sl->launches && err == cudaSuccess; i++) {
        last = tf->next_set;
        tf->next_set = (tf->next_set + 1) % TF_SETS;
        err = graphs ? launch_graph(tf, k, i)
                     : launch_calls(tf, last, sl->desc + i, sl->h_desc[i].count,
                                    sl->areas + i * CUDA_TF_RESULT_WORDS);
    }
    /* The batch's end: the last launch's stream waits for the other set's
     * stream (its launches may finish later), then the event. */
    if (err == cudaSuccess && sl->launches > 1) {
        const unsigned other = (last + TF_SETS - 1) % TF_SETS;
        if ((err = cudaEventRecord(sl->join, tf->set[other].stream)) == cudaSuccess)
            err = cudaStreamWaitEvent(tf->set[last].stream, sl->join, 0);
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(sl->host, sl->areas, sl->launches * CUDA_TF_RESULT_WORDS * sizeof(uint32_t),
                              cudaMemcpyDeviceToHost, tf->set[last].stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(sl->done, tf->set[last].stream);
    return err;
}

/* Adds a finished profiled launch's stage times. */
static void profile_collect(cuda_tf_state *tf, unsigned si, const uint32_t *host, uint32_t count)
{
    if (!tf->ev_pending[si])
        return;
    tf->ev_pending[si] = false;
    for (int i = 0; i < 3; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, tf->ev[si][i], tf->ev[si][i + 1]) == cudaSuccess)
            tf->stage_ms[i] += ms;
    }
    tf->launches++;
    tf->indices += count;
    tf->survivors += host[0];
}

/* ---- batches --------------------------------------------------------------- */

/* Queues the indices [n0, n0 + count), 1 <= count <= the launch size; up to
 * TF_DEPTH batches may be queued (cudaErrorNotReady beyond). */
static cudaError_t tf_enqueue_batch(cuda_tf_state *tf, uint64_t n0, uint32_t count)
{
    if (tf->queued == TF_DEPTH)
        return cudaErrorNotReady;
    if (count == 0 || count > launch_size(tf) || tf->exponent == 0)
        return cudaErrorInvalidValue;
    const unsigned k = (tf->head + tf->queued) % TF_DEPTH;
    batch_slot *sl = &tf->slot[k];
    const uint32_t full = full_launch(tf);
    sl->n0 = n0;
    sl->count = count;
    sl->launches = (count + full - 1) / full;
    sl->first_set = tf->next_set;
    /* The slot's previous batch is finished (tf_finish_batch waited for
     * it), so nothing reads these any more. */
    for (unsigned i = 0; i < sl->launches; i++) {
        const uint32_t n = i + 1 < sl->launches ? full : count - i * full;
        sl->h_desc[i] = (cuda_tf_launch_desc){n0 + (uint64_t)i * full, n, tf->job.class_index,
                                              lode_tf_report_mask_lo(&tf->job), lode_tf_report_mask_hi(&tf->job)};
    }
    const cudaError_t err = launch_batch(tf, k);
    if (err != cudaSuccess)
        return err;
    tf->queued++;
    return cudaSuccess;
}

/* Waits for the oldest queued batch. Its factors, as offsets from its n0
 * (valid until its slot is queued again), go to done_*; done_overflow when
 * a launch reported more than LODE_TF_FOUND_CAP (the list then holds only
 * some). */
static cudaError_t tf_finish_batch(cuda_tf_state *tf)
{
    if (tf->queued == 0)
        return cudaErrorNotReady;
    batch_slot *sl = &tf->slot[tf->head];
    tf->head = (tf->head + 1) % TF_DEPTH;
    tf->queued--;
    cudaError_t err = cudaEventSynchronize(sl->done);
    if (err != cudaSuccess)
        return err;
    const uint32_t full = full_launch(tf);
    uint32_t n = 0;
    tf->done_overflow = false;
    for (unsigned i = 0; i < sl->launches; i++) {
        const uint32_t *r = sl->host + i * CUDA_TF_RESULT_WORDS;
        if (tf->profile) /* batches of one launch, in set first_set */
            profile_collect(tf, sl->first_set, r, sl->count);
        if (r[1] > LODE_TF_FOUND_CAP)
            tf->done_overflow = true;
        const uint32_t k = r[1] > LODE_TF_FOUND_CAP ? LODE_TF_FOUND_CAP : r[1];
        for (uint32_t j = 0; j < k; j++)
            sl->found[n++] = r[2 + j] + i * full;
    }
    tf->done_n0 = sl->n0;
    tf->done_count = sl->count;
    tf->done_found = sl->found;
    tf->done_nfound = n;
    return cudaSuccess;
}

/* ---- the backend's side: open, jobs, the engine ----------------------------- */

static int tf_open(lode_device *d)
{
    cuda_tf_state *tf;
    TRY(d, tf_new(d->stream, &tf));
    d->algo_state = tf;
    return LODE_OK;
}

static void tf_close(lode_device *d)
{
    tf_free(state_of(d));
    d->algo_state = NULL;
}

static int tf_set_work(lode_device *d, const lode_work *work)
{
    TRY(d, tf_set_job(state_of(d), &work->factor));
    return LODE_OK;
}

/* Launches of up to launch_size() indices of one class, TF_DEPTH in
 * flight; the dispatcher re-checks every factor with the reference. */
static int tf_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    lode_device *d = ctx;
    (void)slot; /* the engine queues in turn */
    cudaError_t err = tf_enqueue_batch(state_of(d), start, (uint32_t)count);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "queueing a trial-factoring launch", err);
}

static int tf_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest launch */
    cudaError_t err = tf_finish_batch(state_of(d));
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "a trial-factoring launch", err);
}

static int tf_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_device *d = ctx;
    const cuda_tf_state *tf = state_of(d);
    (void)slot;
    if (tf->done_n0 != start || tf->done_count != count) {
        lode_log(LODE_LOG_ERROR, "%s: a trial-factoring launch out of order", d->label);
        return LODE_ERR_DEVICE;
    }
    if (tf->done_overflow)
        return LODE_ERR_HITS_OVERFLOW;
    return lode_collect_factor_offsets(d->label, tf->done_n0, tf->done_count, tf->done_found, tf->done_nfound,
                                       hits);
}

/* Waits for every queued batch and drops their results. */
static void tf_drain(void *ctx)
{
    cuda_tf_state *tf = state_of(ctx);
    sync_all(tf);
    for (unsigned s = 0; s < TF_SETS; s++)
        tf->ev_pending[s] = false;
    tf->queued = 0;
}

static lode_launch_engine tf_engine(lode_device *d)
{
    return (lode_launch_engine){.ctx = d, .depth = TF_DEPTH, .launch_size = launch_size(state_of(d)),
                                .blocking_wait = true, .enqueue = tf_enqueue, .wait = tf_wait,
                                .collect = tf_collect, .drain = tf_drain};
}

/* Whole batches, of about one device launch a millisecond (an H100's
 * rate, docs/PERFORMANCE.md). */
static uint64_t tf_preferred_chunk(lode_device *d, double target_ms)
{
    const cuda_tf_state *tf = state_of(d);
    const uint64_t batch = launch_size(tf);
    const uint64_t n = full_launch(tf) * (target_ms < 1 ? 1 : (uint64_t)target_ms);
    return (n + batch - 1) / batch * batch;
}

const cuda_algo_ops cuda_tf_ops = {
    .variants = variant_names,
    .n_variants = COUNT(variant_names),
    .open = tf_open,
    .close = tf_close,
    .set_work = tf_set_work,
    .engine = tf_engine,
    .preferred_chunk = tf_preferred_chunk,
};
