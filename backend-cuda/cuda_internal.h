/* The CUDA backend's private parts: the device handle's common part, the
 * per-algorithm table every cuda_<name>.c fills (cuda_backend.c picks one
 * when a handle opens), and the nonce-scan pipeline SHA-256d and scrypt
 * share (cuda_nonce_scan.c). */
#ifndef LODE_BACKEND_CUDA_INTERNAL_H
#define LODE_BACKEND_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend-cuda/cuda_kernels.h"
#include "core/backend_support/hit_collect.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/tune_cache.h"
#include "core/base/backend.h"

/* Aimed duration of one launch: long enough that launch overhead vanishes,
 * short enough that a new job (abort) is picked up quickly. */
#define LAUNCH_MS 50.0
#define IN_FLIGHT 2

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* What one algorithm does on a CUDA device. cuda_backend.c makes the
 * common part of a handle (device, stream, label) and leaves the rest to
 * these; each cuda_<name>.c defines `const cuda_algo_ops cuda_<name>_ops`. */
typedef struct cuda_algo_ops {
    /* The variants' names, best first (the first is the default). */
    const char *const *variants;
    size_t n_variants;
    /* Allocates the algorithm's state (d->algo_state) for d->variant_index;
     * on failure cuda_backend.c calls close. */
    int (*open)(lode_device *d);
    /* Frees what open made (d->algo_state may be NULL or half built). */
    void (*close)(lode_device *d);
    int (*set_work)(lode_device *d, const lode_work *work);
    /* The launch driver's engine for the next scan. */
    lode_launch_engine (*engine)(lode_device *d);
    uint64_t (*preferred_chunk)(lode_device *d, double target_ms);
    /* lode_backend_ops.tune; NULL: the algorithm has one launch shape. */
    int (*tune)(lode_device *d, double target_ms);
} cuda_algo_ops;

#define LODE_ALGO(ID, name, ...) extern const cuda_algo_ops cuda_##name##_ops;
#include "core/base/algos.def"
#undef LODE_ALGO

struct lode_device {
    int index;
    char name[128];
    char label[160]; /* "cuda:0 (NVIDIA H200)", for messages */
    lode_algo algo;
    const cuda_algo_ops *ops; /* chosen once, in open */
    const char *variant;      /* ops->variants[variant_index] */
    unsigned variant_index;
    cudaStream_t stream;
    lode_launch_driver driver;
    void *algo_state; /* the algorithm's (struct in cuda_<name>.c) */
};

#define TRY(d, call)                                                                               \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return cuda_fail((d), (d)->index, #call, err_);                                        \
    } while (0)

/* Logs a failed runtime call with the device it concerns and maps it to a
 * lode status: out of memory or a device failure. */
int cuda_fail(const lode_device *d, int index, const char *what, cudaError_t err);

/* ---- the nonce-scan pipeline of SHA-256d and scrypt (cuda_nonce_scan.c) */

/* Launch parameters: tuned, cached (core/backend_support/tune_cache.h) or
 * set by LODE_CUDA_TUNE (keys tpb, npt, waves). */
typedef struct cuda_tune_params {
    unsigned threads_per_block;
    unsigned nonces_per_thread; /* sha256d: nonces per thread and launch;
                                   scrypt lg*: hashes per group of 4 threads (1, 2);
                                   scrypt thread*: 1 */
    unsigned waves;             /* scrypt: batch = waves x resident hash slots */
    double rate;                /* measured hashes per second, 0 if unknown */
} cuda_tune_params;

/* Queues the algorithm's kernels for one launch over [start, start +
 * count) into hits on stream. */
typedef int (*cuda_nonce_launch)(lode_device *d, int slot, uint64_t start, uint64_t count, cuda_hits *hits,
                                 cudaStream_t stream);

/* Launches of about LAUNCH_MS, IN_FLIGHT of them, each with its hit
 * buffers and event; the algorithm's state embeds one. */
typedef struct cuda_nonce_scan {
    cudaEvent_t finished[IN_FLIGHT];
    cuda_hits *hits_dev[IN_FLIGHT];
    cuda_hits *hits_host[IN_FLIGHT]; /* pinned */
    cudaStream_t slot_stream[IN_FLIGHT]; /* each slot's stream (d->stream unless the algorithm says) */
    cudaStream_t extra_stream;           /* a second stream the algorithm uses, or NULL: drained too */
    cuda_nonce_launch launch;
    lode_nonce_hit_check check; /* what collect checks the hits against */
    cuda_tune_params tune;
    bool tuned;            /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */
} cuda_nonce_scan;

/* The events and hit buffers, every slot on d->stream. */
int cuda_nonce_open(lode_device *d, cuda_nonce_scan *s, cuda_nonce_launch launch);
void cuda_nonce_close(cuda_nonce_scan *s);
/* Queues one launch with its slot's hit buffer: clear the counter, run,
 * copy the hits back, mark the event. */
int cuda_nonce_enqueue(lode_device *d, cuda_nonce_scan *s, int slot, uint64_t start, uint64_t count);
/* The engine: ctx is d, whose algo_state starts with its cuda_nonce_scan. */
lode_launch_engine cuda_nonce_engine(lode_device *d);
uint64_t cuda_nonce_preferred_chunk(const cuda_nonce_scan *s, double target_ms);
/* s->tune from the override or the cache, else defaults; sets mode and tuned. */
void cuda_nonce_load_params(const lode_device *d, cuda_nonce_scan *s, cuda_tune_params defaults);

/* Picks the fastest of n candidates: each is one timed launch of
 * count(d, i, last) indices (0 skips it; last is the count of the last one
 * run), the first after a warm-up launch. On success s->tune is the winner
 * with its rate and s->tuned is set; else s->tune is as it was and the
 * error (LODE_ERR_DEVICE when nothing ran) is returned. */
typedef uint64_t (*cuda_trial_count)(lode_device *d, size_t index, uint64_t last);
int cuda_nonce_tune(lode_device *d, cuda_nonce_scan *s, const cuda_tune_params *candidates, size_t n,
                    cuda_trial_count count);
/* Stores s->tune in the cache unless tuning is off. */
void cuda_nonce_store_params(const lode_device *d, const cuda_nonce_scan *s);

#endif
