/* The OpenCL backend's private parts: the handle ocl_backend.c opens, the
 * table of per-algorithm operations it opens it through (one
 * ocl_<name>_ops per algorithm of core/base/algos.def, in ocl_<name>.c),
 * the device helpers of ocl_backend.c and the nonce scans SHA-256d and
 * scrypt share (ocl_nonce.c). */
#ifndef LODE_BACKEND_OPENCL_INTERNAL_H
#define LODE_BACKEND_OPENCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "core/backend_support/hit_collect.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/launch_driver.h"
#include "core/backend_support/tune_cache.h"
#include "core/base/backend.h"

/* Aimed duration of one launch: long enough that launch overhead vanishes,
 * short enough that a new job (abort) is picked up quickly. */
#define LAUNCH_MS 50.0
#define IN_FLIGHT 2
#define VENDOR_NVIDIA 0x10de

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One algorithm on an OpenCL device, chosen once when a handle opens. Its
 * state (lode_device.state) is the algorithm's own, made by open. */
typedef struct ocl_algo_ops {
    /* The variants device x runs, best first; at most max. */
    int (*variants)(const ocl_dev_desc *x, const char **names, int max);
    /* Makes the state for d->variant in d's context and queue. On failure
     * the handle is closed (close sees the state as far as it got). */
    int (*open)(lode_device *d);
    /* Frees the state (NULL: open failed before making it); nothing is
     * left running on the queue. */
    void (*close)(lode_device *d);
    int (*set_work)(lode_device *d, const lode_work *work);
    /* The launch driver's engine for the next scan. */
    lode_launch_engine (*engine)(lode_device *d);
    uint64_t (*preferred_chunk)(lode_device *d, double target_ms);
    /* Measures the launch shape; NULL: nothing to tune. */
    int (*tune)(lode_device *d, double target_ms);
} ocl_algo_ops;

#define LODE_ALGO(ID, name, ...) extern const ocl_algo_ops ocl_##name##_ops;
#include "core/base/algos.def"
#undef LODE_ALGO

struct lode_device {
    int index;
    const ocl_dev_desc *desc;
    char label[180]; /* "opencl:0 (NVIDIA H100 80GB HBM3)" for messages */
    lode_algo algo;
    const char *variant;
    bool cpu; /* a CPU device: other defaults and tuning choices */
    cl_context ctx;
    cl_command_queue queue;
    const ocl_algo_ops *ops;
    void *state;
    lode_launch_driver driver;
};

#define OCL_TRY(d, what, call)                                                                         \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS)                                                                    \
            return ocl_fail((d), (what), err_);                                                    \
    } while (0)

/* ---- ocl_backend.c: device helpers ---- */
/* Logs "<label>: <what> failed: <error>" and returns its lode status. */
int ocl_fail(const lode_device *d, const char *what, cl_int err);
const char *ocl_algo_name(lode_algo algo);
bool ocl_is_cpu(const ocl_dev_desc *x);
/* Copies the first of list's n variants, at most max; returns how many. */
int ocl_take_variants(const char *const *list, int n, const char **names, int max);
int ocl_create_buffer(lode_device *d, cl_mem_flags flags, size_t size, cl_mem *out);
int ocl_make_kernel(lode_device *d, cl_program prog, const char *name, cl_kernel *out);
/* The build options every program gets; returns their length. */
int ocl_common_options(const lode_device *d, char *options, size_t len);
/* The device's largest work-group for kernel k. */
int ocl_max_local(lode_device *d, cl_kernel k, size_t *out);
int ocl_set_args(lode_device *d, cl_kernel k, unsigned n, const size_t *sizes, const void *const *vals);
/* ev, if given, receives the kernel's event (a previous one is released). */
int ocl_run_kernel(lode_device *d, cl_kernel k, size_t global, size_t local, const char *what, cl_event *ev);
static inline size_t ocl_round_up(size_t n, size_t q) { return (n + q - 1) / q * q; }
void ocl_release_kernel(cl_kernel *k);
void ocl_release_program(cl_program *p);
void ocl_release_mem(cl_mem *m);

/* ---- ocl_nonce.c: nonce scans (SHA-256d, scrypt) ---- */

/* Launch parameters: tuned, cached (tune_cache.h) or set by
 * LODE_OPENCL_TUNE (keys ls, npt, il, batch). */
typedef struct ocl_tune_params {
    unsigned local_size; /* work-group size of the main kernel */
    unsigned per_item;   /* sha256d: nonces per work-item; scrypt: hashes per quad (1, 2) */
    unsigned batch;      /* scrypt: hash slots per romix launch; 0 = all allocated */
    double rate;         /* measured hashes per second, 0 if unknown */
} ocl_tune_params;

/* What a nonce algorithm gives the shared scan and tuner. */
typedef struct ocl_nonce_algo {
    /* Queues one launch's kernels over [start, start + count) writing into
     * hits; *kernel_done receives the last kernel's event. */
    int (*enqueue)(lode_device *d, cl_mem hits, cl_event *kernel_done, uint64_t start, uint64_t count);
    /* Brings the parameters into what the kernels and the device accept. */
    void (*clamp)(lode_device *d);
    /* Builds the program for the parameters (a no-op when it stands). */
    int (*build)(lode_device *d);
    /* Sets the indices per launch from the rate. */
    void (*size_launches)(lode_device *d);
    /* Tuning: candidate shapes, each timed after clamp and build. */
    size_t (*candidates)(const lode_device *d);
    bool warm_up_first;                   /* one untimed launch before the first trial */
    int (*tune_begin)(lode_device *d);    /* a job without hits, calibration */
    int (*tune_end)(lode_device *d);      /* the job back */
    void (*shape)(lode_device *d, size_t i);
    uint64_t (*trial_count)(lode_device *d);
    uint64_t (*launch_quantum)(lode_device *d); /* the fewest indices a launch runs at full width */
    void (*report)(lode_device *d);       /* logs the shape chosen */
} ocl_nonce_algo;

/* The first member of a nonce algorithm's state, so that the shared code
 * reaches it through lode_device.state. */
typedef struct ocl_nonce_scan {
    const ocl_nonce_algo *algo;
    cl_mem hits[IN_FLIGHT];
    cl_event finished[IN_FLIGHT];    /* a launch's hit read-back */
    cl_event kernel_done[IN_FLIGHT]; /* its last kernel: polled (a pageable read-back may
                                        complete only inside clWaitForEvents) */
    uint32_t hits_host[IN_FLIGHT][LODE_HITS_WORDS];
    lode_nonce_hit_check check; /* what collected hits are checked against */
    ocl_tune_params tune;
    bool tuned; /* tune holds measured or user-given values */
    lode_tune_mode mode;
    uint64_t launch_count; /* indices per launch */
} ocl_nonce_scan;

static inline ocl_nonce_scan *ocl_nonce_of(lode_device *d) { return d->state; }

/* Allocates the hit buffers. */
int ocl_nonce_open(lode_device *d);
void ocl_nonce_close(ocl_nonce_scan *s);
/* The parameters from LODE_OPENCL_TUNE or the cache, else defaults. */
void ocl_nonce_load_params(lode_device *d, ocl_tune_params defaults);
/* After the kernels' buffers: parameters, program, launch size. */
int ocl_nonce_ready(lode_device *d);
/* The largest power of two <= want and <= max, at least floor. */
unsigned ocl_pow2_local(unsigned want, size_t max, unsigned floor);
lode_launch_engine ocl_nonce_engine(lode_device *d);
uint64_t ocl_nonce_preferred_chunk(lode_device *d, double target_ms);
int ocl_nonce_tune(lode_device *d, double target_ms);
/* One launch of count indices from 0, timed (seconds), or < 0 with *rc set. */
double ocl_nonce_time_launch(lode_device *d, uint64_t count, int *rc);
/* The current shape's rate (indices a second), measured on a job without
 * hits: one warm-up launch of quantum, then launches from quantum up, 8x at
 * a time, until one takes 20 ms or runs max. A device far slower than the
 * guesses (a simulator) stops at its first launch. 0 with *rc set on error. */
double ocl_nonce_measure_rate(lode_device *d, uint64_t quantum, uint64_t max, int *rc);

#endif
