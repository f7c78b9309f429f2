/* The OpenCL backend's private parts, shared by opencl_backend.c (the
 * vtable, enumeration, programs, open and close, jobs, scanning),
 * ocl_tune.c and ocl_engines.c. */
#ifndef LODE_BACKEND_OPENCL_INTERNAL_H
#define LODE_BACKEND_OPENCL_INTERNAL_H

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "backend-opencl/ocl_momentum.h"
#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_tf.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/nvml_sensors.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/clock.h"
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
/* Largest nonce count of one SHA-256d launch (32-bit offsets stay safe). */
#define SHA256D_MAX_LAUNCH (UINT64_C(1) << 31)
/* The hit buffer and the parameter blocks: core/backend_support/kernel_params.h. */
#define PARAM_WORDS 64
_Static_assert(LODE_SHA256D_PARAM_WORDS <= PARAM_WORDS && LODE_SCRYPT_PARAM_WORDS <= PARAM_WORDS, "parameter block");
/* scrypt: per slot LODE_SCRYPT_STATE_WORDS between the kernels, and the scratchpad. */
#define SCRYPT_STATE_BYTES (LODE_SCRYPT_STATE_WORDS * 4u)
#define SCRYPT_MEM_SHARE 0.85
/* Slots come in multiples of this: every work-group shape the tuner tries
 * holds a divisor of it (at most 256 work-items, 4 per hash or 1). */
#define SCRYPT_SLOT_QUANTUM 256u
/* The pbkdf2 kernels' work-group size. */
#define PBKDF2_LOCAL 64u

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* How the four work-items of a scrypt hash trade words (kernels/scrypt.cl XCHG). */
enum { XCHG_SINGLE = 0, XCHG_LOCAL = 1, XCHG_NV = 2, XCHG_KHR = 3, XCHG_INTEL = 4, XCHG_STAGED = 5 };
/* romix_thread stages 144 bytes per work-item in local memory. */
#define STAGED_ROW_BYTES 144u
#define STAGED_MAX_LOCAL 128u

/* Launch parameters: tuned, cached (core/backend_support/tune_cache.h) or set by
 * LODE_OPENCL_TUNE (keys ls, npt, il, batch). */
typedef struct ocl_tune_params {
    unsigned local_size; /* work-group size of the main kernel */
    unsigned per_item;   /* sha256d: nonces per work-item; scrypt: hashes per quad (1, 2) */
    unsigned batch;      /* scrypt: hash slots per romix launch; 0 = all allocated */
    double rate;         /* measured hashes per second, 0 if unknown */
} ocl_tune_params;

struct lode_device {
    int index;
    const ocl_dev_desc *desc;
    char label[180]; /* "opencl:0 (NVIDIA H100 80GB HBM3)" for messages */
    lode_algo algo;
    const char *variant;
    int xchg;             /* scrypt */
    unsigned lookup_gap;  /* scrypt */
    bool cpu;             /* a CPU device: other defaults and tuning choices */

    cl_context ctx;
    cl_command_queue queue;
    cl_program prog;
    cl_kernel k_main, k_in, k_out; /* sha256d_search_* or romix_*, pbkdf2_in, pbkdf2_out */
    cl_program vprog;              /* sha256d: the version-rolled search, built on first use */
    cl_kernel k_versions;
    size_t versions_max_local;     /* the device's limit for k_versions */
    unsigned prog_hashes;          /* HASHES the scrypt program was built with */
    size_t main_max_local;         /* the device's limit for k_main */
    cl_mem params, hits[IN_FLIGHT], state, pad; /* params: scrypt's block */
    cl_event finished[IN_FLIGHT];    /* a launch's hit read-back */
    cl_event kernel_done[IN_FLIGHT]; /* its last kernel: polled (a pageable read-back may
                                        complete only inside clWaitForEvents) */
    uint32_t hits_host[IN_FLIGHT][LODE_HITS_WORDS];
    sha256d_job host_job; /* sha256d on the host: precomputation, exact check */
    bool versions;        /* the sha256d job is version-rolled: vjobs and vparams hold it */
    sha256d_version_set vjobs;
    uint32_t vparams[LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS];

    ocl_tune_params tune;
    bool tuned; /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */
    unsigned slots;        /* scrypt hash slots allocated */

    uint8_t header[80];
    lode_u256 target;
    uint32_t param_words[PARAM_WORDS];
    ocl_momentum *momentum;
    momentum_pairs pairs;
    ocl_tf *tf; /* trial factoring */

    lode_launch_driver driver;
    /* What the last wait returned (Momentum: the launch's sweeps, their
     * candidates copied one after another, sweep j's from sweep_at[j];
     * trial factoring: the launch's factors). */
    momentum_entry *cands;
    size_t cand_cap, sweep_at[OCL_MOMENTUM_BATCH_MAX + 1];
    unsigned sweeps;
    uint64_t tf_n0, tf_count;
    const ocl_tf_part *tf_parts;
    unsigned tf_nparts;
    bool tf_overflow;
};
#define TRY(d, what, call)                                                                         \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS)                                                                    \
            return ocl_fail((d), (what), err_);                                                        \
    } while (0)

/* opencl_backend.c */
const char *ocl_algo_name(lode_algo algo);
bool ocl_sha256d_exact(const void *ctx, uint32_t nonce);
int ocl_build_program(lode_device *d, unsigned hashes);
int ocl_enqueue(lode_device *d, int slot, uint64_t start, uint64_t count);
int ocl_fail(const lode_device *d, const char *what, cl_int err);
/* ocl_tune.c: one work-item per hash (the single and staged exchanges). */
bool ocl_item_per_hash(const lode_device *d);
int ocl_nonce_query(void *ctx, unsigned slot);
int ocl_nonce_wait(void *ctx, unsigned slot);
int ocl_tune_measure(lode_device *d, double target_ms);
int ocl_upload_params(lode_device *d);
lode_launch_engine ocl_engine_of(lode_device *d);
uint64_t ocl_preferred_chunk(lode_device *d, double target_ms);
unsigned ocl_per_group(const lode_device *d);
void ocl_clamp_params(lode_device *d);
void ocl_load_params(lode_device *d);
void ocl_size_launches(lode_device *d);

#endif
