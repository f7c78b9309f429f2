/* The CUDA backend's private parts, shared by cuda_backend.c (the vtable,
 * enumeration, open and close, jobs, scanning), cuda_tune.c and
 * cuda_engines.c. */
#ifndef LODE_BACKEND_CUDA_INTERNAL_H
#define LODE_BACKEND_CUDA_INTERNAL_H

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backend-cuda/cuda_kernels.h"
#include "backend-cuda/momentum_cuda.h"
#include "backend-cuda/tf_cuda.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/momentum_common.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/base/backend.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/text.h"
#include "core/base/tf_ref.h"
#include "core/backend_support/tune_cache.h"

/* Aimed duration of one launch: long enough that launch overhead vanishes,
 * short enough that a new job (abort) is picked up quickly. */
#define LAUNCH_MS 50.0
#define IN_FLIGHT 2
/* Largest nonce count of one SHA-256d launch (keeps 32-bit offsets safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)
/* scrypt scratchpad: at most this many batches' worth of resident slots,
 * and at most this share of the free device memory. */
#define SCRYPT_MAX_WAVES 2u
#define SCRYPT_MEM_SHARE 0.85
/* Hash slots come in multiples of this (hashes per block for every shape
 * the tuner tries: at most 256, a hash per thread). */
#define SCRYPT_SLOT_QUANTUM 256u

typedef struct variant_desc {
    const char *name;
    unsigned value; /* sha256d: additions on the FMA pipe; scrypt: the shape's gap */
    unsigned lanes; /* scrypt: at most this many launches run at once (1 or 2) */
    cuda_scrypt_layout layout; /* scrypt */
} variant_desc;

/* Best first (the order of variants()). */
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Launch parameters: tuned, cached (core/backend_support/tune_cache.h) or set by LODE_CUDA_TUNE
 * (keys tpb, npt, waves). */
typedef struct cuda_tune_params {
    unsigned threads_per_block;
    unsigned nonces_per_thread; /* sha256d: nonces per thread and launch;
                                   scrypt lg*: hashes per group of 4 threads (1, 2);
                                   scrypt thread*: 1 */
    unsigned waves;             /* scrypt: batch = waves x resident hash slots */
    double rate;                /* measured hashes per second, 0 if unknown */
} cuda_tune_params;

struct lode_device {
    int index;
    char name[128];
    lode_algo algo;
    const variant_desc *variant;
    cudaStream_t stream;       /* sha256d, and scrypt launches of slot 0 */
    cudaStream_t stream2;      /* scrypt launches of slot 1 (see cuda_enqueue) */
    unsigned lanes;            /* scrypt: 2 when the scratch holds two halves */
    cudaEvent_t finished[IN_FLIGHT];
    cuda_hits *hits_dev[IN_FLIGHT];
    cuda_hits *hits_host[IN_FLIGHT]; /* pinned */

    cuda_tune_params tune;
    bool tuned;           /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */

    uint8_t header[80];
    lode_u256 target;
    cuda_sha256d_params sha;
    sha256d_job host_job; /* the job on the host: precomputation, exact check */
    bool versions;        /* the job is version-rolled: vsha and vjobs hold it */
    cuda_sha256d_versions_params vsha;
    sha256d_version_set vjobs;
    cuda_scrypt_params scrypt;
    void *scrypt_state, *scrypt_pad;
    unsigned scrypt_slots; /* hash slots allocated (all lanes together) */
    cuda_scrypt_shape resident_shape; /* the shape resident_slots was measured for */
    unsigned resident_slots;          /* hash slots of it resident at once */
    cuda_momentum *momentum;
    momentum_pairs pairs;
    momentum_entry *cands; /* a batch's candidates, copied off the pinned buffers */
    size_t cand_cap;
    momentum_consts *sweep_jobs; /* a batch's, cuda_momentum_batch() */
    size_t *sweep_ends;          /* where each sweep's candidates end in cands */
    unsigned sweeps_done;        /* sweeps of the batch last waited for */
    cuda_tf *tf;

    lode_launch_driver driver;
    /* What the last trial-factoring wait returned (the launch's factors),
     * read by collect. */
    uint64_t tf_n0;
    uint32_t tf_count, tf_nfound;
    const uint32_t *tf_found;
    bool tf_overflow;
};

#define TRY(d, call)                                                                               \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return cuda_fail((d), (d)->index, #call, err_);                                            \
    } while (0)

bool cuda_sha256d_exact(const void *ctx, uint32_t nonce);
cuda_scrypt_shape cuda_scrypt_shape_of(const lode_device *d, const cuda_tune_params *t);
int cuda_tune_measure(lode_device *d, double target_ms);
int cuda_enqueue(lode_device *d, int slot, uint64_t start, uint64_t count);
int cuda_fail(const lode_device *d, int index, const char *what, cudaError_t err);
lode_launch_engine cuda_engine_of(lode_device *d);
unsigned cuda_scrypt_batch(lode_device *d);
void cuda_load_params(lode_device *d);
void cuda_size_launches(lode_device *d);

#endif
