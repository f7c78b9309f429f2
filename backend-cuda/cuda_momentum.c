/* Momentum on a CUDA device: the host side of momentum.cu. The engine
 * owns one worker's device memory and queues the sweeps of the chosen
 * method (bucket, filter or radix; momentum.cu describes them). A launch of
 * the launch driver is a batch of sweeps of consecutive header nonces
 * (engine_batch); the host pairs each sweep's candidates
 * (core/backend_support/momentum_batch.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-cuda/cuda_internal.h"
#include "backend-cuda/momentum_kernels.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/momentum_batch.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"

/* ---- the engine: device memory and the launches of one worker ---------- */

typedef enum cuda_momentum_method {
    /* 2-bit saturating counters set with atomicOr in a table of
     * 2^table_bits counters, then filter rounds over the survivors in a
     * smaller table until few remain. */
    CUDA_MOMENTUM_FILTER,
    /* The baseline: CUB radix sort of all 2^26 (birthday, nonce) pairs,
     * then equal neighbours. */
    CUDA_MOMENTUM_RADIX,
    /* The filter with every atomic in shared memory: birthdays bucketed
     * by their top 14 bits, one block per bucket counts, filters and pairs
     * its entries exactly (momentum.cu). A sweep whose bucket
     * overflows is redone with the filter method (table_bits). */
    CUDA_MOMENTUM_BUCKET,
} cuda_momentum_method;

#define TPB CUDA_MOMENTUM_THREADS
/* Later rounds: table of 2^LIST_TABLE_BITS counters (16 MiB), kept in L2. */
#define LIST_TABLE_BITS 26
#define LIST_ROUNDS 4
/* Candidates copied back with every sweep; more come in a second copy. */
#define HOST_CAP 4096u
#define SLOTS 2
/* A sweep's results: a header of 4 words (the count of entries, then the
 * bucket method's overflow flags) and the entries, on the device (the
 * bucket method: LODE_MOM_BK_OUT_CAP entries, one area per sweep of a
 * batch) and in the pinned host copy (HOST_CAP entries). */
#define HEADER_BYTES 16u
#define AREA_BYTES ((size_t)HEADER_BYTES + (size_t)LODE_MOM_BK_OUT_CAP * sizeof(momentum_entry))
#define HOST_AREA_BYTES ((size_t)HEADER_BYTES + (size_t)HOST_CAP * sizeof(momentum_entry))

static const uint64_t mixers[1 + LIST_ROUNDS] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full,
                                                 0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull,
                                                 0xFF51AFD7ED558CCDull};

/* One per worker handle: the device memory of the sweeps in flight. */
typedef struct cuda_momentum cuda_momentum;
struct cuda_momentum {
    cuda_momentum_method method;
    unsigned table_bits; /* log2 of the first round's counters (filter method) */
    cudaStream_t stream;
    uint64_t *B, *B_sorted;
    uint32_t *V, *V_sorted;
    void *cub_temp;
    size_t cub_temp_bytes;
    uint32_t *table, *list_table;
    uint64_t *store;  /* bucket method: LODE_MOM_NBUCKETS x bucket_cap entries */
    uint32_t *bcount; /* bucket method: one counter per bucket */
    unsigned bucket_cap;
    /* Bucket method: a launch is a batch of up to `batch` sweeps with one
     * event at its end (the host wakes once per batch), queued as one CUDA
     * graph when full (one call and a parameter update per sweep instead of
     * eight calls per sweep). */
    unsigned batch;
    bool graphs;
    cudaGraph_t graph[SLOTS];
    cudaGraphExec_t exec[SLOTS];
    cudaGraphNode_t *hash_node[SLOTS]; /* batch each: the sweeps' hash kernels */
    unsigned batch_n[SLOTS];           /* sweeps of the batch in the slot */
    momentum_consts *job[SLOTS]; /* batch each: the queued sweeps', for a redo */
    cuda_momentum *fallback; /* bucket method: the filter engine that redoes an overflowed sweep */
    unsigned redos;
    momentum_entry *list[2];
    uint32_t *counts; /* device: one per round, and one more (the bucket method's flags) */
    int final_list, final_count;
    /* Up to SLOTS batches in flight, each with its own host copies:
     * batch k uses slot k % SLOTS. */
    unsigned queued, finished;
    char *host[SLOTS];  /* pinned: batch x HOST_AREA_BYTES */
    char *areas;        /* bucket method: SLOTS x batch x AREA_BYTES on the device */
    momentum_entry *more; /* malloc'd: the rest when more than HOST_CAP */
    size_t more_cap;
    cudaEvent_t done[SLOTS];
    /* LODE_MOMENTUM_PROFILE=1: events between the stages of each sweep,
     * summed and printed when the engine is freed (for measurements). */
    bool profile;
    cudaEvent_t ev[SLOTS][4];
    double stage_ms[3];
    unsigned sweeps;
};

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return err_;                                                                           \
    } while (0)

/* The bucket method's sweeps per launch (LODE_MOMENTUM_BATCH); profiling
 * times each sweep's stages with events: one sweep a launch. */
static unsigned bucket_batch(void)
{
    return lode_setting_flag(LODE_SETTING_MOMENTUM_PROFILE)
               ? 1
               : lode_setting_unsigned_in(LODE_SETTING_MOMENTUM_BATCH, 16, 1, 64);
}

/* Device bytes an engine of this method and table size allocates. */
static size_t engine_bytes(cuda_momentum_method method, unsigned table_bits)
{
    size_t lists = 2 * (size_t)LODE_MOM_NONCES * sizeof(momentum_entry);
    if (method == CUDA_MOMENTUM_BUCKET) /* a redo allocates a filter engine besides */
        return (size_t)LODE_MOM_NBUCKETS * LODE_MOM_BK_CAP * 8 + LODE_MOM_NBUCKETS * 4 +
               SLOTS * bucket_batch() * AREA_BYTES;
    if (method == CUDA_MOMENTUM_RADIX)
        return (size_t)LODE_MOM_NONCES * (8 + 8 + 4 + 4) + (size_t)LODE_MOM_NONCES * sizeof(momentum_entry) + (64u << 20);
    return (size_t)LODE_MOM_NONCES * 8 + ((size_t)1 << table_bits) / 4 + ((size_t)1 << LIST_TABLE_BITS) / 4 + lists;
}

/* Sweeps redone with the filter method after a bucket overflowed. */
static unsigned engine_redos(const cuda_momentum *m)
{
    return m != NULL ? m->redos : 0;
}

static void engine_free(cuda_momentum *m)
{
    if (m == NULL)
        return;
    if (m->stream != NULL)
        cudaStreamSynchronize(m->stream);
    if (m->profile && m->sweeps > 0)
        fprintf(stderr,
                "momentum %s: %u sweeps (%u redone), ms per sweep: hash+count %.3f, keep/sort/find %.3f, rest %.3f\n",
                m->method == CUDA_MOMENTUM_RADIX ? "radix" : m->method == CUDA_MOMENTUM_BUCKET ? "bucket" : "filter",
                m->sweeps, m->redos, m->stage_ms[0] / m->sweeps, m->stage_ms[1] / m->sweeps,
                m->stage_ms[2] / m->sweeps);
    engine_free(m->fallback);
    cudaFree(m->store);
    cudaFree(m->bcount);
    for (int k = 0; k < SLOTS; k++) {
        if (m->exec[k] != NULL)
            cudaGraphExecDestroy(m->exec[k]);
        if (m->graph[k] != NULL)
            cudaGraphDestroy(m->graph[k]);
        free(m->hash_node[k]);
        free(m->job[k]);
        for (int i = 0; i < 4; i++)
            if (m->ev[k][i] != NULL)
                cudaEventDestroy(m->ev[k][i]);
        cudaFreeHost(m->host[k]);
        if (m->done[k] != NULL)
            cudaEventDestroy(m->done[k]);
    }
    cudaFree(m->B);
    cudaFree(m->B_sorted);
    cudaFree(m->V);
    cudaFree(m->V_sorted);
    cudaFree(m->cub_temp);
    cudaFree(m->table);
    cudaFree(m->list_table);
    cudaFree(m->list[0]);
    cudaFree(m->areas);
    cudaFree(m->list[1]);
    cudaFree(m->counts);
    free(m->more);
    free(m);
}

static cudaError_t setup(cuda_momentum *m)
{
    if (m->method == CUDA_MOMENTUM_BUCKET) {
        /* LODE_MOMENTUM_BUCKET_CAP (tests): fewer slots, to force redos. */
        m->bucket_cap = lode_setting_unsigned_in(LODE_SETTING_MOMENTUM_BUCKET_CAP, LODE_MOM_BK_CAP, 64, LODE_MOM_BK_CAP);
        CHECK_CUDA(cudaMalloc((void **)&m->store, (size_t)LODE_MOM_NBUCKETS * m->bucket_cap * 8));
        CHECK_CUDA(cudaMalloc((void **)&m->bcount, LODE_MOM_NBUCKETS * sizeof(uint32_t)));
        m->batch = bucket_batch();
        CHECK_CUDA(cudaMalloc((void **)&m->areas, SLOTS * m->batch * AREA_BYTES));
    } else {
        m->batch = 1;
        CHECK_CUDA(cudaMalloc((void **)&m->B, (size_t)LODE_MOM_NONCES * 8));
        CHECK_CUDA(cudaMalloc((void **)&m->list[0], (size_t)LODE_MOM_NONCES * sizeof(momentum_entry)));
    }
    CHECK_CUDA(cudaMalloc((void **)&m->counts, (2 + LIST_ROUNDS) * sizeof(uint32_t)));
    m->profile = lode_setting_flag(LODE_SETTING_MOMENTUM_PROFILE);
    m->graphs = !lode_setting_flag(LODE_SETTING_CUDA_NO_GRAPHS);
    for (int k = 0; k < SLOTS; k++) {
        m->job[k] = malloc(m->batch * sizeof *m->job[k]);
        m->hash_node[k] = malloc(m->batch * sizeof *m->hash_node[k]);
        if (m->job[k] == NULL || m->hash_node[k] == NULL)
            return cudaErrorMemoryAllocation;
        CHECK_CUDA(cudaHostAlloc((void **)&m->host[k], m->batch * HOST_AREA_BYTES, cudaHostAllocDefault));
        CHECK_CUDA(cudaEventCreateWithFlags(&m->done[k], cudaEventBlockingSync | cudaEventDisableTiming));
        for (int i = 0; i < 4 && m->profile; i++)
            CHECK_CUDA(cudaEventCreate(&m->ev[k][i]));
    }
    if (m->method == CUDA_MOMENTUM_RADIX) {
        CHECK_CUDA(cudaMalloc((void **)&m->B_sorted, (size_t)LODE_MOM_NONCES * 8));
        CHECK_CUDA(cudaMalloc((void **)&m->V, (size_t)LODE_MOM_NONCES * 4));
        CHECK_CUDA(cudaMalloc((void **)&m->V_sorted, (size_t)LODE_MOM_NONCES * 4));
        CHECK_CUDA(cuda_momentum_radix_sort(NULL, &m->cub_temp_bytes, m->B, m->B_sorted, m->V, m->V_sorted,
                                            m->stream));
        CHECK_CUDA(cudaMalloc(&m->cub_temp, m->cub_temp_bytes));
    } else if (m->method == CUDA_MOMENTUM_FILTER) {
        CHECK_CUDA(cudaMalloc((void **)&m->table, ((size_t)1 << m->table_bits) / 4));
        CHECK_CUDA(cudaMalloc((void **)&m->list_table, ((size_t)1 << LIST_TABLE_BITS) / 4));
        CHECK_CUDA(cudaMalloc((void **)&m->list[1], (size_t)LODE_MOM_NONCES * sizeof(momentum_entry)));
    }
    return cudaSuccess;
}

/* table_bits: log2 of the first round's counters (2 bits each: 30 is
 * 256 MiB); ignored by the radix method. */
static cudaError_t engine_new(cuda_momentum_method method, unsigned table_bits, cudaStream_t stream,
                              cuda_momentum **out)
{
    cuda_momentum *m = calloc(1, sizeof *m);
    if (m == NULL)
        return cudaErrorMemoryAllocation;
    m->method = method;
    m->table_bits = table_bits < 24 ? 24 : table_bits > 34 ? 34 : table_bits;
    m->stream = stream;
    cudaError_t err = setup(m);
    if (err != cudaSuccess) {
        engine_free(m);
        return err;
    }
    *out = m;
    return cudaSuccess;
}

#define MARK(i)                                                                                    \
    do {                                                                                           \
        if (m->profile)                                                                            \
            CHECK_CUDA(cudaEventRecord(m->ev[slot][i], s));                                        \
    } while (0)

static char *bucket_area(cuda_momentum *m, unsigned slot, unsigned i)
{
    return m->areas + ((size_t)slot * m->batch + i) * AREA_BYTES;
}

/* Queues sweep i of the batch in slot call by call: its candidates and
 * counts come back into the slot's i-th host copies. */
static cudaError_t enqueue_sweep(cuda_momentum *m, unsigned slot, unsigned i, const momentum_consts *c)
{
    cudaStream_t s = m->stream;
    MARK(0);
    if (m->method == CUDA_MOMENTUM_BUCKET) { /* into the sweep's area; copied back with the batch */
        char *area = bucket_area(m, slot, i);
        CHECK_CUDA(cudaMemsetAsync(area, 0, HEADER_BYTES, s));
        CHECK_CUDA(cudaMemsetAsync(m->bcount, 0, LODE_MOM_NBUCKETS * sizeof(uint32_t), s));
        cuda_momentum_hash_bucket_launch(c, m->store, m->bcount, m->bucket_cap, s);
        MARK(1);
        cuda_momentum_bucket_find_launch(m->store, m->bcount, m->bucket_cap,
                                         (momentum_entry *)(area + HEADER_BYTES), (uint32_t *)area, s);
        MARK(2);
        CHECK_CUDA(cudaGetLastError());
        MARK(3);
        return cudaSuccess;
    }
    CHECK_CUDA(cudaMemsetAsync(m->counts, 0, (2 + LIST_ROUNDS) * sizeof(uint32_t), s));
    if (m->method == CUDA_MOMENTUM_RADIX) {
        cuda_momentum_hash_launch(c, m->B, NULL, 0, 0, m->V, s);
        MARK(1);
        CHECK_CUDA(cuda_momentum_radix_sort(m->cub_temp, &m->cub_temp_bytes, m->B, m->B_sorted, m->V,
                                            m->V_sorted, s));
        cuda_momentum_keep_sorted_launch(m->B_sorted, m->V_sorted, m->list[0], &m->counts[0], s);
        MARK(2);
        m->final_list = 0;
        m->final_count = 0;
    } else {
        const unsigned shift = 64 - m->table_bits, list_shift = 64 - LIST_TABLE_BITS;
        CHECK_CUDA(cudaMemsetAsync(m->table, 0, ((size_t)1 << m->table_bits) / 4, s));
        cuda_momentum_hash_launch(c, m->B, m->table, mixers[0], shift, NULL, s);
        MARK(1);
        cuda_momentum_keep_all_launch(m->B, m->table, mixers[0], shift, m->list[0], &m->counts[0], s);
        MARK(2);
        for (int r = 1; r <= LIST_ROUNDS; r++) {
            const momentum_entry *in = m->list[(r - 1) & 1];
            momentum_entry *out = m->list[r & 1];
            CHECK_CUDA(cudaMemsetAsync(m->list_table, 0, ((size_t)1 << LIST_TABLE_BITS) / 4, s));
            cuda_momentum_count_list_launch(in, &m->counts[r - 1], m->list_table, mixers[r], list_shift, s);
            cuda_momentum_keep_list_launch(in, &m->counts[r - 1], m->list_table, mixers[r], list_shift, out,
                                           &m->counts[r], s);
        }
        m->final_list = LIST_ROUNDS & 1;
        m->final_count = LIST_ROUNDS;
    }
    CHECK_CUDA(cudaGetLastError());
    char *host = m->host[slot] + i * HOST_AREA_BYTES;
    CHECK_CUDA(cudaMemcpyAsync(host, &m->counts[m->final_count], 2 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaMemcpyAsync(host + HEADER_BYTES, m->list[m->final_list], HOST_CAP * sizeof(momentum_entry),
                               cudaMemcpyDeviceToHost, s));
    MARK(3);
    return cudaSuccess;
}

/* The bucket method's results of a batch of n sweeps, their areas' heads
 * in one strided copy. */
static struct cudaMemcpy3DParms areas_copy(cuda_momentum *m, unsigned slot, unsigned n)
{
    struct cudaMemcpy3DParms p = {0};
    p.srcPtr = (struct cudaPitchedPtr){.ptr = bucket_area(m, slot, 0), .pitch = AREA_BYTES,
                                       .xsize = HOST_AREA_BYTES, .ysize = n};
    p.dstPtr = (struct cudaPitchedPtr){.ptr = m->host[slot], .pitch = HOST_AREA_BYTES,
                                       .xsize = HOST_AREA_BYTES, .ysize = n};
    p.extent = (struct cudaExtent){.width = HOST_AREA_BYTES, .height = n, .depth = 1};
    p.kind = cudaMemcpyDeviceToHost;
    return p;
}

/* A graph kernel node of the bucket method's hash kernel. */
static struct cudaKernelNodeParams hash_bucket_node(void **args)
{
    return (struct cudaKernelNodeParams){.func = (void *)cuda_momentum_hash_bucket_kernel(),
                                         .gridDim = {LODE_MOM_NBASES / TPB, 1, 1}, .blockDim = {TPB, 1, 1},
                                         .sharedMemBytes = 0, .kernelParams = args, .extra = NULL};
}

/* The bucket method's full batch for slot as one graph: per sweep, clear
 * the area's header and the bucket counters, hash into buckets, find; a
 * chain (the sweeps share the buckets), then one copy of every sweep's
 * results. The hash kernels' job is set per launch. Kernel and memset
 * nodes cost the host next to nothing at launch, copies about 2 us each
 * (backend-cuda/probes/host_cost.cu). */
static cudaError_t build_graph(cuda_momentum *m, unsigned slot)
{
    cudaGraph_t g;
    CHECK_CUDA(cudaGraphCreate(&g, 0));
    m->graph[slot] = g;
    cudaGraphNode_t prev = NULL;
    const momentum_consts zero = {0};
    unsigned cap = m->bucket_cap;
    void *hash_args[] = {(void *)&zero, &m->store, &m->bcount, &cap};
    const struct cudaKernelNodeParams hash = hash_bucket_node(hash_args);
    const struct cudaMemsetParams bcount = {.dst = m->bcount, .elementSize = 4, .width = LODE_MOM_NBUCKETS,
                                            .height = 1};
    for (unsigned i = 0; i < m->batch; i++) {
        char *area = bucket_area(m, slot, i);
        momentum_entry *out = (momentum_entry *)(area + HEADER_BYTES);
        uint32_t *flags = (uint32_t *)area;
        void *find_args[] = {&m->store, &m->bcount, &cap, &out, &flags};
        const struct cudaKernelNodeParams find = {
            .func = (void *)cuda_momentum_bucket_find_kernel(), .gridDim = {LODE_MOM_NBUCKETS, 1, 1},
            .blockDim = {CUDA_MOMENTUM_FIND_THREADS, 1, 1}, .sharedMemBytes = 0, .kernelParams = find_args,
            .extra = NULL};
        const struct cudaMemsetParams header = {.dst = area, .elementSize = 4, .width = HEADER_BYTES / 4,
                                                .height = 1};
        const size_t deps = prev != NULL ? 1 : 0;
        cudaGraphNode_t header_cleared, cleared;
        CHECK_CUDA(cudaGraphAddMemsetNode(&header_cleared, g, &prev, deps, &header));
        CHECK_CUDA(cudaGraphAddMemsetNode(&cleared, g, &header_cleared, 1, &bcount));
        CHECK_CUDA(cudaGraphAddKernelNode(&m->hash_node[slot][i], g, &cleared, 1, &hash));
        CHECK_CUDA(cudaGraphAddKernelNode(&prev, g, &m->hash_node[slot][i], 1, &find));
    }
    const struct cudaMemcpy3DParms copy = areas_copy(m, slot, m->batch);
    cudaGraphNode_t copied;
    CHECK_CUDA(cudaGraphAddMemcpyNode(&copied, g, &prev, 1, &copy));
    CHECK_CUDA(cudaGraphInstantiate(&m->exec[slot], g, 0));
    return cudaSuccess;
}

/* A full batch through the slot's graph: a parameter update per sweep (on
 * the host) and one launch. */
static cudaError_t enqueue_graph(cuda_momentum *m, unsigned slot)
{
    if (m->exec[slot] == NULL) {
        cudaError_t err = build_graph(m, slot);
        if (err != cudaSuccess)
            return err;
    }
    unsigned cap = m->bucket_cap;
    for (unsigned i = 0; i < m->batch; i++) {
        void *args[] = {&m->job[slot][i], &m->store, &m->bcount, &cap};
        const struct cudaKernelNodeParams hash = hash_bucket_node(args);
        CHECK_CUDA(cudaGraphExecKernelNodeSetParams(m->exec[slot], m->hash_node[slot][i], &hash));
    }
    return cudaGraphLaunch(m->exec[slot], m->stream);
}

/* A launch is a batch of 1 .. engine_batch() sweeps (the bucket method's
 * LODE_MOMENTUM_BATCH, one CUDA graph when full; 1 for the others) with one
 * event at its end: the host wakes once per batch. */
static unsigned engine_batch(const cuda_momentum *m)
{
    return m->batch;
}

/* Batches that may be queued before waiting for the first. */
static unsigned engine_depth(const cuda_momentum *m)
{
    return m->method == CUDA_MOMENTUM_BUCKET ? SLOTS : 1;
}

/* Queues the sweeps of the 2^26 nonces of jobs c[0 .. n) as one batch (no
 * host wait); cudaErrorNotReady past engine_depth() batches. */
static cudaError_t engine_enqueue(cuda_momentum *m, const momentum_consts *c, unsigned n)
{
    if (m->queued - m->finished >= engine_depth(m))
        return cudaErrorNotReady; /* finish one first */
    if (n == 0 || n > m->batch)
        return cudaErrorInvalidValue;
    const unsigned slot = m->queued % SLOTS;
    for (unsigned i = 0; i < n; i++)
        m->job[slot][i] = c[i];
    m->batch_n[slot] = n;
    if (n == m->batch && m->batch > 1 && m->graphs) {
        CHECK_CUDA(enqueue_graph(m, slot));
    } else {
        for (unsigned i = 0; i < n; i++)
            CHECK_CUDA(enqueue_sweep(m, slot, i, &c[i]));
        if (m->method == CUDA_MOMENTUM_BUCKET) {
            const struct cudaMemcpy3DParms copy = areas_copy(m, slot, n);
            CHECK_CUDA(cudaMemcpy3DAsync(&copy, m->stream));
        }
    }
    CHECK_CUDA(cudaEventRecord(m->done[slot], m->stream));
    m->queued++;
    return cudaSuccess;
}

/* Waits for every queued sweep and drops their results. */
static void engine_discard(cuda_momentum *m)
{
    cudaStreamSynchronize(m->stream);
    m->finished = m->queued;
}

/* Waits for the oldest queued batch; *n: its sweeps. */
static cudaError_t engine_wait(cuda_momentum *m, unsigned *n)
{
    if (m->queued == m->finished)
        return cudaErrorNotReady; /* nothing queued */
    const unsigned slot = m->finished++ % SLOTS;
    CHECK_CUDA(cudaEventSynchronize(m->done[slot]));
    if (m->profile) { /* batches of one sweep */
        float ms[3];
        for (int i = 0; i < 3; i++)
            CHECK_CUDA(cudaEventElapsedTime(&ms[i], m->ev[slot][i], m->ev[slot][i + 1]));
        for (int i = 0; i < 3; i++)
            m->stage_ms[i] += ms[i];
        m->sweeps++;
    }
    *n = m->batch_n[slot];
    return cudaSuccess;
}

/* The candidates of sweep i of the batch last waited for (an overflowed
 * sweep is redone here, exactly); valid until the next call or the
 * enqueue after next. */
static cudaError_t engine_result(cuda_momentum *m, unsigned i, momentum_entry **list, size_t *count)
{
    const unsigned slot = (m->finished - 1) % SLOTS;
    if (m->finished == 0 || i >= m->batch_n[slot])
        return cudaErrorInvalidValue;
    const char *host = m->host[slot] + i * HOST_AREA_BYTES;
    const uint32_t *flags = (const uint32_t *)host;
    const size_t n = flags[0];
    if (m->method == CUDA_MOMENTUM_BUCKET && (flags[1] != 0 || n > HOST_CAP)) {
        /* A bucket or a shared list overflowed, or more pairs than the
         * first copy held (the device list may already be a later
         * sweep's): redo the sweep exactly with the filter method (its
         * engine, made on the first redo, runs one sweep at a time). */
        m->redos++;
        if (m->fallback == NULL)
            CHECK_CUDA(engine_new(CUDA_MOMENTUM_FILTER, m->table_bits, m->stream, &m->fallback));
        unsigned one;
        CHECK_CUDA(engine_enqueue(m->fallback, &m->job[slot][i], 1));
        CHECK_CUDA(engine_wait(m->fallback, &one));
        return engine_result(m->fallback, 0, list, count);
    }
    if (n <= HOST_CAP) {
        *list = (momentum_entry *)(host + HEADER_BYTES);
        *count = n;
        return cudaSuccess;
    }
    /* More candidates than the first copy held (not expected): copy all
     * (batches of one sweep, one in flight for these methods: the list is
     * this sweep's). */
    if (n > m->more_cap) {
        momentum_entry *grown = realloc(m->more, n * sizeof *grown);
        if (grown == NULL)
            return cudaErrorMemoryAllocation;
        m->more = grown;
        m->more_cap = n;
    }
    CHECK_CUDA(cudaMemcpyAsync(m->more, m->list[m->final_list], n * sizeof(momentum_entry),
                               cudaMemcpyDeviceToHost, m->stream));
    CHECK_CUDA(cudaStreamSynchronize(m->stream));
    *list = m->more;
    *count = n;
    return cudaSuccess;
}

/* ---- the algorithm's device state and vtable --------------------------- */

static const char *const variant_names[] = {"bucket", "filter", "radix"};
static const cuda_momentum_method variant_methods[] = {CUDA_MOMENTUM_BUCKET, CUDA_MOMENTUM_FILTER,
                                                       CUDA_MOMENTUM_RADIX};

typedef struct cuda_momentum_state {
    cuda_momentum *engine;
    uint8_t header[80];
    lode_u256 target;
    momentum_consts *sweep_jobs; /* a batch's, engine_batch() */
    unsigned sweeps_done;        /* sweeps of the batch last waited for */
    momentum_batch batch;        /* their candidates, copied off the pinned buffers */
} cuda_momentum_state;

static cuda_momentum_state *state_of(const lode_device *d) { return d->algo_state; }

static void momentum_close(lode_device *d)
{
    cuda_momentum_state *st = state_of(d);
    if (st == NULL)
        return;
    if (engine_redos(st->engine) > 0) /* as OpenCL's: tests look for it */
        lode_log(LODE_LOG_INFO, "%s: momentum: %u sweep(s) redone with the filter", d->label,
                 engine_redos(st->engine));
    engine_free(st->engine);
    momentum_batch_free(&st->batch);
    free(st->sweep_jobs);
    free(st);
    d->algo_state = NULL;
}

/* The first-round table: 2^27 counters (32 MiB, so the atomics stay in an
 * H100's L2: measured fastest, docs/PERFORMANCE.md; the filter method was
 * first designed with 2^30, 256 MiB), fewer where memory is short; LODE_MOMENTUM_TABLE_BITS
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
    while (bits > 26 && engine_bytes(method, bits) > free_bytes * 0.9)
        bits--;
    if (engine_bytes(method, bits) > free_bytes) {
        lode_log(LODE_LOG_ERROR, "%s: %zu MiB free, Momentum needs %zu MiB", d->label, free_bytes >> 20,
                 engine_bytes(method, bits) >> 20);
        return LODE_ERR_NO_MEMORY;
    }
    TRY(d, engine_new(method, bits, d->stream, &st->engine));
    const unsigned batch = engine_batch(st->engine);
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
    cudaError_t err = engine_enqueue(st->engine, st->sweep_jobs, (unsigned)count);
    return err == cudaSuccess ? LODE_OK : cuda_fail(d, d->index, "queueing Momentum sweeps", err);
}

static int momentum_wait(void *ctx, unsigned slot)
{
    lode_device *d = ctx;
    (void)slot; /* the engine finishes its oldest batch */
    cudaError_t err = engine_wait(state_of(d)->engine, &state_of(d)->sweeps_done);
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
        cudaError_t err = engine_result(st->engine, i, &list, &n);
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
    engine_discard(state_of(ctx)->engine);
}

static lode_launch_engine momentum_engine(lode_device *d)
{
    const cuda_momentum *m = state_of(d)->engine;
    return (lode_launch_engine){.ctx = d, .depth = engine_depth(m), .launch_size = engine_batch(m),
                                .blocking_wait = true, .enqueue = momentum_enqueue, .wait = momentum_wait,
                                .fetch = momentum_fetch, .collect = momentum_collect, .drain = momentum_drain};
}

/* Whole batches, of about 0.3 sweeps a millisecond (an H100's rate,
 * docs/PERFORMANCE.md). */
static uint64_t momentum_preferred_chunk(lode_device *d, double target_ms)
{
    const uint64_t batch = engine_batch(state_of(d)->engine);
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
